// One debug session's loop (`devgraph debug start|continue|answer`): the
// debug file's phase says what to do, each step is done and its outcome
// decided by decide.h, and the file is saved before the next step. The
// debugger and the specialists run behind fix::FixPersonas (each call a
// new launch: a new process and session), the TDD test and git behind
// their seams, so the loop also runs in process in tests.
//
// Contract:
// - The caller holds the session lock (debug_file.h) for the whole call.
// - Every transition is saved to the file (atomically) before its effect
//   is relied on, and appended to <session>/events.jsonl after it. A
//   persona call's answer is kept in calls/<step>/answer.json the moment
//   it is known; a loop started again at that step reads it back instead of
//   launching. Before anything is launched, processes a killed predecessor
//   left (each call's live-children record) are ended.
// - The debugger (GRAPH.yaml debug.debugger, role "debug": it may write in
//   the worktree) is told the debug file's path, the worktree, the goal,
//   the mode and the directive (debug-dispatch.md); never the file's text.
//   A specialist (role "specialist": read only) gets the root cause and the
//   fix direction as data (specialist-dispatch.md) and answers
//   `review: {verdict: LOOKS_GOOD | SUGGEST_CHANGE, detail}`; no usable
//   answer is recorded as verdict NONE, and the session goes on.
// - A debugger run that ends without a result (timeout, out of turns with
//   no RESULT_JSON even after the runtime's resume, a CLI that kept
//   failing) changes nothing: the outcome is CONTINUE_REQUIRED and the same
//   step runs again on `continue`. A stop signal ends the persona first and
//   is ErrorKind::interrupted (exit 128 + N), the file as it was.
// - The TDD test runs as argv in the worktree (never a shell), with a
//   timeout and bounded output; its output is kept in
//   <session>/tdd/<step>-<red|green>.log.
// - Commit: the fix's files (files_changed, and the test file) that git
//   status shows changed, by pathspec (git::commit_paths), trailer
//   `Devgraph-Debug: <slug>`; a commit carrying it since the base is taken
//   instead of committing twice. Delivery: local records the ready branch;
//   github pushes (skipped when origin has HEAD already) and opens a pull
//   request (looked up first), into the default branch. Archive: the file
//   goes to debug/resolved/<slug>.md (written, then the active one
//   removed).
// - Outcomes: DEBUG_COMPLETE (exit 0), WAITING for a person or STOPPED by
//   one (exit 2), CONTINUE_REQUIRED (exit 1). With `ask` set (a terminal),
//   a question is asked there and the loop goes on; a refused answer is
//   asked again, no answer (end of input) is WAITING.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "debug/debug_file.h"
#include "debug/decide.h"
#include "fix/loop.h"
#include "gh/gh.h"
#include "git/git.h"
#include "graph/graph.h"
#include "proc/command.h"
#include "util/expected.h"
#include "util/json.h"

namespace devgraph::debug {

struct SessionConfig {
  Paths paths;
  std::string skill_dir;
  DebugRules rules;
  std::string backend = "claude";  // the debugger's
  std::optional<std::string> model;
  std::chrono::milliseconds test_timeout{std::chrono::minutes(10)};
  std::function<std::string()> now;  // ISO 8601 UTC
  std::function<std::optional<Answer>(const Question&)> ask;
  std::function<void(const std::string&)> on_line;  // progress, one line each
};

struct SessionParts {
  fix::FixPersonas& personas;
  CommandRunner& runner;
  git::Git& git;         // in the session's worktree
  gh::Gh* gh = nullptr;  // github delivery only
};

struct Outcome {
  DebugFile file;
  std::string status;  // DEBUG_COMPLETE, WAITING, STOPPED, CONTINUE_REQUIRED
  std::string why;     // CONTINUE_REQUIRED: what ended the step
  int exit_code = 0;
};

DecideRules decide_rules(const DebugRules& rules);

// Saves `file` at its place (active file) with `updated` set, and appends
// `event` to events.jsonl. For the verbs' own transitions (start, answer).
Status record(const SessionConfig& cfg, DebugFile& file, const std::string& event,
              const Json& detail = Json::object());

Expected<Outcome> run_session(DebugFile file, const SessionConfig& cfg, SessionParts& parts);

// The outcome of a session that is not run: its status from the file.
Outcome outcome_of(DebugFile file);

// The terminal summary and the RESULT_JSON object. "TDD" is yes for a
// session started with --tdd from its first summary on, and for one in
// which a TDD gate ran.
std::string summary_text(const Outcome& outcome, const Paths& paths);
Json summary_json(const Outcome& outcome, const Paths& paths);

}  // namespace devgraph::debug
