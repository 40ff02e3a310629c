#include "board/view.h"

#include <map>
#include <set>
#include <string>

#include "metrics/metrics.h"

namespace devgraph::board {

namespace {

const Json& null_json() {
  static const Json n;
  return n;
}

const Json& field(const Json& o, const char* key) {
  if (!o.is_object()) return null_json();
  auto it = o.find(key);
  return it == o.end() ? null_json() : *it;
}

// A value as the page shows it: strings as they are, numbers and the rest
// as JSON, null as "".
std::string text_of(const Json& v) {
  if (v.is_null()) return "";
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

std::string clipped(const std::string& s, size_t n) {
  return s.size() <= n ? s : s.substr(0, n) + "...";
}

// "b1" or "b1/T2": the cursor an event is about.
std::string cursor_of(const Json& d) {
  if (field(d, "cursor").is_string()) return d["cursor"].get<std::string>();
  std::string b = text_of(field(d, "bundle"));
  std::string t = text_of(field(d, "task"));
  if (b.empty()) return "";
  return t.empty() ? b : b + "/" + t;
}

std::string pr_url(const Json& pr) {
  if (pr.is_object()) return json_str(pr, "url");
  return "";
}

// What kind of decision an event records, for the traces; "" for events
// that are progress only (a persona dispatched, a commit about to happen).
std::string decision_kind(const std::string& type, const Json& d) {
  static const std::map<std::string, std::string> kinds = {
      {"BUNDLE_STARTED", "started"},
      {"PLAN_DONE", "planned"},
      {"TASK_STARTED", "task started"},
      {"TDD_DONE", "test written"},
      {"IMPLEMENT_DONE", "implemented"},
      {"VERIFY_DONE", "verified"},
      {"TASK_COMMITTED", "committed"},
      {"FOOTPRINT_VIOLATION", "footprint violation"},
      {"TASK_REPAIR_DONE", "repaired"},
      {"BUNDLE_TASKS_COMPLETE", "tasks complete"},
      {"BUNDLE_VERIFY_PASSED", "bundle verified"},
      {"BUNDLE_VERIFY_FAILED", "findings"},
      {"REVIEW_APPROVED", "review approved"},
      {"REVIEW_FINDINGS", "findings"},
      {"DOC_REVIEW_DONE", "docs reviewed"},
      {"DOC_REVIEW_FINDINGS", "findings"},
      {"BUNDLE_REPAIR_DONE", "repaired"},
      {"BUNDLE_REPAIR_COMMITTED", "repaired"},
      {"PR_CREATED", "delivered"},
      {"BRANCH_READY", "delivered"},
      {"MALFORMED_RESULT", "retried"},
      {"NEEDS_CONTEXT", "retried"},
      {"RECOVERED", "retried"},
      {"BLOCKED", "parked"},
      {"RECOVERY_EXHAUSTED", "parked"},
      {"AWAITING_HUMAN", "parked"},
      {"HUMAN_REQUIRED", "parked"},
      {"TECH_LEAD_BLOCKED", "parked"},
      {"TECH_LEAD_HANDOFF", "handed off"},
      {"TECH_LEAD_DONE", "tech lead done"},
      {"CONCERN_TRIAGED", "concern triaged"},
      {"CI_FAILURE_REPORTED", "findings"},
      {"AUTO_MERGE_ENABLED", "auto-merge"},
      {"ORCHESTRATOR_CORRECTION", "corrected"},
      {"DISCUSS_ROUND_DONE", "critiqued"},
      {"FIX_DIAGNOSED", "diagnosed"},
      {"BUNDLE_REPLANNED", "replanned"},
  };
  if (type == "NOTE") {
    std::string topic = json_str(d, "topic");
    if (topic == "cli_error_backoff") return "backed off";
    if (topic == "limits") return "paused";
    return "";
  }
  if (field(d, "lane_to").is_string() && d["lane_to"] == "awaiting_human") return "parked";
  auto it = kinds.find(type);
  return it == kinds.end() ? "" : it->second;
}

// The evidence of a decision: the fields of its event that say why, in
// one short line.
std::string evidence_of(const Json& d) {
  static const char* keys[] = {"round",    "verdict", "severity", "cause",    "route",
                               "note",     "status",  "summary",  "evidence", "why",
                               "reason",   "blocker", "error",    "delay_s",  "paused_until",
                               "attempt",  "url",     "head",     "files",    "recovery_why",
                               "question", "persona"};
  std::string out;
  for (const char* k : keys) {
    const Json& v = field(d, k);
    if (v.is_null() || (v.is_string() && v.get<std::string>().empty())) continue;
    std::string s = text_of(v);
    if (!out.empty()) out += "; ";
    out += std::string(k) + ": " + clipped(s, 240);
  }
  if (const Json& c = field(d, "check"); c.is_object() && c.contains("passed"))
    out += std::string(out.empty() ? "" : "; ") + "check passed: " + text_of(c["passed"]);
  if (const Json& f = field(d, "findings"); f.is_array())
    out += std::string(out.empty() ? "" : "; ") + std::to_string(f.size()) + " findings";
  return clipped(out, 600);
}

Json entry(const Json& ev, const std::string& kind, const std::string& what,
           const std::string& evidence) {
  return Json{{"seq", field(ev, "seq")},
              {"ts", field(ev, "ts")},
              {"kind", kind},
              {"what", what},
              {"evidence", evidence}};
}

struct OpenRun {
  size_t span;  // index into the timeline
  std::string handle;
};

}  // namespace

Json board_view(const Graph& graph, const Json& state_in, const std::vector<Json>& events_in) {
  const Json state = state_in.is_object() ? state_in : Json::object();
  std::vector<Json> events;
  events.reserve(events_in.size());
  for (const auto& e : events_in)
    if (e.is_object() && field(e, "type").is_string() && field(e, "ts").is_string())
      events.push_back(e);

  // Lanes and the cursors on them.
  std::map<std::string, Json> tokens;  // node -> [token]
  auto put = [&](const std::string& node, Json token) {
    if (node.empty()) return;
    auto& list = tokens[node];
    if (!list.is_array()) list = Json::array();
    list.push_back(std::move(token));
  };
  put(json_str(state, "node"), Json{{"kind", "orchestrator"},
                                    {"id", json_str(state, "run_id", "run")},
                                    {"status", field(state, "status")}});
  if (const Json& br = field(state, "bundles_runtime"); br.is_object())
    for (auto it = br.begin(); it != br.end(); ++it)
      put(json_str(it.value(), "node"),
          Json{{"kind", "bundle"}, {"id", it.key()}, {"status", field(it.value(), "status")}});
  if (const Json& tr = field(state, "tasks_runtime"); tr.is_object())
    for (auto it = tr.begin(); it != tr.end(); ++it)
      put(json_str(it.value(), "node"),
          Json{{"kind", "task"}, {"id", it.key()}, {"status", field(it.value(), "status")}});
  Json lanes = Json::array();
  std::set<std::string> shown;
  for (const auto& lane : graph.lanes) {
    Json nodes = Json::array();
    for (const auto& n : lane.nodes) {
      shown.insert(n);
      auto it = tokens.find(n);
      nodes.push_back(
          Json{{"name", n}, {"tokens", it == tokens.end() ? Json::array() : it->second}});
    }
    lanes.push_back(Json{{"name", lane.name}, {"nodes", std::move(nodes)}});
  }
  Json other = Json::array();
  for (const auto& [node, list] : tokens)
    if (!shown.count(node)) other.push_back(Json{{"name", node}, {"tokens", list}});
  if (!other.empty()) lanes.push_back(Json{{"name", "other"}, {"nodes", std::move(other)}});

  // The timeline, the traces and the times of bundles and tasks, in one
  // pass over the events.
  Json timeline = Json::array();
  std::map<std::string, std::vector<OpenRun>> open_runs;  // cursor -> runs
  std::map<std::string, size_t> open_human;               // cursor -> span
  std::map<std::string, Json> traces;                     // bundle -> [entry]
  std::map<std::string, std::pair<Json, Json>> times;     // cursor -> (start, end)
  std::map<std::string, Json> task_personas;              // cursor -> [run]
  Json issue_entries = Json::object();
  auto trace = [&](const std::string& bundle) -> Json& {
    Json& t = traces[bundle];
    if (!t.is_array()) t = Json::array();
    return t;
  };
  auto issue_trace = [&](const std::string& n) -> Json& {
    if (!issue_entries.contains(n)) issue_entries[n] = Json::array();
    return issue_entries[n];
  };
  auto close_run = [&](size_t span, const Json& ev, const Json& d, const std::string& handle) {
    Json& s = timeline[span];
    s["end"] = ev["ts"];
    const Json& st = field(d, "status");
    if (st.is_string() && json_str(d, "agent_handle") == handle) s["status"] = st;
    if (const Json& sts = field(d, "statuses");
        sts.is_object() && sts.contains(s.value("label", "")))
      s["status"] = sts[s.value("label", "")];
  };
  for (const auto& ev : events) {
    const std::string type = ev["type"].get<std::string>();
    const Json& d = field(ev, "detail");
    const std::string cursor = cursor_of(d);
    const std::string bundle = text_of(field(d, "bundle"));
    const std::string task = text_of(field(d, "task"));
    const std::string handle = json_str(d, "agent_handle");

    if (type == "SCAN_DONE") {
      if (const Json& w = field(d, "work"); w.is_array())
        for (const auto& n : w)
          issue_trace(text_of(n))
              .push_back(entry(ev, "found", "open and eligible", "route: " + json_str(d, "route")));
      if (const Json& x = field(d, "excluded"); x.is_array())
        for (const auto& e : x)
          issue_trace(text_of(field(e, "issue")))
              .push_back(entry(ev, "excluded", "left out", text_of(field(e, "why"))));
    }
    if (type == "BUNDLES_FORMED" && field(d, "bundles").is_array()) {
      for (const auto& b : d["bundles"]) {
        std::string id = text_of(b);
        trace(id).push_back(entry(ev, "bundled", "formed as a bundle", evidence_of(d)));
      }
    }
    if (type == "PERSONA_DISPATCHED") {
      std::string persona = json_str(d, "persona");
      timeline.push_back(Json{{"kind", "persona"},
                              {"bundle", bundle},
                              {"task", task},
                              {"label", persona},
                              {"handle", handle},
                              {"start", ev["ts"]},
                              {"end", nullptr},
                              {"status", nullptr},
                              {"reason", nullptr}});
      open_runs[cursor].push_back(OpenRun{timeline.size() - 1, handle});
      if (!task.empty()) {
        Json& list = task_personas[cursor];
        if (!list.is_array()) list = Json::array();
        list.push_back(timeline.size() - 1);
      }
      continue;
    }
    std::string kind = decision_kind(type, d);
    if (type == "NOTE" && kind == "backed off") {
      auto start = metrics::parse_timestamp(ev["ts"].get<std::string>());
      Json end;
      if (start && field(d, "delay_s").is_number()) {
        // The end as an offset the page adds; kept as seconds.
        end = d["delay_s"];
      }
      timeline.push_back(Json{{"kind", "backoff"},
                              {"bundle", bundle},
                              {"task", task},
                              {"label", json_str(d, "persona")},
                              {"start", ev["ts"]},
                              {"end", nullptr},
                              {"seconds", end},
                              {"reason", json_str(d, "error")}});
    } else if (type == "NOTE" && kind == "paused") {
      if (!field(d, "paused_until").is_string())
        kind = "";
      else
        timeline.push_back(Json{{"kind", "pause"},
                                {"bundle", ""},
                                {"task", ""},
                                {"label", "provider pause"},
                                {"start", ev["ts"]},
                                {"end", d["paused_until"]},
                                {"reason", json_str(d, "reason")}});
    }
    // A cursor's move or a result naming a run ends that run.
    if (!cursor.empty() && type != "NOTE") {
      auto it = open_runs.find(cursor);
      if (it != open_runs.end()) {
        bool moves = field(d, "lane_from").is_string() || field(d, "lane_to").is_string() ||
                     type == "VERIFY_DONE";
        auto& runs = it->second;
        for (size_t i = 0; i < runs.size();) {
          if (moves || (!handle.empty() && runs[i].handle == handle)) {
            close_run(runs[i].span, ev, d, runs[i].handle);
            runs.erase(runs.begin() + static_cast<long>(i));
          } else {
            ++i;
          }
        }
      }
    }
    // Waiting for a person.
    if (!cursor.empty() && field(d, "lane_from").is_string() &&
        d["lane_from"] == "awaiting_human") {
      if (auto h = open_human.find(cursor); h != open_human.end()) {
        timeline[h->second]["end"] = ev["ts"];
        open_human.erase(h);
      }
    }
    if (!cursor.empty() && field(d, "lane_to").is_string() && d["lane_to"] == "awaiting_human") {
      timeline.push_back(Json{{"kind", "human"},
                              {"bundle", bundle},
                              {"task", task},
                              {"label", "waiting for a person"},
                              {"start", ev["ts"]},
                              {"end", nullptr},
                              {"reason", evidence_of(d)}});
      open_human[cursor] = timeline.size() - 1;
    }
    // Times of bundles and tasks.
    if (!cursor.empty()) {
      auto& t = times[cursor];
      if ((type == "BUNDLE_STARTED" || type == "TASK_STARTED") && t.first.is_null())
        t.first = ev["ts"];
      if (type == "TASK_COMMITTED" || type == "PR_CREATED" || type == "BRANCH_READY" ||
          (field(d, "cursor_complete").is_boolean() && d["cursor_complete"].get<bool>()))
        t.second = ev["ts"];
    }
    if (!kind.empty() && !bundle.empty()) {
      std::string what = type;
      if (!task.empty()) what += " (" + task + ")";
      trace(bundle).push_back(entry(ev, kind, what, evidence_of(d)));
    }
    if (!kind.empty() && bundle.empty() && kind == "parked") {
      trace("run").push_back(entry(ev, kind, type, evidence_of(d)));
    }
  }

  // Bundles with their tasks.
  Json costs = metrics::compute_costs(events);
  auto waited = metrics::compute_waiting(events);
  Json waiting = waited ? std::move(*waited) : Json::object();
  Json bundles = Json::array();
  long long task_total = 0;
  Json issues = Json::object();
  const Json& br = field(state, "bundles_runtime");
  const Json& tr = field(state, "tasks_runtime");
  const Json& prs = field(state, "prs");
  if (const Json& sb = field(state, "bundles"); sb.is_array()) {
    for (const auto& b : sb) {
      if (!b.is_object()) continue;
      const std::string id = text_of(field(b, "id"));
      const Json& rt = field(br, id.c_str());
      std::string url = pr_url(field(b, "pr"));
      if (url.empty()) url = pr_url(field(rt, "pr"));
      if (url.empty() && prs.is_array())
        for (const auto& p : prs)
          if (text_of(field(p, "bundle")) == id) url = pr_url(p);
      Json tasks = Json::array();
      std::set<std::string> listed;
      auto add_task = [&](const std::string& tid, const Json& title) {
        const std::string key = id + "/" + tid;
        const Json& t = field(tr, key.c_str());
        Json personas = Json::array();
        if (auto it = task_personas.find(key); it != task_personas.end())
          for (const auto& i : it->second) {
            const Json& s = timeline[i.get<size_t>()];
            personas.push_back(Json{{"persona", s["label"]},
                                    {"start", s["start"]},
                                    {"end", s["end"]},
                                    {"status", s["status"]}});
          }
        auto tm = times.find(key);
        tasks.push_back(Json{{"id", tid},
                             {"title", title.is_string() ? title : Json("")},
                             {"node", field(t, "node")},
                             {"status", field(t, "status")},
                             {"start", tm == times.end() ? Json() : tm->second.first},
                             {"end", tm == times.end() ? Json() : tm->second.second},
                             {"personas", std::move(personas)}});
        listed.insert(key);
        ++task_total;
      };
      if (const Json& bt = field(b, "tasks"); bt.is_array())
        for (const auto& t : bt)
          if (t.is_object()) add_task(text_of(field(t, "id")), field(t, "title"));
      if (tr.is_object())
        for (auto it = tr.begin(); it != tr.end(); ++it)
          if (json_str(it.value(), "bundle") == id && !listed.count(it.key()))
            add_task(text_of(field(it.value(), "task")), Json(""));
      if (const Json& is = field(b, "issues"); is.is_array())
        for (const auto& n : is) issues[text_of(n)] = id;
      auto tm = times.find(id);
      bundles.push_back(
          Json{{"id", id},
               {"title", field(b, "title").is_string() ? b["title"] : Json("")},
               {"issues", field(b, "issues").is_array() ? b["issues"] : Json::array()},
               {"status", field(b, "status")},
               {"parked_reason", field(b, "parked_reason")},
               {"node", field(rt, "node")},
               {"cursor_status", field(rt, "status")},
               {"branch", field(b, "branch").is_string() ? b["branch"] : field(rt, "branch")},
               {"pr_url", url},
               {"start", tm == times.end() ? Json() : tm->second.first},
               {"end", tm == times.end() ? Json() : tm->second.second},
               {"cost", field(field(costs, "bundles"), id.c_str())},
               {"waiting", field(field(waiting, "bundles"), id.c_str())},
               {"tasks", std::move(tasks)}});
    }
  }

  Json issue_traces = Json::object();
  for (auto it = issue_entries.begin(); it != issue_entries.end(); ++it)
    issue_traces[it.key()] =
        Json{{"bundle", field(issues, it.key().c_str())}, {"entries", it.value()}};
  for (auto it = issues.begin(); it != issues.end(); ++it)
    if (!issue_traces.contains(it.key()))
      issue_traces[it.key()] = Json{{"bundle", it.value()}, {"entries", Json::array()}};
  Json bundle_traces = Json::object();
  for (auto& [k, v] : traces) bundle_traces[k] = std::move(v);

  long long running = 0;
  for (const auto& s : timeline)
    if (s["kind"] == "persona" && s["end"].is_null()) ++running;
  Json as_of = events.empty() ? field(state, "updated_at") : events.back()["ts"];
  return Json{
      {"as_of", as_of},
      {"totals",
       {{"bundles", bundles.size()},
        {"tasks", task_total},
        {"events", events.size()},
        {"running_personas", running},
        {"cost_usd", field(field(costs, "run"), "cost_usd")},
        {"tokens", field(field(costs, "run"), "tokens")}}},
      {"lanes", std::move(lanes)},
      {"bundles", std::move(bundles)},
      {"timeline", std::move(timeline)},
      {"traces", {{"bundles", std::move(bundle_traces)}, {"issues", std::move(issue_traces)}}},
      {"costs", std::move(costs)},
      {"waiting", std::move(waiting)}};
}

const Graph& shipped_graph() {
  static const Graph graph = [] {
    if (auto g = Graph::snapshot(Graph::snapshot_text())) return std::move(*g);
    auto parsed = Graph::parse(Graph::snapshot_text(), "GRAPH.yaml");
    return parsed ? std::move(*parsed) : Graph{};
  }();
  return graph;
}

}  // namespace devgraph::board
