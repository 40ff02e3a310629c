#include "orchestrator/ownership.h"

#include <algorithm>
#include <map>

#include "bundle/recovery.h"
#include "store/run_store.h"
#include "util/args.h"
#include "util/text.h"

namespace devgraph::orchestrator {
namespace {

// Values of the state file's format (the schema's enums).
constexpr const char* kWaitingHuman = "waiting_human";
constexpr const char* kParked = "parked";

bool closed(const std::string& status) {
  return status == "delivered" || status == "rejected" || status == "stopped";
}

bool live(const std::string& status) {
  return status == "running" || status == "handoff" || status == "human_required";
}

const Json* object_at(const Json& obj, const char* key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it == obj.end() || !it->is_object() ? nullptr : &*it;
}

}  // namespace

std::vector<long long> bundle_issue_numbers(const Json& entry) {
  std::vector<long long> out;
  if (!entry.is_object()) return out;
  auto it = entry.find("issues");
  if (it == entry.end() || !it->is_array()) return out;
  for (const auto& i : *it) {
    if (i.is_number_integer()) out.push_back(i.get<long long>());
    if (i.is_string()) {
      std::string s = i.get<std::string>();
      if (!s.empty() && s[0] == '#') s = s.substr(1);
      if (auto n = parse_int(s)) out.push_back(*n);
    }
  }
  return out;
}

std::vector<Waiting> waiting_of(const Json& state, const std::string& run_dir) {
  std::vector<Waiting> out;
  if (!state.is_object()) return out;
  std::string run_id = json_str(state, "run_id");
  std::map<std::string, const Json*> entries;
  if (auto it = state.find("bundles"); it != state.end() && it->is_array())
    for (const auto& e : *it)
      if (e.is_object() && !json_str(e, "id").empty()) entries[json_str(e, "id")] = &e;
  auto add = [&](const std::string& bundle, const std::string& key, const std::string& reason) {
    Waiting w{run_id, run_dir, bundle, key, reason, "", {}};
    if (auto e = entries.find(bundle); e != entries.end()) {
      w.branch = json_str(*e->second, "branch");
      w.issues = bundle_issue_numbers(*e->second);
    }
    out.push_back(std::move(w));
  };
  auto is_closed = [&](const std::string& bundle) {
    auto e = entries.find(bundle);
    return e != entries.end() && closed(json_str(*e->second, "status"));
  };
  std::set<std::string> with_waiting_cursor;
  for (const char* map : {"bundles_runtime", "tasks_runtime"}) {
    const Json* cursors = object_at(state, map);
    if (!cursors) continue;
    for (const auto& [key, c] : cursors->items()) {
      if (!c.is_object() || json_str(c, "status") != kWaitingHuman) continue;
      std::string bundle = key.substr(0, key.find('/'));
      if (bundle.empty() || !is_valid_id(bundle) || is_closed(bundle)) continue;
      if (key.find('/') != std::string::npos && !is_valid_id(key.substr(key.find('/') + 1)))
        continue;
      with_waiting_cursor.insert(bundle);
      add(bundle, key, json_str(c, bundle::kWaitingWhyKey, "waits for a person"));
    }
  }
  for (const auto& [id, e] : entries)
    if (json_str(*e, "status") == kParked && !with_waiting_cursor.count(id))
      add(id, id, json_str(*e, "parked_reason", "parked"));
  std::sort(out.begin(), out.end(),
            [](const Waiting& a, const Waiting& b) { return a.key < b.key; });
  return out;
}

Expected<Ownership> decide_ownership(const std::vector<RunView>& runs, const std::string& identity,
                                     bool fresh) {
  Ownership o;
  if (!fresh) {
    for (const auto& r : runs) {
      if (!r.state.is_object() || json_str(r.state, "mode") == "clean") continue;
      std::string status = json_str(r.state, "status");
      if (status != "running" && status != "handoff" && !r.end_unrecorded) continue;
      if (json_str(r.state, "repo") != identity)
        return fail(ErrorKind::usage, "run " + r.dir + " belongs to " + json_str(r.state, "repo") +
                                          ", not " + identity + "; start a new one with --new");
      o.resume = r.dir;
      o.finishing = r.end_unrecorded;
      break;
    }
  }
  for (const auto& r : runs) {
    if (r.dir == o.resume || !r.state.is_object()) continue;
    if (json_str(r.state, "mode") == "clean" || json_str(r.state, "repo") != identity) continue;
    if (!live(json_str(r.state, "status"))) continue;
    for (auto& w : waiting_of(r.state, r.dir)) {
      o.issues.insert(w.issues.begin(), w.issues.end());
      if (!w.branch.empty()) o.branches.insert(w.branch);
      o.held.push_back(std::move(w));
    }
  }
  return o;
}

std::string held_line(const std::vector<Waiting>& held) {
  if (held.empty()) return "";
  std::set<std::string> runs;
  for (const auto& w : held) runs.insert(w.run_id);
  std::vector<std::string> parts;
  for (const auto& w : held)
    parts.push_back((runs.size() > 1 ? w.run_id + " " : std::string()) + w.key + " (" +
                    clip(w.reason, 120) + ")");
  return "waiting for a person" + (runs.size() == 1 ? " in run " + *runs.begin() : std::string()) +
         ": " + join(parts, ", ");
}

}  // namespace devgraph::orchestrator
