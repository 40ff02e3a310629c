#include "orchestrator/audit.h"

#include <cctype>
#include <cstdint>

namespace devgraph::orchestrator {
namespace {

bool is_hex(std::string_view s) {
  for (char c : s)
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

// Lower case, every run of anything but letters and digits one space.
std::string normalised(std::string_view text) {
  std::string out;
  bool gap = false;
  for (char c : text) {
    unsigned char u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || u >= 0x80) {
      if (gap && !out.empty()) out += ' ';
      out += static_cast<char>(std::tolower(u));
      gap = false;
    } else {
      gap = true;
    }
  }
  return out;
}

constexpr std::string_view kFingerprintPrefix = "<!-- devgraph-finding: ";

}  // namespace

std::string AuditRange::describe() const {
  return pr_diff ? std::string("the pull request's own diff (gh pr diff)") : git_range;
}

AuditRange audit_range(const std::string& merge_commit, int parents) {
  AuditRange r;
  if (parents >= 2) {
    r.git_range = merge_commit + "^1.." + merge_commit;
  } else {
    // A squash merge's only parent is the branch point: ^1.. would be the
    // whole default branch's work since, not the PR.
    r.pr_diff = true;
  }
  return r;
}

std::string_view severity_name(Severity s) {
  switch (s) {
    case Severity::critical:
      return "Critical";
    case Severity::high:
      return "High";
    case Severity::medium:
      return "Medium";
    case Severity::low:
      return "Low";
  }
  return "Low";
}

Expected<std::vector<Finding>> parse_findings(const Json& result) {
  std::vector<Finding> out;
  if (!result.is_object() || !result.contains("findings")) return out;
  const Json& list = result.at("findings");
  if (list.is_null()) return out;
  if (!list.is_array()) return fail("auditor result: findings is not an array");
  size_t i = 0;
  for (const Json& f : list) {
    ++i;
    std::string where = "auditor result: finding " + std::to_string(i);
    if (!f.is_object()) return fail(where + " is not an object");
    auto str = [&](const char* key) -> std::optional<std::string> {
      auto v = f.find(key);
      if (v == f.end() || !v->is_string()) return std::nullopt;
      return v->get<std::string>();
    };
    Finding x;
    auto sev = str("severity");
    bool known = false;
    for (auto s : {Severity::critical, Severity::high, Severity::medium, Severity::low})
      if (sev && *sev == severity_name(s)) x.severity = s, known = true;
    if (!known) return fail(where + " has no severity Critical, High, Medium or Low");
    auto file = str("file");
    auto description = str("description");
    if (!file || file->empty()) return fail(where + " names no file");
    if (!description || description->empty()) return fail(where + " has no description");
    x.file = *file;
    x.description = *description;
    x.rule = str("rule").value_or("");
    x.evidence = str("evidence").value_or("");
    if (auto l = f.find("line"); l != f.end() && l->is_number_integer())
      x.line = l->get<long long>();
    out.push_back(std::move(x));
  }
  return out;
}

std::string finding_fingerprint(const Finding& f) {
  // FNV-1a, 64 bits: stable everywhere, and no more is needed to tell
  // one repository's findings apart.
  std::uint64_t h = 1469598103934665603ULL;
  auto mix = [&](std::string_view s) {
    for (unsigned char c : s) {
      h ^= c;
      h *= 1099511628211ULL;
    }
    h ^= 0xff;  // a separator no text holds
    h *= 1099511628211ULL;
  };
  mix(f.file);
  mix(normalised(f.rule));
  mix(normalised(f.description));
  static const char* digits = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, h >>= 4) out[static_cast<size_t>(i)] = digits[h & 0xf];
  return out;
}

std::string fingerprint_line(const std::string& fingerprint) {
  return std::string(kFingerprintPrefix) + fingerprint + " -->";
}

std::set<std::string> fingerprints_in(std::string_view body) {
  std::set<std::string> out;
  size_t at = 0;
  while ((at = body.find(kFingerprintPrefix, at)) != std::string_view::npos) {
    at += kFingerprintPrefix.size();
    std::string_view fp = body.substr(at, 16);
    if (fp.size() == 16 && is_hex(fp) && body.substr(at + 16, 4) == " -->")
      out.insert(std::string(fp));
  }
  return out;
}

Triage triage(const std::vector<Finding>& findings, const std::set<std::string>& filed,
              const std::set<std::string>& remediated) {
  Triage t;
  std::set<std::string> seen;
  for (const auto& f : findings) {
    std::string fp = finding_fingerprint(f);
    if (f.severity == Severity::critical || f.severity == Severity::high) {
      if (remediated.count(fp))
        ++t.already_remediated;
      else
        t.remediation.push_back(f);
      continue;
    }
    if (filed.count(fp)) {
      ++t.already_filed;
      continue;
    }
    if (seen.insert(fp).second) t.issues.push_back(f);
  }
  return t;
}

Expected<std::string> parse_marker(std::string_view text) {
  std::string_view t = text;
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r' || t.back() == ' '))
    t.remove_suffix(1);
  if ((t.size() != 40 && t.size() != 64) || !is_hex(t))
    return fail("the audit marker is not a commit id (corrupt: expected 40 or 64 hex digits)");
  std::string out(t);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string marker_text(const std::string& commit) {
  return commit + "\n";
}

std::optional<std::string> advance_marker(const std::vector<WindowEntry>& window) {
  std::optional<std::string> to;
  for (const auto& e : window) {
    if (!e.audited) break;
    to = e.merge_commit;
  }
  return to;
}

}  // namespace devgraph::orchestrator
