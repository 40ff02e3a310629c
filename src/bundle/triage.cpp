#include "bundle/triage.h"

#include <algorithm>
#include <cctype>
#include <initializer_list>

namespace devgraph::bundle {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// Whether `text` (lower case) has a word beginning with `prefix`.
bool has_word(const std::string& text, std::string_view prefix) {
  for (size_t at = text.find(prefix); at != std::string::npos; at = text.find(prefix, at + 1)) {
    if (at == 0 || !std::isalnum(static_cast<unsigned char>(text[at - 1]))) return true;
  }
  return false;
}

bool any_word(const std::string& text, std::initializer_list<std::string_view> prefixes) {
  return std::any_of(prefixes.begin(), prefixes.end(),
                     [&](std::string_view p) { return has_word(text, p); });
}

}  // namespace

std::string_view kind_name(ConcernKind kind) {
  switch (kind) {
    case ConcernKind::correctness:
      return "correctness";
    case ConcernKind::scope:
      return "scope";
    case ConcernKind::observational:
      break;
  }
  return "observational";
}

ConcernKind classify_concern(std::string_view raw) {
  const std::string text = lower(raw);
  // Not this task's problem: noted for a person or a later task.
  if (any_word(text, {"pre-existing", "preexisting", "already there before", "unrelated",
                      "not this task", "not caused by this", "outside this task", "follow-up",
                      "follow up", "future task", "later task", "separate task", "separate issue"}))
    return ConcernKind::observational;
  if (any_word(text, {"outside the footprint", "outside its footprint", "outside my footprint",
                      "outside the task's footprint", "beyond the brief", "not in the brief",
                      "not asked for", "scope creep", "more than the brief", "exceeds the brief",
                      "out-of-scope change", "out of scope change"}))
    return ConcernKind::scope;
  if (any_word(text, {"fail",
                      "bug",
                      "broken",
                      "break",
                      "incorrect",
                      "wrong",
                      "crash",
                      "regress",
                      "off by one",
                      "off-by-one",
                      "does not handle",
                      "doesn't handle",
                      "not handled",
                      "unhandled",
                      "does not work",
                      "doesn't work",
                      "not work",
                      "leak",
                      "race",
                      "deadlock",
                      "corrupt",
                      "data loss",
                      "lost",
                      "vulnerab",
                      "injection",
                      "unsafe",
                      "insecure",
                      "violat",
                      "not implemented",
                      "unimplemented",
                      "missing implementation",
                      "mismatch",
                      "panic",
                      "hang",
                      "infinite loop",
                      "throws",
                      "exception",
                      "segfault",
                      "undefined behav"}))
    return ConcernKind::correctness;
  return ConcernKind::observational;
}

ConcernKind classify_finding(const Json& finding) {
  std::string severity =
      finding.is_object() ? lower(json_str(finding, "severity", json_str(finding, "level"))) : "";
  for (const char* minor : {"minor", "nit", "suggestion", "info", "observation", "low", "trivial"})
    if (severity.rfind(minor, 0) == 0) return ConcernKind::observational;
  return ConcernKind::correctness;
}

bool Triage::actionable() const {
  return std::any_of(items.begin(), items.end(),
                     [](const RaisedConcern& c) { return c.kind != ConcernKind::observational; });
}

std::vector<std::string> Triage::texts(bool want_actionable) const {
  std::vector<std::string> out;
  for (const auto& c : items)
    if ((c.kind != ConcernKind::observational) == want_actionable) out.push_back(c.text);
  return out;
}

std::vector<std::string> Triage::raised_by() const {
  bool act = actionable();
  std::vector<std::string> out;
  for (const auto& c : items) {
    if (act && c.kind == ConcernKind::observational) continue;
    if (std::find(out.begin(), out.end(), c.persona) == out.end()) out.push_back(c.persona);
  }
  return out;
}

Json Triage::to_json() const {
  Json list = Json::array();
  for (const auto& c : items)
    list.push_back(
        Json{{"persona", c.persona}, {"kind", std::string(kind_name(c.kind))}, {"text", c.text}});
  return Json{{"kind", actionable() ? "actionable" : "observational"},
              {"raised_by", raised_by()},
              {"concerns", list}};
}

Triage triage(const std::vector<const PersonaResult*>& results) {
  Triage t;
  for (const PersonaResult* r : results) {
    if (!r) continue;
    if (r->status == "DONE_WITH_CONCERNS")
      for (const auto& c : r->concerns)
        t.items.push_back(RaisedConcern{r->persona, c, classify_concern(c), false, ""});
    if (r->findings.is_array())
      for (const auto& f : r->findings)
        t.items.push_back(RaisedConcern{r->persona, dump_py(f), classify_finding(f), true,
                                        json_str(f, "file", json_str(f, "path"))});
  }
  return t;
}

}  // namespace devgraph::bundle
