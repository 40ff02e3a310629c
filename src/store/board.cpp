#include "store/board.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace devgraph {
namespace {

Json field(const Json& obj, const char* key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it == obj.end() ? Json(nullptr) : *it;
}

// Cursor maps sorted by key, as the board lists them.
std::vector<std::pair<std::string, const Json*>> sorted_entries(const Json& map) {
  std::vector<std::pair<std::string, const Json*>> out;
  if (!map.is_object()) return out;
  for (auto it = map.begin(); it != map.end(); ++it) out.emplace_back(it.key(), &it.value());
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

std::string text_of(const Json& v) {
  if (v.is_null()) return "";
  if (v.is_string()) return v.get<std::string>();
  return dump_py(v);
}

std::string bundle_line(const Json& e) {
  std::string where;
  const Json& pr = e["pr"];
  if (pr.is_object()) {
    where = "PR #" + text_of(field(pr, "number"));
    std::string url = text_of(field(pr, "url"));
    if (!url.empty()) where += " " + url;
  } else if (!pr.is_null()) {
    where = text_of(pr);
  } else {
    where = text_of(e["branch"]);
  }
  if (!text_of(e["head"]).empty())
    where += (where.empty() ? "" : " ") + ("at " + text_of(e["head"]));
  std::string tasks;
  for (auto it = e["tasks"].begin(); it != e["tasks"].end(); ++it) {
    if (!tasks.empty()) tasks += ", ";
    tasks += it.key() + " `" + text_of((*it)[0]) + "`";
  }
  std::string line = "- `" + e["bundle"].get<std::string>() + "` on `" + text_of(e["node"]) + "`";
  if (!where.empty()) line += " (" + where + ")";
  line += tasks.empty() ? "; no task cursors" : "; tasks: " + tasks;
  return line;
}

void section(std::string& out, const std::string& title, const Json& entries) {
  out += "\n## " + title + "\n\n";
  if (entries.empty()) out += "- nothing\n";
  for (const auto& e : entries) out += bundle_line(e) + "\n";
}

}  // namespace

Board summarize_cursors(const Json& state) {
  Board b;
  const Json empty = Json::object();
  const Json& bundles_rt = state.contains("bundles_runtime") ? state["bundles_runtime"] : empty;
  const Json& tasks_rt = state.contains("tasks_runtime") ? state["tasks_runtime"] : empty;
  auto tasks_sorted = sorted_entries(tasks_rt);
  for (const auto& [bid, rec] : sorted_entries(bundles_rt)) {
    Json e = Json::object();
    e["bundle"] = bid;
    e["node"] = field(*rec, "node");
    e["status"] = field(*rec, "status");
    e["tech_lead_handle"] = field(*rec, "tech_lead_handle");
    e["pr"] = field(*rec, "pr");
    e["branch"] = field(*rec, "branch");
    e["head"] = field(*rec, "head");
    Json tasks = Json::object();
    const std::string prefix = bid + "/";
    for (const auto& [key, trec] : tasks_sorted) {
      if (key.compare(0, prefix.size(), prefix) != 0) continue;
      tasks[key.substr(prefix.size())] =
          Json::array({field(*trec, "node"), field(*trec, "status")});
    }
    e["tasks"] = std::move(tasks);
    const Json status = e["status"];
    if (status == "complete") {
      b.done.push_back(std::move(e));
    } else if (status == "waiting_human") {
      b.blocked.push_back(std::move(e));
    } else {
      b.in_flight.push_back(std::move(e));
    }
  }
  if (state.contains("bundles") && state["bundles"].is_array()) {
    for (const auto& bundle : state["bundles"]) {
      if (!bundle.is_object()) continue;
      Json id = field(bundle, "id");
      if (id.is_string() && bundles_rt.is_object() && bundles_rt.contains(id.get<std::string>()))
        continue;
      b.next_up.push_back(bundle);
    }
  }
  return b;
}

std::string render_handoff(const Json& state, const HandoffText& info) {
  Board b = summarize_cursors(state);
  std::string out;
  out += "# Handoff of run " + text_of(field(state, "run_id")) + "\n\n";
  out +=
      "This session stopped on purpose to keep its context small. The run is parked, not\n"
      "finished: the board below is what the next session starts from.\n\n";
  out += "- Repository: " + text_of(field(state, "repo")) + " (default branch `" +
         text_of(field(state, "default_branch")) + "`)\n";
  out += "- Run directory: " + info.run_dir + "\n";
  out += "- Written at: " + info.written_at + "\n";
  out += "- Why: " + info.reason + "\n";
  Json handoff = field(state, "handoff");
  out += "- The orchestrator continues at `" + text_of(field(handoff, "resume_node")) + "`\n";
  out += "- Handoffs in this run: " + text_of(field(state, "handoffs")) + "\n";

  section(out, "Done", b.done);
  section(out, "In flight (their tech leads ended with the session: dispatch each again)",
          b.in_flight);
  section(out, "Blocked (waiting on a human)", b.blocked);
  if (!field(state, "human_interrupt").is_null())
    out += "- human interrupt: " + dump_py(state["human_interrupt"]) + "\n";

  out += "\n## Next up (formed, not started)\n\n";
  if (b.next_up.empty()) out += "- nothing\n";
  for (const auto& bundle : b.next_up) {
    std::string title = text_of(field(bundle, "title"));
    if (title.empty()) title = text_of(field(bundle, "summary"));
    out += "- `" + text_of(field(bundle, "id")) + "`" + (title.empty() ? "" : ": " + title) + "\n";
  }

  out += "\n## Pull requests\n\n";
  Json prs = field(state, "prs");
  if (!prs.is_array() || prs.empty()) out += "- none yet\n";
  if (prs.is_array())
    for (const auto& pr : prs) out += "- " + dump_py(pr) + "\n";

  out += "\n## Open concerns (latest ten)\n\n";
  Json concerns = field(state, "concerns");
  if (!concerns.is_array() || concerns.empty()) out += "- none\n";
  if (concerns.is_array()) {
    size_t first = concerns.size() > 10 ? concerns.size() - 10 : 0;
    for (size_t i = first; i < concerns.size(); ++i) out += "- " + dump_py(concerns[i]) + "\n";
  }

  out += "\n## Resuming\n\n";
  out += "1. Reopen the run: `devgraph checkpoint " + info.run_dir +
         " resume` (status back to running, a fresh\n   context for the orchestrator).\n";
  out +=
      "2. Check each in-flight bundle's branch HEAD and worktree against this board before\n"
      "   trusting it, then dispatch a tech lead for every bundle listed as in flight.\n";
  out += "3. Inspect the whole state at any time with `devgraph checkpoint " + info.run_dir +
         " show`.\n";
  return out;
}

}  // namespace devgraph
