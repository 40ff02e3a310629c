#include "bundle/delivery.h"

#include <algorithm>
#include <cctype>

#include "lane/routes.h"
#include "util/fs.h"

namespace devgraph::bundle {
namespace {

Expected<CommandResult> gh(BundleRun& run, std::vector<std::string> args) {
  CommandSpec spec;
  spec.argv = {"gh"};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.cwd = run.ctx.worktree;
  spec.timeout = std::chrono::minutes(5);
  return run.runner.run(spec);
}

Expected<std::optional<Json>> existing_pr(BundleRun& run) {
  DG_TRY(auto r, gh(run, {"pr", "view", run.ctx.branch, "--json", "number,url,autoMergeRequest"}));
  if (!r.ok()) return std::optional<Json>();
  auto j = parse_json(r.out, "gh pr view");
  if (!j || !j->is_object() || !j->contains("number")) return std::optional<Json>();
  return std::optional<Json>(*j);
}

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
  const std::string node = "create_pr";
  const std::string& branch = run.ctx.branch;
  if (run.ctx.delivery != "github") {
    DG_CHECK(run.journal.move(
        std::nullopt, node, lane::event::kBranchReady,
        Json{{"branch", branch}, {"head", head}, {"cost_usd", cost}, {"persona_runs", runs}}));
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
  DG_TRY(auto found, existing_pr(run));
  if (!found) {
    DG_CHECK(write_file_atomic(run.layout.pr_body(), pr_body(text)));
    DG_CHECK(
        run.journal.event(lane::event::kNote,
                          Json{{"topic", "pr_intent"}, {"bundle", run.bundle()}, {"head", head}}));
    run.crash.reach("pr", branch);
    DG_TRY(auto r, gh(run, {"pr", "create", "--base", run.ctx.default_branch, "--head", branch,
                            "--title", clip("feat(" + run.bundle() + "): " + text.title, 72),
                            "--body-file", run.layout.pr_body()}));
    if (!r.ok()) return fail("gh pr create failed: " + clip(r.err, 300));
    run.crash.reach("pr_created", branch);
    DG_TRY(auto again, existing_pr(run));
    if (!again) return fail("gh pr view cannot find the pull request just created");
    found = again;
  }
  long long number = (*found)["number"].is_number() ? (*found)["number"].get<long long>() : 0;
  std::string auto_merge = "off";
  // A run killed after enabling auto-merge finds it enabled on the pull
  // request and does not ask again.
  bool already = found->contains("autoMergeRequest") && (*found)["autoMergeRequest"].is_object();
  if (run.ctx.merge_policy == "auto_when_checks_pass" && already) {
    auto_merge = "enabled";
  } else if (run.ctx.merge_policy == "auto_when_checks_pass") {
    DG_TRY(auto m, gh(run, {"pr", "merge", std::to_string(number), "--auto", "--merge"}));
    auto_merge = m.ok() ? "enabled" : "unavailable";
    run.crash.reach("merged", branch);
    DG_CHECK(run.journal.event(
        m.ok() ? lane::event::kAutoMergeEnabled : lane::event::kAutoMergeUnavailable,
        Json{{"bundle", run.bundle()}, {"pr", number}, {"detail", clip(m.err, 200)}}));
  }
  Json pr = {{"number", number}, {"url", json_str(*found, "url")}, {"auto_merge", auto_merge}};
  DG_CHECK(run.journal.move(
      std::nullopt, node, lane::event::kPrCreated,
      Json{{"pr", pr}, {"head", head}, {"cost_usd", cost}, {"persona_runs", runs}}));
  run.crash.reach("delivered", run.bundle());
  return pr;
}

}  // namespace devgraph::bundle
