// Why gaps survive a fix loop, and what to do about it: the five causes of
// an escalation diagnosis, decided by code where the evidence decides and
// otherwise proposed by the diagnosis persona and checked here; the next
// model or effort on the ladder; the diagnosis record. Pure: no process,
// no file.
//
// Contract:
// - Evidence decides first, in this order (diagnose_by_evidence()):
//   a validation command that could not run (not found, not executable,
//   timed out: exit 126 or 127, or timed_out) in the last attempt is
//   env-tool-failure, its command and output the evidence; a fixer whose
//   last result asked for context (status NEEDS_CONTEXT, or a non-empty
//   missing_context) is missing-context, what it asked for the evidence.
//   Otherwise nullopt: the persona is asked.
// - new_evidence(): the last attempt produced something the one before it
//   did not: its blocking gaps differ (same_gaps() false), or a validation
//   command's exit code changed. A single attempt is new evidence. The
//   same gaps twice is never new evidence.
// - check_proposal(): the persona's `diagnosis` object: cause (one of the
//   five names), new_evidence (text), rules_out (an object naming each of
//   the four other causes with a non-empty reason), and per cause:
//   ambiguous-spec needs `readings` (two or more), overdesigned-plan
//   `machinery` (one or more), missing-context `needed` (one or more).
//   model-capacity is refused (ErrorKind::refused, "no new evidence")
//   unless new_evidence() held. Anything else missing is an error naming
//   the field.
// - next_raise(): the ladder is a backend's settings from weakest to
//   strongest (GRAPH.yaml escalation.ladder: claude models, codex
//   reasoning efforts, ...). The next raise is one step above `current`
//   (a current setting not on the ladder counts as below its first step).
//   Refused, with the reason, when the backend has no ladder, `current` is
//   its top, or `raises_used` has reached `max_raises` (then a person's
//   recorded decision is needed: needs_person).
// - render_record(): the diagnosis or appeal record (Markdown), in this
//   order: a title saying why the loop stopped and that the work stays in
//   progress; Remaining gaps (render_gap, one per line); Cause; New
//   evidence; Route; Budget "attempts=A/MAX; escalations=E/MAX";
//   Appeal (only when there is one: both verdicts with their evidence and
//   the contested criterion). The same input gives the same bytes.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fix/gaps.h"
#include "util/expected.h"
#include "util/json.h"

namespace devgraph::fix {

enum class Cause {
  model_capacity,
  missing_context,
  ambiguous_spec,
  env_tool_failure,
  overdesigned_plan
};
std::string_view cause_name(Cause c);  // "model-capacity", ...
std::optional<Cause> cause_from(std::string_view name);
inline constexpr Cause kCauses[] = {Cause::model_capacity, Cause::missing_context,
                                    Cause::ambiguous_spec, Cause::env_tool_failure,
                                    Cause::overdesigned_plan};

struct Validation {
  std::string command;
  int exit_code = 0;
  bool timed_out = false;
  std::string output_tail;  // the last lines of its output
};

// What one fix loop showed.
struct Attempt {
  std::vector<Gap> gaps_before;  // the review the fixer was given
  std::vector<Gap> gaps_after;   // the re-review's
  std::string fixer_status;      // DONE, BLOCKED, NEEDS_CONTEXT, ...
  std::vector<std::string> missing_context;
  std::vector<std::string> blockers;
  std::vector<Validation> validations;
};

struct Diagnosis {
  Cause cause = Cause::model_capacity;
  std::string evidence;                // the new evidence, or what decided it
  bool by_code = false;                // decided by the evidence, not proposed
  std::vector<std::string> readings;   // ambiguous-spec
  std::vector<std::string> machinery;  // overdesigned-plan
  std::vector<std::string> needed;     // missing-context
  std::map<Cause, std::string> rules_out;
};

std::optional<Diagnosis> diagnose_by_evidence(const std::vector<Attempt>& attempts);
bool new_evidence(const std::vector<Attempt>& attempts);
Expected<Diagnosis> check_proposal(const Json& diagnosis, bool has_new_evidence);

struct Raise {
  bool allowed = false;
  std::string from;           // the current setting ("" when none was set)
  std::string to;             // the next one, when allowed
  bool needs_person = false;  // refused only because the cap is reached
  std::string why_not;
};

Raise next_raise(const std::map<std::string, std::vector<std::string>>& ladder,
                 const std::string& backend, const std::string& current, int raises_used,
                 int max_raises);

struct Appeal {
  std::string reviewer_verdict, reviewer_evidence;
  std::string final_gate_verdict, final_gate_evidence;
  std::string criterion;
};

struct RecordInput {
  std::string subject;      // "bundle b1" or "branch feature/x"
  std::string why_stopped;  // "fix loop exhausted (2/2)", "reviewer BLOCKED", ...
  std::vector<Gap> remaining;
  std::optional<Diagnosis> diagnosis;
  std::string route;  // what happens next, one line
  int attempts = 0, max_attempts = 2;
  int escalations = 0, max_escalations = 2;
  std::optional<Appeal> appeal;
};

std::string render_record(const RecordInput& input);

}  // namespace devgraph::fix
