#include "fix/gaps.h"

#include <algorithm>
#include <set>

#include "util/text.h"

namespace devgraph::fix {

namespace {

constexpr std::string_view kEmDash = "\xE2\x80\x94";  // "—"

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

char lower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (lower(a[i]) != lower(b[i])) return false;
  return true;
}

bool istarts_with(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && iequals(s.substr(0, prefix.size()), prefix);
}

// Each CR, LF or CRLF becomes one space.
std::string one_line(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n') continue;
    out += text[i] == '\n' || text[i] == '\r' ? ' ' : text[i];
  }
  return out;
}

Error bad(const std::string& what) {
  return fail(ErrorKind::usage, what);
}

std::optional<Verdict> verdict_from(std::string_view text) {
  for (auto v : {Verdict::ship, Verdict::fix_first, Verdict::blocked})
    if (iequals(verdict_name(v), text)) return v;
  return std::nullopt;
}

bool any_blocking(const std::vector<Gap>& gaps) {
  return std::any_of(gaps.begin(), gaps.end(), [](const Gap& g) { return g.blocking(); });
}

Verdict verdict_of(const std::vector<Gap>& gaps) {
  return any_blocking(gaps) ? Verdict::fix_first : Verdict::ship;
}

// A non-empty trimmed string at `key`, else "".
std::string text_at(const Json& object, const char* key) {
  return std::string(trim(json_str(object, key)));
}

// One finding (or gap) object; `label` names it in errors ("finding 2").
Expected<Gap> gap_from(const Json& item, const std::string& label) {
  if (!item.is_object()) return bad(label + " must be an object, got " + dump_py(item));
  Gap gap;
  gap.file = text_at(item, "file");
  if (gap.file.empty()) return bad(label + " has no file");
  for (const char* key : {"description", "issue", "title", "summary"}) {
    gap.description = text_at(item, key);
    if (!gap.description.empty()) break;
  }
  if (gap.description.empty()) return bad(label + " (" + gap.file + ") has no description");
  if (!item.contains("severity") || !item.at("severity").is_string())
    return bad(label + " (" + gap.file + ") has no severity");
  const Json& sev = item.at("severity");
  auto severity = severity_from(trim(sev.get<std::string>()));
  if (!severity)
    return bad(label + " (" + gap.file + "): unknown severity " + dump_py(sev) +
               " (CRITICAL, HIGH, MEDIUM, LOW, or Critical, Important, Minor)");
  gap.severity = *severity;
  if (item.contains("line") && !item.at("line").is_null()) {
    const Json& line = item.at("line");
    if (!line.is_number_integer() || line.get<long long>() < 1 ||
        line.get<long long>() > 1'000'000'000)
      return bad(label + " (" + gap.file + "): line must be a positive integer, got " +
                 dump_py(line));
    gap.line = line.get<int>();
  }
  return gap;
}

Expected<std::vector<Gap>> gaps_from(const Json& object, const char* key, const char* noun) {
  std::vector<Gap> gaps;
  if (!object.contains(key) || object.at(key).is_null()) return gaps;
  const Json& list = object.at(key);
  if (!list.is_array()) return bad(std::string(key) + " must be an array of objects");
  for (size_t i = 0; i < list.size(); ++i) {
    DG_TRY(auto gap, gap_from(list.at(i), std::string(noun) + " " + std::to_string(i)));
    gaps.push_back(std::move(gap));
  }
  return gaps;
}

// Whitespace runs become one space (a reason is one line).
std::string tidy(std::string_view text) {
  return squeeze_spaces(text);
}

Status agrees(Verdict stated, const std::vector<Gap>& gaps) {
  if (stated == Verdict::fix_first && !any_blocking(gaps))
    return bad("the review says FIX-FIRST but lists no CRITICAL or HIGH gap");
  if (stated == Verdict::ship && any_blocking(gaps))
    return bad("the review says SHIP but lists a CRITICAL or HIGH gap");
  return {};
}

Expected<Review> review_from_verdict_json(const Json& doc) {
  Review review;
  const Json v = doc.contains("verdict") ? doc.at("verdict") : Json(nullptr);
  auto verdict = v.is_string() ? verdict_from(trim(v.get<std::string>())) : std::nullopt;
  if (!verdict) return bad("verdict must be SHIP, FIX-FIRST or BLOCKED, got " + dump_py(v));
  DG_TRY(review.gaps, gaps_from(doc, "gaps", "gap"));
  DG_CHECK(agrees(*verdict, review.gaps));
  review.verdict = *verdict;
  if (review.verdict == Verdict::blocked) {
    review.reason = tidy(json_str(doc, "reason"));
    if (review.reason.empty()) review.reason = "the review says BLOCKED";
  }
  return review;
}

// Splits "description — file:line" (or " -- ") at its last separator.
Expected<Gap> gap_from_line(std::string_view line, size_t number) {
  const std::string label = "line " + std::to_string(number);
  line = trim(line);
  line.remove_prefix(3);  // "- ["
  size_t close = line.find(']');
  if (close == std::string_view::npos) return bad(label + ": no ']' after the severity");
  std::string_view sev = trim(line.substr(0, close));
  std::string_view rest = line.substr(close + 1);
  size_t dash = rest.rfind(kEmDash);
  size_t ascii = rest.rfind(" -- ");
  size_t at = std::string_view::npos, width = 0;
  if (dash != std::string_view::npos) at = dash, width = kEmDash.size();
  if (ascii != std::string_view::npos && (at == std::string_view::npos || ascii > at))
    at = ascii, width = 4;
  if (at == std::string_view::npos)
    return bad(label + ": no file (expected '- [SEVERITY] description — file:line')");
  Gap gap;
  gap.description = std::string(trim(rest.substr(0, at)));
  std::string_view where = trim(rest.substr(at + width));
  if (where.size() >= 2 && where.front() == '`' && where.back() == '`')
    where = trim(where.substr(1, where.size() - 2));
  size_t colon = where.rfind(':');
  if (colon != std::string_view::npos && colon + 1 < where.size() && colon + 10 > where.size() &&
      std::all_of(where.begin() + static_cast<long>(colon) + 1, where.end(),
                  [](char c) { return c >= '0' && c <= '9'; })) {
    int n = std::stoi(std::string(where.substr(colon + 1)));
    if (n > 0) {
      gap.line = n;
      where = where.substr(0, colon);
    }
  }
  gap.file = std::string(trim(where));
  if (gap.file.empty()) return bad(label + " has no file");
  if (gap.description.empty()) return bad(label + " (" + gap.file + ") has no description");
  auto severity = severity_from(sev);
  if (!severity)
    return bad(label + " (" + gap.file + "): unknown severity '" + std::string(sev) + "'");
  gap.severity = *severity;
  return gap;
}

Expected<Review> review_from_markdown(std::string_view text) {
  Review review;
  std::optional<Verdict> stated;
  std::string reason;
  size_t number = 0;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view raw = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++number;
    std::string_view line = trim(raw);
    if (line.substr(0, 3) == "- [") {
      DG_TRY(auto gap, gap_from_line(line, number));
      review.gaps.push_back(std::move(gap));
    } else if (istarts_with(line, "verdict:")) {
      std::string_view value = trim(line.substr(8));
      auto v = verdict_from(value);
      if (!v)
        return bad("line " + std::to_string(number) + ": verdict must be SHIP, FIX-FIRST or " +
                   "BLOCKED, got '" + std::string(value) + "'");
      if (stated && *stated != *v)
        return bad("line " + std::to_string(number) +
                   ": a second verdict disagrees with the first");
      stated = v;
    } else if (istarts_with(line, "reason:") && reason.empty()) {
      reason = tidy(line.substr(7));
    }
  }
  if (!stated && review.gaps.empty())
    return bad("the review has no gap and no verdict (nothing says it was read)");
  if (stated) {
    DG_CHECK(agrees(*stated, review.gaps));
  }
  review.verdict = stated ? *stated : verdict_of(review.gaps);
  if (review.verdict == Verdict::blocked)
    review.reason = reason.empty() ? "the review says BLOCKED" : reason;
  return review;
}

}  // namespace

std::string_view severity_name(Severity s) {
  switch (s) {
    case Severity::critical:
      return "CRITICAL";
    case Severity::high:
      return "HIGH";
    case Severity::medium:
      return "MEDIUM";
    case Severity::low:
      return "LOW";
  }
  return "HIGH";
}

std::optional<Severity> severity_from(std::string_view text) {
  for (auto s : {Severity::critical, Severity::high, Severity::medium, Severity::low})
    if (iequals(severity_name(s), text)) return s;
  // code-reviewer.md's words (its Critical is already CRITICAL).
  if (iequals(text, "important")) return Severity::high;
  if (iequals(text, "minor")) return Severity::medium;
  return std::nullopt;
}

std::string_view verdict_name(Verdict v) {
  switch (v) {
    case Verdict::ship:
      return "SHIP";
    case Verdict::fix_first:
      return "FIX-FIRST";
    case Verdict::blocked:
      return "BLOCKED";
  }
  return "BLOCKED";
}

Expected<Review> review_from_result(const Json& result) {
  if (!result.is_object()) return bad("the review result must be a JSON object");
  Review review;
  DG_TRY(review.gaps, gaps_from(result, "findings", "finding"));
  std::string status = json_str(result, "status");
  if (status == "BLOCKED" || status == "NEEDS_CONTEXT") {
    review.verdict = Verdict::blocked;
    auto why = json_str_list(result, status == "BLOCKED" ? "blockers" : "missing_context");
    review.reason = tidy(join(why, "; "));
    if (review.reason.empty()) review.reason = tidy(json_str(result, "summary"));
    if (review.reason.empty()) review.reason = "the reviewer answered " + status;
    return review;
  }
  review.verdict = verdict_of(review.gaps);
  return review;
}

Expected<Review> parse_review_file(std::string_view text) {
  std::string_view body = trim(text);
  if (body.empty()) return bad("the review is empty (nothing says it was read)");
  if (body.front() != '{') return review_from_markdown(text);
  DG_TRY(Json doc, parse_json(body, "review file"));
  if (!doc.is_object()) return bad("the review file must hold a JSON object");
  if (doc.contains("verdict")) return review_from_verdict_json(doc);
  return review_from_result(doc);
}

std::string gap_key(const Gap& gap) {
  std::string words;
  bool pending = false;
  for (char c : gap.description) {
    unsigned char u = static_cast<unsigned char>(c);
    char l = lower(c);
    if ((l >= 'a' && l <= 'z') || (c >= '0' && c <= '9') || u >= 0x80) {
      if (pending && !words.empty()) words += ' ';
      pending = false;
      words += l;
    } else {
      pending = true;
    }
  }
  return gap.file + "|" + words;
}

bool same_gaps(const std::vector<Gap>& a, const std::vector<Gap>& b) {
  auto keys = [](const std::vector<Gap>& gaps) {
    std::set<std::string> out;
    for (const auto& g : gaps)
      if (g.blocking()) out.insert(gap_key(g));
    return out;
  };
  return keys(a) == keys(b);
}

std::string render_gap(const Gap& gap) {
  std::string out = "[" + std::string(severity_name(gap.severity)) + "] " +
                    one_line(gap.description) + " " + std::string(kEmDash) + " " +
                    one_line(gap.file);
  if (gap.line) out += ":" + std::to_string(*gap.line);
  return out;
}

Json to_json(const Gap& gap) {
  Json j = Json::object();
  j["severity"] = std::string(severity_name(gap.severity));
  j["file"] = gap.file;
  if (gap.line) j["line"] = *gap.line;
  j["description"] = gap.description;
  return j;
}

}  // namespace devgraph::fix
