// The verb table: every `devgraph <verb>` is one function in its own source
// file (src/cli/verb_<name>.cpp), listed once in verbs.cpp.
//
// Contract for a verb function: it receives the words after the verb name,
// prints its own output, and returns the process exit code. Expected
// failures come back as values and are reported with report_error(); an
// exception escaping a verb is caught in run_main() and reported as an
// internal error (exit 70).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "board/server.h"
#include "util/args.h"
#include "util/expected.h"

namespace devgraph {

using VerbArgs = std::vector<std::string>;

struct Verb {
  const char* name;
  const char* summary;
  int (*run)(const VerbArgs& args);
};

std::span<const Verb> verb_table();

// Prints `error.message` (stdout when exit_code is 0, as for --help; stderr
// otherwise, prefixed with "devgraph <verb>: " unless it is a usage text)
// and returns error.exit_code.
int report_error(const std::string& verb, const Error& error);

int run_main(int argc, char** argv);

// The --agent-command flag of run-bundle and demo: the template's words
// (quoted as in a recorded test command, never a shell), refused when it
// is empty, unparsable, or given for another --agent. An error is the
// flag's one-line message.
Expected<std::vector<std::string>> agent_command_template(const std::optional<std::string>& flag,
                                                          const std::string& agent);

// `--board [PORT]`, `--bind ADDR` and `--open` of the verbs that serve
// their run's live board while it runs (run, clean), declared on `p`.
void declare_board_flags(ArgParser& p);
// The board's socket, bound now, before the verb does anything else, so a
// port in use stops it first; nullopt without --board. A usage error (a
// port that is none, --bind or --open without --board, --board with a dry
// run) comes from `p`; a port that cannot be had is ErrorKind::refused.
Expected<std::optional<board::Listener>> bind_board(const ArgParser& p, const ParsedArgs& a,
                                                    bool dry_run);

// One function per verb, defined in src/cli/verb_<name>.cpp.
int verb_checkpoint(const VerbArgs& args);
int verb_validate(const VerbArgs& args);
int verb_schedule(const VerbArgs& args);
int verb_guard(const VerbArgs& args);
int verb_run(const VerbArgs& args);
int verb_clean(const VerbArgs& args);
int verb_issue(const VerbArgs& args);
int verb_run_bundle(const VerbArgs& args);
int verb_audit_merge(const VerbArgs& args);
int verb_demo(const VerbArgs& args);
int verb_install(const VerbArgs& args);
int verb_doctor(const VerbArgs& args);
int verb_sim_agent(const VerbArgs& args);
int verb_inbox(const VerbArgs& args);
int verb_board(const VerbArgs& args);
int verb_answer(const VerbArgs& args);
int verb_metrics(const VerbArgs& args);
int verb_critique(const VerbArgs& args);
int verb_discuss(const VerbArgs& args);
int verb_fix(const VerbArgs& args);
int verb_debug(const VerbArgs& args);

}  // namespace devgraph
