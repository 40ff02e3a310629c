// The GitHub CLI as bundle delivery uses it: find the pull request of a
// branch, open one, ask for auto-merge. One small interface, so the code
// that delivers runs in tests against an in-memory GitHub
// (tests/support/fake_gh.h).
//
// Contract:
// - Every call runs `gh` as argv (never a shell; never `gh api`, never
//   `--jq`) through a CommandRunner in one directory, the bundle worktree,
//   whose remote tells gh the repository. stdin is /dev/null, prompts and
//   the update notice are off, and each call has a timeout of kTimeout.
// - A call that cannot say what it was asked is an Error whose `kind` is
//   one of the kinds below and whose one-line message names the
//   subcommand and quotes gh's last line of stderr. "No pull request" and
//   "auto-merge refused" are answers, not errors.
// - Nothing is retried here. A call that timed out or failed may still
//   have taken effect on GitHub, so a caller that must not act twice looks
//   first and again afterwards (find_pr around create_pr).
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "proc/command.h"
#include "util/expected.h"

namespace devgraph::gh {

// What each ErrorKind (util/expected.h) means here.
inline constexpr ErrorKind kNotInstalled = ErrorKind::not_found;  // gh could not be started
inline constexpr ErrorKind kTimedOut = ErrorKind::timeout;        // no answer within kTimeout
inline constexpr ErrorKind kFailed = ErrorKind::refused;          // gh ran and refused
inline constexpr ErrorKind kMalformed = ErrorKind::internal;      // an answer gh never gives
inline constexpr ErrorKind kBadRequest = ErrorKind::usage;        // refused before running gh

inline constexpr std::chrono::minutes kTimeout{5};

struct PullRequest {
  long long number = 0;
  std::string url;
  bool auto_merge = false;  // auto-merge is enabled on it
};

struct CreateRequest {
  std::string base;  // the branch to merge into
  std::string head;  // the pushed branch
  std::string title;
  std::string body_file;  // a file holding the body (gh reads it)
};

// What `gh pr merge --auto` answered.
struct MergeAnswer {
  bool enabled = false;
  std::string reason;  // gh's last stderr line when not enabled
};

class Gh {
 public:
  virtual ~Gh() = default;

  // `gh pr view <branch> --json number,url,autoMergeRequest`: the pull
  // request whose head is `branch`, or nullopt when gh finds none.
  virtual Expected<std::optional<PullRequest>> find_pr(const std::string& branch) = 0;

  // `gh pr create --base B --head H --title T --body-file F`. Fails (kFailed)
  // when gh refuses, e.g. when the head already has a pull request or was
  // never pushed.
  virtual Status create_pr(const CreateRequest& request) = 0;

  // `gh pr merge <number> --auto --merge`. A repository without auto-merge,
  // or a pull request gh cannot merge, is an answer: not enabled, with
  // gh's reason.
  virtual Expected<MergeAnswer> enable_auto_merge(long long number) = 0;
};

// The real thing: runs `program` (found through PATH when it has no slash)
// in `dir` through `runner`, which must outlive the returned object.
std::unique_ptr<Gh> make_gh(CommandRunner& runner, std::string dir, std::string program = "gh");

}  // namespace devgraph::gh
