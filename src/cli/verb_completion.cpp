// `devgraph completion bash|zsh|fish`: a completion script for the shell
// on stdout (cli/completion.h). The scripts call back `devgraph
// completion --complete -- WORDS...`, which prints the candidates for the
// last word one a line (with --describe, "candidate<TAB>description"), and
// nothing at all when something cannot be read. `--verbs` lists the verbs.
//
// Exit codes: 0 printed; 2 a usage error.
#include <exception>

#include "cli/completion.h"
#include "cli/verbs.h"
#include "util/args.h"
#include "util/console.h"
#include "util/suggest.h"

namespace devgraph {
namespace {

int print_candidates(const std::vector<std::string>& words, bool describe) {
  try {
    completion::RepositoryValues values;
    std::string text;
    for (const auto& c : completion::complete(verb_table(), words, values)) {
      text += c.value;
      if (describe && !c.description.empty()) text += "\t" + c.description;
      text += "\n";
    }
    write_out(text);
  } catch (const std::exception&) {
    // A completion never fails loudly: no candidates.
  }
  return 0;
}

}  // namespace

ArgParser verb_completion_parser() {
  ArgParser p("devgraph completion");
  p.description(
       "Print a completion script for bash, zsh or fish. The script asks devgraph for the "
       "candidates at each Tab, so it completes the verbs, sub-commands and flags of the "
       "binary it calls, and bundle ids, issue numbers, run ids and debug slugs from the "
       "current repository's runs.")
      .positional("shell", "the shell to complete for")
      .choices({"bash", "zsh", "fish"})
      .optional()
      .flag("verbs", "list the verbs, one a line")
      .flag("complete",
            "print the candidates for the last of the words after --, one a line (what the "
            "scripts call)")
      .flag("describe", "with --complete: each candidate's description after a tab")
      .allow_rest();
  return p;
}

int verb_completion(const VerbArgs& args) {
  ArgParser p = verb_parser("completion");
  auto a = p.parse(args);
  if (!a) return report_error("completion", a.error());
  if (a->flag("complete")) {
    std::vector<std::string> words = a->positionals();
    words.insert(words.end(), a->rest().begin(), a->rest().end());
    return print_candidates(words, a->flag("describe"));
  }
  if (!a->rest().empty()) {
    std::string word = a->rest()[0];
    std::vector<std::string> known;
    for (const auto& o : p.options()) known.push_back(o.name);
    auto near = word.rfind("--", 0) == 0 ? closest(word.substr(2), known) : std::nullopt;
    return report_error("completion",
                        p.usage_error("unrecognized arguments: " + word +
                                      (near ? " (did you mean --" + *near + "?)" : "")));
  }
  if (a->flag("verbs")) {
    std::string names;
    for (const Verb& v : verb_table()) names += std::string(v.name) + "\n";
    write_out(names);
    return 0;
  }
  const auto& pos = a->positionals();
  if (pos.empty())
    return report_error("completion", p.usage_error("the following arguments are required: shell"));
  const std::string& shell = pos[0];
  const std::string script = completion::script(shell);
  if (script.empty())
    return report_error("completion", p.usage_error("argument shell: invalid choice: '" + shell +
                                                    "' (choose from 'bash', 'zsh', 'fish')"));
  write_out(script);
  return 0;
}

}  // namespace devgraph
