// The bounded fix and re-review loop (`devgraph fix`; GRAPH.yaml `fix` and
// `escalation`): the fixer closes a review's gaps, devgraph commits each
// gap's files and runs the validation commands itself, a separate
// re-reviewer gives the next verdict; after the loops, a BLOCKED review or
// the same gaps twice, the escalation diagnosis names the cause and its
// route is taken. Personas run behind FixPersonas, git and commands behind
// their seams, so the loop runs in-process in tests.
//
// Contract:
// - Every persona call is a new launch (a new process and a new session:
//   nothing is resumed across calls); the re-reviewer runs on
//   fix.reviewer_backend when one is named, never as the fixer's session.
// - The fixer's dispatch (templates/fix-dispatch.md) carries the numbered
//   blocking gaps (fenced as data), the acceptance criteria's path, the
//   validation commands and the stop conditions. Its `fixes` entries say
//   which files closed which gap: each gap's changed files are one commit
//   (`fix: <gap>`, trailer Devgraph-Fix-Gap), by pathspec, in gap order; a
//   file already committed for an earlier gap is not taken again. Changed
//   files no entry claims stay uncommitted and are reported. Nothing is
//   ever pushed.
// - The validation commands run as argv in the worktree (timeout, bounded
//   output) after every fix; what they showed is evidence, whatever the
//   fixer claimed. A red one (non-zero exit, timeout) is a blocking gap of
//   its own (file "validation") added to the re-review's verdict, so it is
//   never SHIP; its output goes, fenced as data, to the re-reviewer and to
//   the next fixer.
// - Stops: SHIP ends it (end "ship"). FIX-FIRST loops while loops last
//   (fix.max_loops, plus one granted by a route below). BLOCKED, loops
//   spent, or the same blocking gaps twice go to the diagnosis
//   (fix/diagnosis.h): code decides where the evidence does, else the
//   diagnosis persona proposes and check_proposal() checks it (a refused
//   or unreadable proposal ends "needs_person" with its reason).
// - Routes: model-capacity raises one step on the backend's ladder (with
//   no model or effort given, the CLI's default counts as the first step) and
//   grants one loop, at most escalation.max_raises raises per subject
//   (`raises_used` counts earlier ones); past the cap only a RaiseDecision
//   naming exactly that step allows it, else end "needs_person".
//   missing-context gathers what was asked for (existing files, their
//   recent history) into context-N.md and grants one loop at the same
//   setting, once. env-tool-failure runs the validation again once; still
//   failing, end "blocked" with the error. ambiguous-spec ends
//   "needs_person" with the readings as the question. overdesigned-plan
//   ends "replan" with the machinery named.
// - With fix.final_gate, a SHIP is reviewed once more on
//   fix.final_gate_backend (the loop's own backend when that is sim or
//   command); a final gate that does not say SHIP ends "appeal": both
//   verdicts with their evidence and the contested criterion go into the
//   record, and a person decides.
// - Every stop that is not SHIP writes the record (render_record) to
//   <dir>/diagnosis.md. Files: <dir>/loop-N/{fixer,review,diagnosis}.json,
//   validation.json, diff.patch; <dir>/fix.json is the outcome.
// - The outcome reports each gap of the first review as the tools showed
//   it: fixed (a commit, and the last review no longer lists it), open
//   (attempted or not, the last review still lists it), failed or skipped
//   (the fixer said so and no review cleared it), unverified (no commit
//   for it, or no review could judge). Never "fixed" on the fixer's word
//   alone. With a given review, loop-0/gaps.md holds its gaps. After a
//   refused diagnosis the record names no earlier cause; its budget counts
//   the loops a route granted.
// - Errors are for a loop that cannot run (a template, git refusing a
//   commit, a stop signal: `interrupted`); a persona that fails is
//   evidence, not an error.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "fix/diagnosis.h"
#include "fix/gaps.h"
#include "git/git.h"
#include "graph/graph.h"
#include "proc/command.h"
#include "util/expected.h"
#include "util/json.h"

namespace devgraph::fix {

struct PersonaCall {
  std::string role;     // "review", "fix", "diagnosis"
  std::string persona;  // a persona name
  std::string dispatch;
  std::string backend;  // a backend name
  std::optional<std::string> model;
  std::optional<std::string> effort;
  std::string dir;  // the call's own directory (logs, prompts, CLI files)
};

struct PersonaAnswer {
  Json result = Json::object();  // the RESULT_JSON object, or a BLOCKED stand-in
  std::string outcome;           // "result", "malformed_result", "timeout", ...
  std::string handle;            // the launch's own id
  std::string session_id;
  double cost_usd = 0.0;
};

// A persona call's answer kept in its own directory (<dir>/answer.json,
// replaced atomically), so a caller killed in a later call replays this
// one instead of launching it again. kept_answer(): nullopt when none was
// kept (or the file is not one).
std::optional<PersonaAnswer> kept_answer(const std::string& dir);
Status keep_answer(const std::string& dir, const PersonaAnswer& answer);

class FixPersonas {
 public:
  virtual ~FixPersonas() = default;
  virtual Expected<PersonaAnswer> run(const PersonaCall& call) = 0;
};

// A person's recorded decision to raise past the cap.
struct RaiseDecision {
  std::string from, to, reason, approver, at;
};

struct FixRequest {
  std::string worktree;  // absolute
  std::string base;      // what the review diffs against
  std::string dir;       // the loop's own files
  std::string subject;   // "branch feature/x", for the record
  std::string criteria;  // the acceptance criteria file; "" none
  std::vector<std::string> validate;
  std::optional<Review> review;  // given; else the reviewer runs first
  FixRules rules;
  EscalationRules escalation;
  std::string skill_dir;
  std::string backend = "claude";
  std::optional<std::string> model;
  std::optional<std::string> effort;
  int raises_used = 0;
  std::optional<RaiseDecision> decision;
  std::chrono::milliseconds command_timeout{std::chrono::minutes(30)};
  std::function<void(const Json&)> on_log;  // progress records; may be empty
};

struct GapReport {
  Gap gap;
  std::string status;  // fixed, open, failed, skipped
  std::vector<std::string> commits;
  std::string evidence;
};

struct FixOutcome {
  std::string end;  // ship, needs_person, blocked, replan, appeal
  Review review;    // the last verdict
  int loops = 0;
  std::vector<std::string> commits;
  std::vector<GapReport> gaps;
  std::vector<std::string> unclaimed;  // changed files no fix entry named
  std::optional<Diagnosis> diagnosis;
  std::string why_stopped;
  std::string route;     // what was done or must be done next, one line
  std::string question;  // needs_person: what to decide
  std::string record;    // the diagnosis record's path; "" on ship
  int raises_used = 0;
  std::optional<std::string> model, effort;  // the setting the loop ended at
  // needs_person because the raise cap is reached: the step a person's
  // decision would allow ({from, to}).
  std::optional<std::pair<std::string, std::string>> raise_needed;
  std::optional<RaiseDecision> decision;  // the person's decision the loop used
};

Expected<FixOutcome> run_fix(const FixRequest& request, FixPersonas& personas, git::Git& git,
                             CommandRunner& runner);

Json to_json(const FixOutcome& outcome);

}  // namespace devgraph::fix
