// Which tasks may start now, the longest dependency chain, and the pairs of
// tasks that serialize.
#include <algorithm>

#include "schedule/schedule.h"
#include "util/fs.h"

namespace devgraph::schedule {
namespace {

Json string_list(const std::vector<std::string>& items) {
  Json out = Json::array();
  for (const auto& s : items) out.push_back(s);
  return out;
}

Json keyed_lists(const std::vector<std::pair<std::string, std::vector<std::string>>>& items) {
  Json out = Json::object();
  for (const auto& [k, v] : items) out[k] = string_list(v);
  return out;
}

}  // namespace

// A string field of a JSON object, or nullptr.
static const std::string* string_field(const Json::object_t& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->second.is_string()) return nullptr;
  return &it->second.get_ref<const std::string&>();
}

TaskCursors cursors_from_state(const Json& state, std::string_view bundle) {
  TaskCursors out;
  if (!state.is_object()) return out;
  const auto& top = state.get_ref<const Json::object_t&>();
  auto runtime = top.find("tasks_runtime");
  if (runtime == top.end() || !runtime->second.is_object()) return out;
  const std::string key_prefix = std::string(bundle) + "/";
  for (const auto& [key, value] : runtime->second.get_ref<const Json::object_t&>()) {
    if (!value.is_object()) continue;
    const auto& rec = value.get_ref<const Json::object_t&>();
    const std::string* b = string_field(rec, "bundle");
    if (b == nullptr || *b != bundle) continue;
    std::string task;
    if (const std::string* t = string_field(rec, "task")) {
      task = *t;
    } else if (key.rfind(key_prefix, 0) == 0) {
      task = key.substr(key_prefix.size());
    } else {
      continue;
    }
    const std::string* status = string_field(rec, "status");
    if (status == nullptr) continue;
    if (*status == "complete") {
      out.complete.insert(task);
    } else if (*status == "active") {
      // An active cursor without a node has not been placed yet.
      auto node = rec.find("node");
      bool placed =
          node != rec.end() && !node->second.is_null() &&
          !(node->second.is_string() && node->second.get_ref<const std::string&>().empty()) &&
          !(node->second.is_boolean() && !node->second.get<bool>());
      if (placed) out.in_flight.insert(task);
    }
  }
  return out;
}

Expected<TaskCursors> read_task_cursors(const std::string& state_path, std::string_view bundle) {
  DG_TRY(Json state, load_json_file(state_path));
  if (!state.is_object()) return fail(state_path + ": state must be a JSON object");
  return cursors_from_state(state, bundle);
}

Expected<RunnableSet> compute_runnable(const Plan& plan, const TaskCursors& cursors,
                                       int max_parallel) {
  RunnableSet r;
  r.bundle = plan.bundle;
  r.max_parallel = max_parallel;
  r.in_flight.assign(cursors.in_flight.begin(), cursors.in_flight.end());
  r.complete.assign(cursors.complete.begin(), cursors.complete.end());
  std::vector<const Task*> busy;  // in flight, then chosen in this call
  for (const auto& id : r.in_flight) {
    const Task* t = plan.find(id);
    if (t == nullptr)
      return fail("state.json has task " + id + " in flight, but tasks.json for bundle " +
                  plan.bundle + " does not list it");
    busy.push_back(t);
  }
  const size_t in_flight_count = r.in_flight.size();
  for (const Task& t : plan.tasks) {
    if (cursors.complete.count(t.id)) continue;
    r.remaining.push_back(t.id);
    if (cursors.in_flight.count(t.id)) continue;
    std::vector<std::string> unmet;
    for (const auto& d : t.depends_on)
      if (!cursors.complete.count(d)) unmet.push_back(d);
    if (!unmet.empty()) {
      r.waiting_on_deps.emplace_back(t.id, std::move(unmet));
      continue;
    }
    std::vector<std::string> clashes;
    for (const Task* other : busy)
      if (t.footprint.conflicts_with(other->footprint)) clashes.push_back(other->id);
    if (!clashes.empty()) {
      r.waiting_on_footprint.emplace_back(t.id, std::move(clashes));
      continue;
    }
    if (static_cast<long long>(in_flight_count + r.runnable.size()) >= max_parallel) {
      r.waiting_on_capacity.push_back(t.id);
      continue;
    }
    r.runnable.push_back(t.id);
    busy.push_back(&t);
  }
  if (r.remaining.empty()) {
    r.route = kRouteComplete;
  } else if (!r.runnable.empty()) {
    r.route = kRouteAvailable;
  } else if (r.in_flight.empty()) {
    // Nothing running and nothing startable: the plan cannot progress.
    r.route = kRouteDeadlock;
    r.deadlock = true;
  } else {
    r.route = kRouteWaiting;
  }
  return r;
}

Json RunnableSet::to_json() const {
  Json out = Json::object();
  out["bundle"] = bundle;
  out["route"] = route;
  out["runnable"] = string_list(runnable);
  out["in_flight"] = string_list(in_flight);
  out["complete"] = string_list(complete);
  out["remaining"] = string_list(remaining);
  out["max_parallel"] = max_parallel;
  out["waiting_on_deps"] = keyed_lists(waiting_on_deps);
  out["waiting_on_footprint"] = keyed_lists(waiting_on_footprint);
  out["waiting_on_capacity"] = string_list(waiting_on_capacity);
  out["deadlock"] = deadlock;
  return out;
}

int default_chain_ceiling(size_t task_count) {
  return std::max<int>(3, static_cast<int>((task_count + 1) / 2));
}

std::vector<int> tail_lengths(const Plan& plan) {
  const size_t n = plan.tasks.size();
  // Kahn's order over "depends on" edges, then the tails from the end of
  // that order back: every dependent is final before its dependencies.
  std::vector<std::vector<size_t>> dependents(n);
  std::vector<size_t> waiting(n, 0);
  for (size_t i = 0; i < n; ++i)
    for (const auto& d : plan.tasks[i].depends_on) {
      dependents[plan.index.at(d)].push_back(i);
      ++waiting[i];
    }
  std::vector<size_t> order;
  order.reserve(n);
  for (size_t i = 0; i < n; ++i)
    if (waiting[i] == 0) order.push_back(i);
  for (size_t k = 0; k < order.size(); ++k)
    for (size_t j : dependents[order[k]])
      if (--waiting[j] == 0) order.push_back(j);
  std::vector<int> tail(n, 1);
  for (auto it = order.rbegin(); it != order.rend(); ++it)
    for (size_t j : dependents[*it]) tail[*it] = std::max(tail[*it], tail[j] + 1);
  return tail;
}

CriticalPath critical_path(const Plan& plan, std::optional<int> ceiling) {
  const size_t n = plan.tasks.size();
  // Longest chain ending at each task, computed in dependency order by an
  // iterative post-order walk (no recursion: chains may be thousands long).
  constexpr size_t kNone = static_cast<size_t>(-1);
  std::vector<size_t> length(n, 0), via(n, kNone);
  std::vector<std::vector<size_t>> deps(n);
  for (size_t i = 0; i < n; ++i)
    for (const auto& d : plan.tasks[i].depends_on) deps[i].push_back(plan.index.at(d));
  std::vector<char> state(n, 0);  // 0 new, 1 open, 2 done
  std::vector<std::pair<size_t, size_t>> stack;
  for (size_t root = 0; root < n; ++root) {
    if (state[root]) continue;
    stack.emplace_back(root, 0);
    state[root] = 1;
    while (!stack.empty()) {
      auto& [node, e] = stack.back();
      if (e < deps[node].size()) {
        size_t d = deps[node][e++];
        if (state[d] == 0) {
          state[d] = 1;
          stack.emplace_back(d, 0);
        }
        continue;
      }
      size_t best = 0;
      size_t best_dep = kNone;
      for (size_t d : deps[node])
        if (length[d] > best) best = length[d], best_dep = d;  // first longest wins
      length[node] = best + 1;
      via[node] = best_dep;
      state[node] = 2;
      stack.pop_back();
    }
  }
  size_t end = kNone;
  for (size_t i = 0; i < n; ++i)
    if (end == kNone || length[i] > length[end]) end = i;
  CriticalPath cp;
  for (size_t i = end; i != kNone; i = via[i]) cp.path.push_back(plan.tasks[i].id);
  std::reverse(cp.path.begin(), cp.path.end());
  cp.task_count = n;
  cp.ceiling = ceiling && *ceiling > 0 ? *ceiling : default_chain_ceiling(n);
  cp.within_ceiling = static_cast<long long>(cp.path.size()) <= cp.ceiling;
  return cp;
}

Json CriticalPath::to_json() const {
  Json out = Json::object();
  out["critical_path"] = string_list(path);
  out["length"] = path.size();
  out["ceiling"] = ceiling;
  out["within_ceiling"] = within_ceiling;
  out["task_count"] = task_count;
  return out;
}

std::vector<ConflictPair> all_conflicts(const Plan& plan) {
  std::vector<ConflictPair> out;
  const auto& tasks = plan.tasks;
  for (size_t i = 0; i < tasks.size(); ++i) {
    for (size_t j = i + 1; j < tasks.size(); ++j) {
      if (!tasks[i].footprint.conflicts_with(tasks[j].footprint)) continue;
      out.push_back(
          {tasks[i].id, tasks[j].id, footprint_conflicts(tasks[i].files, tasks[j].files)});
    }
  }
  return out;
}

Json conflicts_to_json(const std::vector<ConflictPair>& pairs) {
  Json out = Json::array();
  for (const auto& p : pairs) {
    Json globs = Json::array();
    for (const auto& [a, b] : p.globs) globs.push_back(Json::array({a, b}));
    Json item = Json::object();
    item["a"] = p.a;
    item["b"] = p.b;
    item["globs"] = std::move(globs);
    out.push_back(std::move(item));
  }
  return out;
}

}  // namespace devgraph::schedule
