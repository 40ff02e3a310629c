// `devgraph audit-merge RUN_DIR --key KEY`: the post-merge audit of one
// merged pull request (GRAPH.yaml `audit_merged`), a child process the
// orchestrator starts once per PR of the audit window, several at once,
// each in its own process group; it may be SIGKILLed at any instant and
// started again. It reads what to audit from a request file, runs one
// merge-auditor persona in a detached worktree at the merge commit, and
// leaves its answer in a result file. The decisions are pure functions
// (below the effects); audit.h holds the range and findings rules.
//
// Files, in RUN_DIR/audit/KEY/ (KEY: [a-z0-9._-]+, e.g. pr-12):
//   request.json   written by the orchestrator (MergeAuditRequest)
//   result.json    the answer (merge_audit_result_json), replaced atomically
//   dispatch-N.md  the Nth dispatch text sent to the auditor
//   audit.log      the persona runtime's log (JSON lines)
//   merge-auditor.output.log, prompts/, sim/, cli/, live-children, .lock
//
// Contract:
// - A usage error writes nothing and exits 3: a bad key, bad flags, a
//   request.json that is missing, unparsable, lacks a field, has a field
//   of the wrong type or shape, or whose merge_commit is not a commit of
//   `repo`.
// - A result.json that parses is the answer: it is printed again and
//   nothing is dispatched, so a relaunch after a kill never audits twice
//   (an audit worktree still left behind is removed).
// - One audit per key at a time (flock on .lock; a second exits 1). The
//   personas a killed predecessor left running are ended first.
// - The range: `git_range` when the request gives one, else audit_range()
//   over the merge commit's parents (`git rev-list --parents -n 1`): a
//   merge commit gets `<merge>^1..<merge>`, a squash the PR's diff in
//   diff_file. On NEEDS_CONTEXT the range is recomputed once (parents
//   counted again; the same form as before switches to the other form
//   when it is available) and the auditor dispatched again once.
// - The worktree: `git worktree add --detach <worktree> <merge>` run in
//   `repo`. One already there is reused when it is a detached worktree of
//   repo at the merge commit, else removed with `git worktree remove
//   --force` (twice forced when git's own "initializing" lock of a killed
//   add is on it) and made again; a directory there that is no worktree
//   of repo is refused. Forcing is acceptable because the worktree is a
//   detached checkout devgraph made only for reading. No other worktree
//   or branch is touched. It is removed again once result.json is written.
// - The answer: audited for DONE or DONE_WITH_CONCERNS whose findings
//   pass parse_findings(); blocked, with a one-line reason, for anything
//   else (a result the runtime could not take, malformed findings,
//   BLOCKED, a second NEEDS_CONTEXT, any other runtime outcome).
// - SIGINT, SIGTERM and SIGHUP stop the persona (PersonaRuntime::stop_all)
//   and exit 128+N without a result file.
// - Every git call is argv through the CommandRunner, never a shell; the
//   PR's title is untrusted and reaches the auditor fenced as data.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agents/runtime.h"
#include "orchestrator/audit.h"
#include "proc/command.h"
#include "util/expected.h"
#include "util/json.h"

namespace devgraph::orchestrator {

inline constexpr int kAuditExitDone = 0;  // audited or blocked: result.json written
inline constexpr int kAuditExitError = 1;
inline constexpr int kAuditExitUsage = 3;
// An auditor is dispatched at most this often for one PR.
inline constexpr int kMaxAuditDispatches = 2;

// [a-z0-9._-]+, and neither "." nor "..".
bool valid_audit_key(std::string_view key);
std::string audit_key_dir(const std::string& run_dir, const std::string& key);

// request.json. Every field is required with its type; `key` must be the
// key asked for, merge_commit 40 (or 64) lower-case hex digits, repo and
// worktree absolute paths (worktree not the repo itself), diff_file empty
// or an absolute path of a regular file, git_range empty or `A..B` in
// revision characters (no option, space or shell syntax).
// diff_file is best kept under RUN_DIR: personas are granted the run
// directory (claude's --add-dir), not the rest of the machine.
struct MergeAuditRequest {
  std::string key;
  long long pr = 0;  // 0 for local delivery
  std::string title;
  std::string merge_commit;
  std::string merged_at;
  std::string default_branch;
  std::string repo;
  std::string worktree;
  std::string diff_file;
  std::string git_range;
};
// Shape and types only (no file or git is read but diff_file's kind);
// errors are usage errors naming the field.
Expected<MergeAuditRequest> parse_merge_audit_request(const Json& doc, std::string_view key);

// The range of the first dispatch: git_range when given; else
// audit_range(merge, parents), taking the other form when the chosen one
// is unavailable (a squash without diff_file: the first-parent range).
// Fails when there is none (no diff_file and a root commit).
Expected<AuditRange> first_audit_range(const MergeAuditRequest& request, int parents);
// The other form than `before`, when available: the first-parent range
// for a PR diff (the commit has a parent); for a git range, the PR diff
// when diff_file is given, else the first-parent range when it differs.
std::optional<AuditRange> other_audit_range(const MergeAuditRequest& request,
                                            const AuditRange& before, int parents);
// The range after NEEDS_CONTEXT: first_audit_range() with the parents
// counted again; when that is the same form as `before`, the other form
// if there is one, else the same range again.
AuditRange recomputed_audit_range(const MergeAuditRequest& request, const AuditRange& before,
                                  int parents);
// The dispatch's diff_range: the git range, or "the pull request's diff
// in <diff_file>".
std::string diff_range_text(const MergeAuditRequest& request, const AuditRange& range);

// What one auditor completion means for the PR.
enum class AuditStep { audited, dispatch_again, blocked };
struct AuditJudgement {
  AuditStep step = AuditStep::blocked;
  std::vector<Finding> findings;  // audited only
  std::string reason;             // blocked: one line
};
// `dispatch` counts from 1; NEEDS_CONTEXT at kMaxAuditDispatches is
// blocked.
AuditJudgement judge_audit(const agents::Completion& completion, int dispatch);

// Every concern starting with "coverage" (any case); for an audited PR
// with no findings and no evidence at all, also the nothing-substantiated
// line.
std::vector<std::string> audit_gaps(const Json& result, bool audited, size_t findings);
inline constexpr std::string_view kNothingSubstantiated =
    "nothing substantiated: the auditor reported no findings and no evidence";

Json finding_json(const Finding& finding);

// result.json: key, pr, status (audited|blocked), range, dispatches,
// findings, gaps, summary, reason (blocked only), cost_usd, persona_runs.
struct MergeAuditOutcome {
  bool audited = false;
  std::string range;  // what the auditor was given last
  int dispatches = 0;
  std::vector<Finding> findings;
  std::vector<std::string> gaps;
  std::string summary;
  std::string reason;
  double cost_usd = 0.0;
  int persona_runs = 0;
};
Json merge_audit_result_json(const MergeAuditRequest& request, const MergeAuditOutcome& outcome);

// The effects.
struct MergeAuditOptions {
  std::string run_dir;
  std::string key;
  std::optional<std::string> skill;  // --skill
  std::string agent = "claude";      // --agent
  std::string agent_bin;             // --claude-bin
  std::optional<std::string> model;
  double api_backoff_seconds = 60.0;
  std::optional<double> persona_timeout_seconds;
  std::string sim_scenario;
  std::vector<std::string> agent_command;
  // The run's limits broker (DEVGRAPH_LIMITS_SOCKET, as `devgraph run`
  // gives its drivers): the auditor waits for a persona slot there and is
  // withdrawn, blocked, once the run's budget is spent. Empty: no limits.
  std::string limits_socket;
  // Every runtime log record as it is written; may be empty.
  std::function<void(const Json&)> on_log;
};

struct MergeAuditReport {
  int exit_code = kAuditExitDone;  // 0, 1, 3 or 128+N (see the contract)
  std::optional<Json> result;      // the RESULT_JSON object, when there is one
  std::string error;               // one line, when there is no result
};

MergeAuditReport run_merge_audit(const MergeAuditOptions& options, CommandRunner& runner);

}  // namespace devgraph::orchestrator
