// Which issues a pull request closes, read from its body the way GitHub
// reads closing keywords. gh 2.23 (Debian 12's) has no
// closingIssuesReferences field, so `gh pr list` asks for the body and
// this reads it.
//
// Contract:
// - A reference is a closing keyword (close, closes, closed, fix, fixes,
//   fixed, resolve, resolves, resolved; any case) standing as a word of its
//   own (no letter, digit or '_' right before it), an optional ':', one or
//   more spaces or tabs, then `#N`: a positive decimal number not followed
//   by a letter, digit or '_' (`#12abc` is no reference, `#12.` is).
// - Only issues of the pull request's own repository count: `owner/repo#N`
//   and URLs are not references here, whatever repository they name (the
//   body alone does not say which repository is its own).
// - One keyword closes one issue: in "Fixes #1, #2" only #1 is closed, as
//   on GitHub.
// - The numbers come in the order of their first reference, each once.
// - Pure: no I/O, any bytes in, never an error.
#pragma once

#include <string>
#include <vector>

namespace devgraph::gh {

std::vector<long long> closing_issues(const std::string& body);

}  // namespace devgraph::gh
