#include "replay/replay.h"

#include <algorithm>
#include <set>

#include "util/fs.h"

namespace devgraph {
namespace {

constexpr const char* kBundleLane = "bundle";
constexpr const char* kTaskLane = "task";
constexpr const char* kSharedLane = "shared";

std::string show(const std::optional<std::string>& node) {
  return node ? *node : std::string("nothing");
}

const Json* field(const Json& obj, const char* key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

std::optional<std::string> string_field(const Json& obj, const char* key) {
  const Json* f = field(obj, key);
  if (!f || !f->is_string()) return std::nullopt;
  return f->get<std::string>();
}

// The graph facts the replay asks about over and over, computed once.
class GraphFacts {
 public:
  explicit GraphFacts(const Graph& g) : g_(g) {
    for (const auto& lane : g.lanes)
      for (const auto& n : lane.nodes)
        for (const auto& succ : successors(n))
          if (const GraphLane* to = g.lane_of(succ);
              to && to->name != lane.name && lane.name != kSharedLane)
            entries_[to->name].insert(succ);
  }

  bool known(const std::string& n) const { return g_.node(n) || g_.legacy_target(n); }
  bool legacy(const std::string& n) const { return !g_.node(n) && g_.legacy_target(n); }

  // The lane a node belongs to; a retired node counts as its successor's.
  std::string lane_of(const std::string& n) const {
    std::string live = g_.legacy_target(n).value_or(n);
    const GraphLane* lane = g_.lane_of(live);
    return lane ? lane->name : std::string();
  }

  std::vector<std::string> successors(const std::string& n) const {
    std::vector<std::string> out;
    const GraphNode* node = g_.node(n);
    if (!node) return out;
    if (!node->next.empty()) out.push_back(node->next);
    for (const auto& [route, target] : node->routes) out.push_back(target);
    return out;
  }

  bool routes_to(const std::string& from, const std::string& to) const {
    auto s = successors(from);
    return std::find(s.begin(), s.end(), to) != s.end();
  }

  bool interrupt(const std::string& n) const {
    const GraphNode* node = g_.node(n);
    return node && node->type.size() > 10 &&
           node->type.compare(node->type.size() - 10, 10, "_interrupt") == 0;
  }
  bool pause(const std::string& n) const {
    return std::find(g_.pause_states.begin(), g_.pause_states.end(), n) != g_.pause_states.end();
  }
  // A node a cursor visits and comes back from.
  bool detour(const std::string& n) const {
    return lane_of(n) == kSharedLane || interrupt(n) || pause(n);
  }

  const std::set<std::string>& entries(const std::string& lane) const {
    static const std::set<std::string> none;
    auto it = entries_.find(lane);
    return it == entries_.end() ? none : it->second;
  }

  const Graph& graph() const { return g_; }

 private:
  const Graph& g_;
  std::map<std::string, std::set<std::string>> entries_;
};

// One cursor as the replay tracks it.
struct Track {
  ReplayCursor view;
  std::optional<std::string> previous;  // the node before the current one
  std::string return_point;             // where a detour returns to
};

class Replayer {
 public:
  Replayer(const Graph& g, const Json& state) : facts_(g), state_(state) {
    const Json* v = field(state, "graph_version");
    version_ = v && v->is_number_integer() ? v->get<long long>() : 2;
    const Json* seq = field(state, "event_seq");
    if (seq && seq->is_number_integer()) state_seq_ = seq->get<long long>();
    orchestrator_.view.key = "orchestrator";
  }

  ReplayReport run(std::string_view text) {
    long long line_no = 0;
    size_t pos = 0;
    while (pos < text.size()) {
      size_t nl = text.find('\n', pos);
      std::string_view line =
          text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
      pos = nl == std::string_view::npos ? text.size() : nl + 1;
      ++line_no;
      if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
      on_line(line_no, line);
    }
    finish();
    return std::move(report_);
  }

 private:
  bool strict() const { return version_ >= 4; }
  void problem(std::string text) { report_.problems.push_back(std::move(text)); }

  void on_line(long long line_no, std::string_view line) {
    auto parsed = parse_json(line, "line");
    std::string where = "events.jsonl line " + std::to_string(line_no);
    if (!parsed || !parsed->is_object()) {
      problem(where + ": not a JSON object (a torn or hand-edited write)");
      return;
    }
    const Json& ev = *parsed;
    const Json* seq = field(ev, "seq");
    auto type = string_field(ev, "type");
    auto node = string_field(ev, "node");
    if (!seq || !seq->is_number_integer() || !type || !node) {
      problem(where + ": an event needs an integer seq, a type and a node");
      return;
    }
    long long s = seq->get<long long>();
    ++report_.events;
    if (last_seq_ && s <= *last_seq_) {
      // Applying it again would move cursors twice and bury the one real
      // problem under its echoes.
      problem("seq " + std::to_string(s) + " (line " + std::to_string(line_no) + ") follows seq " +
              std::to_string(*last_seq_) + ": duplicate or out of order, not replayed");
      return;
    }
    if (s != last_seq_.value_or(0) + 1)
      problem("seq " + std::to_string(s) + " follows " +
              (last_seq_ ? "seq " + std::to_string(*last_seq_) : std::string("the start")) +
              ": seq " + std::to_string(last_seq_.value_or(0) + 1) + " is missing");
    last_seq_ = std::max(last_seq_.value_or(0), s);

    if (state_seq_ && s > *state_seq_) {
      if (!snapshot_) take_snapshot();
      ++past_state_;
      if (!first_past_) first_past_ = s;
    }

    std::string at = "seq " + std::to_string(s) + " " + *type + ": ";
    if (strict() && !facts_.graph().has_event(*type))
      problem(at + "event type is not in GRAPH.yaml's vocabulary");
    if (report_.events == 1 && *type != "RUN_STARTED")
      problem(at + "the first event of a run is RUN_STARTED");

    const Json empty = Json::object();
    const Json* detail = field(ev, "detail");
    if (!detail || !detail->is_object()) detail = &empty;
    on_orchestrator(at, *type, *node, *detail);
    if (const auto cursor = string_field(*detail, "cursor"); cursor && field(*detail, "lane_to"))
      on_cursor_move(at, *type, *cursor, *detail);
  }

  void on_orchestrator(const std::string& at, const std::string& type, const std::string& node,
                       const Json& detail) {
    // Reported where the orchestrator arrives, not on every event it records there.
    if (!facts_.known(node) && orchestrator_.view.node != node)
      problem(at + "orchestrator is at unknown node " + node);
    if (!orchestrator_.view.node) {
      // RUN_STARTED records where the run was initialised.
      const Graph& g = facts_.graph();
      if (strict() && node != g.entrypoint && node != g.clean_entrypoint)
        problem(at + "the run starts at " + node + ", not at the entrypoint " + g.entrypoint +
                (g.clean_entrypoint.empty() ? "" : " or " + g.clean_entrypoint));
      orchestrator_.view.node = node;
      orchestrator_status_ = "running";
      return;
    }
    const std::string current = *orchestrator_.view.node;
    if (node == current) {
      if (type == "RUN_RESUMED") orchestrator_status_ = "running";
      return;
    }
    auto from = string_field(detail, "from");
    auto to = string_field(detail, "to");
    if (!to || *to != node) {
      problem(at + "orchestrator jumped from " + current + " to " + node +
              " without a recorded move");
    } else if (from && *from != current) {
      problem(at + "orchestrator recorded as leaving " + *from + ", but the log has it at " +
              current);
    }
    std::string origin = (from && to && *to == node) ? *from : current;
    if (facts_.known(node)) {
      std::string lane = facts_.lane_of(node);
      if (strict() && (lane == kBundleLane || lane == kTaskLane))
        problem(at + "orchestrator moved to " + node + ", which is in the " + lane +
                " lane (the orchestrator's cursor stays out of the bundle and task lanes)");
      else
        check_transition(at, "orchestrator", orchestrator_, origin, node);
    }
    advance(orchestrator_, node);
    const Graph& g = facts_.graph();
    if (std::find(g.terminal_states.begin(), g.terminal_states.end(), node) !=
        g.terminal_states.end())
      orchestrator_status_ = node;
    else if (facts_.pause(node))
      orchestrator_status_ = "handoff";
    else
      orchestrator_status_ = "running";
  }

  void on_cursor_move(const std::string& at, const std::string& type, const std::string& key,
                      const Json& detail) {
    auto to = string_field(detail, "lane_to");
    if (!to) {
      problem(at + "cursor " + key + " moved to a node that is not a name");
      return;
    }
    bool is_task = key.find('/') != std::string::npos ||
                   (string_field(detail, "task") && !string_field(detail, "task")->empty());
    std::string lane = is_task ? kTaskLane : kBundleLane;
    auto [it, created] = cursors_.try_emplace(key);
    Track& t = it->second;
    if (created) {
      t.view.key = key;
      t.view.lane = lane;
    }
    const Json* from_field = field(detail, "lane_from");
    std::optional<std::string> recorded_from;
    if (from_field && from_field->is_string()) recorded_from = from_field->get<std::string>();
    if (from_field && recorded_from != t.view.node)
      problem(at + "cursor " + key + " recorded as leaving " + show(recorded_from) +
              ", but the log has it at " + show(t.view.node));
    std::optional<std::string> origin = from_field ? recorded_from : t.view.node;

    std::string who = lane + " cursor " + key;
    if (!facts_.known(*to)) {
      problem(at + who + " moved to unknown node " + *to);
    } else if (std::string to_lane = facts_.lane_of(*to);
               strict() && to_lane != lane && to_lane != kSharedLane) {
      problem(at + who + " moved to " + *to + ", which is in the " + to_lane + " lane (a " + lane +
              " cursor stays in " + lane + " or " + kSharedLane + ")");
    } else if (!origin) {
      const auto& entries = facts_.entries(lane);
      if (strict() && !facts_.legacy(*to) && !entries.count(*to)) {
        std::string list;
        for (const auto& e : entries) list += (list.empty() ? "" : ", ") + e;
        problem(at + who + " starts at " + *to + "; the " + lane + " lane is entered at " +
                (list.empty() ? "no node" : list));
      }
    } else if (!(type == "ORCHESTRATOR_CORRECTION" && reopened_for_repair(lane, *origin, *to))) {
      check_transition(at, who, t, *origin, *to);
    }
    advance(t, *to);
    ++t.view.moves;
    const GraphLane* l = facts_.graph().lane(lane);
    const GraphNode* n = facts_.graph().node(*to);
    if (n && n->type == "cursor_interrupt")
      t.view.status = "waiting_human";
    else if (l && *to == l->complete_at &&
             std::find(l->complete_on.begin(), l->complete_on.end(), type) != l->complete_on.end())
      t.view.status = "complete";
    else
      t.view.status = "active";
  }

  // monitor_prs reopening a delivered bundle for a repair cycle (GRAPH.yaml
  // `reactions`, recorded as ORCHESTRATOR_CORRECTION): from the bundle
  // lane's completion back to repair_bundle. Which reactions a run's graph
  // allowed is not checked here: the replay may use another graph copy.
  bool reopened_for_repair(const std::string& lane, const std::string& from,
                           const std::string& to) const {
    const GraphLane* l = facts_.graph().lane(lane);
    return l && from == l->complete_at && to == "repair_bundle";
  }

  bool reopened_after_its_end(const std::string& back, const std::string& to) const {
    const Graph& g = facts_.graph();
    if (std::find(g.terminal_states.begin(), g.terminal_states.end(), back) ==
        g.terminal_states.end())
      return false;
    const GraphNode* n = g.node(to);
    const GraphLane* orchestrator = g.lane_of(g.entrypoint);
    return n && n->type == "scheduler" && orchestrator && g.lane_of(to) == orchestrator;
  }

  void check_transition(const std::string& at, const std::string& who, const Track& t,
                        const std::string& from, const std::string& to) {
    if (!strict() || from == to) return;
    if (!facts_.known(from) || facts_.legacy(from) || facts_.legacy(to)) return;
    if (facts_.routes_to(from, to)) return;
    if (facts_.interrupt(to) || facts_.pause(to)) return;
    if (facts_.detour(from)) {
      const std::string& back = t.return_point;
      if (to == back || (t.previous && to == *t.previous)) return;
      if (!back.empty() && facts_.routes_to(from, "resume_previous_successor") &&
          facts_.routes_to(back, to))
        return;
      // A run that had ended and then waited for a person (a pull request
      // of its bundle asked for a repair after its end) is reopened by the
      // answer at its orchestrator lane's scheduler (src/inbox/).
      if (reopened_after_its_end(back, to)) return;
    }
    problem(at + who + " moved " + from + " -> " + to + ", which is not a route of " + from +
            (facts_.detour(from) && !t.return_point.empty()
                 ? " (nor a return to " + t.return_point + ")"
                 : ""));
  }

  void advance(Track& t, const std::string& to) {
    bool was_detour = t.view.node && facts_.detour(*t.view.node);
    if (facts_.detour(to)) {
      if (t.view.node && !was_detour) t.return_point = *t.view.node;
    } else {
      t.return_point.clear();
    }
    if (t.view.node != to) t.previous = t.view.node;
    t.view.node = to;
  }

  void take_snapshot() {
    snapshot_ = true;
    report_.orchestrator_node = orchestrator_.view.node.value_or("");
    snapshot_status_ = orchestrator_status_;
    for (const auto& [key, t] : cursors_) report_.cursors[key] = t.view;
  }

  void finish() {
    if (!snapshot_) take_snapshot();
    if (state_seq_) {
      report_.state_event_seq = *state_seq_;
      if (past_state_)
        problem(std::to_string(past_state_) + " event(s) from seq " + std::to_string(*first_past_) +
                " are past state.event_seq " + std::to_string(*state_seq_) +
                " (appended but state.json was not saved after them)");
      if (*state_seq_ > last_seq_.value_or(0))
        problem("state.event_seq is " + std::to_string(*state_seq_) + " but events.jsonl ends at " +
                (last_seq_ ? "seq " + std::to_string(*last_seq_) : std::string("no event")));
    }
    compare_with_state();
  }

  void compare_with_state() {
    auto node = string_field(state_, "node");
    if (node && !report_.orchestrator_node.empty() && *node != report_.orchestrator_node)
      problem("state.json has the orchestrator at " + *node + " but the log leaves it at " +
              report_.orchestrator_node);
    auto status = string_field(state_, "status");
    const auto& terminals = facts_.graph().terminal_states;
    if (status && !snapshot_status_.empty() && *status != snapshot_status_ &&
        (std::count(terminals.begin(), terminals.end(), *status) ||
         std::count(terminals.begin(), terminals.end(), snapshot_status_)))
      problem("state.json status is " + *status + " but the log leaves the run " +
              snapshot_status_);

    std::set<std::string> seen;
    for (const char* map_name : {"bundles_runtime", "tasks_runtime"}) {
      const Json* map = field(state_, map_name);
      if (!map || !map->is_object()) continue;
      for (auto it = map->begin(); it != map->end(); ++it) {
        const std::string& key = it.key();
        seen.insert(key);
        auto found = report_.cursors.find(key);
        if (found == report_.cursors.end()) {
          problem(std::string("state.json ") + map_name + " has cursor " + key +
                  " that no event moved");
          continue;
        }
        const ReplayCursor& c = found->second;
        const char* want_map = c.lane == kTaskLane ? "tasks_runtime" : "bundles_runtime";
        if (want_map != std::string(map_name))
          problem("cursor " + key + " is a " + c.lane + " cursor but state.json keeps it in " +
                  map_name);
        auto state_node = string_field(*it, "node");
        if (state_node != c.node)
          problem("cursor " + key + ": state.json has it at " + show(state_node) +
                  " but the log leaves it at " + show(c.node));
        auto state_status = string_field(*it, "status");
        if (state_status && *state_status != c.status)
          problem("cursor " + key + ": state.json status is " + *state_status +
                  " but the log makes it " + c.status);
      }
    }
    for (const auto& [key, c] : report_.cursors)
      if (!seen.count(key))
        problem("cursor " + key + " is moved in the log but missing from state.json");
  }

  GraphFacts facts_;
  const Json& state_;
  long long version_ = 2;
  std::optional<long long> state_seq_;
  std::optional<long long> last_seq_;
  long long past_state_ = 0;
  std::optional<long long> first_past_;
  Track orchestrator_;
  std::string orchestrator_status_;
  std::string snapshot_status_;
  std::map<std::string, Track> cursors_;
  bool snapshot_ = false;
  ReplayReport report_;
};

}  // namespace

ReplayReport replay_run(const Graph& graph, const Json& state, std::string_view events_jsonl) {
  return Replayer(graph, state).run(events_jsonl);
}

Expected<ReplayReport> replay_run_dir(const Graph& graph, const std::string& run_dir) {
  if (!is_directory(run_dir)) return fail(run_dir + ": not a run directory");
  std::string state_path = join_path(run_dir, "state.json");
  std::string events_path = join_path(run_dir, "events.jsonl");
  DG_TRY(Json state, load_json_file(state_path));
  if (!state.is_object()) return fail(state_path + ": not a JSON object");
  DG_TRY(std::string events, read_file(events_path));
  return replay_run(graph, state, events);
}

}  // namespace devgraph
