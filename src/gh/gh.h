// The GitHub CLI as devgraph uses it: bundle delivery finds the pull
// request of a branch, opens one and asks for auto-merge; the orchestrator
// lists the open issues and the open pull requests. One small interface,
// so the code that uses it runs in tests against an in-memory GitHub
// (tests/support/fake_gh.h). docs/gh-commands.md lists every command.
//
// Contract:
// - Every call runs `gh` as argv (never a shell; never `gh api`, never
//   `--jq` or `--template`) through a CommandRunner in one directory (a
//   bundle worktree, or the repository), whose remote tells gh the
//   repository. stdin is /dev/null, prompts and the update notice are off,
//   and each call has a timeout of kTimeout.
// - A call that cannot say what it was asked is an Error whose `kind` is
//   one of the kinds below and whose one-line message names the
//   subcommand and quotes gh's last line of stderr. "No pull request" and
//   "auto-merge refused" are answers, not errors.
// - JSON is read whole: an answer with any part not as asked for (a
//   missing field, a wrong type) is kMalformed, never a partial list.
// - Nothing is retried here. A call that timed out or failed may still
//   have taken effect on GitHub, so a caller that must not act twice looks
//   first and again afterwards (find_pr around create_pr).
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gh/pr_status.h"
#include "issues/issue.h"
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

// An open pull request as `gh pr list` shows it.
struct OpenPr {
  long long number = 0;
  std::string url;
  std::string head;  // headRefName
  std::string base;  // baseRefName
  // The issues of this repository its body closes (gh/closing.h), in the
  // order of their first mention.
  std::vector<long long> closes;
};

// A merged pull request as `gh pr list --state merged` shows it.
struct MergedPr {
  long long number = 0;
  std::string title;
  std::string url;
  std::string head;          // headRefName
  std::string base;          // baseRefName
  std::string merge_commit;  // mergeCommit.oid
  std::string merged_at;     // mergedAt, as gh prints it (ISO 8601)
};

// One review of a pull request (`gh pr view --json reviews`).
struct Review {
  std::string author;  // author.login; "" when GitHub gives none
  std::string state;   // APPROVED, CHANGES_REQUESTED, COMMENTED, DISMISSED, PENDING
  std::string body;    // untrusted text
};

// One comment on an issue (`gh issue view --json comments`).
struct IssueComment {
  std::string author;  // author.login; "" when GitHub gives none
  std::string body;    // untrusted text
};

struct NewIssue {
  std::string title;
  std::string body_file;  // a file holding the body (gh reads it)
  std::vector<std::string> labels;
};

// What bounded text a call keeps (a diff, a log): the tail beyond it is cut.
inline constexpr size_t kMaxTextBytes = 256 * 1024;

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

  // `gh issue list --state open --limit 1000 --json
  // number,title,body,labels,state,createdAt,updatedAt`, with `--label L`
  // when a label is given: the open issues, in gh's order (newest first),
  // at most 1000. Each has its state lower-cased, its labels' names, its
  // parent from its body (issues::parent_from_body) and its priority from
  // its labels (issues::priority_from_labels). What gh answers is filtered
  // again: an issue that is not open, or lacks the label (compared without
  // regard to ASCII case, as GitHub compares label names), is left out. A
  // label that is empty, starts with '-' or holds a ',', a '"' or a newline
  // (gh would read it as a flag or as several labels) is kBadRequest, and
  // gh is not run.
  virtual Expected<std::vector<issues::Issue>> list_open_issues(
      const std::optional<std::string>& label) = 0;

  // `gh pr list --state open --limit 1000 --json
  // number,url,headRefName,baseRefName,body`: the open pull requests, in
  // gh's order (newest first), at most 1000, each with the issues its body
  // closes.
  virtual Expected<std::vector<OpenPr>> list_open_prs() = 0;

  // `gh pr view <number> --json
  // number,state,headRefName,headRefOid,mergeCommit,reviewDecision,statusCheckRollup`,
  // read by parse_pr_status (gh/pr_status.h); an answer about another
  // pull request than the one asked for is kMalformed.
  virtual Expected<PrStatus> pr_status(long long number) = 0;

  // `gh pr list --state merged --limit 200 --json
  // number,title,url,headRefName,baseRefName,mergeCommit,mergedAt`: the
  // merged pull requests, newest first, at most 200. One without a merge
  // commit (mergeCommit null or without an "oid") or without mergedAt is
  // kMalformed.
  virtual Expected<std::vector<MergedPr>> list_merged_prs() = 0;

  // `gh pr view <number> --json number,reviews`: its reviews, oldest
  // first (gh's order); an answer about another pull request, or a review
  // whose state is none of Review's, is kMalformed.
  virtual Expected<std::vector<Review>> pr_reviews(long long number) = 0;

  // `gh issue view <number> --json number,comments`: the issue's comments,
  // oldest first (gh's order); an answer about another issue, or a comment
  // without a string body, is kMalformed. A number below 1 is kBadRequest,
  // and gh is not run.
  virtual Expected<std::vector<IssueComment>> issue_comments(long long number) = 0;

  // `gh pr diff <number>`: the pull request's diff, at most kMaxTextBytes
  // (a longer one is cut, with a last line saying so: bounded_diff). An
  // answer past the runner's 16 MiB, whose start is lost, is kMalformed.
  virtual Expected<std::string> pr_diff(long long number) = 0;

  // `gh run view --job <id> --log-failed`, where <id> comes from a check's
  // link (.../actions/runs/<run>/job/<id>, read by actions_job_id): the
  // failed steps' log, its last kMaxTextBytes (bounded_log). A link that
  // names no Actions job is kBadRequest, and gh is not run.
  virtual Expected<std::string> failed_job_log(const std::string& check_link) = 0;

  // `gh label create <name> --color <color> --description <d> --force`:
  // the label exists afterwards (created or updated). An empty name, or a
  // name, color or description that gh would read as a flag (a leading
  // '-') or holding a newline, is kBadRequest, and gh is not run.
  virtual Status ensure_label(const std::string& name, const std::string& color,
                              const std::string& description) = 0;

  // `gh issue create --title T --body-file F --label L...`: the new
  // issue's number, read from the URL gh prints as its last line of stdout
  // (`https://.../issues/<number>`; anything else is kMalformed). Not
  // idempotent: a caller looks first (list_labeled_issues) and again after
  // a failure. An empty title or body file, a title or body file starting
  // with '-' (gh reads a body file "-" from stdin), a title holding a
  // newline, or a label list_open_issues would refuse, is kBadRequest, and
  // gh is not run.
  virtual Expected<long long> create_issue(const NewIssue& issue) = 0;

  // `gh issue list --state all --label L --limit 1000 --json
  // number,title,body,labels,state,createdAt,updatedAt`: every issue, open
  // or closed, carrying the label (filtered again as list_open_issues
  // does, state aside), newest first. The same label rules as
  // list_open_issues.
  virtual Expected<std::vector<issues::Issue>> list_labeled_issues(const std::string& label) = 0;
};

// The pure parts of reading bounded answers and check links, which the real
// gh and the in-memory fake share.
//
// actions_job_id: the job id of a GitHub Actions job link,
// `https://github.com/<owner>/<repo>/actions/runs/<run>/job/<id>`,
// optionally followed by `?...` or `#...` (run and id are decimal numbers
// without a leading zero); nullopt for anything else.
std::optional<std::string> actions_job_id(std::string_view link);
// bounded_diff: a diff of at most kMaxTextBytes as it is; a longer one's
// first kMaxTextBytes (fewer when that would split a UTF-8 character), a
// newline unless those end in one, and a last line `[diff cut at N bytes]`
// where N is how many bytes were kept.
std::string bounded_diff(std::string diff);
// bounded_log: a log's last kMaxTextBytes (fewer when that would split a
// UTF-8 character), or all of a shorter one.
std::string bounded_log(std::string log);

// The real thing: runs `program` (found through PATH when it has no slash)
// in `dir` through `runner`, which must outlive the returned object.
std::unique_ptr<Gh> make_gh(CommandRunner& runner, std::string dir, std::string program = "gh");

}  // namespace devgraph::gh
