#include "bundle/delivery.h"

#include <algorithm>
#include <cctype>

#include "lane/routes.h"
#include "util/fs.h"

namespace devgraph::bundle {
namespace {

const Json* bundle_record(const Json& state, const std::string& bundle) {
  if (!state.contains("bundles") || !state["bundles"].is_array()) return nullptr;
  for (const auto& b : state["bundles"])
    if (b.is_object() && json_str(b, "id") == bundle) return &b;
  return nullptr;
}

}  // namespace

std::string pr_body(const PrText& t) {
  std::vector<std::string> lines = {"## Bundle " + t.bundle, "", t.title, "", "### Delivered"};
  for (const auto& [id, title] : t.tasks)
    lines.push_back("- " + (title.empty() ? id : title) + " (" + id + ")");
  lines.insert(lines.end(), {"", "### Verification", "- test: `" + t.test_command + "`",
                             "- build: `" + t.build_command + "`",
                             "- per-task failing test first, tester and adversarial tester; "
                             "whole-branch code review; documentation review",
                             ""});
  if (!t.quarantined.empty()) {
    lines.insert(lines.end(),
                 {"### Kept out of this pull request",
                  "Written outside every task's footprint and reported by no persona; kept in "
                  "the run's quarantine, not committed:"});
    for (std::string p : t.quarantined) {
      for (char& c : p)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f || c == '`') c = '?';
      lines.push_back("- `" + p + "`");
    }
    lines.push_back("");
  }
  for (const auto& i : t.issues) lines.push_back("Closes #" + i);
  lines.push_back("");
  return join(lines, "\n");
}

std::vector<std::string> bundle_issues(const Json& state, const std::string& bundle) {
  std::vector<std::string> out;
  const Json* b = bundle_record(state, bundle);
  if (!b || !b->contains("issues") || !(*b)["issues"].is_array()) return out;
  for (const auto& i : (*b)["issues"]) {
    std::string s = i.is_string() ? i.get<std::string>() : i.is_number() ? dump_py(i) : "";
    if (!s.empty() && s[0] == '#') s.erase(0, 1);
    // Only digits reach the body: an issue "number" is never free text.
    if (!s.empty() && std::all_of(s.begin(), s.end(), ::isdigit)) out.push_back(s);
  }
  return out;
}

std::string bundle_title(const Json& state, const std::string& bundle) {
  const Json* b = bundle_record(state, bundle);
  return b ? json_str(*b, "title", bundle) : bundle;
}

Expected<Json> deliver(BundleRun& run, const PrText& text, const std::string& head, double cost,
                       int runs) {
  const GraphLane* lane = run.walker.graph().lane("bundle");
  if (!lane) return fail(ErrorKind::internal, "GRAPH.yaml has no bundle lane");
  const std::string node = lane->complete_at;
  const std::string& branch = run.ctx.branch;
  if (run.ctx.delivery != "github") {
    Json detail = Json::object();
    if (!text.quarantined.empty()) detail["quarantined"] = text.quarantined;
    DG_CHECK(run.journal.move(
        std::nullopt, node, lane::event::kBranchReady,
        Json{{"branch", branch}, {"head", head}, {"cost_usd", cost}, {"persona_runs", runs}},
        detail));
    run.crash.reach("delivered", run.bundle());
    return Json();
  }
  DG_TRY(auto remote, run.git.remote_head("origin", branch));
  if (!remote || *remote != head) {
    DG_CHECK(run.journal.event(
        lane::event::kNote,
        Json{{"topic", "push_intent"}, {"bundle", run.bundle()}, {"head", head}}));
    run.crash.reach("push", branch);
    DG_CHECK(run.git.push("origin", branch));
    run.crash.reach("pushed", branch);
  }
  DG_TRY(auto found, run.gh.find_pr(branch));
  if (!found) {
    DG_CHECK(write_file_atomic(run.layout.pr_body(), pr_body(text)));
    DG_CHECK(
        run.journal.event(lane::event::kNote,
                          Json{{"topic", "pr_intent"}, {"bundle", run.bundle()}, {"head", head}}));
    run.crash.reach("pr", branch);
    gh::CreateRequest req{run.ctx.default_branch, branch,
                          clip("feat(" + run.bundle() + "): " + text.title, 72),
                          run.layout.pr_body()};
    DG_CHECK(run.gh.create_pr(req));
    run.crash.reach("pr_created", branch);
    DG_TRY(auto again, run.gh.find_pr(branch));
    if (!again) return fail("gh pr view cannot find the pull request just created");
    found = again;
  }
  long long number = found->number;
  std::string auto_merge = "off";
  // GitHub's refusal when this bundle first delivered to the pull request
  // is final: a repair cycle delivering to it again does not ask again.
  const Json* b = bundle_record(run.journal.state(), run.bundle());
  const Json was = b ? b->value("pr", Json()) : Json();
  bool refused = was.is_object() && was.value("number", 0LL) == number &&
                 json_str(was, "auto_merge") == "unavailable";
  // A run killed after enabling auto-merge finds it enabled on the pull
  // request and does not ask again.
  if (run.ctx.merge_policy == "auto_when_checks_pass" && found->auto_merge) {
    auto_merge = "enabled";
  } else if (run.ctx.merge_policy == "auto_when_checks_pass" && refused) {
    auto_merge = "unavailable";
  } else if (run.ctx.merge_policy == "auto_when_checks_pass") {
    DG_TRY(auto m, run.gh.enable_auto_merge(number));
    auto_merge = m.enabled ? "enabled" : "unavailable";
    run.crash.reach("merged", branch);
    DG_CHECK(run.journal.event(
        m.enabled ? lane::event::kAutoMergeEnabled : lane::event::kAutoMergeUnavailable,
        Json{{"bundle", run.bundle()}, {"pr", number}, {"detail", clip(m.reason, 200)}}));
  }
  Json pr = {{"number", number}, {"url", found->url}, {"auto_merge", auto_merge}};
  DG_CHECK(run.journal.move(
      std::nullopt, node, lane::event::kPrCreated,
      Json{{"pr", pr}, {"head", head}, {"cost_usd", cost}, {"persona_runs", runs}}));
  run.crash.reach("delivered", run.bundle());
  return pr;
}

}  // namespace devgraph::bundle
