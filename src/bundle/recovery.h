// The shared recovery nodes of GRAPH.yaml for any bundle or task cursor:
// context_recovery (a persona said NEEDS_CONTEXT) and blocker_recovery (it
// said BLOCKED, or never answered).
//
// Contract:
// - decide() is pure. NEEDS_CONTEXT goes to the node's needs_context route
//   where the node has one (else its blocked route). Context is looked for
//   in DESIGN.md's order (bundle/context_search.h): the task's brief, the
//   bundle's spec and the plan; the worktree's tracked files (`git grep`
//   for the question's words, identifiers and file names, and a named path
//   that exists); the history (commit subjects); the run's artifacts (the
//   other tasks' saved results). The bundle's issues reach the search
//   through the spec, which holds them. What is found is a few ranked
//   pointers (`path:line: excerpt`, at most context_recovery's
//   max_pointers); the retry's prompt carries them, fenced as data. Where
//   the search finds nothing and context_recovery `dispatches` a persona
//   (the researcher), that persona is run once (at most max_researcher_runs
//   per cursor), read-only: its answer counts only through pointers that
//   exist (the file in the worktree, the line in the file), quoted from the
//   file rather than from the answer. The cursor goes back to its node
//   (retry_previous) when something was found and it has recovered context
//   fewer than context_recovery's max_retries times, else to a person. The
//   question, what was searched and what was found ride on the
//   NEEDS_CONTEXT event (`context_search`), and a person asked after all
//   reads what was searched in the cursor's reason. BLOCKED: a provider limit goes to a person at
//   once (a relaunch would meet the same limit); a capacity blocker (the
//   persona ran out of context) is retried without spending the budget;
//   anything else (timeouts, malformed results, a persona's own block) is
//   retried while blocker_recovery's max_retries allows.
// - pass() makes the two moves: into the recovery node with the persona's
//   event (NEEDS_CONTEXT, BLOCKED, FOOTPRINT_VIOLATION), recording the
//   decision and the spent budgets on the cursor, then out of it: RECOVERED
//   back to the node it came from, or AWAITING_HUMAN at the shared cursor
//   interrupt (a route to the run's human_required stops only this
//   cursor). resume() finishes the second move for a cursor a killed
//   driver left standing on a recovery node.
// - Every cursor that waits for a person says why on its record
//   (kWaitingWhyKey), whichever part of the driver parked it: the inbox
//   (src/inbox/) shows that line to the person.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "bundle/bundle_run.h"
#include "bundle/context_search.h"
#include "bundle/dispatch.h"
#include "contracts/schema.h"
#include "util/expected.h"
#include "util/json.h"

namespace devgraph::bundle {

// The cursor's field saying why it waits for a person (or, on a recovery
// node, why recovery decided what it did), clipped to 300 characters.
inline constexpr const char* kWaitingWhyKey = "recovery_why";
// The merge for a move to the cursor interrupt: the reason, on the cursor.
Json waiting_merge(const std::string& why);

// Where to look for what a persona said it was missing.
struct ContextSources {
  std::string brief;  // the task's brief ("" for the bundle cursor)
  std::string brief_path = "the task's brief";
  std::string spec;  // the bundle's spec
  std::string spec_path = "the bundle's spec";
  std::string plan;  // the plan's markdown
  std::string plan_path = "the plan";
  // Repository paths that exist (relative to the worktree), among the
  // names asked for.
  std::vector<std::string> existing_paths;
  // The tracked files' lines `git grep` found for the questions' terms.
  std::vector<SourceLine> repository;
  std::vector<std::string> branch_commits;  // "<hash> <subject>"
  // The lines of the bundle's GitHub issues' comments (untrusted text).
  std::vector<SourceLine> issue_comments;
  // Other tasks' saved results: (the result file, summary and evidence).
  std::vector<std::pair<std::string, std::string>> sibling_results;
  // What was searched, in order, for the event and for a person.
  std::vector<std::string> searched;
};

// The sources for `missing`: the task's brief (when `task` is set), the
// bundle's spec and plan, the named paths that exist in the worktree (never
// one outside it), the tracked files' lines that mention the questions'
// terms (`git grep`, bounded), the history's commit subjects, the comments
// on the bundle's GitHub issues (`gh issue view --json comments`, at most
// 50 an issue, each cut at 4 KB; a call that fails is named in `searched`),
// and `results` (other tasks' saved results).
ContextSources gather_context(BundleRun& run, const std::vector<std::string>& missing,
                              std::vector<std::pair<std::string, std::string>> results,
                              const std::optional<std::string>& task = std::nullopt);

// The ranked pointers for the questions, as lines for the persona
// ("- docs/conventions.md:3: Dates in reports use ISO 8601"): at most `max`.
std::vector<std::string> find_context(const std::vector<std::string>& missing,
                                      const ContextSources& sources, size_t max = 8);

// What context recovery did for one NEEDS_CONTEXT: the pointers, and the
// record for the event (questions, terms, searched, found, researcher).
struct ContextFound {
  std::vector<std::string> pointers;
  std::string searched;  // one line, for a person
  Json record = Json::object();
  int researcher_runs = 0;  // researcher launches made now
};

// The search, then (nothing found, budget left) the researcher. `results`
// are other tasks' saved results (path, text).
Expected<ContextFound> look_for_context(BundleRun& run, const std::optional<std::string>& task,
                                        const std::string& node, const PersonaResult& asked,
                                        std::vector<std::pair<std::string, std::string>> results);

// A researcher's answer, checked: the pointers ({path, line}) whose file
// exists in `worktree` and has that line, each quoted from the file
// ("- path:line: the line"); empty when it found nothing, the answer does
// not match `schema` (when given), or no pointer checks out.
std::vector<std::string> checked_research(const Json& raw, const std::string& worktree,
                                          const Schema* schema);

struct RecoveryDecision {
  std::string route;  // needs_context | blocked | footprint_violation
  std::string event;  // the move into the recovery node
  bool retry = false;
  bool spends_retry = false;          // counts against blocker_recovery's budget
  bool spends_context = false;        // counts against context_recovery's budget
  std::string why;                    // for a person, or for the log
  std::vector<std::string> pointers;  // context found
  Json recovered_detail;              // added to the RECOVERED move's detail (retry)
  // The search's record (ContextFound::record), on the NEEDS_CONTEXT event.
  Json search;
  int researcher_runs = 0;  // added to the cursor's count
};

struct Budgets {
  int retries = 0;     // blocker retries spent by the cursor
  int context = 0;     // context recoveries spent by the cursor
  int researcher = 0;  // researcher launches made for the cursor
};

// `searched` (one line) goes into the reason a person reads.
RecoveryDecision decide(const lane::Walker& walker, const std::string& node,
                        const PersonaResult& result, const Budgets& spent,
                        const std::vector<std::string>& pointers, const std::string& searched = "");

// Where a cursor stands after recovery.
struct Recovered {
  bool retry = false;
  std::string node;   // the node it is back on (retry), or where it waits
  std::string extra;  // for the relaunch: where the recovered context is
  std::string why;    // for a person
};

Budgets spent_budgets(const Json& cursor);

Expected<Recovered> pass(BundleRun& run, const std::string& lane,
                         const std::optional<std::string>& task, const std::string& node,
                         const RecoveryDecision& decision, Json detail,
                         Json merge = Json::object());
Expected<Recovered> resume(BundleRun& run, const std::string& lane,
                           const std::optional<std::string>& task);

}  // namespace devgraph::bundle
