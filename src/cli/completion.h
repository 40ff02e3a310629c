// Shell completion: the scripts `devgraph completion bash|zsh|fish` prints
// and the answer to their call back, `devgraph completion --complete --
// WORDS...`. The scripts hold no verb or flag: each Tab asks the binary it
// completes for, so they offer what that binary parses (cli/verbs.h).
//
// Contract:
// - complete(words): `words` are the words after `devgraph` as the shell
//   split them, the last being the word under the cursor (maybe empty).
//   The answer is what may replace that last word, in table order: verbs;
//   a verb's sub-commands; the flags of the parser in force (and --help)
//   for a word that starts with '-' or where no positional is due; an
//   option's or positional's choices; and for a value hinted as
//   ValueHint::bundle, issue, run or slug, the ids a ValueSource reads.
//   A file or directory value is the one candidate ":file" or ":dir": the
//   script then asks the shell for its own file completion. Candidates
//   start with the word being completed.
// - bash splits `--flag=value` at '=': a word "=" after a flag joins it, so
//   "--repo" "=" "x" completes the value of --repo, and the candidates
//   replace only the part bash calls the word ("=" itself included when
//   the cursor stands just after it).
// - The repository whose runs give the ids is the value of a --repo flag
//   among the words, else the current directory.
// - Never fails and never prints: a source that cannot read gives nothing.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cli/verbs.h"

namespace devgraph::completion {

struct Candidate {
  std::string value;
  std::string description;  // "" when there is none
};

class ValueSource {
 public:
  virtual ~ValueSource() = default;
  // The values of kind `hint` (bundle, issue, run or slug) in the runs of
  // the repository at `repo`; none when there are none or they cannot be
  // read.
  virtual std::vector<Candidate> values(ValueHint hint, const std::string& repo) = 0;
};

// The values of kind `hint` in develop home `home`: bundle ids from
// runs/*/state.json (`bundles[].id`, described by the bundle's title, and
// the keys of `bundles_runtime`), sorted; issue numbers from issues/<N>.md
// (described by state and title when every issue file reads), by number;
// run ids (runs/* with a state.json), newest first; debug slugs from
// debug/<slug>.md when that directory exists. What cannot be read is left
// out.
std::vector<Candidate> home_values(ValueHint hint, const std::string& home);

// home_values() of the develop home of the repository at `repo`
// (inbox::develop_home_of); none outside a repository.
class RepositoryValues final : public ValueSource {
 public:
  std::vector<Candidate> values(ValueHint hint, const std::string& repo) override;
};

std::vector<Candidate> complete(std::span<const Verb> verbs, std::vector<std::string> words,
                                ValueSource& source);

// The script for `shell` (bash, zsh or fish); "" for another shell.
std::string script(std::string_view shell);

}  // namespace devgraph::completion
