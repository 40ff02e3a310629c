// The verb table: every `devgraph <verb>` is one function in its own source
// file (src/cli/verb_<name>.cpp), listed once in verbs.cpp with its group,
// its parser (and its sub-commands' parsers), an example and its exit codes.
// `--help`, the shell completions and the man pages are all made from the
// table (cli/help.h, cli/completion.h), so none of them can drift from the
// flags the verb parses.
//
// Contract for a verb function: it receives the words after the verb name,
// prints its own output, and returns the process exit code. It parses its
// flags with the parsers the table holds (verb_parser(), or the parser of
// its Subcommand), never with a second declaration. Expected failures come
// back as values and are reported with report_error(); an exception
// escaping a verb is caught in run_main() and reported as an internal
// error (exit 70).
//
// Contract for the table: every verb has a group, a parser, a one-line
// summary and an example; a verb with sub-commands lists each with its own
// parser. Building a parser has no side effect and reads no file.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "board/server.h"
#include "util/args.h"
#include "util/expected.h"

namespace devgraph {

using VerbArgs = std::vector<std::string>;

// What a verb is for, as `devgraph --help` groups them.
enum class VerbGroup { loop, look, bundle, blocks };
// The group's heading ("Run the loop").
const char* group_title(VerbGroup group);

// One sub-command of a verb (`devgraph issue new`): its own parser.
struct Subcommand {
  std::string name;
  std::string summary;
  ArgParser parser;
};

struct Verb {
  const char* name;
  const char* summary;
  int (*run)(const VerbArgs& args);
  VerbGroup group;
  // The verb's flags. For a verb with sub-commands: the words before the
  // sub-command (the positional whose hint is ValueHint::subcommand is the
  // sub-command itself; without one the sub-command is the first word).
  ArgParser (*parser)();
  // nullptr for a verb without sub-commands.
  std::vector<Subcommand> (*subcommands)() = nullptr;
  const char* example = "";
  // One exit code a line: "CODE what it means"; "" when the verb documents
  // none of its own.
  const char* exit_status = "";
  // A usage text of the verb's own, for a verb whose words argparse could
  // not say (board); nullptr: generated from the parsers.
  const char* usage = nullptr;
  // Started by devgraph itself (or by tests), never by a person: left out
  // of `devgraph --help`, listed last in docs/reference.md.
  bool internal = false;
};

std::span<const Verb> verb_table();
// The verb named `name`; nullptr when there is none.
const Verb* find_verb(std::string_view name);
// The parser of verb `name` from the table, with its example and exit codes
// as the help's epilog: what the verb function parses with.
ArgParser verb_parser(std::string_view name);
// The sub-commands of verb `name` (empty when it has none).
std::vector<Subcommand> verb_subcommands(std::string_view name);
// The sub-command called `name` among `subs`; nullptr when none is, with
// argparse's list of the choices in `choices` ("'a', 'b'").
const Subcommand* find_subcommand(const std::vector<Subcommand>& subs, const std::string& name,
                                  std::string& choices);

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

// The default of every verb's --skill, as help shows it.
inline constexpr const char* kSkillDefault = "$DEVGRAPH_SKILL, else the installed copy";
// The default of --claude-bin, as help shows it.
inline constexpr const char* kAgentBinDefault = "the backend's CLI on PATH";

// `--board [PORT]`, `--bind ADDR` and `--open` of the verbs that serve
// their run's live board while it runs (run, clean), declared on `p`.
void declare_board_flags(ArgParser& p);
// The board's socket, bound now, before the verb does anything else, so a
// port in use stops it first; nullopt without --board. A usage error (a
// port that is none, --bind or --open without --board, --board with a dry
// run) comes from `p`; a port that cannot be had is ErrorKind::refused.
Expected<std::optional<board::Listener>> bind_board(const ArgParser& p, const ParsedArgs& a,
                                                    bool dry_run);

// One function per verb, defined in src/cli/verb_<name>.cpp, with the
// builders of its parsers.
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
int verb_completion(const VerbArgs& args);

ArgParser verb_checkpoint_parser();
std::vector<Subcommand> verb_checkpoint_subcommands();
ArgParser verb_validate_parser();
std::vector<Subcommand> verb_validate_subcommands();
ArgParser verb_schedule_parser();
std::vector<Subcommand> verb_schedule_subcommands();
ArgParser verb_guard_parser();
std::vector<Subcommand> verb_guard_subcommands();
ArgParser verb_run_parser();
ArgParser verb_clean_parser();
ArgParser verb_issue_parser();
std::vector<Subcommand> verb_issue_subcommands();
ArgParser verb_run_bundle_parser();
ArgParser verb_audit_merge_parser();
ArgParser verb_demo_parser();
ArgParser verb_install_parser();
ArgParser verb_sim_agent_parser();
ArgParser verb_inbox_parser();
ArgParser verb_board_parser();
std::vector<Subcommand> verb_board_subcommands();
ArgParser verb_answer_parser();
ArgParser verb_metrics_parser();
std::vector<Subcommand> verb_metrics_subcommands();
ArgParser verb_critique_parser();
ArgParser verb_discuss_parser();
ArgParser verb_fix_parser();
ArgParser verb_completion_parser();
ArgParser verb_doctor_parser();
ArgParser verb_debug_parser();
std::vector<Subcommand> verb_debug_subcommands();

}  // namespace devgraph
