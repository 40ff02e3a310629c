// tasks.json: structural validation and the typed plan.
//
// Problems are worded like the reference runtime's (values are shown the
// way Python shows them, e.g. ['T9']) so planners see the same messages
// from either implementation; devgraph adds the checks the reference skips
// (kind, non-object tasks, every cycle instead of the first).
#include <algorithm>
#include <cstdio>
#include <unordered_set>

#include "schedule/schedule.h"
#include "util/fs.h"

namespace devgraph::schedule {
namespace {

const Json& field(const Json& obj, const char* key) {
  static const Json kNull;
  if (!obj.is_object()) return kNull;
  auto it = obj.find(key);
  return it == obj.end() ? kNull : *it;
}

bool is_valid_id(const Json& id) {
  if (!id.is_string()) return false;
  const auto& s = id.get_ref<const std::string&>();
  return !s.empty() && s.find('/') == std::string::npos;
}

// Every dependency cycle over `deps` (node -> dependencies, nodes in plan
// order): a depth-first search from each unvisited node in plan order,
// each back edge yielding the cycle it closes. Every cyclic component has
// at least one back edge, so no cycle goes unreported, and the first one
// found is the one the reference reports. Iterative: a 2,000-long chain
// must not exhaust the call stack.
std::vector<std::vector<size_t>> find_cycles(const std::vector<std::vector<size_t>>& deps) {
  enum : char { kWhite, kGrey, kBlack };
  const size_t n = deps.size();
  std::vector<char> colour(n, kWhite);
  std::vector<size_t> stack_pos(n, 0);
  std::vector<size_t> stack;
  std::vector<size_t> next_edge;  // parallel to stack
  std::vector<std::vector<size_t>> cycles;
  for (size_t start = 0; start < n; ++start) {
    if (colour[start] != kWhite) continue;
    colour[start] = kGrey;
    stack_pos[start] = 0;
    stack.assign(1, start);
    next_edge.assign(1, 0);
    while (!stack.empty()) {
      size_t node = stack.back();
      size_t& e = next_edge.back();
      if (e == deps[node].size()) {
        colour[node] = kBlack;
        stack.pop_back();
        next_edge.pop_back();
        continue;
      }
      size_t nxt = deps[node][e++];
      if (colour[nxt] == kGrey) {
        std::vector<size_t> cycle(stack.begin() + static_cast<long>(stack_pos[nxt]), stack.end());
        cycle.push_back(nxt);
        cycles.push_back(std::move(cycle));
      } else if (colour[nxt] == kWhite) {
        colour[nxt] = kGrey;
        stack_pos[nxt] = stack.size();
        stack.push_back(nxt);
        next_edge.push_back(0);
      }
    }
  }
  return cycles;
}

}  // namespace

const Task* Plan::find(std::string_view id) const {
  auto it = index.find(std::string(id));
  return it == index.end() ? nullptr : &tasks[it->second];
}

std::vector<std::string> check_plan(const Json& doc) {
  std::vector<std::string> problems;
  if (!doc.is_object()) return {"tasks.json must be a JSON object"};
  const Json& bundle = field(doc, "bundle");
  if (!bundle.is_string() || bundle.get_ref<const std::string&>().empty())
    problems.push_back("top-level 'bundle' must be a non-empty string");
  const Json& tasks = field(doc, "tasks");
  if (!tasks.is_array() || tasks.empty()) {
    problems.push_back("'tasks' must be a non-empty list");
    return problems;
  }

  for (size_t i = 0; i < tasks.size(); ++i)
    if (!tasks[i].is_object())
      problems.push_back("tasks[" + std::to_string(i) + "] must be an object");
  for (const auto& t : tasks) {
    const Json& id = field(t, "id");
    if (!is_valid_id(id))
      problems.push_back("task id " + py_repr(id) + " must be a non-empty string without '/'");
  }

  // Known ids: every string id, in first-appearance order for the cycle
  // search (a duplicated id keeps the dependencies of its last occurrence).
  std::unordered_map<std::string, size_t> node_of;
  std::vector<std::string> nodes;
  std::unordered_map<std::string, int> seen;
  for (const auto& t : tasks) {
    const Json& id = field(t, "id");
    if (!id.is_string()) continue;
    const auto& s = id.get_ref<const std::string&>();
    if (++seen[s] == 1) {
      node_of.emplace(s, nodes.size());
      nodes.push_back(s);
    }
  }
  std::vector<std::string> dupes;
  for (const auto& [s, count] : seen)
    if (count > 1) dupes.push_back(s);
  if (!dupes.empty()) {
    std::sort(dupes.begin(), dupes.end());
    Json list = Json::array();
    for (const auto& d : dupes) list.push_back(d);
    problems.push_back("duplicate task ids: " + py_repr(list));
  }

  std::vector<std::vector<size_t>> edges(nodes.size());
  for (const auto& t : tasks) {
    const Json& id = field(t, "id");
    const std::string label = py_str(id);
    const Json* deps_ptr = &field(t, "depends_on");
    static const Json kEmpty = Json::array();
    if (deps_ptr->is_null() && !(t.is_object() && t.contains("depends_on"))) deps_ptr = &kEmpty;
    const Json& deps = *deps_ptr;
    bool deps_ok = deps.is_array();
    if (deps_ok)
      for (const auto& d : deps)
        deps_ok = deps_ok && d.is_string() && node_of.count(d.get<std::string>());
    if (!deps_ok)
      problems.push_back(label + ": depends_on must list known task ids, got " + py_repr(deps));
    if (deps.is_array() && !id.is_null() && std::find(deps.begin(), deps.end(), id) != deps.end())
      problems.push_back(label + ": depends on itself");

    const Json* files_ptr = &field(t, "files");
    if (files_ptr->is_null() && !(t.is_object() && t.contains("files"))) files_ptr = &kEmpty;
    const Json& files = *files_ptr;
    bool files_ok = files.is_array() && !files.empty();
    if (files_ok)
      for (const auto& f : files)
        files_ok = files_ok && f.is_string() && !f.get_ref<const std::string&>().empty();
    if (!files_ok) {
      problems.push_back(label + ": files must be a non-empty list of glob strings");
    } else {
      bool unsupported = false;
      for (const auto& f : files)
        unsupported = unsupported ||
                      f.get_ref<const std::string&>().find_first_of("[]{}") != std::string::npos;
      if (unsupported)
        problems.push_back(label +
                           ": files may use only *, **, and ? glob syntax (no bracket or brace "
                           "expressions)");
    }

    if (t.is_object() && t.contains("kind")) {
      const Json& kind = t["kind"];
      bool known_kind = false;
      for (const char* k : kTaskKinds) known_kind = known_kind || (kind.is_string() && kind == k);
      if (!known_kind)
        problems.push_back(label + ": kind must be one of 'code', 'iac', 'docs', got " +
                           py_repr(kind));
    }

    if (id.is_string() && deps.is_array()) {
      auto& out = edges[node_of.at(id.get<std::string>())];
      out.clear();
      for (const auto& d : deps)
        if (d.is_string())
          if (auto it = node_of.find(d.get<std::string>()); it != node_of.end())
            out.push_back(it->second);
    }
  }

  for (const auto& cycle : find_cycles(edges)) {
    std::string text = "dependency cycle: ";
    for (size_t i = 0; i < cycle.size(); ++i) text += (i ? " -> " : "") + nodes[cycle[i]];
    problems.push_back(std::move(text));
  }
  return problems;
}

Expected<Plan> plan_from_json(const Json& doc) {
  auto problems = check_plan(doc);
  if (!problems.empty()) {
    std::string msg = "tasks.json is invalid:";
    for (const auto& p : problems) msg += "\n  " + p;
    return fail(msg);
  }
  Plan plan;
  plan.bundle = doc["bundle"].get<std::string>();
  plan.tasks.reserve(doc["tasks"].size());
  for (const auto& t : doc["tasks"]) {
    Task task;
    task.id = t["id"].get<std::string>();
    if (auto it = t.find("title"); it != t.end() && it->is_string())
      task.title = it->get<std::string>();
    if (auto it = t.find("depends_on"); it != t.end())
      task.depends_on = it->get<std::vector<std::string>>();
    task.files = t["files"].get<std::vector<std::string>>();
    if (auto it = t.find("kind"); it != t.end()) task.kind = it->get<std::string>();
    task.footprint = Footprint(task.files);
    plan.index.emplace(task.id, plan.tasks.size());
    plan.tasks.push_back(std::move(task));
  }
  return plan;
}

Expected<Plan> load_plan(const std::string& path) {
  auto text = read_file(path);
  if (!text) {
    // read_file names the path itself; keep only the reason.
    std::string reason = text.error().message;
    if (auto colon = reason.rfind(": "); colon != std::string::npos)
      reason = reason.substr(colon + 2);
    return fail("cannot read tasks.json at " + path + ": " + reason);
  }
  auto doc = parse_json(*text, path);
  if (!doc) return fail("cannot read tasks.json: " + doc.error().message);
  return plan_from_json(*doc);
}

}  // namespace devgraph::schedule
