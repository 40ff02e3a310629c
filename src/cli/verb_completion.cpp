// `devgraph completion bash|zsh|fish`: a completion script for the shell
// on stdout (cli/completion.h); `devgraph completion man DIR` writes the
// man pages into DIR, `devgraph completion reference` prints
// docs/reference.md (cli/help.h). The scripts call back `devgraph
// completion --complete -- WORDS...`, which prints the candidates for the
// last word one a line (with --describe, "candidate<TAB>description"), and
// nothing at all when something cannot be read. `--verbs` lists the verbs.
//
// Exit codes: 0 printed or written; 1 a page could not be written; 2 a
// usage error.
#include <exception>

#include "cli/completion.h"
#include "cli/help.h"
#include "cli/verbs.h"
#include "util/args.h"
#include "util/console.h"
#include "util/fs.h"
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

int write_man_pages(const std::string& dir) {
  if (auto made = make_directories(dir); !made) return report_error("completion", made.error());
  std::string written;
  for (const auto& [name, page] : man_pages(DEVGRAPH_VERSION)) {
    const std::string path = join_path(dir, name);
    if (auto w = write_file_atomic(path, page); !w) return report_error("completion", w.error());
    written += path + "\n";
  }
  write_out(written);
  return 0;
}

}  // namespace

ArgParser verb_completion_parser() {
  ArgParser p("devgraph completion");
  p.description(
       "Print a completion script for bash, zsh or fish. The script asks devgraph for the "
       "candidates at each Tab, so it completes the verbs, sub-commands and flags of the "
       "binary it calls, and bundle ids, issue numbers, run ids and debug slugs from the "
       "current repository's runs. `devgraph completion man DIR` writes the man pages "
       "(devgraph.1 and devgraph-VERB.1) into DIR; `devgraph completion reference` prints "
       "the verb reference in Markdown (docs/reference.md).")
      .positional("shell",
                  "the shell to complete for; man to write the man pages, reference to print "
                  "the Markdown reference")
      .choices({"bash", "zsh", "fish", "man", "reference"})
      .optional()
      .positional("dir", "with man: the directory the pages are written into")
      .optional()
      .hint(ValueHint::directory)
      .flag("verbs", "list the verbs, one a line")
      .flag("complete",
            "print the candidates for the last of the words after --, one a line (what the "
            "scripts call)")
      .hidden()
      .flag("describe", "with --complete: each candidate's description after a tab")
      .hidden()
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
  if (shell == "reference") {
    if (pos.size() > 1)
      return report_error("completion", p.usage_error("unrecognized arguments: " + pos[1]));
    write_out(reference_markdown());
    return 0;
  }
  if (shell == "man") {
    if (pos.size() < 2) return report_error("completion", p.usage_error("man needs DIR"));
    return write_man_pages(pos[1]);
  }
  const std::string script = completion::script(shell);
  if (script.empty())
    return report_error("completion", p.usage_error("argument shell: invalid choice: '" + shell +
                                                    "' (choose from 'bash', 'zsh', 'fish', 'man', "
                                                    "'reference')"));
  if (pos.size() > 1)
    return report_error("completion", p.usage_error("unrecognized arguments: " + pos[1]));
  write_out(script);
  return 0;
}

}  // namespace devgraph
