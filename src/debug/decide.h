// What a debug session does next, decided by code: pure functions from the
// session's file (debug_file.h) and what just happened (the debugger's
// return, an unreadable one, a person's answer, a TDD run, a specialist's
// review) to the next file, whose `m.phase` is the next action:
//   launch      the debugger again, in `m.mode`, told `m.directive`
//   ask         a person answers `m.pending`
//   tdd_red     devgraph runs the test command: it must fail before the fix
//   tdd_green   devgraph runs it again: it must pass after the fix
//   specialist  the specialist of `m.specialist_hint` reviews the fix direction
//   commit      the fix's files are committed by pathspec
//   deliver, archive, done   (the session's end: see session.h)
//
// Contract:
// - Transitions (the reference's, as code):
//   ROOT_CAUSE_FOUND: the specialist when the session asked for one and
//     GRAPH.yaml maps the hint; then, with --tdd, a launch that writes the
//     failing test first; else a person chooses fix now (a launch in mode
//     fix), plan or manual (both stop, the root cause recorded).
//   TDD_CHECKPOINT: tdd_red. A test that passes is refused: the debugger is
//     told so, as data, and writes another. Red confirmed: a launch in
//     mode tdd_green.
//   DEBUG_COMPLETE: with a confirmed red test, tdd_green first (a failing
//     test sends the debugger back); then commit when files changed, else
//     archive.
//   CHECKPOINT_REACHED: a person answers; the answer goes to the next
//     launch as data.
//   INVESTIGATION_INCONCLUSIVE: continue, add context (text), or stop.
//   FIX_REJECTED_BY_GUARDRAIL: revise (mode fix), accept as recorded
//     technical debt (text; recorded in Resolution and Evidence, then the
//     debugger finishes), or abandon (stop).
//   An unreadable return: launched again with what was wrong, as data, up
//     to `malformed_resumes` times in a row; then a person chooses try
//     again or stop.
// - A launch past `max_cycles` debugger calls since a person last decided
//   becomes a question (go on, or stop); going on launches exactly what
//   was held.
// - Every text from a person or a persona reaches a directive only through
//   fence_untrusted() (util/untrusted.h). A question, once answered, is gone from the file and its
//   id is in `m.answered`: nothing asks it again.
// - decide_answer() refuses (ErrorKind::usage, one line, the file
//   unchanged) an answer when nothing is pending, a choice out of range, a
//   text where a choice is needed, or a choice that needs a text without
//   one.
#pragma once

#include <optional>
#include <set>
#include <string>

#include "debug/debug_file.h"
#include "debug/returns.h"
#include "util/expected.h"

namespace devgraph::debug {

struct DecideRules {
  int max_cycles = 8;
  int malformed_resumes = 1;
  std::set<std::string> specialist_hints;  // hints GRAPH.yaml maps to a specialist
};

struct Answer {
  int choice = 0;  // 1-based; 0 none
  std::string text;
};

// What devgraph saw when it ran the test command.
struct TestRun {
  bool ran = false;  // false: it could not be run (`output` says why)
  int exit_code = -1;
  std::string output;  // a bounded tail
};

// The session's first state: a launch in mode investigate (or fix, for the
// goal find_and_fix) with the opening directive.
DebugFile begin(DebugFile file);

DebugFile decide_return(DebugFile file, const DebugReturn& r, const std::string& now,
                        const DecideRules& rules);
DebugFile decide_malformed(DebugFile file, const std::string& why, const DecideRules& rules);
Expected<DebugFile> decide_answer(DebugFile file, const Answer& answer, const std::string& now);
// `green`: the run after the fix; else the red run before it.
DebugFile decide_tdd(DebugFile file, bool green, const TestRun& run, const DecideRules& rules);
// The repository's hook refused the fix's commit (git/git.h
// ErrorKind::hook; `why` its one line, `output` what it printed): the
// debugger changes the fix, shown the output as data, in the mode it fixed
// in (a TDD session's green run is due again), within the cycles before a
// person is asked.
DebugFile decide_commit_refused(DebugFile file, const std::string& why, const std::string& output,
                                const DecideRules& rules);
// After the specialist (its review already appended, or none to be had).
DebugFile decide_reviewed(DebugFile file, const DecideRules& rules);

// The session's status for a phase (what `status` in the front matter says).
std::string status_for(const DebugFile& file);

}  // namespace devgraph::debug
