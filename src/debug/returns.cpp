#include "debug/returns.h"

#include <array>

#include "debug/debug_file.h"
#include "util/fs.h"
#include "util/text.h"
#include "util/untrusted.h"

namespace devgraph::debug {
namespace {

constexpr std::array<std::pair<ReturnType, std::string_view>, 6> kNames{{
    {ReturnType::root_cause_found, "ROOT_CAUSE_FOUND"},
    {ReturnType::tdd_checkpoint, "TDD_CHECKPOINT"},
    {ReturnType::debug_complete, "DEBUG_COMPLETE"},
    {ReturnType::checkpoint_reached, "CHECKPOINT_REACHED"},
    {ReturnType::investigation_inconclusive, "INVESTIGATION_INCONCLUSIVE"},
    {ReturnType::fix_rejected_by_guardrail, "FIX_REJECTED_BY_GUARDRAIL"},
}};

std::string text_of(const Json& obj, const char* key) {
  return clean_text(json_str(obj, key));
}

std::vector<std::string> texts_of(const Json& obj, const char* key) {
  std::vector<std::string> out;
  for (const auto& s : json_str_list(obj, key))
    if (auto t = clean_text(s); !t.empty()) out.push_back(t);
  return out;
}

Error missing(const std::string& type, const std::string& what) {
  return fail(ErrorKind::usage, "debug return " + type + " has no " + what);
}

}  // namespace

std::string_view return_name(ReturnType type) {
  for (const auto& [t, n] : kNames)
    if (t == type) return n;
  return "?";
}

std::string return_schema_path(const std::string& skill_dir) {
  return join_path(join_path(skill_dir, "contracts"), "debug-return.schema.json");
}

std::string safe_relative_path(std::string_view path) {
  if (path.empty() || path.front() == '/' || path.find('\0') != std::string_view::npos) return "";
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    std::string part(
        path.substr(start, slash == std::string_view::npos ? path.size() - start : slash - start));
    if (part == "..") return "";
    if (part == ".git") return "";
    if (!part.empty() && part != ".") parts.push_back(part);
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  for (const auto& p : parts)
    for (char c : p)
      if (static_cast<unsigned char>(c) < 0x20) return "";
  return join(parts, "/");
}

Expected<DebugReturn> parse_return(const Json& result, const Schema& schema) {
  if (!result.is_object() || !result.contains("debug"))
    return fail(ErrorKind::usage, "the result has no `debug` object");
  const Json& d = result.at("debug");
  if (auto problems = schema.validate(d); !problems.empty())
    return fail(ErrorKind::usage, "the `debug` object breaks the schema: " + problems.front());
  DebugReturn r;
  const std::string type = json_str(d, "type");
  bool known = false;
  for (const auto& [t, n] : kNames)
    if (n == type) {
      r.type = t;
      known = true;
    }
  if (!known) return fail(ErrorKind::usage, "debug return type " + py_repr(type) + " is unknown");
  r.hypothesis = text_of(d, "hypothesis");
  r.next_action = text_of(d, "next_action");
  for (const auto& e : d.value("evidence", Json::array()))
    r.evidence.push_back({text_of(e, "checked"), text_of(e, "found"), text_of(e, "implication")});
  for (const auto& e : d.value("eliminated", Json::array()))
    r.eliminated.emplace_back(text_of(e, "hypothesis"), text_of(e, "evidence"));
  r.root_cause = text_of(d, "root_cause");
  r.fix_direction = text_of(d, "fix_direction");
  r.specialist_hint = slug_from(json_str(d, "specialist_hint", "general"));
  switch (r.type) {
    case ReturnType::root_cause_found:
      if (r.root_cause.empty()) return missing(type, "root_cause");
      break;
    case ReturnType::tdd_checkpoint: {
      const Json t = d.value("test", Json());
      if (!t.is_object()) return missing(type, "test");
      r.test_command = json_str_list(t, "command");
      r.test_file = text_of(t, "file");
      r.test_name = text_of(t, "name");
      break;
    }
    case ReturnType::debug_complete: {
      const Json res = d.value("resolution", Json());
      if (!res.is_object()) return missing(type, "resolution");
      r.root_cause = text_of(res, "root_cause");
      r.fix = text_of(res, "fix");
      r.verification = text_of(res, "verification");
      r.prevention = text_of(res, "prevention");
      for (const auto& p : json_str_list(res, "files_changed")) {
        std::string safe = safe_relative_path(p);
        if (safe.empty())
          return fail(ErrorKind::usage, "debug return " + type +
                                            ": files_changed names a path outside the worktree: " +
                                            py_repr(clip(p, 120)));
        r.files_changed.push_back(safe);
      }
      break;
    }
    case ReturnType::checkpoint_reached: {
      const Json c = d.value("checkpoint", Json());
      if (!c.is_object()) return missing(type, "checkpoint");
      r.checkpoint_type = one_line(text_of(c, "type"), 80);
      r.details = text_of(c, "details");
      r.awaiting = text_of(c, "awaiting");
      r.options = texts_of(c, "options");
      break;
    }
    case ReturnType::investigation_inconclusive:
      r.checked = texts_of(d, "checked");
      r.remaining = texts_of(d, "remaining");
      break;
    case ReturnType::fix_rejected_by_guardrail: {
      const Json g = d.value("guardrail", Json());
      if (!g.is_object()) return missing(type, "guardrail");
      r.signal = text_of(g, "signal");
      r.signal_evidence = text_of(g, "evidence");
      break;
    }
  }
  return r;
}

}  // namespace devgraph::debug
