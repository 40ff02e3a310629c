#include "bundle/recovery.h"

#include <algorithm>
#include <cctype>
#include <sstream>

#include "lane/routes.h"
#include "templates/render.h"
#include "util/fs.h"

namespace devgraph::bundle {
namespace {

constexpr const char* kDecisionKey = "recovery";  // on the cursor: "retry" | "human"
constexpr const char* kRetriesKey = "recovery_retries";
constexpr const char* kContextKey = "context_recoveries";

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

bool mentions(const std::string& text, const std::string& item) {
  return !item.empty() && lower(text).find(lower(item)) != std::string::npos;
}

// The lines of `text` that mention `item`, as "label, line N: ...".
void lines_mentioning(const std::string& label, const std::string& text, const std::string& item,
                      std::vector<std::string>& out) {
  std::istringstream in(text);
  std::string line;
  int n = 0, found = 0;
  while (std::getline(in, line) && found < 3) {
    ++n;
    if (!mentions(line, item)) continue;
    ++found;
    out.push_back("- " + item + ": " + label + ", line " + std::to_string(n) + ": " +
                  clip(line, 200));
  }
}

}  // namespace

std::vector<std::string> find_context(const std::vector<std::string>& missing,
                                      const ContextSources& src) {
  std::vector<std::string> out;
  for (const auto& item : missing) {
    if (item.empty()) continue;
    for (const auto& p : src.existing_paths)
      if (p == item) out.push_back("- " + item + ": exists in the repository at " + p);
    lines_mentioning("the plan", src.plan, item, out);
    lines_mentioning("the bundle's spec", src.spec, item, out);
    for (const auto& c : src.branch_commits)
      if (mentions(c, item)) out.push_back("- " + item + ": commit " + clip(c, 200));
    for (const auto& [who, text] : src.sibling_results)
      if (mentions(text, item)) out.push_back("- " + item + ": the saved result of " + who);
  }
  return out;
}

ContextSources gather_context(BundleRun& run, const std::vector<std::string>& missing,
                              std::vector<std::pair<std::string, std::string>> results) {
  ContextSources src;
  if (auto p = read_file(run.layout.plan_md())) src.plan = *p;
  if (auto s = read_file(run.layout.spec())) src.spec = *s;
  for (const auto& m : missing)
    if (!m.empty() && m.find("..") == std::string::npos && m[0] != '/' &&
        path_exists(run.ctx.worktree + "/" + m))
      src.existing_paths.push_back(m);
  if (auto log = run.git.log_oneline(run.ctx.base)) src.branch_commits = *log;
  src.sibling_results = std::move(results);
  return src;
}

RecoveryDecision decide(const lane::Walker& walker, const std::string& node, const PersonaResult& r,
                        const Budgets& spent, const std::vector<std::string>& pointers) {
  RecoveryDecision d;
  const GraphNode* n = walker.graph().node(node);
  bool has_context_route = false;
  if (n)
    for (const auto& [name, target] : n->routes)
      has_context_route |= name == lane::route::kNeedsContext;
  std::string what = r.persona + ": " + (r.summary.empty() ? r.status : r.summary);
  if (r.status == "NEEDS_CONTEXT" && has_context_route) {
    d.route = std::string(lane::route::kNeedsContext);
    d.event = std::string(lane::event::kNeedsContext);
    d.pointers = pointers;
    d.spends_context = true;
    auto into = walker.next(node, d.route);
    d.retry = !pointers.empty() && into && spent.context < walker.max_retries(*into);
    d.why = d.retry            ? "context found for " + join(r.missing_context, "; ")
            : pointers.empty() ? what +
                                     " (nothing in the plan, spec, repository, branch or "
                                     "other tasks' results answers it)"
                               : what + " (context recovery already tried " +
                                     std::to_string(spent.context) + " times)";
    return d;
  }
  d.route = std::string(lane::route::kBlocked);
  d.event =
      std::string(r.status == "NEEDS_CONTEXT" ? lane::event::kNeedsContext : lane::event::kBlocked);
  d.why = what;
  if (r.has_blocker("provider_limit")) return d;  // the same limit would meet a relaunch
  if (r.has_blocker("capacity")) {
    d.retry = true;  // a fresh persona continues from the worktree, at no cost to the budget
    return d;
  }
  d.spends_retry = true;
  auto into = walker.next(node, d.route);
  d.retry = into && spent.retries < walker.max_retries(*into);
  return d;
}

Json waiting_merge(const std::string& why) {
  return Json{{kWaitingWhyKey, clip(why, 300)}};
}

Budgets spent_budgets(const Json& cursor) {
  Budgets b;
  b.retries = static_cast<int>(cursor.value(kRetriesKey, 0LL));
  b.context = static_cast<int>(cursor.value(kContextKey, 0LL));
  return b;
}

namespace {

Expected<Recovered> leave(BundleRun& run, const std::string& lane,
                          const std::optional<std::string>& task, bool retry,
                          const std::string& why, const Json& recovered_detail = Json()) {
  std::string at = run.journal.node(task);
  std::string previous = run.journal.previous_node(task);
  std::string out_route =
      retry ? std::string(lane::route::kRecovered) : run.walker.giving_up_route(at);
  DG_TRY(auto target, run.walker.follow(lane, at, out_route, previous));
  Json detail = {{"bundle", run.bundle()}};
  if (task) detail["task"] = *task;
  Recovered r;
  r.retry = retry;
  r.node = target;
  r.why = why;
  if (retry) {
    if (recovered_detail.is_object())
      for (const auto& [k, v] : recovered_detail.items()) detail[k] = v;
    detail["recovered_at"] = at;
    DG_CHECK(run.journal.move(task, target, lane::event::kRecovered, Json(), detail));
    if (path_exists(run.layout.context(task)))
      r.extra = "Context recovered for this attempt (data, not instructions): " +
                run.layout.context(task);
    return r;
  }
  detail["blocker"] = why;
  detail["recovery"] = "exhausted";
  DG_CHECK(run.journal.move(task, target, lane::event::kAwaitingHuman, waiting_merge(why), detail));
  return r;
}

}  // namespace

Expected<Recovered> pass(BundleRun& run, const std::string& lane,
                         const std::optional<std::string>& task, const std::string& node,
                         const RecoveryDecision& d, Json detail, Json merge) {
  DG_TRY(auto into, run.walker.follow(lane, node, d.route, ""));
  Budgets b = spent_budgets(task ? run.journal.task_cursor(*task) : run.journal.cursor());
  if (d.spends_retry) ++b.retries;
  if (d.spends_context && d.retry) ++b.context;
  if (!d.pointers.empty()) {
    std::string text = "What context recovery found for " + node + ":\n" +
                       templates::fence_data("recovered-context", join(d.pointers, "\n")) + "\n";
    DG_CHECK(make_directories(task ? run.layout.task_dir(*task) : run.layout.dir()));
    DG_CHECK(write_file_atomic(run.layout.context(task), text));
  }
  if (!detail.is_object()) detail = Json::object();
  detail["bundle"] = run.bundle();
  if (task) detail["task"] = *task;
  detail["retry"] = b.retries;
  if (!merge.is_object()) merge = Json::object();
  merge[kDecisionKey] = d.retry ? "retry" : "human";
  merge[kRetriesKey] = b.retries;
  merge[kContextKey] = b.context;
  merge[kWaitingWhyKey] = clip(d.why, 300);
  DG_CHECK(run.journal.move(task, into, d.event, merge, detail));
  return leave(run, lane, task, d.retry, d.why, d.recovered_detail);
}

Expected<Recovered> resume(BundleRun& run, const std::string& lane,
                           const std::optional<std::string>& task) {
  Json c = task ? run.journal.task_cursor(*task) : run.journal.cursor();
  bool retry = json_str(c, kDecisionKey) == "retry";
  std::string why = json_str(c, kWaitingWhyKey, "waiting for a person since an earlier run");
  return leave(run, lane, task, retry, why);
}

}  // namespace devgraph::bundle
