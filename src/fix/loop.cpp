#include "fix/loop.h"

#include <algorithm>
#include <set>

#include "agents/result.h"
#include "templates/render.h"
#include "util/fs.h"
#include "util/text.h"
#include "util/words.h"
#include "util/untrusted.h"

namespace devgraph::fix {
namespace {

constexpr const char* kGapTrailer = "Devgraph-Fix-Gap";

struct Loop {
  Loop(const FixRequest& r, FixPersonas& p, git::Git& g, CommandRunner& c)
      : req(r), personas(p), git(g), runner(c) {}

  const FixRequest& req;
  FixPersonas& personas;
  git::Git& git;
  CommandRunner& runner;
  FixOutcome out;
  std::vector<Attempt> attempts;
  std::vector<Gap> first_gaps;
  std::map<std::string, GapReport> reports;  // by gap_key, of the first review's gaps
  std::set<std::string> committed_files;
  int granted = 0;  // loops beyond max_loops a route gave
  bool context_given = false, env_retried = false;
  std::string context_text;
  std::vector<Validation> last_validations;  // the last fix's, shown to the re-reviewer
  // A gap's commit the repository's hook refused (git/git.h ErrorKind::hook).
  struct HookRefusal {
    std::string gap;
    std::string why;
    std::string output;
  };
  std::vector<HookRefusal> last_refusals;  // the last fix's, shown to the next fixer

  // A refused commit is a gap of its own: the fix is not on the branch.
  static Gap hook_gap(const HookRefusal& h) {
    Gap g;
    g.severity = Severity::high;
    g.file = "hook";
    g.description = "the repository's hook refused the commit of the fix for \"" + h.gap +
                    "\": " + one_line(h.why, 300);
    return g;
  }

  static bool red(const Validation& v) { return v.timed_out || v.exit_code != 0; }

  // A red validation is a gap of its own: it holds the branch back like a
  // blocking review gap, whatever the reviewer said.
  static Gap validation_gap(const Validation& v) {
    Gap g;
    g.severity = Severity::high;
    g.file = "validation";
    g.description = "the validation command `" + one_line(v.command) + "` " +
                    (v.timed_out ? std::string("timed out")
                                 : "exited " + std::to_string(v.exit_code));
    return g;
  }

  void log(const std::string& event, Json fields = Json::object()) {
    fields["event"] = event;
    if (req.on_log) req.on_log(fields);
  }

  std::string loop_dir(int n) const { return join_path(req.dir, "loop-" + std::to_string(n)); }

  std::string criteria_line() const {
    return req.criteria.empty() ? std::string("There is no acceptance criteria file.")
                                : "The acceptance criteria: `" + req.criteria + "`";
  }

  Status save(const std::string& path, const Json& j) {
    DG_CHECK(make_directories(dirname_of(path)));
    return write_file_atomic(path, dump_py(j, 2) + "\n");
  }

  // The reviewer on the branch as it is now: a review, BLOCKED when the
  // persona gave none that can be read.
  Expected<Review> review(int n, bool final_gate = false) {
    const std::string dir = final_gate ? join_path(loop_dir(n), "final-gate") : loop_dir(n);
    DG_CHECK(make_directories(dir));
    auto diff = git.diff(req.base + "...HEAD");
    const std::string diff_path = join_path(dir, "diff.patch");
    DG_CHECK(write_file_atomic(diff_path, diff ? *diff : ""));
    std::string previous = "This is the first review.";
    if (n > 0)
      previous = "The gaps of the previous review are at `" +
                 join_path(loop_dir(n - 1), "gaps.md") + "`; judge the branch, not that list.";
    if (!final_gate) {
      std::string shown;
      for (const auto& val : last_validations)
        if (red(val))
          shown += "`" + one_line(val.command) + "` " +
                   (val.timed_out ? std::string("timed out")
                                  : "exited " + std::to_string(val.exit_code)) +
                   "; its output ends:\n" +
                   fence_untrusted("validation output", val.output_tail) + "\n";
      if (!shown.empty())
        previous += "\n\nThe validation devgraph ran after the fix failed; a red validation "
                    "is a blocking gap until it passes:\n" + shown;
    }
    if (final_gate)
      previous =
          "You are the final gate: a second review, independent of the one that found "
          "nothing blocking. Judge the branch from the diff and the code alone.";
    templates::Values v{{"loop", std::to_string(n)},
                        {"worktree", req.worktree},
                        {"base", req.base},
                        {"diff_path", diff_path},
                        {"criteria_line", criteria_line()},
                        {"previous_line", previous}};
    DG_TRY(auto dispatch,
           templates::render_skill_template(req.skill_dir, "fix-review-dispatch", v));
    std::string backend =
        req.rules.reviewer_backend.empty() ? req.backend : req.rules.reviewer_backend;
    // The final gate runs on its own backend, unless the loop plays every
    // persona on one (the simulated agent, a command).
    if (final_gate && !req.rules.final_gate_backend.empty() && req.backend != "sim" &&
        req.backend != "command")
      backend = req.rules.final_gate_backend;
    PersonaCall call{final_gate ? "final_gate" : "review",
                     req.rules.reviewer,
                     dispatch,
                     backend,
                     std::nullopt,
                     std::nullopt,
                     join_path(dir, "review")};
    DG_TRY(auto a, personas.run(call));
    Json rec = {{"handle", a.handle}, {"session_id", a.session_id}, {"outcome", a.outcome},
                {"result", a.result}, {"backend", call.backend},    {"cost_usd", a.cost_usd}};
    DG_CHECK(save(join_path(dir, "review.json"), rec));
    Review r;
    if (auto parsed = review_from_result(a.result)) {
      r = *parsed;
    } else {
      r.verdict = Verdict::blocked;
      r.reason = "the review could not be read: " + parsed.error().message;
    }
    std::string list;
    for (const auto& g : r.gaps) list += "- " + render_gap(g) + "\n";
    DG_CHECK(write_file_atomic(join_path(dir, "gaps.md"), list));
    log("reviewed", Json{{"loop", n},
                         {"verdict", std::string(verdict_name(r.verdict))},
                         {"gaps", r.gaps.size()},
                         {"handle", a.handle},
                         {"session_id", a.session_id}});
    return r;
  }

  static std::vector<Gap> blocking(const Review& r) {
    std::vector<Gap> gaps;
    for (const auto& g : r.gaps)
      if (g.blocking()) gaps.push_back(g);
    return gaps;
  }

  // Each gap's changed files as one commit, in gap order.
  Status commit_fixes(const Json& result, const std::vector<Gap>& gaps, Attempt& attempt) {
    DG_TRY(auto st, git.status());
    std::set<std::string> changed;
    for (const auto& e : st) changed.insert(e.path);
    std::set<std::string> claimed;
    const Json fixes = result.value("fixes", Json::array());
    for (const auto& f : fixes.is_array() ? fixes : Json::array()) {
      if (!f.is_object() || !f.contains("gap") || !f["gap"].is_number_integer()) continue;
      long long n = f["gap"].get<long long>();
      if (n < 1 || n > static_cast<long long>(gaps.size())) continue;
      const Gap& gap = gaps[static_cast<size_t>(n - 1)];
      std::string status = json_str(f, "status", "fixed");
      auto& rep = reports[gap_key(gap)];
      if (rep.status.empty() || rep.status == "open") rep.gap = gap;
      rep.evidence = json_str(f, "evidence");
      std::vector<std::string> paths;
      for (const auto& file : f.value("files", Json::array())) {
        if (!file.is_string()) continue;
        std::string p = file.get<std::string>();
        if (!p.empty() && p.front() == '/' && p.rfind(req.worktree + "/", 0) == 0)
          p = p.substr(req.worktree.size() + 1);
        claimed.insert(p);
        if (changed.count(p) && !committed_files.count(p)) paths.push_back(p);
      }
      if (status == "failed" || status == "skipped") {
        if (rep.status != "fixed") rep.status = status;
      }
      if (paths.empty()) continue;
      std::vector<std::string> spec;
      for (const auto& p : paths) spec.push_back(":(literal)" + p);
      git::CommitRequest c{clip("fix: " + one_line(gap.description), 72),
                           render_gap(gap),
                           {{kGapTrailer, gap_key(gap)}}};
      auto committed = git::commit_paths(git, spec, c);
      if (!committed && committed.error().kind == ErrorKind::hook) {
        // The files stay changed in the worktree for the next fixer.
        last_refusals.push_back(
            {one_line(gap.description, 200), committed.error().message, committed.error().output});
        log("hook_refused", Json{{"gap", render_gap(gap)},
                                 {"hook", committed.error().message},
                                 {"files", paths}});
        continue;
      }
      DG_TRY(auto hash, committed);
      if (hash.empty()) continue;
      for (const auto& p : paths) committed_files.insert(p);
      rep.commits.push_back(hash);
      out.commits.push_back(hash);
      log("committed", Json{{"gap", render_gap(gap)}, {"commit", hash}, {"files", paths}});
    }
    (void)attempt;
    for (const auto& p : changed)
      if (!claimed.count(p) && !committed_files.count(p) &&
          std::find(out.unclaimed.begin(), out.unclaimed.end(), p) == out.unclaimed.end())
        out.unclaimed.push_back(p);
    return {};
  }

  std::vector<Validation> validate() {
    std::vector<Validation> out_v;
    for (const auto& text : req.validate) {
      Validation v;
      v.command = text;
      auto argv = split_command(text);
      if (!argv || argv->empty()) {
        v.exit_code = 127;
        v.output_tail = argv ? "an empty command" : argv.error().message;
        out_v.push_back(v);
        continue;
      }
      CommandSpec spec;
      spec.argv = *argv;
      spec.cwd = req.worktree;
      spec.timeout = req.command_timeout;
      spec.max_output_bytes = 256 * 1024;
      spec.stop_on_signal = true;
      auto r = runner.run(spec);
      if (!r) {
        v.exit_code = 127;
        v.output_tail = r.error().message;
      } else {
        v.exit_code = r->exit_code;
        v.timed_out = r->timed_out;
        v.output_tail = clip_tail(r->out + r->err, 2000);
        if (r->interrupted()) interrupted = r->interrupted_by;
      }
      log("validated", Json{{"command", text}, {"exit", v.exit_code}, {"timed_out", v.timed_out}});
      out_v.push_back(v);
    }
    return out_v;
  }
  int interrupted = 0;

  static Json validations_json(const std::vector<Validation>& vs) {
    Json a = Json::array();
    for (const auto& v : vs)
      a.push_back({{"command", v.command},
                   {"exit", v.exit_code},
                   {"timed_out", v.timed_out},
                   {"output_tail", v.output_tail}});
    return a;
  }

  // One loop: the fixer, its commits, the validation, the re-review.
  Expected<Review> fix_once(int n, const Review& current) {
    const std::string dir = loop_dir(n);
    DG_CHECK(make_directories(dir));
    std::vector<Gap> gaps = blocking(current);
    std::string numbered;
    for (size_t i = 0; i < gaps.size(); ++i)
      numbered += std::to_string(i + 1) + ". " + render_gap(gaps[i]) + "\n";
    const std::string gaps_path = join_path(dir, "gaps-to-fix.md");
    DG_CHECK(write_file_atomic(gaps_path, numbered));
    std::vector<std::string> commands;
    for (const auto& c : req.validate) commands.push_back(c);
    templates::Values v{{"loop", std::to_string(n)},
                        {"max_loops", std::to_string(req.rules.max_loops + granted)},
                        {"worktree", req.worktree},
                        {"gaps", fence_untrusted("review gaps", numbered)},
                        {"gaps_path", gaps_path},
                        {"criteria_line", criteria_line()},
                        {"validation", commands.empty() ? std::string("- (none given)")
                                                        : templates::bullet_list(commands)}};
    DG_TRY(auto dispatch, templates::render_skill_template(req.skill_dir, "fix-dispatch", v));
    if (!context_text.empty())
      dispatch += "\n\nWhat the previous attempt said it was missing, gathered by devgraph:\n" +
                  fence_untrusted("gathered context", context_text) + "\n";
    for (const auto& h : last_refusals)
      dispatch += "\n\nThe repository's hook refused the commit of your fix for \"" + h.gap +
                  "\" (" + one_line(h.why, 300) + "); the files are still changed in the "
                  "worktree. Its output:\n" + fence_untrusted("hook output", h.output) + "\n";
    for (const auto& val : last_validations)
      if (red(val))
        dispatch += "\n\nThe validation `" + one_line(val.command) +
                    "` failed after the last fix; its output ends:\n" +
                    fence_untrusted("validation output", val.output_tail) + "\n";
    PersonaCall call{"fix",      req.rules.fixer,        dispatch, req.backend, out.model,
                     out.effort, join_path(dir, "fixer")};
    DG_TRY(auto a, personas.run(call));
    DG_CHECK(
        save(join_path(dir, "fixer.json"), Json{{"handle", a.handle},
                                                {"session_id", a.session_id},
                                                {"outcome", a.outcome},
                                                {"backend", call.backend},
                                                {"model", out.model ? Json(*out.model) : Json()},
                                                {"effort", out.effort ? Json(*out.effort) : Json()},
                                                {"result", a.result}}));
    log("fixed", Json{{"loop", n},
                      {"status", json_str(a.result, "status")},
                      {"handle", a.handle},
                      {"session_id", a.session_id},
                      {"model", out.model ? Json(*out.model) : Json()},
                      {"effort", out.effort ? Json(*out.effort) : Json()}});
    Attempt attempt;
    attempt.gaps_before = gaps;
    attempt.fixer_status = json_str(a.result, "status");
    for (const char* k : {"missing_context", "blockers"})
      for (const auto& s : a.result.value(k, Json::array()))
        if (s.is_string())
          (std::string(k) == "blockers" ? attempt.blockers : attempt.missing_context)
              .push_back(s.get<std::string>());
    last_refusals.clear();
    DG_CHECK(commit_fixes(a.result, gaps, attempt));
    attempt.validations = validate();
    if (interrupted) return fail(ErrorKind::interrupted, "stopped by a signal", 128 + interrupted);
    DG_CHECK(save(join_path(dir, "validation.json"), validations_json(attempt.validations)));
    last_validations = attempt.validations;
    DG_TRY(auto next, review(n));
    if (next.verdict != Verdict::blocked) {
      for (const auto& val : attempt.validations)
        if (red(val)) {
          next.gaps.push_back(validation_gap(val));
          next.verdict = Verdict::fix_first;
        }
      for (const auto& h : last_refusals) {
        next.gaps.push_back(hook_gap(h));
        next.verdict = Verdict::fix_first;
      }
    }
    attempt.gaps_after = blocking(next);
    attempts.push_back(std::move(attempt));
    out.loops = n;
    return next;
  }

  // What the attempt asked for that the worktree has: the file's head and
  // its recent commits; anything else is listed as not found.
  std::string gather(const std::vector<std::string>& needed) {
    std::string text;
    for (const auto& want : needed) {
      std::string rel = want;
      std::string path = join_path(req.worktree, rel);
      if (!rel.empty() && rel.find("..") == std::string::npos && is_readable_file(path)) {
        auto body = read_file_at_most(path, 8000);
        text += "## " + rel + "\n\n" + (body ? *body : std::string()) + "\n";
        CommandSpec spec;
        spec.argv = {"git", "-C", req.worktree, "log", "-5", "--format=%h %s", "--", rel};
        if (auto r = runner.run(spec); r && r->ok() && !r->out.empty())
          text += "Recent commits:\n" + r->out + "\n";
      } else {
        text += "## " + want + "\n\nNot found in the worktree.\n\n";
      }
    }
    return text;
  }

  // Asks the diagnosis persona, then checks its proposal.
  Expected<Diagnosis> propose(int n, const std::string& why) {
    const std::string dir = loop_dir(n);
    DG_CHECK(make_directories(dir));
    std::string open;
    for (const auto& g : out.review.gaps) open += "- " + render_gap(g) + "\n";
    const std::string gaps_path = join_path(req.dir, "remaining-gaps.md");
    DG_CHECK(write_file_atomic(gaps_path, open));
    const bool fresh = !attempts.empty() && new_evidence(attempts) &&
                       !same_gaps(attempts.back().gaps_before, attempts.back().gaps_after);
    templates::Values v{
        {"worktree", req.worktree},
        {"why_stopped", why},
        {"gaps_path", gaps_path},
        {"attempts_dir", req.dir},
        {"criteria_line", criteria_line()},
        {"new_evidence_line", fresh ? std::string("the last attempt changed what the review found")
                                    : std::string("none: the last attempt left the same gaps")}};
    DG_TRY(auto dispatch, templates::render_skill_template(req.skill_dir, "diagnosis-dispatch", v));
    PersonaCall call{"diagnosis",  req.rules.diagnosis_persona, dispatch, req.backend, std::nullopt,
                     std::nullopt, join_path(dir, "diagnosis")};
    DG_TRY(auto a, personas.run(call));
    DG_CHECK(save(join_path(dir, "diagnosis.json"),
                  Json{{"handle", a.handle}, {"outcome", a.outcome}, {"result", a.result}}));
    if (!a.result.contains("diagnosis"))
      return fail("the diagnosis persona gave no diagnosis: " +
                  one_line(json_str(a.result, "summary")));
    return check_proposal(a.result["diagnosis"], fresh);
  }

  void stop(const std::string& end, const std::string& route, const std::string& question = "") {
    out.end = end;
    out.route = route;
    out.question = question;
  }

  // The diagnosis and its route: true when a route granted another loop.
  Expected<bool> diagnose(int n, const std::string& why) {
    out.why_stopped = why;
    std::optional<Diagnosis> d = diagnose_by_evidence(attempts);
    if (!d) {
      auto p = propose(n, why);
      if (!p) {
        std::string reason = p.error().kind == ErrorKind::refused
                                 ? "no new evidence: " + p.error().message
                                 : p.error().message;
        stop("needs_person",
             "a person decides: the diagnosis was not accepted (" + one_line(reason) + ")",
             "why do these gaps survive, and what should happen next?");
        // An earlier diagnosis of this run is not this stop's cause.
        out.diagnosis.reset();
        log("diagnosis_refused", Json{{"reason", reason}});
        return false;
      }
      d = *p;
    }
    out.diagnosis = d;
    log("diagnosed", Json{{"cause", std::string(cause_name(d->cause))}, {"by_code", d->by_code}});
    switch (d->cause) {
      case Cause::model_capacity: {
        auto ladder = std::map<std::string, std::vector<std::string>>();
        std::string setting = "model";
        for (const auto& [b, l] : req.escalation.ladder) ladder[b] = l.steps;
        if (auto it = req.escalation.ladder.find(req.backend); it != req.escalation.ladder.end())
          setting = it->second.setting;
        std::string current =
            setting == "effort" ? out.effort.value_or("") : out.model.value_or("");
        // No setting given: the CLI's default counts as the ladder's first
        // step, so a raise never lands below it.
        if (auto l = ladder.find(req.backend);
            current.empty() && l != ladder.end() && !l->second.empty())
          current = l->second.front();
        Raise r =
            next_raise(ladder, req.backend, current, out.raises_used, req.escalation.max_raises);
        bool decided = false;
        if (!r.allowed && r.needs_person && req.decision) {
          // Only a decision for exactly this step counts.
          Raise uncapped = next_raise(ladder, req.backend, current, 0, 1);
          decided = uncapped.allowed && req.decision->from == current &&
                    req.decision->to == uncapped.to && !req.decision->reason.empty() &&
                    !req.decision->approver.empty() && !req.decision->at.empty();
          if (decided) {
            r = uncapped;
            out.decision = req.decision;
          }
        }
        if (!r.allowed && r.needs_person) {
          Raise uncapped = next_raise(ladder, req.backend, current, 0, 1);
          if (uncapped.allowed) out.raise_needed = std::make_pair(current, uncapped.to);
        }
        if (!r.allowed) {
          stop("needs_person",
               r.needs_person ? "a person decides whether to raise past the cap of " +
                                    std::to_string(req.escalation.max_raises) + " raises"
                              : "no raise is possible: " + r.why_not,
               r.needs_person
                   ? "raise " + req.backend + " from " +
                         (current.empty() ? std::string("its default") : current) + " past the cap?"
                   : "");
          return false;
        }
        (setting == "effort" ? out.effort : out.model) = r.to;
        ++out.raises_used;
        ++granted;
        log("raised", Json{{"backend", req.backend},
                           {"setting", setting},
                           {"from", r.from},
                           {"to", r.to},
                           {"decided_by_person", decided}});
        out.route = "raised " + setting + " " + (r.from.empty() ? "default" : r.from) + " -> " +
                    r.to + " and fixed again";
        return true;
      }
      case Cause::missing_context:
        if (context_given) {
          stop("blocked", "the context was gathered once already; a person supplies the rest",
               "what is missing: " + join(d->needed, "; "));
          return false;
        }
        context_given = true;
        context_text = gather(d->needed.empty() ? attempts.back().missing_context : d->needed);
        DG_CHECK(write_file_atomic(join_path(req.dir, "context-" + std::to_string(n) + ".md"),
                                   context_text));
        ++granted;
        out.route = "gathered the missing context and fixed again at the same setting";
        return true;
      case Cause::env_tool_failure: {
        if (!env_retried && !attempts.empty()) {
          env_retried = true;
          auto again = validate();
          bool runs = std::none_of(again.begin(), again.end(), [](const Validation& v) {
            return v.timed_out || v.exit_code == 126 || v.exit_code == 127;
          });
          if (runs) {
            attempts.back().validations = again;
            ++granted;
            out.route = "the environment step ran on a retry; fixed again";
            return true;
          }
        }
        stop("blocked", "blocked by the environment: " + one_line(d->evidence));
        return false;
      }
      case Cause::ambiguous_spec:
        stop("needs_person", "a person picks the reading",
             "which reading is meant: " + join(d->readings, " | "));
        return false;
      case Cause::overdesigned_plan:
        stop("replan", "back to planning without " + join(d->machinery, ", "));
        return false;
    }
    return false;
  }

  // Each gap of the first review as the last review shows it: fixed only
  // when a review that could judge the branch no longer lists it.
  // The final gate: a second review on another backend. When it does not
  // agree that the branch ships, neither verdict wins: an appeal waits for
  // a person, the work still in progress.
  Status final_gate(int n) {
    DG_TRY(auto gate, review(n, true));
    log("final_gate", Json{{"verdict", std::string(verdict_name(gate.verdict))}});
    if (gate.verdict == Verdict::ship) return {};
    Appeal ap;
    ap.reviewer_verdict = "SHIP";
    ap.reviewer_evidence = out.route;
    ap.final_gate_verdict = std::string(verdict_name(gate.verdict));
    std::vector<Gap> held = blocking(gate);
    ap.final_gate_evidence = held.empty() ? one_line(gate.reason) : render_gap(held.front());
    ap.criterion = held.empty() ? one_line(gate.reason) : one_line(held.front().description);
    appeal = ap;
    out.why_stopped = "the final gate does not agree that the branch ships";
    stop("appeal", "an appeal waits for a person: neither review overrides the other",
         "does the branch ship? the reviewer says SHIP, the final gate " + ap.final_gate_verdict +
             " on: " + ap.criterion);
    return {};
  }
  std::optional<Appeal> appeal;

  void finish_reports() {
    std::set<std::string> open;
    for (const auto& g : out.review.gaps) open.insert(gap_key(g));
    const bool judged = out.review.verdict != Verdict::blocked && !attempts.empty();
    for (const auto& g : first_gaps) {
      auto& rep = reports[gap_key(g)];
      rep.gap = g;
      if (open.count(gap_key(g)))
        rep.status = "open";
      else if (judged && !rep.commits.empty())
        rep.status = "fixed";
      else if (rep.status != "failed" && rep.status != "skipped")
        rep.status = "unverified";
      out.gaps.push_back(rep);
    }
  }

  Expected<FixOutcome> run() {
    DG_CHECK(make_directories(req.dir));
    out.model = req.model;
    out.effort = req.effort;
    out.raises_used = req.raises_used;
    Review current;
    if (req.review) {
      current = *req.review;
      // The re-reviewer is pointed at the gaps of the review before it.
      std::string list;
      for (const auto& g : current.gaps) list += "- " + render_gap(g) + "\n";
      DG_CHECK(make_directories(loop_dir(0)));
      DG_CHECK(write_file_atomic(join_path(loop_dir(0), "gaps.md"), list));
    } else {
      DG_TRY(current, review(0));
    }
    first_gaps = blocking(current);
    out.review = current;
    int n = 0;
    while (true) {
      out.review = current;
      if (current.verdict == Verdict::ship) {
        stop("ship", n ? "the re-review found no blocking gap" : "the review found none");
        if (req.rules.final_gate) DG_CHECK(final_gate(n));
        break;
      }
      std::string why;
      if (current.verdict == Verdict::blocked)
        why = "the review is BLOCKED: " + one_line(current.reason);
      else if (!attempts.empty() &&
               same_gaps(attempts.back().gaps_before, attempts.back().gaps_after))
        why = "the same gaps twice: no progress";
      else if (n >= req.rules.max_loops + granted)
        why = "fix loop exhausted (" + std::to_string(n) + "/" +
              std::to_string(req.rules.max_loops) + ")";
      if (!why.empty()) {
        DG_TRY(bool again, diagnose(n + 1, why));
        if (!again) break;
        if (current.verdict == Verdict::blocked) {
          // Nothing to fix from a review that could not judge: the route
          // changed what it works with, so the branch is reviewed again.
          ++n;
          DG_TRY(current, review(n));
          continue;
        }
      }
      ++n;
      DG_TRY(current, fix_once(n, current));
    }
    finish_reports();
    if (out.end != "ship") {
      RecordInput in;
      in.subject = req.subject;
      in.why_stopped = out.why_stopped.empty() ? out.route : out.why_stopped;
      in.remaining = out.review.gaps;
      in.diagnosis = out.diagnosis;
      in.route = out.route + (out.question.empty() ? "" : " (" + out.question + ")");
      in.attempts = out.loops;
      in.max_attempts = req.rules.max_loops + granted;
      in.escalations = out.raises_used;
      in.max_escalations = req.escalation.max_raises;
      in.appeal = appeal;
      out.record = join_path(req.dir, "diagnosis.md");
      DG_CHECK(write_file_atomic(out.record, render_record(in)));
    }
    DG_CHECK(save(join_path(req.dir, "fix.json"), to_json(out)));
    return out;
  }
};

}  // namespace

Expected<FixOutcome> run_fix(const FixRequest& request, FixPersonas& personas, git::Git& git,
                             CommandRunner& runner) {
  Loop loop(request, personas, git, runner);
  return loop.run();
}

std::optional<PersonaAnswer> kept_answer(const std::string& dir) {
  auto j = load_json_file(join_path(dir, "answer.json"));
  if (!j || !j->is_object() || !j->contains("result")) return std::nullopt;
  PersonaAnswer a;
  a.result = j->at("result");
  a.outcome = json_str(*j, "outcome", "result");
  a.handle = json_str(*j, "handle");
  a.session_id = json_str(*j, "session_id");
  a.cost_usd = j->value("cost_usd", 0.0);
  return a;
}

Status keep_answer(const std::string& dir, const PersonaAnswer& a) {
  DG_CHECK(make_directories(dir));
  Json kept = {{"result", a.result},
               {"outcome", a.outcome},
               {"handle", a.handle},
               {"session_id", a.session_id},
               {"cost_usd", a.cost_usd}};
  return write_file_atomic(join_path(dir, "answer.json"), dump_py(kept, 2) + "\n");
}

Json to_json(const FixOutcome& o) {
  Json gaps = Json::array();
  for (const auto& g : o.gaps) {
    Json j = to_json(g.gap);
    j["status"] = g.status;
    j["commits"] = g.commits;
    if (!g.evidence.empty()) j["evidence"] = g.evidence;
    gaps.push_back(std::move(j));
  }
  Json r = {{"end", o.end},
            {"verdict", std::string(verdict_name(o.review.verdict))},
            {"loops", o.loops},
            {"commits", o.commits},
            {"gaps", gaps},
            {"unclaimed", o.unclaimed},
            {"why_stopped", o.why_stopped},
            {"route", o.route},
            {"question", o.question},
            {"record", o.record},
            {"raises_used", o.raises_used},
            {"model", o.model ? Json(*o.model) : Json()},
            {"effort", o.effort ? Json(*o.effort) : Json()}};
  if (o.raise_needed)
    r["raise_needed"] = {{"from", o.raise_needed->first}, {"to", o.raise_needed->second}};
  if (o.decision)
    r["decision"] = {{"from", o.decision->from},
                     {"to", o.decision->to},
                     {"reason", o.decision->reason},
                     {"approver", o.decision->approver},
                     {"at", o.decision->at}};
  if (o.diagnosis) {
    r["cause"] = std::string(cause_name(o.diagnosis->cause));
    r["evidence"] = o.diagnosis->evidence;
    r["decided_by"] = o.diagnosis->by_code ? "code" : "diagnosis persona";
  }
  return r;
}

}  // namespace devgraph::fix
