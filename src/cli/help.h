// What devgraph says about itself: `devgraph --help`, `devgraph VERB
// --help` and the man pages, all made from the verb table (cli/verbs.h) and
// the parsers it holds, so a flag is described where it is parsed.
//
// Contract:
// - top_help(): the usage line, a sentence on what devgraph is, the verbs
//   under one heading per group (VerbGroup order; the verbs in table
//   order), and where to read more.
// - verb_help(v): for a verb without sub-commands, its parser's help; for
//   one with sub-commands, the verb's usage, its description and options,
//   then each sub-command's synopsis, summary and arguments. Either way
//   every flag with its default where it has one, then the example and the
//   exit codes (help_epilog()).
// - verb_usage(v): the verb's own usage text when the table gives one; else
//   its parser's usage when the sub-command is one of its positionals; else
//   argparse's `usage: devgraph VERB [-h] {SUB,...} ...`.
// - man_pages(): devgraph.1 and devgraph-VERB.1 for every verb, in roff
//   (man(7) macros), keyed by file name. Each page has NAME, SYNOPSIS,
//   DESCRIPTION, OPTIONS (every flag, with its default), EXAMPLE, EXIT
//   STATUS (when the verb documents its codes) and SEE ALSO. No date, so the
//   pages of one version are the same bytes wherever they are made.
// - reference_markdown(): docs/reference.md, the same content in Markdown:
//   the verbs by group in --help order, then the internal verbs; per verb
//   its summary, synopsis (one per sub-command), description, every
//   argument and flag with its default (hidden flags marked internal),
//   each sub-command's arguments, the example and the exit codes. No
//   version and no date, so the checked-in file changes only when the
//   table does (tests/CMakeLists.txt, docs.ReferenceIsCurrent).
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "cli/verbs.h"

namespace devgraph {

std::string top_help();
std::string verb_help(const Verb& v);
std::string verb_usage(const Verb& v);
std::string help_epilog(const Verb& v);
// The verb's documented exit codes (Verb::exit_status), as (code, meaning).
std::vector<std::pair<std::string, std::string>> exit_codes(const Verb& v);

std::map<std::string, std::string> man_pages(const std::string& version);
std::string reference_markdown();

}  // namespace devgraph
