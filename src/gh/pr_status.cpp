#include "gh/pr_status.h"

#include "gh/gh.h"
#include "util/json.h"

namespace devgraph::gh {
namespace {

Error malformed(const std::string& why) {
  return fail(kMalformed, "gh pr view answered " + why);
}

Expected<std::string> string_at(const Json& obj, const char* key, const std::string& where) {
  if (!obj.contains(key) || !obj.at(key).is_string())
    return malformed(where + " without a string " + key);
  return obj.at(key).get<std::string>();
}

// One entry of statusCheckRollup.
Expected<Check> check_of(const Json& c, size_t i) {
  std::string where = "check " + std::to_string(i);
  if (!c.is_object()) return malformed(where + " that is not an object");
  DG_TRY(std::string type, string_at(c, "__typename", where));
  Check out;
  auto optional_string = [&](const char* key) {
    return c.contains(key) && c.at(key).is_string() ? c.at(key).get<std::string>() : std::string();
  };
  if (type == "CheckRun") {
    DG_TRY(out.name, string_at(c, "name", where));
    std::string workflow = optional_string("workflowName");
    if (!workflow.empty()) out.name = workflow + " / " + out.name;
    out.link = optional_string("detailsUrl");
    DG_TRY(std::string status, string_at(c, "status", where));
    std::string conclusion = optional_string("conclusion");
    if (status != "COMPLETED" || conclusion.empty() || conclusion == "STALE") {
      out.verdict = ChecksVerdict::pending;
    } else if (conclusion == "SUCCESS" || conclusion == "NEUTRAL" || conclusion == "SKIPPED") {
      out.verdict = ChecksVerdict::passing;
    } else if (conclusion == "FAILURE" || conclusion == "TIMED_OUT" || conclusion == "CANCELLED" ||
               conclusion == "ACTION_REQUIRED" || conclusion == "STARTUP_FAILURE") {
      out.verdict = ChecksVerdict::failing;
    } else {
      return malformed(where + " with conclusion " + conclusion);
    }
    return out;
  }
  if (type == "StatusContext") {
    DG_TRY(out.name, string_at(c, "context", where));
    out.link = optional_string("targetUrl");
    DG_TRY(std::string state, string_at(c, "state", where));
    if (state == "SUCCESS")
      out.verdict = ChecksVerdict::passing;
    else if (state == "FAILURE" || state == "ERROR")
      out.verdict = ChecksVerdict::failing;
    else if (state == "PENDING" || state == "EXPECTED")
      out.verdict = ChecksVerdict::pending;
    else
      return malformed(where + " with state " + state);
    return out;
  }
  return malformed(where + " of kind " + type);
}

}  // namespace

std::string_view checks_verdict_name(ChecksVerdict v) {
  switch (v) {
    case ChecksVerdict::none:
      return "none";
    case ChecksVerdict::pending:
      return "pending";
    case ChecksVerdict::failing:
      return "failing";
    case ChecksVerdict::passing:
      return "passing";
  }
  return "none";
}

std::vector<Check> PrStatus::failing() const {
  std::vector<Check> out;
  for (const auto& c : checks)
    if (c.verdict == ChecksVerdict::failing) out.push_back(c);
  return out;
}

Expected<PrStatus> parse_pr_status(std::string_view answer) {
  Json j = Json::parse(answer, nullptr, false);
  if (!j.is_object()) return malformed("something that is not a JSON object");
  PrStatus s;
  if (!j.contains("number") || !j.at("number").is_number_integer()) return malformed("no number");
  s.number = j.at("number").get<long long>();
  DG_TRY(s.state, string_at(j, "state", "a pull request"));
  if (s.state != "OPEN" && s.state != "CLOSED" && s.state != "MERGED")
    return malformed("state " + s.state);
  DG_TRY(s.head, string_at(j, "headRefName", "a pull request"));
  DG_TRY(s.head_commit, string_at(j, "headRefOid", "a pull request"));
  if (!j.contains("mergeCommit")) return malformed("a pull request without mergeCommit");
  const Json& merge = j.at("mergeCommit");
  if (merge.is_object()) {
    DG_TRY(std::string oid, string_at(merge, "oid", "a mergeCommit"));
    s.merge_commit = oid;
  } else if (!merge.is_null()) {
    return malformed("a mergeCommit that is neither null nor an object");
  }
  if (s.state == "MERGED" && !s.merge_commit)
    return malformed("a merged PR without a merge commit");
  DG_TRY(s.review_decision, string_at(j, "reviewDecision", "a pull request"));
  if (!j.contains("statusCheckRollup") || !j.at("statusCheckRollup").is_array())
    return malformed("a pull request without a statusCheckRollup list");
  size_t i = 0;
  bool failing = false, pending = false;
  for (const Json& c : j.at("statusCheckRollup")) {
    DG_TRY(Check check, check_of(c, ++i));
    failing = failing || check.verdict == ChecksVerdict::failing;
    pending = pending || check.verdict == ChecksVerdict::pending;
    s.checks.push_back(std::move(check));
  }
  s.verdict = s.checks.empty() ? ChecksVerdict::none
              : failing        ? ChecksVerdict::failing
              : pending        ? ChecksVerdict::pending
                               : ChecksVerdict::passing;
  return s;
}

}  // namespace devgraph::gh
