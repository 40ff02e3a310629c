// The terminal summary of a debug session and its RESULT_JSON (session.h).
#include "debug/session.h"
#include "util/text.h"

namespace devgraph::debug {
namespace {

std::string or_else(const std::string& s, const std::string& fallback) {
  return s.empty() ? fallback : s;
}

std::string fix_line(const DebugFile& f) {
  if (f.m.end == "resolved" && !f.resolution.fix.empty()) return f.resolution.fix;
  return "not applied";
}

// The session runs with the TDD gate (--tdd), or a gate ran in it.
bool tdd_of(const DebugFile& f) {
  return f.tdd || f.m.tdd_used;
}

std::string review_line(const DebugFile& f) {
  if (f.reviews.empty()) return "none";
  const Review& r = f.reviews.back();
  return r.hint + " (" + r.verdict + ")";
}

}  // namespace

std::string summary_text(const Outcome& o, const Paths& paths) {
  const DebugFile& f = o.file;
  std::string where = current_path(paths);
  std::string s = "Session: " + or_else(where, paths.file) + "\n";
  s += "Status: " + o.status + " (" + f.status + ")\n";
  s += "Root cause: " + one_line(or_else(f.resolution.root_cause, "not determined"), 300) + "\n";
  s += "Fix: " + one_line(fix_line(f), 300) + "\n";
  s += "Cycles: " + std::to_string(f.m.cycles_investigation) + " (investigation) + " +
       std::to_string(f.m.cycles_fix) + " (fix)\n";
  s += std::string("TDD: ") + (tdd_of(f) ? "yes" : "no") + "\n";
  s += "Specialist review: " + review_line(f) + "\n";
  if (!f.resolution.prevention.empty())
    s += "Prevention: " + one_line(f.resolution.prevention, 300) + "\n";
  if (f.m.delivered.is_object()) {
    const Json& d = f.m.delivered;
    if (d.contains("pr"))
      s +=
          "Pull request: " + json_str(d["pr"], "url") + " (branch " + json_str(d, "branch") + ")\n";
    else
      s += "Branch: " + json_str(d, "branch") + " is ready at " + json_str(d, "head") + "\n";
  }
  if (o.status == "STOPPED") s += "Stopped: " + f.m.stop_reason + "\n";
  if (o.status == "CONTINUE_REQUIRED")
    s += "Continue: " + o.why + "\n  next: devgraph debug continue " + f.slug + "\n";
  if (o.status == "WAITING" && f.m.pending) {
    const Question& q = *f.m.pending;
    s += "Question (" + q.id + "):\n";
    size_t start = 0;
    while (start <= q.text.size()) {
      size_t nl = q.text.find('\n', start);
      s += "  " + q.text.substr(start, nl == std::string::npos ? nl : nl - start) + "\n";
      if (nl == std::string::npos) break;
      start = nl + 1;
    }
    for (size_t i = 0; i < q.choices.size(); ++i)
      s += "  " + std::to_string(i + 1) + ". " + one_line(q.choices[i], 200) + "\n";
    s += "Answer: devgraph debug answer " + f.slug +
         (q.choices.empty() ? " (--text T | --file F)" : " --choice N [--text T | --file F]") +
         "\n";
  }
  return s;
}

Json summary_json(const Outcome& o, const Paths& paths) {
  const DebugFile& f = o.file;
  Json j = {{"status", o.status},
            {"slug", f.slug},
            {"session", or_else(current_path(paths), paths.file)},
            {"debug_status", f.status},
            {"root_cause", or_else(f.resolution.root_cause, "not determined")},
            {"fix", fix_line(f)},
            {"cycles", {{"investigation", f.m.cycles_investigation}, {"fix", f.m.cycles_fix}}},
            {"tdd", tdd_of(f)},
            {"specialist_review", review_line(f)},
            {"prevention", f.resolution.prevention},
            {"worktree", f.m.worktree},
            {"branch", f.m.branch},
            {"commit", f.m.commit},
            {"delivered", f.m.delivered},
            {"next_action", f.next_action}};
  if (o.status == "WAITING" && f.m.pending)
    j["question"] = {{"id", f.m.pending->id},
                     {"kind", f.m.pending->kind},
                     {"text", f.m.pending->text},
                     {"choices", f.m.pending->choices}};
  if (!o.why.empty()) j["why"] = o.why;
  if (o.status == "STOPPED") j["stop_reason"] = f.m.stop_reason;
  return j;
}

}  // namespace devgraph::debug
