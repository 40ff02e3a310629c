#include "inbox/inbox.h"

#include <dirent.h>

#include <algorithm>
#include <map>
#include <set>

#include "bundle/answer.h"
#include "bundle/budget.h"
#include "bundle/layout.h"
#include "bundle/recovery.h"
#include "guard/guard.h"
#include "lane/lane.h"
#include "lane/routes.h"
#include "util/fs.h"
#include "util/text.h"

namespace devgraph::inbox {
namespace {

// Values of the state file's format (the schema's and the orchestrator's
// enums), not graph data.
constexpr const char* kBundlesRuntime = "bundles_runtime";
constexpr const char* kTasksRuntime = "tasks_runtime";
constexpr const char* kWaiting = "waiting_human";
constexpr const char* kActive = "active";
constexpr const char* kParked = "parked";
constexpr const char* kEntryRunning = "running";
constexpr const char* kRejected = "rejected";
constexpr const char* kRunRunning = "running";
constexpr const char* kResultSuffix = ".result.json";
// The driver's own result beside the bundle-level personas' results.
constexpr const char* kTechLeadResult = "tech-lead.result.json";
// The cursor lanes, as the store names them.
constexpr const char* kBundleLane = "bundle";
constexpr const char* kTaskLane = "task";

bool closed_status(const std::string& status) {
  return status == kRejected || status == "delivered" || status == "stopped";
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return out;
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (!name.empty() && name[0] != '.') out.push_back(std::move(name));
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

// The newest of `candidates` that exists; "" when none does.
std::string newest(const std::vector<std::string>& candidates) {
  std::string best;
  int64_t best_time = 0;
  for (const auto& c : candidates) {
    auto id = file_identity(c);
    if (!id) continue;
    if (best.empty() || id->mtime_ns > best_time) {
      best = c;
      best_time = id->mtime_ns;
    }
  }
  return best;
}

std::string evidence_of(const bundle::BundleLayout& layout,
                        const std::optional<std::string>& task) {
  std::vector<std::string> candidates;
  std::string dir = task ? layout.task_dir(*task) : layout.dir();
  candidates.push_back(task ? layout.task_findings(*task) : layout.repair_findings());
  for (const auto& name : names_in(dir))
    if (ends_with(name, kResultSuffix) && name != kTechLeadResult)
      candidates.push_back(join_path(dir, name));
  std::string best = newest(candidates);
  if (best.empty() && path_exists(layout.log())) best = layout.log();
  return best;
}

std::string question_of(const std::string& evidence, const std::string& key) {
  std::string fallback = "How should " + key +
                         " go on? Answer with text for its next persona, approve going on, or "
                         "reject the bundle.";
  if (!ends_with(evidence, kResultSuffix)) return fallback;
  auto saved = load_json_file(evidence);
  if (!saved || !saved->is_object() || !(*saved)["result"].is_object()) return fallback;
  const Json& r = (*saved)["result"];
  std::string name = basename_of(evidence);
  std::string persona = name.substr(0, name.size() - std::string(kResultSuffix).size());
  auto missing = json_str_list(r, "missing_context");
  if (!missing.empty()) return clip(persona + " asks for: " + join(missing, "; "), 300);
  auto blockers = json_str_list(r, "blockers");
  if (!blockers.empty()) return clip(persona + " is blocked by: " + join(blockers, "; "), 300);
  return fallback;
}

const Json& field(const Json& obj, const char* key) {
  static const Json kNull;
  if (!obj.is_object()) return kNull;
  auto it = obj.find(key);
  return it == obj.end() ? kNull : *it;
}

Item item_for(const std::string& run_id, const std::string& run_dir, const Key& k,
              const std::string& key) {
  Item it;
  it.run_id = run_id;
  it.run_dir = run_dir;
  it.bundle = k.bundle;
  it.task = k.task;
  it.key = key;
  bundle::BundleLayout layout{run_dir, k.bundle, ""};
  it.evidence = evidence_of(layout, k.task);
  it.question = question_of(it.evidence, key);
  return it;
}

Json* entry_of(Json& state, const std::string& bundle) {
  if (!state.contains("bundles") || !state["bundles"].is_array()) return nullptr;
  for (auto& e : state["bundles"])
    if (e.is_object() && json_str(e, "id") == bundle) return &e;
  return nullptr;
}

// The cursor record of `key` ("B" in bundles_runtime, "B/T" in
// tasks_runtime), or nullptr.
Json* cursor_of(Json& state, const std::string& key) {
  const char* map = key.find('/') != std::string::npos ? kTasksRuntime : kBundlesRuntime;
  if (!state.contains(map) || !state[map].is_object()) return nullptr;
  auto it = state[map].find(key);
  return it == state[map].end() || !it->is_object() ? nullptr : &*it;
}

// Why `item` is not among the waiting ones, for a person.
std::string why_not_waiting(Json& state, const Item& item) {
  if (Json* e = entry_of(state, item.bundle))
    if (std::string status = json_str(*e, "status"); closed_status(status))
      return "bundle " + item.bundle + " is " + status;
  if (Json* c = cursor_of(state, item.key))
    return "its cursor is " + json_str(*c, "status", "without a status") + " at " +
           json_str(*c, "node", "no node");
  return "the run has no such bundle or task";
}

Status bump(Json& state, const char* metric) {
  if (!state.contains("metrics")) state["metrics"] = Json::object();
  Json& metrics = state["metrics"];
  if (!metrics.is_object()) return fail("state.json: 'metrics' is not an object");
  Json& m = metrics[metric];
  m = (m.is_number_integer() ? m.get<long long>() : 0) + 1;
  return {};
}

// The node of the cursor's own lane that it stood on before its detour
// through the shared nodes (the replay's return point): its previous node
// when that is in its lane, else the last node of its lane the event log
// moved it to.
Expected<std::string> return_point(const Graph& graph, const std::string& run_dir,
                                   const Json& cursor, const std::string& key,
                                   const std::string& lane) {
  auto in_lane = [&](const std::string& node) {
    const GraphLane* l = graph.lane_of(node);
    return l && l->name == lane;
  };
  std::string previous = json_str(cursor, "previous_node");
  if (in_lane(previous)) return previous;
  auto log = read_file(join_path(run_dir, kEventsFile));
  if (!log) return log.error();
  const std::string quoted = "\"" + key + "\"";
  std::string last;
  size_t pos = 0;
  while (pos < log->size()) {
    size_t nl = log->find('\n', pos);
    size_t end = nl == std::string::npos ? log->size() : nl;
    std::string_view line(log->data() + pos, end - pos);
    pos = end + 1;
    if (line.find(quoted) == std::string_view::npos) continue;
    auto ev = parse_json(line, "events.jsonl");
    if (!ev || !ev->is_object()) continue;
    const Json& d = field(*ev, "detail");
    if (json_str(d, "cursor") != key) continue;
    std::string to = json_str(d, "lane_to");
    if (in_lane(to)) last = to;
  }
  if (last.empty())
    return fail(ErrorKind::internal, key + ": the event log never moved it onto a node of the " +
                                         lane + " lane, so there is nowhere to send it back to");
  return last;
}

std::string answer_text(AnswerKind kind, const std::string& text) {
  std::string body = text;
  if (kind == AnswerKind::approve) body = "Approved: go on from where the work stopped.";
  if (kind == AnswerKind::reject && body.empty()) body = "Rejected (no reason given).";
  if (body.empty() || body.back() != '\n') body += '\n';
  return body;
}

const char* kind_word(AnswerKind kind) {
  switch (kind) {
    case AnswerKind::text:
      return bundle::kAnswerSupplied;
    case AnswerKind::approve:
      return bundle::kAnswerApproved;
    case AnswerKind::reject:
      return bundle::kAnswerRejected;
  }
  return bundle::kAnswerSupplied;
}

// A run standing on a terminal interrupt (human_required) goes back to
// where its orchestrator was, status running.
Status reopen(Transaction& tx, const Graph& graph, const lane::Walker& walker,
              const std::string& key, bool& reopened) {
  Json& s = tx.state();
  std::string from = json_str(s, "node");
  const GraphNode* at = graph.node(from);
  std::string status = json_str(s, "status");
  if (!at || at->type != "terminal_interrupt" || status != from) return {};
  const GraphLane* orchestrator = graph.lane_of(graph.entrypoint);
  if (!orchestrator) return fail(ErrorKind::internal, "GRAPH.yaml's entrypoint is in no lane");
  std::string previous = json_str(s, "previous_node");
  const GraphNode* prev = graph.node(previous);
  std::string to;
  if (prev && graph.lane_of(previous) == orchestrator && prev->type != "terminal_interrupt" &&
      prev->type != "terminal")
    to = previous;
  else
    to = walker.node_of_type(orchestrator->name, "scheduler").value_or(graph.entrypoint);
  s["previous_node"] = from;
  s["node"] = to;
  s["status"] = kRunRunning;
  DG_CHECK(bump(s, "transitions"));
  reopened = true;
  return tx.append_event(
      std::string(lane::event::kRunResumed),
      Json{{"from", from}, {"to", to}, {"from_status", status}, {"answered", key}});
}

}  // namespace

Json Item::to_json() const {
  return Json{{"key", key},
              {"run_id", run_id},
              {"run_dir", run_dir},
              {"bundle", bundle},
              {"task", task ? Json(*task) : Json()},
              {"reason", reason},
              {"question", question},
              {"evidence", evidence},
              {"since", since}};
}

Expected<Key> parse_key(const std::string& key) {
  Key k;
  auto slash = key.find('/');
  k.bundle = key.substr(0, slash);
  if (slash != std::string::npos) k.task = key.substr(slash + 1);
  if (!is_valid_id(k.bundle) || (k.task && !is_valid_id(*k.task)))
    return fail(
        ErrorKind::usage,
        "item " + py_repr(key) + " is not B or B/T (ids are letters, digits, '_', '.', '-')", 3);
  return k;
}

std::vector<Item> items_of_run(const Json& state, const std::string& run_dir) {
  std::vector<Item> out;
  if (!state.is_object()) return out;
  std::string run_id = json_str(state, "run_id", basename_of(run_dir));
  std::map<std::string, const Json*> entries;
  if (const Json& b = field(state, "bundles"); b.is_array())
    for (const auto& e : b)
      if (e.is_object() && e.contains("id") && e["id"].is_string())
        entries.emplace(e["id"].get<std::string>(), &e);
  auto entry_status = [&](const std::string& bundle) {
    auto it = entries.find(bundle);
    return it == entries.end() ? std::string() : json_str(*it->second, "status");
  };
  std::set<std::string> waiting;  // bundles with a waiting cursor
  for (const char* map : {kBundlesRuntime, kTasksRuntime}) {
    const Json& cursors = field(state, map);
    if (!cursors.is_object()) continue;
    for (auto it = cursors.begin(); it != cursors.end(); ++it) {
      const Json& c = *it;
      if (json_str(c, "status") != kWaiting) continue;
      auto k = parse_key(it.key());
      if (!k || k->task.has_value() != (map == std::string(kTasksRuntime))) continue;
      if (closed_status(entry_status(k->bundle))) continue;
      waiting.insert(k->bundle);
      Item item = item_for(run_id, run_dir, *k, it.key());
      item.reason =
          json_str(c, bundle::kWaitingWhyKey, "waiting for a person (no reason recorded)");
      item.since = json_str(c, "updated_at");
      out.push_back(std::move(item));
    }
  }
  for (const auto& [id, e] : entries) {
    if (json_str(*e, "status") != kParked || waiting.count(id) || !is_valid_id(id)) continue;
    Item item = item_for(run_id, run_dir, Key{id, std::nullopt}, id);
    bundle::BundleLayout layout{run_dir, id, ""};
    if (path_exists(layout.log())) item.evidence = layout.log();
    item.reason = json_str(*e, "parked_reason", "parked (no reason recorded)");
    item.since = json_str(*e, "parked_at",
                          json_str(field(field(state, kBundlesRuntime), id.c_str()), "updated_at"));
    out.push_back(std::move(item));
  }
  std::sort(out.begin(), out.end(), [](const Item& a, const Item& b) { return a.key < b.key; });
  return out;
}

Expected<std::vector<Item>> list_items(const std::string& develop_home) {
  struct Run {
    std::string started, id;
    std::vector<Item> items;
  };
  std::vector<Run> runs;
  std::string root = join_path(develop_home, "runs");
  for (const auto& name : names_in(root)) {
    std::string dir = join_path(root, name);
    if (!is_directory(dir)) continue;
    auto state = read_run_state(dir);
    if (!state || !state->is_object()) continue;
    std::string status = json_str(*state, "status");
    if (status != "running" && status != "handoff" && status != "human_required") continue;
    runs.push_back(Run{json_str(*state, "started_at"), name, items_of_run(*state, dir)});
  }
  std::sort(runs.begin(), runs.end(), [](const Run& a, const Run& b) {
    return a.started != b.started ? a.started > b.started : a.id > b.id;
  });
  std::vector<Item> out;
  for (auto& r : runs)
    for (auto& i : r.items) out.push_back(std::move(i));
  return out;
}

Expected<std::string> develop_home_of(const std::string& repo_dir) {
  const guard::Roots roots = guard::Roots::from_env();
  std::string dir = guard::resolve_path(repo_dir, absolute_path("."), roots.home);
  auto placement = guard::resolve_placement(dir, std::nullopt, roots);
  if (!placement)
    return fail(ErrorKind::usage,
                dir + " is not inside a git repository, so it has no runs (see --repo)", 3);
  return placement->develop_home;
}

Expected<Answered> answer(RunStore& store, const Graph& graph, const Item& item, AnswerKind kind,
                          const std::string& text) {
  lane::Walker walker(graph);
  auto park = walker.shared_node_of_type("cursor_interrupt");
  if (!park)
    return fail(ErrorKind::internal,
                "GRAPH.yaml has no shared node where a cursor waits for a person");
  DG_TRY(Key k, parse_key(item.key));
  if (k.bundle != item.bundle || k.task != item.task)
    return fail(ErrorKind::usage, "item " + item.key + " does not name its own bundle and task");
  const std::string run_dir = store.run_dir();
  const std::string path = bundle::BundleLayout{run_dir, item.bundle, ""}.answer(item.task);
  const std::string word = kind_word(kind);
  Answered out;
  out.answer_path = path;
  auto committed = store.transact([&](Transaction& tx) -> Status {
    Json& s = tx.state();
    auto now_waiting = items_of_run(s, run_dir);
    bool waits = std::any_of(now_waiting.begin(), now_waiting.end(),
                             [&](const Item& i) { return i.key == item.key; });
    if (!waits)
      return fail(ErrorKind::refused, item.key + " does not wait for a person in run " +
                                          store.run_id() + " (" + why_not_waiting(s, item) + ")");
    Json* cursor = cursor_of(s, item.key);
    bool cursor_waits = cursor && json_str(*cursor, "status") == kWaiting;
    if (cursor_waits && json_str(*cursor, "node") != *park)
      return fail(ErrorKind::refused, item.key + " waits at " + json_str(*cursor, "node") +
                                          ", not at " + *park + "; answer it there by hand");
    std::string target;
    if (cursor_waits && kind != AnswerKind::reject) {
      const char* lane = item.task ? kTaskLane : kBundleLane;
      DG_TRY(auto back, return_point(graph, run_dir, *cursor, item.key, lane));
      DG_TRY(target, walker.follow(lane, *park, lane::route::kSupplied, back));
    }
    // The answer first: a state that names it never lacks it.
    DG_CHECK(make_directories(dirname_of(path)));
    DG_CHECK(write_file_atomic(path, answer_text(kind, text)));

    Json detail = {{"bundle", item.bundle}};
    if (item.task) detail["task"] = *item.task;
    detail["cursor"] = item.key;
    Json* entry = entry_of(s, item.bundle);
    if (kind == AnswerKind::reject) {
      if (!entry) {
        if (!s.contains("bundles") || !s["bundles"].is_array())
          return fail("state.json: 'bundles' is not a list");
        s["bundles"].push_back(Json{{"id", item.bundle}});
        entry = &s["bundles"].back();
      }
      (*entry)["status"] = kRejected;
      (*entry)["rejected_at"] = tx.now();
      if (!text.empty()) (*entry)["rejected_reason"] = text;
      detail["answer"] = word;
      detail["answer_path"] = path;
      if (!text.empty()) detail["reason"] = clip(text, 300);
      DG_CHECK(tx.append_event(std::string(lane::event::kAwaitingHuman), detail));
      // The last thing it waited for: its orchestrator finishes it.
      if (!items_of_run(s, run_dir).empty()) return {};
      return reopen(tx, graph, walker, item.key, out.reopened);
    }
    Json record = {{"kind", word}, {"path", path}, {"moves", 0}, {"at", tx.now()}};
    if (cursor_waits) {
      Json& c = *cursor;
      std::string from = json_str(c, "node");
      long long count = c.value("moves", 0LL) + 1;
      c["previous_node"] = from;
      c["node"] = target;
      c["moves"] = count;
      c["status"] = kActive;
      c["updated_at"] = tx.now();
      record["moves"] = count;
      c[bundle::kAnswerKey] = record;
      DG_CHECK(bump(s, "nodes_executed"));
      DG_CHECK(bump(s, "transitions"));
      detail["lane_from"] = from;
      detail["lane_to"] = target;
      out.continues_at = target;
    } else if (Json* bc = cursor_of(s, item.bundle)) {
      record["moves"] = bc->value("moves", 0LL);
      (*bc)[bundle::kAnswerKey] = record;
    }
    detail["answer"] = word;
    detail["answer_path"] = path;
    // A bundle parked for its lifetime budget may spend one budget more.
    if (entry && bundle::allow_another_budget(*entry))
      detail[bundle::kBudgetRoundsKey] = (*entry)[bundle::kBudgetRoundsKey];
    DG_CHECK(tx.append_event(std::string(lane::event::kAwaitingHuman), detail));
    if (entry) (*entry)["status"] = kEntryRunning;
    return reopen(tx, graph, walker, item.key, out.reopened);
  });
  if (!committed) return committed.error();
  out.committed = std::move(*committed);
  return out;
}

}  // namespace devgraph::inbox
