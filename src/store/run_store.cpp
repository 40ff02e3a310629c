#include "store/run_store.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <regex>
#include <set>

#include "store/board.h"
#include "store/deferred_state.h"
#include "store/event_log.h"
#include "util/clock.h"
#include "util/fs.h"

namespace devgraph {
namespace {

// Values of the state file format (the schema's enums), not graph data.
constexpr const char* kStatusRunning = "running";
constexpr const char* kStatusHandoff = "handoff";
constexpr const char* kCursorActive = "active";
constexpr const char* kCursorComplete = "complete";
constexpr const char* kCursorWaiting = "waiting_human";
constexpr const char* kTasksRuntime = "tasks_runtime";
constexpr const char* kBundlesRuntime = "bundles_runtime";
// The event whose detail must name a persona and its agent handle.
constexpr const char* kDispatchEvent = "PERSONA_DISPATCHED";
// The persona whose handle marks a bundle's owner rather than a worker.
constexpr const char* kTechLeadPersona = "tech-lead";
// Cursor lanes of `move`; their nodes and completion rules come from the graph.
constexpr const char* kBundleLane = "bundle";
constexpr const char* kTaskLane = "task";
// The node type that parks a cursor until a human answers.
constexpr const char* kCursorInterruptType = "cursor_interrupt";
// Where a resume lands when the handoff record does not say.
constexpr const char* kDefaultResumeNode = "bundle_scheduler";

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i ? sep : "") + items[i];
  return out;
}

// Python truthiness, for the reference's `if value:` tests.
bool truthy(const Json& v) {
  if (v.is_null()) return false;
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number_integer() || v.is_number_unsigned()) return v.get<long long>() != 0;
  if (v.is_number_float()) return v.get<double>() != 0.0;
  if (v.is_string()) return !v.get_ref<const std::string&>().empty();
  if (v.is_array() || v.is_object()) return !v.empty();
  return true;
}

const Json& get(const Json& obj, const char* key) {
  static const Json kNull;
  if (!obj.is_object()) return kNull;
  auto it = obj.find(key);
  return it == obj.end() ? kNull : *it;
}

long long int_or(const Json& v, long long fallback) {
  if (v.is_number_integer() || v.is_number_unsigned()) return v.get<long long>();
  if (v.is_number_float()) return static_cast<long long>(v.get<double>());
  if (v.is_boolean()) return v.get<bool>() ? 1 : 0;
  return fallback;
}

long long graph_version_of(const Json& state) {
  return int_or(get(state, "graph_version"), 2);
}

// `obj[key]` as an object, created when absent; an error when it holds
// something else (a damaged state file must not crash a verb).
Expected<Json*> object_at(Json& obj, const std::string& key, const std::string& where) {
  auto it = obj.find(key);
  if (it == obj.end()) {
    obj[key] = Json::object();
    return &obj[key];
  }
  if (!it->is_object()) return fail(where + ": '" + key + "' is not an object");
  return &*it;
}

Status bump_metric(Json& state, const char* name) {
  DG_TRY(Json * metrics, object_at(state, "metrics", "state.json"));
  Json& m = (*metrics)[name];
  m = int_or(m, 0) + 1;
  return {};
}

Status append_completed(Json& state, const Json& node) {
  auto it = state.find("completed_nodes");
  if (it == state.end()) {
    state["completed_nodes"] = Json::array();
    it = state.find("completed_nodes");
  }
  if (!it->is_array()) return fail("state.json: 'completed_nodes' is not a list");
  it->push_back(node);
  return {};
}

std::string resolve_dir(const std::string& dir) {
  char buf[PATH_MAX];
  if (::realpath(dir.c_str(), buf) != nullptr) return buf;
  return dir;
}

// Temporary files of writers killed before their rename; harmless but
// they would pile up. Called under the lock, so no live writer owns one.
void remove_stale_temps(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return;
  const std::string prefix = std::string(kStateFile) + ".tmp.";
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name.compare(0, prefix.size(), prefix) == 0) ::unlink(join_path(dir, name).c_str());
  }
  ::closedir(d);
}

class Txn final : public Transaction {
 public:
  Txn(const Graph& graph, std::string now, std::string events_path)
      : graph_(graph), now_(std::move(now)), events_path_(std::move(events_path)) {}

  Json& state() override { return state_; }
  const std::string& now() const override { return now_; }

  Status append_event(const std::string& type, Json detail) override {
    DG_CHECK(require_event_type(type));
    long long seq = 0;
    const Json& current = get(state_, "event_seq");
    if (current.is_number_integer() || current.is_number_unsigned()) {
      seq = current.get<long long>();
    } else {
      // A state from before event_seq: the reference counts the log's lines.
      DG_TRY(seq, count_event_lines(events_path_));
    }
    state_["event_seq"] = seq + 1;
    events_.push_back(make_event(now_, seq + 1, type, get(state_, "node"), std::move(detail)));
    return {};
  }

  Status require_event_type(const std::string& type) const {
    if (graph_version_of(state_) < 4 || graph_.has_event(type)) return {};
    std::vector<std::string> names = graph_.events;
    std::sort(names.begin(), names.end());
    return fail("event " + py_repr(type) +
                " is not in the vocabulary; use one of: " + join(names, ", "));
  }

  // The record map[key] (map is tasks_runtime or bundles_runtime), or
  // nullptr when there is none. With deferred cursor maps the record is
  // parsed here on first use; code that reads a record goes through this.
  Expected<Json*> cursor(const char* map, const std::string& key) {
    if (deferred_ && deferred_->defers(map)) return deferred_->record(state_, map, key);
    auto it = state_.find(map);
    if (it == state_.end() || !it->is_object()) return static_cast<Json*>(nullptr);
    auto rec = it->find(key);
    return rec == it->end() ? nullptr : &*rec;
  }

  Json state_;
  // Set when the cursor maps were left unparsed (see deferred_state.h).
  std::optional<DeferredState> deferred_;
  std::vector<Json> events_;
  // Cursor records this transaction changed ("tasks_runtime" -> keys);
  // the schema check covers them plus everything outside the cursor maps.
  std::map<std::string, std::set<std::string>> touched_;
  bool validate_everything_ = true;
  // Files written once the change is known to be valid (HANDOFF.md).
  std::vector<std::pair<std::string, std::string>> side_files_;

 private:
  const Graph& graph_;
  std::string now_;
  std::string events_path_;
};

// Checks the state against the schema. When only some cursor records
// changed in a trusted state (see wrote_this_state), the untouched ones
// are swapped out for the check, so a move costs the same at 10 or 1,000
// tasks.
Status validate_state(const Schema& schema, Txn& txn) {
  Json& state = txn.state_;
  if (!state.is_object()) return fail("state failed schema validation: the state is not an object");
  std::vector<std::pair<std::string, Json>> parked;
  if (!txn.validate_everything_) {
    for (const char* map : {kTasksRuntime, kBundlesRuntime}) {
      auto it = state.find(map);
      if (it == state.end() || !it->is_object()) continue;
      Json subset = Json::object();
      auto touched = txn.touched_.find(map);
      if (touched != txn.touched_.end()) {
        for (const auto& key : touched->second) {
          auto rec = it->find(key);
          if (rec != it->end()) subset[key] = *rec;
        }
      }
      parked.emplace_back(map, std::move(*it));
      *it = std::move(subset);
    }
  }
  std::vector<std::string> errors = schema.validate(state);
  for (auto& [map, full] : parked) state[map] = std::move(full);
  if (errors.empty()) return {};
  return fail("state failed schema validation: " + join(errors, "; "));
}

Status reject_cursor_writes(const Json& merge) {
  for (const char* map : {kTasksRuntime, kBundlesRuntime}) {
    if (merge.contains(map) || merge.contains(std::string("+") + map))
      return fail(std::string("--merge may not write ") + map +
                  "; use `devgraph checkpoint RUN_DIR move --bundle B [--task T] --merge ...` "
                  "instead");
  }
  return {};
}

Status require_id(const std::optional<std::string>& value, const std::string& flag) {
  if (!value || is_valid_id(*value)) return {};
  return fail("--" + flag + " " + py_repr(*value) +
              " is not a valid id (one word: letters, digits, '_', '.', '-')");
}

// A dispatch record is what a resumed run uses to find live agents, so it
// must name one known persona and the handle its launch returned.
Status require_dispatch_detail(const Graph& graph, const Json& detail, const Json& state) {
  const Json& persona = get(detail, "persona");
  if (!persona.is_string() || !is_valid_id(persona.get<std::string>()))
    return fail(std::string(kDispatchEvent) + " needs a single-word 'persona', got " +
                py_repr(persona));
  if (graph_version_of(state) >= 4 && !graph.has_persona(persona.get<std::string>())) {
    std::vector<std::string> names = graph.personas;
    std::sort(names.begin(), names.end());
    std::vector<std::string> quoted;
    for (const auto& n : names) quoted.push_back(py_repr(n));
    return fail(std::string(kDispatchEvent) + " persona " + py_repr(persona) + " is not one of [" +
                join(quoted, ", ") +
                "]; a repair or re-verification dispatches the same persona again, not a variant");
  }
  const Json& handle = get(detail, "agent_handle");
  bool blank = true;
  if (handle.is_string())
    for (char c : handle.get<std::string>())
      blank = blank && std::isspace(static_cast<unsigned char>(c));
  if (!handle.is_string() || blank)
    return fail(std::string(kDispatchEvent) +
                " needs a non-empty 'agent_handle' (record the event after the launch returns)");
  for (const char* key : {"bundle", "task"}) {
    const Json& v = get(detail, key);
    if (v.is_null() || v == "") continue;
    if (!v.is_string() || !is_valid_id(v.get<std::string>()))
      return fail(std::string(kDispatchEvent) + " '" + key + "' " + py_repr(v) +
                  " is not a valid id");
  }
  return {};
}

std::string cursor_key(const std::string& bundle, const std::optional<std::string>& task) {
  return task && !task->empty() ? bundle + "/" + *task : bundle;
}

// The dispatch names the cursor that gained a live agent; its handle goes
// onto that cursor when the cursor exists.
Status attach_handle(Txn& txn, const Json& detail) {
  const Json& bundle = get(detail, "bundle");
  const Json& task = get(detail, "task");
  if (!truthy(bundle) || !bundle.is_string()) return {};
  bool has_task = truthy(task) && task.is_string();
  const char* map = has_task ? kTasksRuntime : kBundlesRuntime;
  std::string key = has_task ? bundle.get<std::string>() + "/" + task.get<std::string>()
                             : bundle.get<std::string>();
  DG_TRY(Json * rec, txn.cursor(map, key));
  if (rec == nullptr) return {};
  if (!rec->is_object())
    return fail(std::string("state.json: ") + map + "[" + py_repr(key) + "] is not an object");
  const std::string persona = detail["persona"].get<std::string>();
  if (!has_task && persona == kTechLeadPersona) {
    (*rec)["tech_lead_handle"] = detail["agent_handle"];
    (*rec)["tech_lead_generation"] = int_or(get(*rec, "tech_lead_generation"), 0) + 1;
  } else {
    DG_TRY(Json * handles, object_at(*rec, "agent_handles", key));
    (*handles)[persona] = detail["agent_handle"];
  }
  txn.touched_[map].insert(key);
  return {};
}

// The lanes a cursor may stand in, and the check that `node` is in one.
std::string shared_lane(const Graph& graph) {
  // The lane every cursor may enter is the one GRAPH.yaml gives to the
  // cursor's own owner.
  for (const auto& [lane, owner] : graph.lane_owners)
    if (owner == "cursor-owner") return lane;
  return "shared";
}

Status require_node_in_lanes(const Graph& graph, const std::string& node,
                             const std::vector<std::string>& lanes, const std::string& cursor) {
  const GraphLane* lane = graph.lane_of(node);
  if (lane == nullptr || graph.node(node) == nullptr) {
    std::string hint;
    if (auto target = graph.legacy_target(node))
      hint = " (retired; it became " + py_repr(*target) + ")";
    return fail("--node " + py_repr(node) + " is not a node of the graph" + hint);
  }
  if (std::find(lanes.begin(), lanes.end(), lane->name) != lanes.end()) return {};
  return fail("--node " + py_repr(node) + " is in lane " + py_repr(lane->name) + "; the " + cursor +
              " cursor moves only within: " + join(lanes, ", "));
}

Json new_capacity(const Graph& graph, long long generation, const std::string& now) {
  Json counters = Json::object();
  for (const auto& s : graph.capacity.signals) counters[s] = 0;
  Json cap = Json::object();
  cap["counters"] = std::move(counters);
  cap["tier"] = "green";
  cap["generation"] = generation;
  cap["context_started_at"] = now;
  cap["tier_changed_at"] = nullptr;
  return cap;
}

std::string tier_of(const Graph& graph, const Json& counters) {
  std::map<std::string, long long> values;
  for (const auto& s : graph.capacity.signals) values[s] = int_or(get(counters, s.c_str()), 0);
  return graph.capacity.tier_for(values);
}

std::string action_for(const Graph& graph, const std::string& tier) {
  auto it = graph.capacity.actions.find(tier);
  return it == graph.capacity.actions.end() ? std::string() : it->second;
}

bool is_terminal(const Graph& graph, const Json& value) {
  if (!value.is_string()) return false;
  const auto& t = graph.terminal_states;
  return std::find(t.begin(), t.end(), value.get<std::string>()) != t.end();
}

std::string pause_node(const Graph& graph) {
  return graph.pause_states.empty() ? std::string(kStatusHandoff) : graph.pause_states.front();
}

Status write_current_run_pointer(const std::string& resolved_dir) {
  std::string parent = dirname_of(resolved_dir);
  if (basename_of(parent) != "runs") return {};
  return write_file_atomic(join_path(dirname_of(parent), kCurrentRunPointer), resolved_dir + "\n");
}

Json merged_detail(Json base, const Json& user) {
  if (user.is_object())
    for (auto it = user.begin(); it != user.end(); ++it) base[it.key()] = *it;
  return base;
}

// kUpdateDeferred leaves the cursor maps unparsed (deferred_state.h): for
// changes that reach cursors only through Txn::cursor().
enum class Mode { kCreate, kUpdate, kUpdateDeferred };

// Only the state.json the note in RUN_DIR/.lock names is trusted: every
// record in it was checked, by this schema, as it was written or copied
// from an earlier such file, so a transaction checks only what it changes,
// and may leave the cursor maps unparsed. Any other state.json (edited by
// hand, written by the reference, or checked by another schema) is parsed
// and checked whole, as the reference does, and an invalid one is refused
// before anything changes.
bool wrote_this_state(const FileLock& lock, const FileIdentity& id, const Schema& schema) {
  auto note = lock.read_note();
  return note && *note == written_state_note(id, schema);
}

Mode update_mode(bool defer_cursors) {
  return defer_cursors ? Mode::kUpdateDeferred : Mode::kUpdate;
}

// One transaction: lock, load + repair, mutate, validate, append, save.
Expected<Committed> run_transaction(const std::string& run_dir, const Graph& graph,
                                    const Schema& schema, const Clock& clock,
                                    size_t* whole_parses, Mode mode,
                                    const std::function<Status(Txn&)>& mutate) {
  const std::string state_path = join_path(run_dir, kStateFile);
  const std::string events_path = join_path(run_dir, kEventsFile);
  if (mode == Mode::kCreate) {
    DG_CHECK(make_directories(run_dir));
  } else if (!path_exists(state_path)) {
    return fail(state_path + ": no such run state (start one with `devgraph checkpoint " + run_dir +
                " init`)");
  }
  DG_TRY(FileLock lock, FileLock::acquire(join_path(run_dir, kLockFile)));
  Txn txn(graph, iso_utc(clock.wall()), events_path);
  // Whether state.json is the file this build wrote last (its note in
  // .lock names it): only then are its untouched cursor records taken as
  // checked, and left unparsed when the caller asks.
  bool trusted = false;
  if (mode == Mode::kCreate) {
    if (path_exists(state_path))
      return fail(state_path + " already exists; refusing to overwrite a run");
  } else {
    FileIdentity read_id;
    DG_TRY(FileBuffer text, read_file_buffer(state_path, &read_id));
    trusted = wrote_this_state(lock, read_id, schema);
    std::optional<DeferredState::Opened> opened;
    if (mode == Mode::kUpdateDeferred && trusted) {
      // The text moves into the index (no copy of a file that can be
      // megabytes); a layout the scan does not take, which is rare, is read
      // again for the full parse.
      opened = DeferredState::open(std::move(text), {kTasksRuntime, kBundlesRuntime});
      if (!opened) {
        DG_TRY(text, read_file_buffer(state_path));
      }
    }
    if (opened) {
      txn.state_ = std::move(opened->state);
      txn.deferred_ = std::move(opened->index);
    } else {
      ++*whole_parses;
      DG_TRY(txn.state_, parse_json(text.view(), state_path));
    }
    if (!txn.state_.is_object()) return fail(state_path + ": not a JSON object");
    const Json& seq = get(txn.state_, "event_seq");
    std::optional<long long> state_seq;
    if (seq.is_number_integer() || seq.is_number_unsigned()) state_seq = seq.get<long long>();
    DG_CHECK(repair_event_log(events_path, state_seq));
    remove_stale_temps(run_dir);
  }
  DG_CHECK(mutate(txn));
  txn.state_["updated_at"] = txn.now();
  if (!trusted) txn.validate_everything_ = true;
  DG_CHECK(validate_state(schema, txn));
  for (const auto& [path, content] : txn.side_files_) DG_CHECK(write_file_atomic(path, content));
  if (mode == Mode::kCreate && path_exists(events_path)) {
    // A log without a state is what an init killed half-way leaves.
    DG_CHECK(truncate_durable(events_path, 0));
  }
  // Events first, then the state that covers them: see the header.
  if (!txn.events_.empty()) {
    std::string lines;
    for (const auto& ev : txn.events_) lines += event_line(ev);
    DG_CHECK(append_durable(events_path, lines));
  }
  if (txn.deferred_) {
    // Untouched records go from the text read to the new file by writev,
    // never copied into one buffer (a copy of a large file costs more in
    // page faults than the whole move).
    std::string generated;
    DG_CHECK(write_file_atomic(state_path, txn.deferred_->dump_pieces(txn.state_, generated)));
  } else {
    DG_CHECK(write_file_atomic(state_path, dump_py(txn.state_, 2) + "\n"));
  }
  // A note that a crash loses or cuts short only costs the next command a
  // full parse; one that names the old file cannot match the new one.
  if (auto written = file_identity(state_path))
    (void)lock.write_note(written_state_note(*written, schema));
  return Committed{std::move(txn.state_), std::move(txn.events_)};
}

}  // namespace

std::string written_state_note(const FileIdentity& written, const Schema& schema) {
  return "devgraph " DEVGRAPH_VERSION " schema " + schema.fingerprint() + " wrote state.json " +
         std::to_string(written.device) + " " + std::to_string(written.inode) + " " +
         std::to_string(written.size) + " " + std::to_string(written.mtime_ns) + " " +
         std::to_string(written.ctime_ns) + "\n";
}

RunStore::RunStore(std::string run_dir, const Graph& graph, const Schema& state_schema,
                   const Clock& clock)
    : run_dir_(absolute_path(run_dir)), graph_(&graph), schema_(&state_schema), clock_(&clock) {}

std::string RunStore::run_id() const {
  return basename_of(run_dir_);
}

Expected<Json> RunStore::read() const {
  if (!cache_) {
    ++whole_parses_;
    return read_run_state(run_dir_);
  }
  DG_TRY(auto v, cache_->get());
  return *v;
}

Expected<std::shared_ptr<const Json>> RunStore::view() const {
  if (cache_) return cache_->get();
  ++whole_parses_;
  DG_TRY(Json s, read_run_state(run_dir_));
  return std::make_shared<const Json>(std::move(s));
}

void RunStore::cache_reads(bool on) {
  if (!on)
    cache_.reset();
  else if (!cache_)
    cache_ = std::make_shared<StateCache>(join_path(run_dir_, kStateFile));
}

std::vector<std::string> runs_newest_first(const std::string& develop_home) {
  std::vector<std::string> out;
  const std::string dir = develop_home + "/runs";
  DIR* d = ::opendir(dir.c_str());
  if (!d) return out;
  while (auto* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    if (path_exists(dir + "/" + name + "/" + kStateFile)) out.push_back(dir + "/" + name);
  }
  ::closedir(d);
  std::sort(out.rbegin(), out.rend());
  return out;
}

Expected<std::string> new_run_dir(const std::string& develop_home,
                                  std::chrono::system_clock::time_point now) {
  const std::string named = develop_home + "/runs/" + utc_stamp(now);
  std::string dir = named;
  for (int n = 2; path_exists(join_path(dir, kStateFile)); ++n) {
    if (n > 99) return fail(ErrorKind::usage, named + " exists already; try again in a second", 3);
    char suffix[8];
    std::snprintf(suffix, sizeof suffix, "-%02d", n);
    dir = named + suffix;
  }
  return dir;
}

Expected<Json> read_run_state(const std::string& run_dir) {
  const std::string path = join_path(absolute_path(run_dir), kStateFile);
  if (!path_exists(path)) return fail(path + ": no such run state");
  DG_TRY(std::string text, read_file(path));
  return parse_json(text, path);
}

Expected<Committed> RunStore::transact(const std::function<Status(Transaction&)>& mutation) {
  return run_transaction(run_dir_, *graph_, *schema_, *clock_, &whole_parses_, Mode::kUpdate,
                         [&](Txn& txn) { return mutation(txn); });
}

Expected<Committed> RunStore::init(const InitRequest& req) {
  const Graph& g = *graph_;
  std::string id = run_id();
  auto committed =
      run_transaction(run_dir_, g, *schema_, *clock_, &whole_parses_, Mode::kCreate, [&](Txn& txn) -> Status {
        const std::string& now = txn.now();
        Json s = Json::object();
        s["run_id"] = id;
        s["repo"] = req.repo;
        s["default_branch"] = req.default_branch;
        s["graph_version"] = g.version;
        s["node"] = g.entrypoint;
        s["previous_node"] = nullptr;
        s["round"] = 1;
        s["status"] = kStatusRunning;
        s["started_at"] = now;
        for (const char* list : {"discovered_work", "bundles"}) s[list] = Json::array();
        s[kBundlesRuntime] = Json::object();
        s[kTasksRuntime] = Json::object();
        s["completed_nodes"] = Json::array();
        s["retry_counts"] = Json::object();
        s["repair_cycles"] = Json::object();
        for (const char* list : {"artifacts", "concerns", "prs"}) s[list] = Json::array();
        s["audit"] = Json::object();
        s["human_interrupt"] = nullptr;
        s["event_seq"] = 0;
        s["capacity"] = new_capacity(g, 1, now);
        s["handoffs"] = 0;
        s["handoff"] = nullptr;
        Json metrics = Json::object();
        for (const char* m : {"nodes_executed", "transitions", "repair_cycles", "review_cycles",
                              "acceptance_cycles", "retries", "human_interruptions"})
          metrics[m] = 0;
        s["metrics"] = std::move(metrics);
        if (!req.merge.is_null()) DG_CHECK(deep_merge(s, req.merge));
        txn.state_ = std::move(s);
        Json detail = Json::object();
        detail["run_id"] = id;
        return txn.append_event("RUN_STARTED", std::move(detail));
      });
  if (!committed) return committed;
  DG_CHECK(write_current_run_pointer(resolve_dir(run_dir_)));
  return committed;
}

namespace {

// Shared by go and event: the dispatch rules, then a state-level merge.
Status apply_event_common(const Graph& g, Txn& txn, const std::string& event, const Json& detail,
                          const Json& merge) {
  DG_CHECK(txn.require_event_type(event));
  if (event == kDispatchEvent) {
    DG_CHECK(require_dispatch_detail(g, detail, txn.state_));
    DG_CHECK(attach_handle(txn, detail));
  }
  if (!merge.is_null()) {
    DG_CHECK(reject_cursor_writes(merge));
    DG_CHECK(deep_merge(txn.state_, merge));
  }
  return {};
}

Status require_object(const Json& v, const std::string& flag) {
  if (v.is_null() || v.is_object()) return {};
  return fail("--" + flag + " must be a JSON object");
}

}  // namespace

Expected<Committed> RunStore::go(const GoRequest& req) {
  const Graph& g = *graph_;
  DG_CHECK(require_object(req.merge, "merge"));
  DG_CHECK(require_object(req.detail, "detail"));
  return run_transaction(run_dir_, g, *schema_, *clock_, &whole_parses_, update_mode(defer_cursors_),
                         [&](Txn& txn) -> Status {
                           txn.validate_everything_ = false;
                           DG_CHECK(apply_event_common(g, txn, req.event, req.detail, req.merge));
                           Json& s = txn.state_;
                           if (req.mutate) DG_CHECK(req.mutate(s));
                           std::vector<std::string> lanes;
                           if (const GraphLane* l = g.lane_of(g.entrypoint))
                             lanes.push_back(l->name);
                           lanes.push_back(shared_lane(g));
                           if (get(s, "mode") == "clean")
                             if (const GraphLane* l = g.lane_of(g.clean_entrypoint))
                               lanes.push_back(l->name);
                           DG_CHECK(require_node_in_lanes(g, req.node, lanes, "orchestrator"));
                           Json from = get(s, "node");
                           Json base = Json::object();
                           base["from"] = from;
                           base["to"] = req.node;
                           Json detail = merged_detail(std::move(base), req.detail);
                           DG_CHECK(append_completed(s, from));
                           s["previous_node"] = from;
                           s["node"] = req.node;
                           DG_CHECK(bump_metric(s, "nodes_executed"));
                           DG_CHECK(bump_metric(s, "transitions"));
                           if (is_terminal(g, s["node"])) s["status"] = req.node;
                           return txn.append_event(req.event, std::move(detail));
                         });
}

Expected<Committed> RunStore::event(const EventRequest& req) {
  const Graph& g = *graph_;
  DG_CHECK(require_object(req.merge, "merge"));
  DG_CHECK(require_object(req.detail, "detail"));
  return run_transaction(
      run_dir_, g, *schema_, *clock_, &whole_parses_, update_mode(defer_cursors_), [&](Txn& txn) -> Status {
        txn.validate_everything_ = false;
        DG_CHECK(apply_event_common(g, txn, req.event, req.detail, req.merge));
        if (req.mutate) DG_CHECK(req.mutate(txn.state_));
        return txn.append_event(req.event, req.detail.is_null() ? Json::object() : req.detail);
      });
}

namespace {

// Copies a planner's task list onto state.bundles[bundle].tasks so the
// board lists every task before its cursor exists. Returns the task count.
Expected<long long> register_plan(Txn& txn, const std::string& bundle, const std::string& path) {
  auto text = read_file(path);
  if (!text)
    return fail("--plan " + path + ": cannot read tasks.json (" + text.error().message + ")");
  auto plan = parse_json(*text, path);
  if (!plan)
    return fail("--plan " + path + ": cannot read tasks.json (" + plan.error().message + ")");
  const Json& tasks = get(*plan, "tasks");
  if (!tasks.is_array() || tasks.empty()) return fail("--plan " + path + ": no tasks list");
  Json entries = Json::array();
  for (const auto& t : tasks) {
    if (!t.is_object() || !truthy(get(t, "id"))) continue;
    Json e = Json::object();
    e["id"] = t["id"];
    e["title"] = t.contains("title") ? t["title"] : Json("");
    e["depends_on"] = t.contains("depends_on") ? t["depends_on"] : Json::array();
    e["files"] = t.contains("files") ? t["files"] : Json::array();
    entries.push_back(std::move(e));
  }
  Json& s = txn.state_;
  if (!s.contains("bundles")) s["bundles"] = Json::array();
  Json& bundles = s["bundles"];
  if (!bundles.is_array()) return fail("state.json: 'bundles' is not a list");
  const long long count = static_cast<long long>(entries.size());
  bool found = false;
  for (auto& b : bundles) {
    if (b.is_object() && get(b, "id") == bundle) {
      b["tasks"] = entries;
      found = true;
      break;
    }
  }
  if (!found) {
    Json b = Json::object();
    b["id"] = bundle;
    b["tasks"] = std::move(entries);
    bundles.push_back(std::move(b));
  }
  DG_TRY(Json * cursor, txn.cursor(kBundlesRuntime, bundle));
  if (cursor != nullptr && cursor->is_object()) {
    (*cursor)["task_count"] = count;
    txn.touched_[kBundlesRuntime].insert(bundle);
  }
  return count;
}

}  // namespace

Expected<Committed> RunStore::move(const MoveRequest& req) {
  const Graph& g = *graph_;
  DG_CHECK(require_object(req.merge, "merge"));
  DG_CHECK(require_object(req.detail, "detail"));
  const bool is_task = req.task.has_value();
  return run_transaction(
      run_dir_, g, *schema_, *clock_, &whole_parses_, update_mode(defer_cursors_), [&](Txn& txn) -> Status {
        txn.validate_everything_ = false;
        DG_CHECK(txn.require_event_type(req.event));
        if (req.event == kDispatchEvent) {
          DG_CHECK(require_dispatch_detail(g, req.detail, txn.state_));
          DG_CHECK(attach_handle(txn, req.detail));
        }
        DG_CHECK(require_id(req.bundle, "bundle"));
        DG_CHECK(require_id(req.task, "task"));
        const char* lane_name = is_task ? kTaskLane : kBundleLane;
        DG_CHECK(require_node_in_lanes(g, req.node, {lane_name, shared_lane(g)}, lane_name));
        const GraphLane* lane = g.lane(lane_name);

        Json& s = txn.state_;
        const char* map = is_task ? kTasksRuntime : kBundlesRuntime;
        DG_TRY(Json * cursors, object_at(s, map, "state.json"));
        const std::string key = cursor_key(req.bundle, req.task);
        DG_TRY(Json * existing, txn.cursor(map, key));
        if (existing == nullptr) {
          Json rec = Json::object();
          rec["bundle"] = req.bundle;
          rec["task"] = is_task ? Json(*req.task) : Json(nullptr);
          rec["node"] = nullptr;
          rec["previous_node"] = nullptr;
          rec["status"] = kCursorActive;
          rec["moves"] = 0;
          (*cursors)[key] = std::move(rec);
        }
        Json& rec = (*cursors)[key];
        if (!rec.is_object())
          return fail(std::string("state.json: ") + map + "[" + py_repr(key) +
                      "] is not an object");
        Json previous = get(rec, "node");
        rec["previous_node"] = previous;
        rec["node"] = req.node;
        rec["moves"] = int_or(get(rec, "moves"), 0) + 1;
        const GraphNode* target = g.node(req.node);
        bool completes = lane != nullptr && req.node == lane->complete_at &&
                         std::find(lane->complete_on.begin(), lane->complete_on.end(), req.event) !=
                             lane->complete_on.end();
        if (target != nullptr && target->type == kCursorInterruptType) {
          rec["status"] = kCursorWaiting;
        } else if (completes) {
          rec["status"] = kCursorComplete;
        } else {
          rec["status"] = kCursorActive;
        }
        rec["updated_at"] = txn.now();
        if (!req.merge.is_null()) DG_CHECK(deep_merge(rec, req.merge));
        txn.touched_[map].insert(key);
        DG_CHECK(bump_metric(s, "nodes_executed"));
        DG_CHECK(bump_metric(s, "transitions"));

        Json base = Json::object();
        base["bundle"] = req.bundle;
        base["lane_from"] = previous;
        base["lane_to"] = req.node;
        base["cursor"] = key;
        if (is_task) base["task"] = *req.task;
        if (get(rec, "status") == kCursorComplete) base["cursor_complete"] = true;
        Json detail = merged_detail(std::move(base), req.detail);
        if (req.plan_path) {
          DG_TRY(long long n, register_plan(txn, req.bundle, *req.plan_path));
          detail["plan_tasks"] = n;
        }
        return txn.append_event(req.event, std::move(detail));
      });
}

Expected<SignalOutcome> RunStore::signal(const SignalRequest& req) {
  const Graph& g = *graph_;
  DG_CHECK(require_id(req.bundle, "bundle"));
  const auto& signals = g.capacity.signals;
  if (std::find(signals.begin(), signals.end(), req.type) == signals.end()) {
    std::vector<std::string> quoted;
    for (const auto& s : signals) quoted.push_back(py_repr(s));
    return fail("--type must be one of (" + join(quoted, ", ") + ")");
  }
  if (req.count < 0) return fail("--count must be zero or positive");
  Json report;
  auto committed = run_transaction(
      run_dir_, g, *schema_, *clock_, &whole_parses_, update_mode(defer_cursors_), [&](Txn& txn) -> Status {
        txn.validate_everything_ = false;
        Json& s = txn.state_;
        Json* holder = &s;
        if (req.bundle) {
          DG_TRY(Json * rec, txn.cursor(kBundlesRuntime, *req.bundle));
          if (rec == nullptr)
            return fail("bundle " + py_repr(*req.bundle) +
                        " has no cursor yet; move it before signalling for it");
          holder = rec;
          if (!holder->is_object())
            return fail("state.json: bundles_runtime[" + py_repr(*req.bundle) +
                        "] is not an object");
          txn.touched_[kBundlesRuntime].insert(*req.bundle);
        }
        if (!holder->contains("capacity")) (*holder)["capacity"] = new_capacity(g, 1, txn.now());
        Json& cap = (*holder)["capacity"];
        if (!cap.is_object()) return fail("state.json: 'capacity' is not an object");
        if (req.reset) cap = new_capacity(g, int_or(get(cap, "generation"), 1) + 1, txn.now());
        DG_TRY(Json * counters, object_at(cap, "counters", "capacity"));
        long long sum = 0;
        if (__builtin_add_overflow(int_or(get(*counters, req.type.c_str()), 0), req.count, &sum))
          return fail("--count " + std::to_string(req.count) + " would overflow the " + req.type +
                      " counter");
        (*counters)[req.type] = sum;
        Json previous = cap.contains("tier") ? cap["tier"] : Json("green");
        std::string tier = tier_of(g, *counters);
        cap["tier"] = tier;
        const std::string cursor = req.bundle ? *req.bundle : "orchestrator";
        if (previous != tier) {
          cap["tier_changed_at"] = txn.now();
          Json detail = Json::object();
          detail["cursor"] = cursor;
          detail["tier"] = tier;
          detail["counters"] = *counters;
          DG_CHECK(txn.append_event("CAPACITY_TIER_CHANGED", std::move(detail)));
          // append_event may not touch cursors, so `cap` is still valid here.
        }
        report = Json::object();
        report["cursor"] = cursor;
        report["tier"] = tier;
        report["counters"] = cap["counters"];
        report["generation"] = get(cap, "generation");
        report["action"] = action_for(g, tier);
        return {};
      });
  if (!committed) return committed.error();
  return SignalOutcome{std::move(committed).value(), std::move(report)};
}

Expected<HandoffOutcome> RunStore::handoff(const std::string& reason) {
  const Graph& g = *graph_;
  const std::string dir = resolve_dir(run_dir_);
  const std::string path = join_path(dir, kHandoffFile);
  auto committed =
      run_transaction(run_dir_, g, *schema_, *clock_, &whole_parses_, Mode::kUpdate, [&](Txn& txn) -> Status {
        txn.validate_everything_ = false;
        Json& s = txn.state_;
        if (is_terminal(g, get(s, "status")))
          return fail("run is already " + s["status"].get<std::string>() + "; nothing to hand off");
        const std::string pause = pause_node(g);
        Json node = get(s, "node");
        Json resume_node = node != pause ? node : get(s, "previous_node");
        s["handoffs"] = int_or(get(s, "handoffs"), 0) + 1;
        s["status"] = kStatusHandoff;
        Json record = Json::object();
        record["at"] = txn.now();
        record["reason"] = reason;
        record["resume_node"] = resume_node;
        record["generation"] = int_or(get(get(s, "capacity"), "generation"), 1);
        s["handoff"] = std::move(record);
        if (node != pause) {
          DG_CHECK(append_completed(s, node));
          s["previous_node"] = node;
          s["node"] = pause;
          DG_CHECK(bump_metric(s, "transitions"));
        }
        txn.side_files_.emplace_back(path, render_handoff(s, {dir, reason, txn.now()}));
        Json detail = Json::object();
        detail["from"] = resume_node;
        detail["to"] = pause;
        detail["reason"] = reason;
        detail["path"] = path;
        detail["resume_node"] = resume_node;
        return txn.append_event("HANDOFF_WRITTEN", std::move(detail));
      });
  if (!committed) return committed.error();
  return HandoffOutcome{std::move(committed).value(), path};
}

Expected<ResumeOutcome> RunStore::resume() {
  const Graph& g = *graph_;
  Json summary;
  auto committed =
      run_transaction(run_dir_, g, *schema_, *clock_, &whole_parses_, Mode::kUpdate, [&](Txn& txn) -> Status {
        txn.validate_everything_ = false;
        Json& s = txn.state_;
        if (is_terminal(g, get(s, "status")))
          return fail("run is " + s["status"].get<std::string>() +
                      "; a terminal run is not resumed");
        Json from_status = get(s, "status");
        s["status"] = kStatusRunning;
        if (!s.contains("capacity") || !s["capacity"].is_object())
          s["capacity"] = new_capacity(g, 0, txn.now());
        long long generation = int_or(get(s["capacity"], "generation"), 0) + 1;
        s["capacity"] = new_capacity(g, generation, txn.now());
        Json handoff = get(s, "handoff");
        if (!truthy(handoff)) handoff = Json::object();
        if (truthy(handoff)) {
          s["last_handoff"] = handoff;
          s["handoff"] = nullptr;
        }
        Json from_node = get(s, "node");
        const std::string pause = pause_node(g);
        if (from_node == pause) {
          s["previous_node"] = pause;
          Json target = get(handoff, "resume_node");
          std::string fallback = g.node(kDefaultResumeNode) ? kDefaultResumeNode : g.entrypoint;
          s["node"] = truthy(target) ? target : Json(fallback);
        }
        // A run recorded under an older graph may stand on a retired node.
        if (s["node"].is_string())
          if (auto mapped = g.legacy_target(s["node"].get<std::string>())) s["node"] = *mapped;
        Json detail = Json::object();
        detail["from"] = from_node;
        detail["to"] = s["node"];
        detail["from_status"] = from_status;
        detail["generation"] = generation;
        DG_CHECK(txn.append_event("RUN_RESUMED", std::move(detail)));
        Board b = summarize_cursors(s);
        summary = Json::object();
        summary["node"] = s["node"];
        summary["generation"] = generation;
        summary["from_status"] = from_status;
        summary["in_flight"] = b.in_flight;
        summary["blocked"] = b.blocked;
        Json next = Json::array();
        for (const auto& bundle : b.next_up) next.push_back(get(bundle, "id"));
        summary["next_up"] = std::move(next);
        return {};
      });
  if (!committed) return committed.error();
  DG_CHECK(write_current_run_pointer(resolve_dir(run_dir_)));
  return ResumeOutcome{std::move(committed).value(), std::move(summary)};
}

Expected<Json> parse_json_object(const std::string& text, const std::string& flag) {
  if (text.empty()) return Json::object();
  DG_TRY(Json value, parse_json(text, "--" + flag));
  if (!value.is_object()) return fail("--" + flag + " must be a JSON object");
  return value;
}

Status deep_merge(Json& dst, const Json& src) {
  if (!src.is_object()) return fail("--merge must be a JSON object");
  for (auto it = src.begin(); it != src.end(); ++it) {
    const std::string& k = it.key();
    const Json& v = *it;
    if (!k.empty() && k[0] == '+') {
      const std::string name = k.substr(1);
      if (!dst.contains(name)) dst[name] = Json::array();
      Json& target = dst[name];
      if (!target.is_array()) return fail("cannot append to non-list key " + py_repr(name));
      if (v.is_array()) {
        for (const auto& item : v) target.push_back(item);
      } else {
        target.push_back(v);
      }
    } else if (v.is_object() && dst.contains(k) && dst[k].is_object()) {
      DG_CHECK(deep_merge(dst[k], v));
    } else {
      dst[k] = v;
    }
  }
  return {};
}

bool is_valid_id(const std::string& id) {
  if (id.empty()) return false;
  auto alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  };
  if (!alnum(id[0])) return false;
  for (char c : id)
    if (!alnum(c) && c != '_' && c != '.' && c != '-') return false;
  return true;
}

}  // namespace devgraph
