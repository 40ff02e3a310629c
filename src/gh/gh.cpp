#include "gh/gh.h"

#include <cctype>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "gh/closing.h"
#include "util/json.h"

namespace devgraph::gh {
namespace {

Error error_of(ErrorKind kind, std::string message) {
  return fail(kind, std::move(message));
}

// The last non-blank line of `text`, trimmed and cut to a length a one-line
// message can carry. A line ending in ':' introduces the last one (gh
// writes "... already exists:" above the pull request's URL), so the two
// are joined.
std::string last_line(const std::string& text) {
  const char* blank = " \t\r\n";
  auto line_before = [&](size_t end, size_t& start) {
    size_t nl = text.find_last_of('\n', end);
    start = nl == std::string::npos ? 0 : nl + 1;
    start = text.find_first_not_of(blank, start);
    return text.substr(start, end - start + 1);
  };
  size_t end = text.find_last_not_of(blank);
  if (end == std::string::npos) return "";
  size_t start = 0;
  std::string line = line_before(end, start);
  size_t prev_end = start == 0 ? std::string::npos : text.find_last_not_of(blank, start - 1);
  if (prev_end != std::string::npos && text[prev_end] == ':') {
    size_t prev_start = 0;
    line = line_before(prev_end, prev_start) + " " + line;
  }
  if (line.size() > 300) {
    line.resize(297);
    line.append("...");
  }
  return line;
}

// Why gh refused: its last stderr line, else its last stdout line, else
// its exit status.
std::string refusal(const CommandResult& r) {
  std::string why = last_line(r.err);
  if (why.empty()) why = last_line(r.out);
  if (why.empty()) why = "exit " + std::to_string(r.exit_code);
  return why;
}

bool has_leading_dash(const std::string& s) {
  return !s.empty() && s[0] == '-';
}

std::string ascii_lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// A value quoted in a one-line message: JSON on one line, cut short.
std::string one_line(const Json& value) {
  std::string text = dump_py(value);
  if (text.size() > 80) {
    text.resize(77);
    text.append("...");
  }
  return text;
}

// The elements of a list answer, checked one by one. `bad` words what is
// wrong with element `index`.
class ListReader {
 public:
  ListReader(const Json& element, size_t index, const std::string& what, const char* noun)
      : j_(element), index_(index), what_(what), noun_(noun) {}

  Error bad(const std::string& why) const {
    return error_of(kMalformed, what_ + " answered " + noun_ + " (element " +
                                    std::to_string(index_) + ") " + why);
  }

  Status object() const {
    if (!j_.is_object()) return bad("that is not an object: " + one_line(j_));
    return {};
  }

  Expected<const Json*> field(const char* key) const {
    if (!j_.contains(key)) return bad(std::string("without \"") + key + "\"");
    return &j_.at(key);
  }

  Expected<long long> number() const {
    DG_TRY(const Json* n, field("number"));
    if (!n->is_number_integer() || n->get<long long>() <= 0)
      return bad("whose \"number\" is not a positive integer: " + one_line(*n));
    return n->get<long long>();
  }

  Expected<std::string> str(const char* key, bool may_be_empty = true) const {
    DG_TRY(const Json* v, field(key));
    if (!v->is_string())
      return bad(std::string("whose \"") + key + "\" is not a string: " + one_line(*v));
    if (!may_be_empty && v->get_ref<const std::string&>().empty())
      return bad(std::string("whose \"") + key + "\" is empty");
    return v->get<std::string>();
  }

 private:
  const Json& j_;
  size_t index_;
  const std::string& what_;
  const char* noun_;
};

// The label names of an issue's "labels": objects with a string "name".
Expected<std::vector<std::string>> label_names(const ListReader& in) {
  DG_TRY(const Json* labels, in.field("labels"));
  if (!labels->is_array()) return in.bad("whose \"labels\" is not an array: " + one_line(*labels));
  std::vector<std::string> names;
  for (const Json& label : *labels) {
    if (!label.is_object() || !label.contains("name") || !label.at("name").is_string() ||
        label.at("name").get_ref<const std::string&>().empty())
      return in.bad("with a label that has no name: " + one_line(label));
    names.push_back(label.at("name").get<std::string>());
  }
  return names;
}

Expected<issues::Issue> issue_of(const ListReader& in) {
  DG_CHECK(in.object());
  issues::Issue issue;
  DG_TRY(issue.number, in.number());
  DG_TRY(issue.title, in.str("title"));
  DG_TRY(issue.body, in.str("body"));
  DG_TRY(std::string state, in.str("state"));
  issue.state = ascii_lower(state);
  if (issue.state != "open" && issue.state != "closed")
    return in.bad("whose \"state\" is neither OPEN nor CLOSED: " + one_line(state));
  DG_TRY(issue.labels, label_names(in));
  DG_TRY(issue.created, in.str("createdAt", false));
  DG_TRY(issue.updated, in.str("updatedAt"));
  issue.parent = issues::parent_from_body(issue.body);
  issue.priority = issues::priority_from_labels(issue.labels);
  return issue;
}

Expected<OpenPr> open_pr_of(const ListReader& in) {
  DG_CHECK(in.object());
  OpenPr pr;
  DG_TRY(pr.number, in.number());
  DG_TRY(pr.url, in.str("url", false));
  DG_TRY(pr.head, in.str("headRefName", false));
  DG_TRY(pr.base, in.str("baseRefName", false));
  DG_TRY(std::string body, in.str("body"));
  pr.closes = closing_issues(body);
  return pr;
}

Expected<MergedPr> merged_pr_of(const ListReader& in) {
  DG_CHECK(in.object());
  MergedPr pr;
  DG_TRY(pr.number, in.number());
  DG_TRY(pr.title, in.str("title"));
  DG_TRY(pr.url, in.str("url", false));
  DG_TRY(pr.head, in.str("headRefName", false));
  DG_TRY(pr.base, in.str("baseRefName", false));
  DG_TRY(const Json* merge, in.field("mergeCommit"));
  if (!merge->is_object() || !merge->contains("oid") || !merge->at("oid").is_string() ||
      merge->at("oid").get_ref<const std::string&>().empty())
    return in.bad("whose \"mergeCommit\" is not an object with an \"oid\": " + one_line(*merge));
  pr.merge_commit = merge->at("oid").get<std::string>();
  DG_TRY(pr.merged_at, in.str("mergedAt", false));
  return pr;
}

// An item's `author`: its login, "" for null (a deleted account).
Expected<std::string> author_of(const ListReader& in) {
  DG_TRY(const Json* author, in.field("author"));
  if (author->is_object() && author->contains("login") && author->at("login").is_string())
    return author->at("login").get<std::string>();
  if (!author->is_null())
    return in.bad("whose \"author\" is neither null nor an object with a \"login\": " +
                  one_line(*author));
  return std::string();
}

Expected<Review> review_of(const ListReader& in) {
  DG_CHECK(in.object());
  Review review;
  DG_TRY(review.author, author_of(in));
  DG_TRY(review.state, in.str("state"));
  if (review.state != "APPROVED" && review.state != "CHANGES_REQUESTED" &&
      review.state != "COMMENTED" && review.state != "DISMISSED" && review.state != "PENDING")
    return in.bad("whose \"state\" is not a review state: " + one_line(review.state));
  DG_TRY(review.body, in.str("body"));
  return review;
}

Expected<IssueComment> comment_of(const ListReader& in) {
  DG_CHECK(in.object());
  IssueComment comment;
  DG_TRY(comment.author, author_of(in));
  DG_TRY(comment.body, in.str("body"));
  return comment;
}

// A label gh would misread: empty, a flag, or several labels in one.
bool misread_label(const std::string& label) {
  return label.empty() || has_leading_dash(label) ||
         label.find_first_of(",\"\n") != std::string::npos;
}

bool has_newline(const std::string& s) {
  return s.find('\n') != std::string::npos;
}

// The number at the end of an issue's URL, the last line gh issue create
// prints: https://<host>/<owner>/<repo>/issues/<number>.
std::optional<long long> issue_number_of(const std::string& out) {
  const char* blank = " \t\r\n";
  size_t end = out.find_last_not_of(blank);
  if (end == std::string::npos) return std::nullopt;
  size_t nl = out.find_last_of('\n', end);
  size_t start = nl == std::string::npos ? 0 : nl + 1;
  start = out.find_first_not_of(blank, start);
  const std::string line = out.substr(start, end - start + 1);
  const std::string marker = "/issues/";
  size_t at = line.rfind(marker);
  if (line.rfind("https://", 0) != 0 || at == std::string::npos) return std::nullopt;
  const std::string digits = line.substr(at + marker.size());
  if (digits.empty() || digits.size() > 18 || digits[0] == '0' ||
      digits.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return std::stoll(digits);
}

bool has_label(const issues::Issue& issue, const std::string& label) {
  const std::string wanted = ascii_lower(label);
  for (const std::string& name : issue.labels)
    if (ascii_lower(name) == wanted) return true;
  return false;
}

class RealGh final : public Gh {
 public:
  RealGh(CommandRunner& runner, std::string dir, std::string program)
      : runner_(runner), dir_(std::move(dir)), program_(std::move(program)) {}

  Expected<std::optional<PullRequest>> find_pr(const std::string& branch) override {
    // A branch that looks like a flag would be read as one.
    if (branch.empty() || has_leading_dash(branch))
      return error_of(kBadRequest, "gh pr view: not a branch name: '" + branch + "'");
    const std::string what = "gh pr view " + branch;
    DG_TRY(auto r, run({"pr", "view", branch, "--json", "number,url,autoMergeRequest"}, what));
    if (r.exit_code != 0) {
      if (r.err.find("no pull requests found") != std::string::npos)
        return std::optional<PullRequest>();
      return error_of(kFailed, what + " failed: " + refusal(r));
    }
    auto j = parse_json(r.out, what);
    if (!j) return error_of(kMalformed, j.error().message);
    DG_TRY(auto pr, pull_request_of(*j, what));
    return std::optional<PullRequest>(std::move(pr));
  }

  Status create_pr(const CreateRequest& q) override {
    for (const auto* field : {&q.base, &q.head, &q.title, &q.body_file})
      if (field->empty())
        return error_of(kBadRequest, "gh pr create needs a base, a head, a title and a body file");
    if (has_leading_dash(q.base) || has_leading_dash(q.head))
      return error_of(kBadRequest, "gh pr create: not a branch name: '" +
                                       (has_leading_dash(q.base) ? q.base : q.head) + "'");
    const std::string what = "gh pr create --head " + q.head;
    DG_TRY(auto r, run({"pr", "create", "--base", q.base, "--head", q.head, "--title", q.title,
                        "--body-file", q.body_file},
                       what));
    if (r.exit_code != 0) return error_of(kFailed, what + " failed: " + refusal(r));
    return {};
  }

  Expected<PrStatus> pr_status(long long number) override {
    if (number <= 0)
      return error_of(kBadRequest,
                      "gh pr view: not a pull request number: " + std::to_string(number));
    const std::string n = std::to_string(number);
    const std::string what = "gh pr view " + n;
    DG_TRY(auto r, run({"pr", "view", n, "--json",
                        "number,state,headRefName,headRefOid,mergeCommit,reviewDecision,"
                        "statusCheckRollup"},
                       what));
    if (r.exit_code != 0) return error_of(kFailed, what + " failed: " + refusal(r));
    DG_TRY(PrStatus status, parse_pr_status(r.out));
    if (status.number != number)
      return error_of(kMalformed, what + " answered about #" + std::to_string(status.number));
    return status;
  }

  Expected<MergeAnswer> enable_auto_merge(long long number) override {
    if (number <= 0)
      return error_of(kBadRequest,
                      "gh pr merge: not a pull request number: " + std::to_string(number));
    const std::string n = std::to_string(number);
    DG_TRY(auto r, run({"pr", "merge", n, "--auto", "--merge"}, "gh pr merge " + n + " --auto"));
    if (r.exit_code != 0) return MergeAnswer{false, refusal(r)};
    return MergeAnswer{true, ""};
  }

  Expected<std::vector<issues::Issue>> list_open_issues(
      const std::optional<std::string>& label) override {
    std::vector<std::string> args = {
        "issue",   "list", "--state", "open",
        "--limit", "1000", "--json",  "number,title,body,labels,state,createdAt,updatedAt"};
    std::string what = "gh issue list";
    if (label) {
      if (misread_label(*label))
        return error_of(kBadRequest,
                        "gh issue list: not a label gh reads as one: " + one_line(*label));
      args.insert(args.end(), {"--label", *label});
      what += " --label " + *label;
    }
    DG_TRY(auto items, list(std::move(args), what));
    std::vector<issues::Issue> open;
    for (size_t i = 0; i < items.size(); ++i) {
      DG_TRY(auto issue, issue_of(ListReader(items[i], i, what, "an issue")));
      if (issue.state != "open" || (label && !has_label(issue, *label))) continue;
      open.push_back(std::move(issue));
    }
    return open;
  }

  Expected<std::vector<OpenPr>> list_open_prs() override {
    const std::string what = "gh pr list";
    DG_TRY(auto items, list({"pr", "list", "--state", "open", "--limit", "1000", "--json",
                             "number,url,headRefName,baseRefName,body"},
                            what));
    std::vector<OpenPr> prs;
    for (size_t i = 0; i < items.size(); ++i) {
      DG_TRY(auto pr, open_pr_of(ListReader(items[i], i, what, "a pull request")));
      prs.push_back(std::move(pr));
    }
    return prs;
  }

  Expected<std::vector<MergedPr>> list_merged_prs() override {
    const std::string what = "gh pr list --state merged";
    DG_TRY(auto items, list({"pr", "list", "--state", "merged", "--limit", "200", "--json",
                             "number,title,url,headRefName,baseRefName,mergeCommit,mergedAt"},
                            what));
    std::vector<MergedPr> prs;
    for (size_t i = 0; i < items.size(); ++i) {
      DG_TRY(auto pr, merged_pr_of(ListReader(items[i], i, what, "a merged pull request")));
      prs.push_back(std::move(pr));
    }
    return prs;
  }

  Expected<std::vector<Review>> pr_reviews(long long number) override {
    if (number <= 0)
      return error_of(kBadRequest,
                      "gh pr view: not a pull request number: " + std::to_string(number));
    const std::string n = std::to_string(number);
    const std::string what = "gh pr view " + n + " --json reviews";
    DG_TRY(Json items, numbered_list({"pr", "view", n, "--json", "number,reviews"}, what, number,
                                     "reviews"));
    std::vector<Review> reviews;
    for (size_t i = 0; i < items.size(); ++i) {
      DG_TRY(auto review, review_of(ListReader(items[i], i, what, "a review")));
      reviews.push_back(std::move(review));
    }
    return reviews;
  }

  Expected<std::vector<IssueComment>> issue_comments(long long number) override {
    if (number <= 0)
      return error_of(kBadRequest, "gh issue view: not an issue number: " + std::to_string(number));
    const std::string n = std::to_string(number);
    const std::string what = "gh issue view " + n + " --json comments";
    DG_TRY(Json items, numbered_list({"issue", "view", n, "--json", "number,comments"}, what,
                                     number, "comments"));
    std::vector<IssueComment> comments;
    for (size_t i = 0; i < items.size(); ++i) {
      DG_TRY(auto c, comment_of(ListReader(items[i], i, what, "a comment")));
      comments.push_back(std::move(c));
    }
    return comments;
  }

  Expected<std::string> pr_diff(long long number) override {
    if (number <= 0)
      return error_of(kBadRequest,
                      "gh pr diff: not a pull request number: " + std::to_string(number));
    const std::string n = std::to_string(number);
    const std::string what = "gh pr diff " + n;
    DG_TRY(auto r, run({"pr", "diff", n}, what));
    if (r.exit_code != 0) return error_of(kFailed, what + " failed: " + refusal(r));
    // The runner keeps the tail of a longer answer, and a diff without its
    // start is no diff.
    if (r.output_truncated)
      return error_of(kMalformed, what + " answered more than " +
                                      std::to_string(CommandSpec().max_output_bytes >> 20) +
                                      " MiB, which is cut short and not read");
    return bounded_diff(std::move(r.out));
  }

  Expected<std::string> failed_job_log(const std::string& check_link) override {
    auto job = actions_job_id(check_link);
    if (!job)
      return error_of(kBadRequest,
                      "gh run view: not a GitHub Actions job link: " + one_line(check_link));
    const std::string what = "gh run view --job " + *job;
    DG_TRY(auto r, run({"run", "view", "--job", *job, "--log-failed"}, what));
    if (r.exit_code != 0) return error_of(kFailed, what + " failed: " + refusal(r));
    return bounded_log(std::move(r.out));
  }

  Status ensure_label(const std::string& name, const std::string& color,
                      const std::string& description) override {
    if (name.empty()) return error_of(kBadRequest, "gh label create needs a label name");
    for (const auto* value : {&name, &color, &description})
      if (has_leading_dash(*value) || has_newline(*value))
        return error_of(kBadRequest,
                        "gh label create: not a value gh reads as one: " + one_line(*value));
    const std::string what = "gh label create " + name;
    DG_TRY(auto r,
           run({"label", "create", name, "--color", color, "--description", description, "--force"},
               what));
    if (r.exit_code != 0) return error_of(kFailed, what + " failed: " + refusal(r));
    return {};
  }

  Expected<long long> create_issue(const NewIssue& issue) override {
    if (issue.title.empty() || issue.body_file.empty())
      return error_of(kBadRequest, "gh issue create needs a title and a body file");
    if (has_leading_dash(issue.title) || has_newline(issue.title))
      return error_of(kBadRequest,
                      "gh issue create: not a title gh reads as one: " + one_line(issue.title));
    if (has_leading_dash(issue.body_file))
      return error_of(kBadRequest, "gh issue create: not a body file gh reads as one: " +
                                       one_line(issue.body_file));
    std::vector<std::string> args = {"issue",     "create",      "--title",
                                     issue.title, "--body-file", issue.body_file};
    for (const std::string& label : issue.labels) {
      if (misread_label(label))
        return error_of(kBadRequest,
                        "gh issue create: not a label gh reads as one: " + one_line(label));
      args.insert(args.end(), {"--label", label});
    }
    const std::string what = "gh issue create";
    DG_TRY(auto r, run(std::move(args), what));
    if (r.exit_code != 0) return error_of(kFailed, what + " failed: " + refusal(r));
    auto number = issue_number_of(r.out);
    if (!number)
      return error_of(kMalformed, what + " answered no issue URL as its last line: " +
                                      one_line(last_line(r.out)));
    return *number;
  }

  Expected<std::vector<issues::Issue>> list_labeled_issues(const std::string& label) override {
    if (misread_label(label))
      return error_of(kBadRequest,
                      "gh issue list: not a label gh reads as one: " + one_line(label));
    const std::string what = "gh issue list --state all --label " + label;
    DG_TRY(auto items, list({"issue", "list", "--state", "all", "--label", label, "--limit", "1000",
                             "--json", "number,title,body,labels,state,createdAt,updatedAt"},
                            what));
    std::vector<issues::Issue> labeled;
    for (size_t i = 0; i < items.size(); ++i) {
      DG_TRY(auto issue, issue_of(ListReader(items[i], i, what, "an issue")));
      if (has_label(issue, label)) labeled.push_back(std::move(issue));
    }
    return labeled;
  }

 private:
  // Runs gh; a gh that could not be started or did not finish is an Error,
  // a gh that exited (with any status) is a result.
  // `gh ... view <number> --json number,<key>`: the answer's `key` array,
  // after checking that it answers about `number`.
  Expected<Json> numbered_list(std::vector<std::string> args, const std::string& what,
                               long long number, const char* key) {
    DG_TRY(auto r, run(std::move(args), what));
    if (r.exit_code != 0) return error_of(kFailed, what + " failed: " + refusal(r));
    auto j = parse_json(r.out, what);
    if (!j) return error_of(kMalformed, j.error().message);
    if (!j->is_object())
      return error_of(kMalformed,
                      what + " answered something other than an object: " + one_line(*j));
    if (!j->contains("number") || !j->at("number").is_number_integer())
      return error_of(kMalformed, what + " answered without a \"number\"");
    if (j->at("number").get<long long>() != number)
      return error_of(kMalformed, what + " answered about #" +
                                      std::to_string(j->at("number").get<long long>()));
    if (!j->contains(key) || !j->at(key).is_array())
      return error_of(kMalformed, what + " answered without a \"" + key + "\" array");
    return j->at(key);
  }

  Expected<CommandResult> run(std::vector<std::string> args, const std::string& what) {
    CommandSpec spec;
    spec.argv = {program_};
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    spec.cwd = dir_;
    spec.timeout = kTimeout;
    // Never stop for a question, and keep stderr to gh's own answer.
    spec.env["GH_PROMPT_DISABLED"] = "1";
    spec.env["GH_NO_UPDATE_NOTIFIER"] = "1";
    auto r = runner_.run(spec);
    if (!r)
      return error_of(kNotInstalled,
                      what + ": " + r.error().message + " (is the GitHub CLI installed?)");
    if (r->timed_out)
      return error_of(kTimedOut, what + " timed out after " +
                                     std::to_string(std::chrono::seconds(kTimeout).count()) + " s");
    if (r->term_signal != 0)
      return error_of(kFailed, what + " died of signal " + std::to_string(r->term_signal));
    return std::move(r).value();
  }

  // A list command's answer: a JSON array, whole.
  Expected<Json> list(std::vector<std::string> args, const std::string& what) {
    DG_TRY(auto r, run(std::move(args), what));
    if (r.exit_code != 0) return error_of(kFailed, what + " failed: " + refusal(r));
    if (r.output_truncated)
      return error_of(kMalformed, what + " answered more than " +
                                      std::to_string(CommandSpec().max_output_bytes >> 20) +
                                      " MiB, which is cut short and not read");
    auto j = parse_json(r.out, what);
    if (!j) return error_of(kMalformed, j.error().message);
    if (!j->is_array())
      return error_of(kMalformed,
                      what + " answered something other than an array: " + one_line(*j));
    return std::move(j).value();
  }

  // The three fields asked for, as gh writes them.
  static Expected<PullRequest> pull_request_of(const Json& j, const std::string& what) {
    auto bad = [&](const std::string& why) {
      return error_of(kMalformed, what + " answered " + why + ": " + dump_py(j).substr(0, 200));
    };
    if (!j.is_object()) return bad("something other than an object");
    const Json& number = j.contains("number") ? j.at("number") : Json();
    if (!number.is_number_integer() || number.get<long long>() <= 0)
      return bad("no pull request number");
    const Json& url = j.contains("url") ? j.at("url") : Json();
    if (!url.is_string() || url.get<std::string>().empty()) return bad("no url");
    if (!j.contains("autoMergeRequest")) return bad("no autoMergeRequest");
    const Json& merge = j.at("autoMergeRequest");
    if (!merge.is_null() && !merge.is_object())
      return bad("an autoMergeRequest that is neither null nor an object");
    return PullRequest{number.get<long long>(), url.get<std::string>(), merge.is_object()};
  }

  CommandRunner& runner_;
  std::string dir_;
  std::string program_;
};

}  // namespace

std::optional<std::string> actions_job_id(std::string_view link) {
  constexpr std::string_view prefix = "https://github.com/";
  if (link.substr(0, prefix.size()) != prefix) return std::nullopt;
  std::string_view path = link.substr(prefix.size());
  path = path.substr(0, path.find_first_of("?#"));
  // owner / repo / actions / runs / <run> / job / <id>
  std::vector<std::string_view> parts;
  while (true) {
    size_t slash = path.find('/');
    parts.push_back(path.substr(0, slash));
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  auto is_id = [](std::string_view s) {
    return !s.empty() && s.size() <= 19 && s[0] != '0' &&
           s.find_first_not_of("0123456789") == std::string_view::npos;
  };
  if (parts.size() != 7 || parts[0].empty() || parts[1].empty() || parts[2] != "actions" ||
      parts[3] != "runs" || !is_id(parts[4]) || parts[5] != "job" || !is_id(parts[6]))
    return std::nullopt;
  return std::string(parts[6]);
}

namespace {
bool continues_utf8(char c) {
  return (static_cast<unsigned char>(c) & 0xC0) == 0x80;
}
}  // namespace

std::string bounded_diff(std::string diff) {
  if (diff.size() <= kMaxTextBytes) return diff;
  size_t keep = kMaxTextBytes;
  // diff[keep] is the first byte dropped: when it continues a character,
  // that character goes too (a UTF-8 character is at most four bytes).
  for (int i = 0; i < 3 && keep > 0 && continues_utf8(diff[keep]); ++i) --keep;
  diff.resize(keep);
  if (!diff.empty() && diff.back() != '\n') diff.push_back('\n');
  diff += "[diff cut at " + std::to_string(keep) + " bytes]\n";
  return diff;
}

std::string bounded_log(std::string log) {
  if (log.size() <= kMaxTextBytes) return log;
  size_t start = log.size() - kMaxTextBytes;
  for (int i = 0; i < 3 && start < log.size() && continues_utf8(log[start]); ++i) ++start;
  return log.substr(start);
}

std::unique_ptr<Gh> make_gh(CommandRunner& runner, std::string dir, std::string program) {
  return std::make_unique<RealGh>(runner, std::move(dir), std::move(program));
}

}  // namespace devgraph::gh
