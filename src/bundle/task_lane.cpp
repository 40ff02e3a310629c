#include "bundle/task_lane.h"

#include <algorithm>
#include <cctype>
#include <sstream>

#include "bundle/answer.h"
#include "bundle/commit_hook.h"
#include "bundle/recovery.h"
#include "bundle/triage.h"
#include "lane/routes.h"
#include "proc/stop_signals.h"
#include "util/fs.h"
#include "util/unsynced_files.h"
#include "util/untrusted.h"

namespace devgraph::bundle {
namespace {

constexpr const char* kLane = "task";
constexpr const char* kRepairOwnerKey = "repair_owner";
constexpr const char* kStraysSentBackKey = "strays_sent_back";
// The task's check as its red step named it (the cursor's record).
constexpr const char* kCheckKey = "check_commands";
constexpr const char* kCheckArtifactsKey = "check_artifacts";

// A DONE from a persona whose CLI reports that it made no tool call at
// all is no evidence of work (a CLI that reports none is not judged).
bool ran_nothing(const PersonaResult& r) {
  return r.tool_calls && *r.tool_calls == 0 && !r.stopped();
}
constexpr const char* kRanNothing = "Your CLI reports no tool call in this launch:";

}  // namespace

TaskLane::TaskLane(BundleRun& run, schedule::Plan& plan, const std::vector<int>& tails,
                   GateInputs gates, int max_parallel, size_t max_live)
    : run_(run),
      plan_(plan),
      tails_(tails),
      gates_(std::move(gates)),
      spec_path_(gates_.spec_path),
      max_parallel_(max_parallel),
      max_live_(max_live) {
  for (const auto& t : plan_.tasks) tasks_[t.id].id = t.id;
}

int TaskLane::committed() const {
  int n = 0;
  for (const auto& [id, t] : tasks_) n += t.stage == Stage::done;
  return n;
}

void TaskLane::mark_all_committed() {
  for (auto& [id, t] : tasks_) t.stage = Stage::done;
}

const schedule::Task& TaskLane::spec(const std::string& id) const {
  return plan_.tasks[plan_.index.at(id)];
}

std::vector<std::string> TaskLane::in_flight(const std::string& except) const {
  std::vector<std::string> out;
  for (const auto& [id, t] : tasks_)
    if (t.stage == Stage::active && id != except) out.push_back(id);
  return out;
}

// -- personas -----------------------------------------------------------------

std::string TaskLane::implementer(const std::string& id) const {
  lane::Selection sel;
  sel.infrastructure = is_infrastructure(spec(id));
  // The node the first node's done route leads to implements the task.
  auto nodes = run_.walker.lane_nodes(kLane);
  auto implement = nodes.empty() ? Expected<std::string>(fail("no task lane"))
                                 : run_.walker.next(nodes.front(), lane::route::kDone);
  if (!implement) return "developer";
  auto p = run_.walker.personas(*implement, sel);
  return p && !p->empty() ? p->front() : "developer";
}

// The persona of the task lane's first node: the one that writes the
// failing test.
std::string TaskLane::test_writer() const {
  auto nodes = run_.walker.lane_nodes(kLane);
  auto p = nodes.empty() ? Expected<std::vector<std::string>>(std::vector<std::string>{})
                         : run_.walker.personas(nodes.front());
  return p && !p->empty() ? p->front() : "tdd-writer";
}

std::vector<std::string> TaskLane::test_artifacts(const std::string& id) const {
  auto j = load_json_file(run_.layout.result(test_writer(), id));
  return j && j->is_object() ? json_str_list((*j)["result"], "artifacts")
                             : std::vector<std::string>{};
}

// What the task's writers reported changing: this run's and the saved
// results' `artifacts`.
std::set<std::string> TaskLane::reported_by(const std::string& id) const {
  std::set<std::string> out = tasks_.at(id).reported;
  for (const auto& p : task_personas(id, true))
    if (auto j = load_json_file(run_.layout.result(p, id)); j && j->is_object())
      for (const auto& a : json_str_list((*j)["result"], "artifacts")) out.insert(a);
  return out;
}

std::vector<std::string> TaskLane::task_personas(const std::string& id, bool writers_only) const {
  std::set<std::string> out;
  for (const auto& node : run_.walker.lane_nodes(kLane)) {
    const GraphNode* n = run_.walker.graph().node(node);
    if (!n || (n->type != "agent" && n->type != "agent_parallel")) continue;
    if (writers_only && n->type == "agent_parallel") continue;  // verifiers write nothing
    for (bool infra : {false, true})
      if (auto p = run_.walker.personas(node, {infra, implementer(id)}))
        out.insert(p->begin(), p->end());
  }
  return {out.begin(), out.end()};
}

Status TaskLane::launch(TaskRun& t, const std::string& persona, const std::string& node,
                        const std::string& extra) {
  // Stopping, or the run's limits allow no launch: the resume launches it.
  if (run_.dispatch.stop_signal() || run_.dispatch.halted()) return {};
  const GraphNode* n = run_.walker.graph().node(node);
  bool verifier = n && n->type == "agent_parallel";
  auto text = verifier ? verifier_dispatch(t.id) : writer_dispatch(t.id, extra);
  if (text && verifier && !extra.empty()) *text += "\n\n" + extra + "\n";
  if (!text) return block(t, text.error().message);
  auto id = run_.dispatch.launch(Visit{persona, t.id, node, run_.journal.moves(t.id)}, *text);
  if (!id) return block(t, persona + ": " + id.error().message);
  return {};
}

Status TaskLane::enter(TaskRun& t, const std::string& node, const std::string& extra) {
  t.node = node;
  t.joined.clear();
  const GraphLane* lane = run_.walker.graph().lane(kLane);
  if (lane && node == lane->complete_at) return commit(t);
  lane::Selection sel;
  sel.infrastructure = is_infrastructure(spec(t.id));
  sel.finding_owner = json_str(run_.journal.task_cursor(t.id), kRepairOwnerKey, implementer(t.id));
  DG_TRY(auto personas, run_.walker.personas(node, sel));
  if (personas.empty()) return fail("no handler for task node " + node);
  long long moves = run_.journal.moves(t.id);
  std::vector<PersonaResult> reuse;
  for (const auto& p : personas) {
    if (auto r = run_.dispatch.recorded(Visit{p, t.id, node, moves})) {
      reuse.push_back(*r);
      continue;
    }
    DG_CHECK(launch(t, p, node, extra));
    if (t.stage != Stage::active) return {};
  }
  for (auto& r : reuse) {
    run_.journal.log("reused_result", Json{{"persona", r.persona}, {"task", t.id}, {"node", node}});
    DG_CHECK(on_result(r));
  }
  return {};
}

// -- results ------------------------------------------------------------------

Status TaskLane::on_result(const PersonaResult& r) {
  auto it = tasks_.find(*r.task);
  if (it == tasks_.end()) return {};
  TaskRun& t = it->second;
  observe_strays();
  // Stopping: the cursor stays where it is; a result the persona finished
  // before the stop was saved for this visit and is used on the resume.
  if (run_.dispatch.stop_signal()) return {};
  // Withdrawn before it started (the run's limits): likewise.
  if (r.outcome == kOutcomeWithdrawn) return {};
  if (t.stage != Stage::active || r.node != t.node) {
    run_.journal.log("stale_result",
                     Json{{"persona", r.persona}, {"task", t.id}, {"node", r.node}});
    return {};
  }
  const GraphNode* n = run_.walker.graph().node(t.node);
  if (n && n->type == "agent_parallel") {
    t.joined[r.persona] = r;
    DG_TRY(auto personas, run_.walker.personas(t.node));
    if (t.joined.size() < personas.size()) return {};
    // A block from either verifier wins over the other's answer.
    for (const auto& [p, jr] : t.joined)
      if (jr.stopped()) return stop(t, jr);
    for (const auto& [p, jr] : t.joined)
      if (ran_nothing(jr))
        return send_back(
            t, jr, std::string(kRanNothing) + " a verifier that ran nothing has verified nothing.");
    return on_joined(t, r);
  }
  if (r.stopped()) return stop(t, r);
  if (ran_nothing(r))
    return send_back(
        t, r,
        std::string(kRanNothing) + " a writer that read and wrote nothing has not done its task.");
  for (const auto& a : r.artifacts) t.reported.insert(a);
  return on_writer(t, r);
}

Status TaskLane::take(TaskRun& t, std::string_view route, std::string_view event, Json detail,
                      Json merge, const std::string& extra) {
  DG_TRY(auto target, run_.walker.follow(kLane, t.node, route, run_.journal.previous_node(t.id)));
  const GraphLane* lane = run_.walker.graph().lane(kLane);
  if (lane && target == lane->complete_at) {
    // The completion move is made after the work: record the outcome now.
    detail["bundle"] = run_.bundle();
    detail["task"] = t.id;
    DG_CHECK(run_.journal.event(event, detail));
    return enter(t, target, extra);
  }
  DG_CHECK(run_.journal.move(t.id, target, event, merge, detail));
  return enter(t, target, extra);
}

Status TaskLane::on_writer(TaskRun& t, const PersonaResult& r) {
  const GraphNode* n = run_.walker.graph().node(t.node);
  auto has_route = [&](std::string_view name) {
    return n && std::any_of(n->routes.begin(), n->routes.end(),
                            [&](const auto& rt) { return rt.first == name; });
  };
  std::string_view done = lane::done_event(t.node);
  bool concerns = r.status == "DONE_WITH_CONCERNS";
  Triage tr = concerns ? triage({&r}) : Triage{};
  Json detail = r.detail();
  if (!tr.items.empty()) detail["concern_triage"] = tr.to_json();
  if (tr.actionable() && has_route(lane::route::kConcernsActionable))
    // Correctness or scope concerns about the implementation go back to its
    // own writer.
    return start_repair(t, tr.texts(true), detail,
                        "Repair these concerns from your own implementation: ",
                        lane::route::kConcernsActionable, r.persona);
  record_concerns(t, tr);
  std::string_view route = concerns && has_route(lane::route::kConcernsObservational)
                               ? lane::route::kConcernsObservational
                               : lane::route::kDone;
  if (n && n->evidence == kEvidenceCheckFails) return red_gate(t, r, route, done);
  return take(t, route, done, std::move(detail));
}

void TaskLane::record_concerns(const TaskRun& t, const Triage& tr) {
  for (const auto& c : tr.items) {
    std::string line = t.id + " (" + c.persona + "): " + c.text;
    // A verification run again after a repair may raise the same note.
    if (std::find(run_.concerns.begin(), run_.concerns.end(), line) == run_.concerns.end())
      run_.concerns.push_back(std::move(line));
  }
}

// -- evidence -------------------------------------------------------------------

Expected<std::vector<CheckCommand>> TaskLane::check_of(
    const std::string& id, const std::vector<std::string>& commands,
    const std::vector<std::string>& artifacts) const {
  CheckInputs in;
  in.commands = commands;
  for (const char* key : {"test", "build"})
    if (auto c = run_.command(key); !c.empty()) in.recorded.push_back(c);
  in.footprint = &spec(id).footprint;
  in.artifacts = artifacts;
  return check_commands(in);
}

TaskLane::CheckRun TaskLane::run_check(const std::string& id,
                                       const std::vector<CheckCommand>& cmds) {
  CheckRun out;
  for (const auto& cmd : cmds) {
    auto ran = run_logged(run_, gates_, "check " + id, cmd.argv, cmd.text);
    out.verdict = verdict_of(ran);
    out.what = describe_check(cmd, ran);
    out.output = ran ? clip_tail(ran->out + ran->err, 2000) : std::string();
    out.exit = ran ? ran->exit_code : -1;
    if (out.verdict != CheckVerdict::green || run_.dispatch.stop_signal()) break;
  }
  return out;
}

Status TaskLane::send_back(TaskRun& t, const PersonaResult& r, const std::string& why) {
  // The writer's DONE is not evidence: it goes through blocker_recovery as
  // the writer's own block would, so the retry budget bounds it.
  PersonaResult back = r;
  back.status = "BLOCKED";
  back.summary = clip(why, 300);
  back.blockers = {why};
  back.missing_context.clear();
  back.raw["status"] = "BLOCKED";
  back.raw["summary"] = back.summary;
  back.raw["blockers"] = back.blockers;
  return stop(t, back);
}

Status TaskLane::red_gate(TaskRun& t, const PersonaResult& r, std::string_view route,
                          std::string_view event) {
  auto cmds = check_of(t.id, json_str_list(r.raw, "commands"), r.artifacts);
  if (!cmds) return send_back(t, r, "devgraph cannot run your check: " + cmds.error().message);
  CheckRun ran = run_check(t.id, *cmds);
  if (run_.dispatch.stop_signal()) return {};
  const std::string output =
      ran.output.empty() ? "" : "\n" + fence_untrusted("output", ran.output);
  switch (ran.verdict) {
    case CheckVerdict::red: {
      Json detail = r.detail();
      std::vector<std::string> texts;
      for (const auto& c : *cmds) texts.push_back(c.text);
      detail["check"] = Json{{"commands", texts}, {"failed", ran.what}};
      // On the cursor: a repair by the test writer that names no check
      // leaves this one in force for verify.
      return take(t, route, event, std::move(detail),
                  Json{{kCheckKey, texts}, {kCheckArtifactsKey, r.artifacts}});
    }
    case CheckVerdict::green:
      return send_back(t, r,
                       "devgraph ran your check and it passes already (" + ran.what +
                           "), so it proves nothing. Write a test that fails until the task is "
                           "implemented, and list the commands that run it." +
                           output);
    case CheckVerdict::not_run:
      break;
  }
  return send_back(t, r,
                   "devgraph ran your check: " + ran.what +
                       ", which is no failing test. List the commands that run your test." +
                       output);
}

Status TaskLane::green_gate(TaskRun& t, Json detail,
                            std::string_view route) {
  // The test writer's latest result names the check (a repair may have
  // named a new one); else the one its red step named, from the cursor.
  const std::string writer = test_writer();
  auto saved = load_json_file(run_.layout.result(writer, t.id));
  std::vector<std::string> commands, artifacts;
  if (saved && saved->is_object() && (*saved)["result"].is_object()) {
    commands = json_str_list((*saved)["result"], "commands");
    artifacts = json_str_list((*saved)["result"], "artifacts");
  }
  if (commands.empty()) {
    const Json cursor = run_.journal.task_cursor(t.id);
    commands = json_str_list(cursor, kCheckKey);
    artifacts = json_str_list(cursor, kCheckArtifactsKey);
  }
  if (commands.empty())
    return block(t, t.id + ": no check of " + writer + " to run before the commit");
  auto cmds = check_of(t.id, commands, artifacts);
  if (!cmds) return block(t, t.id + ": the task's check cannot run: " + cmds.error().message);
  CheckRun ran = run_check(t.id, *cmds);
  if (run_.dispatch.stop_signal()) return {};
  if (ran.verdict == CheckVerdict::green) {
    std::vector<std::string> texts;
    for (const auto& c : *cmds) texts.push_back(c.text);
    detail["check"] = Json{{"commands", texts}, {"passed", true}};
    return take(t, route, lane::done_event(t.node), std::move(detail));
  }
  std::string finding = "the task's check does not pass after verification: " + ran.what;
  if (!ran.output.empty()) finding += ":\n" + ran.output;
  // devgraph's own check found it, not the verifier that answered last:
  // the event says so.
  std::vector<std::string> texts;
  for (const auto& c : *cmds) texts.push_back(c.text);
  Json found{{"raised_by", Json::array({"devgraph"})},
             {"summary", "devgraph ran the task's check after verification: " + ran.what},
             {"check", Json{{"commands", texts}, {"passed", false}}}};
  return start_repair(t, {finding}, std::move(found),
                      "Repair this: devgraph ran the task's check and it does not pass: ",
                      lane::route::kConcernsActionable, implementer(t.id));
}

Status TaskLane::on_joined(TaskRun& t, const PersonaResult& last) {
  std::vector<const PersonaResult*> results;
  for (const auto& [p, r] : t.joined) results.push_back(&r);
  Triage tr = triage(results);
  const GraphNode* n = run_.walker.graph().node(t.node);
  auto has_route = [&](std::string_view name) {
    return n && std::any_of(n->routes.begin(), n->routes.end(),
                            [&](const auto& rt) { return rt.first == name; });
  };
  if (tr.actionable() || (!tr.items.empty() && !has_route(lane::route::kConcernsObservational))) {
    // The move names the persona that raised the (first) actionable concern.
    std::vector<std::string> raisers = tr.raised_by();
    const PersonaResult* raiser = &last;
    for (const auto& [p, r] : t.joined)
      if (!raisers.empty() && r.persona == raisers.front()) raiser = &r;
    // Who repairs: the implementer for a concern in words, the findings'
    // owner (lane::finding_owner) for findings alone.
    std::vector<std::string> files;
    bool words = false;
    for (const auto& c : tr.items) {
      if (tr.actionable() && c.kind == ConcernKind::observational) continue;
      if (c.finding)
        files.push_back(c.file);
      else
        words = true;
    }
    std::string owner = lane::finding_owner(words ? std::vector<std::string>{} : files,
                                            test_artifacts(t.id), test_writer(), implementer(t.id));
    Json detail = raiser->detail();
    detail["concern_triage"] = tr.to_json();
    auto items = tr.actionable() ? tr.texts(true) : tr.texts(false);
    return start_repair(t, items, std::move(detail),
                        "Repair these verification findings: ", lane::route::kConcernsActionable,
                        owner);
  }
  record_concerns(t, tr);
  Json statuses = Json::object();
  for (const auto& [p, r] : t.joined) statuses[p] = r.status;
  Json detail{{"agent_handle", last.handle}, {"statuses", statuses}};
  std::string_view route = lane::route::kDone;
  if (!tr.items.empty()) {
    detail["concern_triage"] = tr.to_json();
    route = lane::route::kConcernsObservational;
  }
  if (n && n->evidence == kEvidenceCheckPasses)
    return green_gate(t, std::move(detail), route);
  return take(t, route, lane::done_event(t.node), std::move(detail));
}

Status TaskLane::start_repair(TaskRun& t, std::vector<std::string> findings, Json detail,
                              const std::string& lead, std::string_view from_route,
                              const std::string& owner, std::string_view event, Json merge) {
  ++t.repairs;
  DG_TRY(auto target,
         run_.walker.follow(kLane, t.node, from_route, run_.journal.previous_node(t.id)));
  detail["repair"] = t.repairs;
  detail["findings"] = std::vector<std::string>(
      findings.begin(), findings.begin() + std::min<size_t>(10, findings.size()));
  detail["owner"] = owner;
  DG_CHECK(write_file_atomic(run_.layout.task_findings(t.id), join(findings, "\n") + "\n"));
  if (!merge.is_object()) merge = Json::object();
  merge["repairs"] = t.repairs;
  merge[kRepairOwnerKey] = owner;
  DG_CHECK(run_.journal.move(t.id, target, event, merge, detail));
  t.node = target;
  if (t.repairs > run_.walker.max_cycles(target)) {
    // The repair budget is spent and the findings are still there.
    DG_TRY(auto human, run_.walker.follow(kLane, target, lane::route::kExhausted, ""));
    std::string why = t.id + ": findings survive " + std::to_string(t.repairs - 1) +
                      " repair cycles: " + clip(join(findings, "; "), 300);
    DG_CHECK(run_.journal.move(t.id, human, lane::event::kAwaitingHuman, waiting_merge(why),
                               Json{{"blocker", why}, {"recovery", "exhausted"}}));
    t.stage = Stage::blocked;
    t.blocker = why;
    return {};
  }
  return enter(t, target, lead + fence_untrusted("findings", join(findings, "\n")));
}

Status TaskLane::stop(TaskRun& t, const PersonaResult& r) {
  ContextFound found;
  if (r.status == "NEEDS_CONTEXT") {
    std::vector<std::pair<std::string, std::string>> results;
    for (const auto& [oid, o] : tasks_) {
      if (oid == t.id) continue;
      for (const auto& p : task_personas(oid, false))
        if (auto j = load_json_file(run_.layout.result(p, oid)); j && j->is_object()) {
          const Json& res = (*j)["result"];
          results.emplace_back(
              run_.layout.result(p, oid),
              json_str(res, "summary") + "\n" + join(json_str_list(res, "evidence"), "\n"));
        }
    }
    DG_TRY(found, look_for_context(run_, t.id, t.node, r, std::move(results)));
  }
  auto decision = decide(run_.walker, t.node, r, spent_budgets(run_.journal.task_cursor(t.id)),
                         found.pointers, found.searched);
  decision.search = found.record;
  decision.researcher_runs = found.researcher_runs;
  DG_TRY(auto where, pass(run_, kLane, t.id, t.node, decision, r.detail()));
  std::string extra =
      r.missing_context.empty()
          ? "What stopped the previous attempt: " + join(r.blockers, "; ")
          : "Missing context named by the previous attempt: " + join(r.missing_context, "; ");
  if (!where.extra.empty()) extra += "\n" + where.extra;
  return recovered(t, where, extra);
}

Status TaskLane::recovered(TaskRun& t, const Recovered& where, const std::string& extra) {
  if (!where.retry) {
    t.stage = Stage::blocked;
    t.blocker = where.why;
    return {};
  }
  return enter(t, where.node, extra);
}

Status TaskLane::block(TaskRun& t, const std::string& why) {
  t.stage = Stage::blocked;
  t.blocker = why;
  auto park = run_.walker.shared_node_of_type("cursor_interrupt");
  if (!park) return fail("GRAPH.yaml has no shared node where a cursor waits for a person");
  return run_.journal.move(t.id, *park, lane::event::kAwaitingHuman, waiting_merge(why),
                           Json{{"blocker", why}});
}

// -- commit_task ----------------------------------------------------------------

bool TaskLane::outside_every_footprint(const std::string& path) const {
  return std::none_of(plan_.tasks.begin(), plan_.tasks.end(),
                      [&](const schedule::Task& x) { return x.footprint.contains(path); });
}

void TaskLane::observe_strays() {
  auto changes = run_.git.status();
  if (!changes) return;
  std::vector<std::string> paths;
  for (const auto& c : *changes)
    if (c.untracked() && outside_every_footprint(c.path)) paths.push_back(c.path);
  if (!paths.empty()) strays_.observe(paths, in_flight());
}

Status TaskLane::quarantine_strays(TaskRun& t, const std::vector<std::string>& paths) {
  Json kept = Json::array();
  for (const auto& p : paths) {
    StrayRecord s{p, strays_.suspects_of(p), strays_.attributed_to(p), t.id};
    auto r = quarantine(run_.layout, s);
    if (!r) return block(t, r.error().message);
    strays_.forget(p);
    kept.push_back(Json{{"path", p},
                        {"kept_at", json_str(*r, "kept_at")},
                        {"suspects", (*r)["suspects"]},
                        {"attributed_to", (*r)["attributed_to"]}});
  }
  run_.journal.log("quarantined", Json{{"found_at", t.id}, {"strays", kept}});
  return run_.journal.event(
      lane::event::kNote,
      Json{{"topic", "quarantined"}, {"bundle", run_.bundle()}, {"strays", kept}});
}

// The footprint check, narrowed to the changes that can be this task's:
// - paths in the footprint of another task in flight, waiting, or not
//   started yet are left for that task;
// - paths another task is held on: a task stopped by a FOOTPRINT_VIOLATION
//   keeps its stray writes in the worktree for a human; they are never
//   committed by another task, nor its violation;
// - a path outside every footprint counts as this task's (a violation, or
//   a footprint extension) when this task's writers reported it among
//   their artifacts. While other tasks are in flight (or waiting for a
//   human) an unreported one may be any of theirs and is left for the task
//   that wrote it; git status order says nothing about who did. With
//   nothing else in flight nobody else can have written it: it counts as
//   this task's violation, unlisted, and is never committed;
// - except a stray (an untracked file outside every footprint, listed by
//   none of this task's writers): never a violation, it is quarantined at
//   this commit when this task alone was in flight as it appeared, or when
//   nothing else is in flight now; else left for a later commit.
Expected<TaskLane::CommitCheck> TaskLane::footprint_check(const std::string& id,
                                                          const std::vector<std::string>& others,
                                                          bool take_strays) {
  DG_TRY(auto changes, run_.git.status());
  // A task not started yet still claims its footprint: a write there by
  // this task's writers is left for it, never committed here nor taken
  // into this task's footprint.
  std::vector<std::string> claimants = others;
  for (const auto& [oid, o] : tasks_)
    if (o.stage == Stage::none && oid != id) claimants.push_back(oid);
  DG_TRY(auto r, schedule::classify_changes(plan_, id, claimants, changes));
  std::set<std::string> held;
  for (const auto& [oid, o] : tasks_)
    if (oid != id) held.insert(o.held.begin(), o.held.end());
  std::set<std::string> reported = reported_by(id);
  auto mine = [&](const std::string& path) {
    return std::any_of(reported.begin(), reported.end(),
                       [&](const std::string& a) { return path_ends_with(a, path); });
  };
  std::vector<std::string> skipped;
  auto keep_if = [&](std::vector<std::string>& v, size_t skip, auto pred) {
    std::vector<std::string> kept;
    for (auto& p : v) {
      std::string path = p.substr(std::min(skip, p.size()));
      if (pred(path))
        kept.push_back(std::move(p));
      else if (skip == 0)
        skipped.push_back(path);
    }
    v = std::move(kept);
  };
  auto not_held = [&](const std::string& p) { return !held.count(p); };
  keep_if(r.own, 0, not_held);
  keep_if(r.add_pathspec, std::string_view(":(literal)").size(), not_held);
  // Strays: untracked, outside every footprint, listed by none of this
  // task's writers. Taken now only when they can be nobody else's.
  std::set<std::string> untracked;
  for (const auto& c : changes)
    if (c.untracked()) untracked.insert(c.path);
  std::vector<std::string> strays;
  keep_if(r.outside, 0, [&](const std::string& p) {
    if (!not_held(p)) return false;
    if (mine(p)) return true;
    if (take_strays && untracked.count(p) && outside_every_footprint(p)) {
      if (others.empty() || strays_.attributed_to(p) == id) strays.push_back(p);
      return false;
    }
    return others.empty();
  });
  r.violation = !r.outside.empty();
  // The strays taken now are quarantined, not left.
  skipped.erase(std::remove_if(skipped.begin(), skipped.end(),
                               [&](const std::string& p) {
                                 return std::find(strays.begin(), strays.end(), p) != strays.end();
                               }),
                skipped.end());
  if (!skipped.empty())
    run_.journal.log("paths_left_to_others", Json{{"task", id}, {"paths", skipped}});
  CommitCheck check{std::move(r), {}, std::move(strays)};
  for (const auto& p : check.report.outside)
    if (!mine(p)) check.unlisted.push_back(p);
  return check;
}

Expected<bool> TaskLane::recover_footprint(TaskRun& t, const CommitCheck& check,
                                           const std::vector<std::string>& others) {
  const auto& outside = check.report.outside;
  std::vector<std::string> conflicts;
  for (const auto& o : others)
    if (!schedule::footprint_conflicts(outside, spec(o).files).empty()) conflicts.push_back(o);
  RecoveryDecision d;
  d.route = std::string(lane::route::kFootprintViolation);
  d.event = std::string(lane::event::kFootprintViolation);
  // Extending the footprint is safe only for paths the task's writers say
  // they wrote and no other task in flight claims.
  d.retry = conflicts.empty() && check.unlisted.empty();
  Json detail = {{"outside", outside}, {"conflicts", conflicts}};
  if (!check.unlisted.empty()) detail["unlisted"] = check.unlisted;
  Json merge = Json::object();
  if (d.retry) {
    d.why = "footprint extended to " + join(outside, ", ") +
            ": reported by the task's writers and claimed by no other task";
    d.recovered_detail = Json{{"footprint_extended", outside}};
  } else {
    std::vector<std::string> reasons;
    if (!conflicts.empty()) reasons.push_back("conflicts with " + join(conflicts, ", "));
    if (!check.unlisted.empty())
      reasons.push_back(join(check.unlisted, ", ") + " reported by no writer of " + t.id);
    d.why = "footprint violation: " + join(outside, ", ") + " outside every footprint (" +
            join(reasons, "; ") + ")";
    merge["footprint_outside"] = outside;
    t.held = outside;
  }
  DG_TRY(auto where, pass(run_, kLane, t.id, t.node, d, detail, merge));
  if (!where.retry) {
    DG_CHECK(recovered(t, where, ""));
    return false;
  }
  auto& task = plan_.tasks[plan_.index.at(t.id)];
  for (const auto& p : outside) task.files.push_back(p);
  task.footprint = schedule::Footprint(task.files);
  return true;
}

Status TaskLane::commit(TaskRun& t) {
  std::string key = run_.bundle() + "/" + t.id;
  const GraphLane* lane = run_.walker.graph().lane(kLane);
  const std::string node = lane ? lane->complete_at : t.node;
  if (auto existing = t.started_here ? std::nullopt : run_.committed_with(kTaskTrailer, key)) {
    run_.journal.log("commit_reconciled", Json{{"task", t.id}, {"commit", *existing}});
    t.stage = Stage::done;
    return run_.journal.move(t.id, node, lane::event::kTaskCommitted, Json{{"commit", *existing}},
                             Json{{"reconciled", true}});
  }
  // A task waiting for a human still has its uncommitted files in the
  // worktree and still claims its footprint: it counts as in flight here,
  // or its files would look like this task's writes outside its footprint.
  auto others = in_flight(t.id);
  for (const auto& [oid, o] : tasks_)
    if (o.stage == Stage::blocked && oid != t.id) others.push_back(oid);
  // What the pre-commit hook writes outside the footprint is a violation,
  // never a stray: after the hook, strays are not taken.
  bool take_strays = true;
  auto check = footprint_check(t.id, others, take_strays);
  // Each extension takes every path that counted, so a second pass finds
  // only paths changed since the first. false: the task now waits.
  auto settle = [&]() -> Expected<bool> {
    if (!check) {
      DG_CHECK(block(t, check.error().message));
      return false;
    }
    if (!check->strays.empty()) {
      // A stray only this task's launches can have written goes back to
      // its writer once: removed, or reported if the task needs it. What
      // it keeps unreported, and every other stray, is quarantined.
      const Json cursor = run_.journal.task_cursor(t.id);
      std::vector<std::string> sent = json_str_list(cursor, kStraysSentBackKey);
      std::vector<std::string> back;
      for (const auto& p : check->strays)
        if (strays_.attributed_to(p) == t.id &&
            std::find(sent.begin(), sent.end(), p) == sent.end())
          back.push_back(p);
      if (!back.empty()) {
        std::vector<std::string> findings;
        for (const auto& p : back)
          findings.push_back(p + ": a new file outside every task's footprint, reported by no "
                                 "writer of " + t.id);
        sent.insert(sent.end(), back.begin(), back.end());
        DG_CHECK(start_repair(
            t, findings, Json{{"strays", back}},
            "Your launches left files outside every task's footprint and did not report them. "
            "Remove each one, or, if the task needs it, list it in your answer's artifacts "
            "(a file kept unreported is moved out of the worktree into the bundle's "
            "quarantine): ",
            lane::route::kStrayWritten, implementer(t.id), lane::event::kStraySentBack,
            Json{{kStraysSentBackKey, sent}}));
        return false;
      }
      DG_CHECK(quarantine_strays(t, check->strays));
      if (t.stage != Stage::active) return false;
    }
    while (check->report.violation) {
      DG_TRY(bool extended, recover_footprint(t, *check, others));
      if (!extended) return false;
      check = footprint_check(t.id, others, take_strays);
      if (!check) {
        DG_CHECK(block(t, check.error().message));
        return false;
      }
    }
    return true;
  };
  DG_TRY(bool settled, settle());
  if (!settled) return {};
  // The repository's pre-commit hook runs on the task's paths before the
  // commit; what it rewrote is then checked like the writers' own changes
  // (inside the footprint: committed; outside: a violation), and a refusal
  // goes back to the implementer (bundle/commit_hook.h).
  bool pre_commit_done = false;
  if (run_.git.runs_hooks() && !check->report.add_pathspec.empty()) {
    HookVerdict v = judge_pre_commit(run_.git.pre_commit(check->report.add_pathspec));
    if (v.action == HookAction::block) return block(t, v.why);
    if (v.action == HookAction::repair)
      return start_repair(t, {v.finding}, Json{{"hook", "pre-commit"}},
                          "Repair this: the repository's hook refused your task's commit: ",
                          lane::route::kHookRejected, implementer(t.id),
                          lane::event::kCommitHookRejected);
    pre_commit_done = true;
    take_strays = false;
    check = footprint_check(t.id, others, take_strays);
    DG_TRY(settled, settle());
    if (!settled) return {};
  }
  const schedule::FootprintReport& report = check->report;
  std::vector<std::string> files = report.own;
  std::string commit;
  if (report.add_pathspec.empty()) {
    run_.journal.log("nothing_to_commit", Json{{"task", t.id}});
  } else {
    DG_CHECK(run_.journal.event(
        lane::event::kNote,
        Json{{"topic", "commit_intent"}, {"bundle", run_.bundle()}, {"task", t.id}}));
    const auto& s = spec(t.id);
    bool docs = std::all_of(s.files.begin(), s.files.end(), [](const std::string& g) {
      return g.size() > 3 && g.compare(g.size() - 3, 3, ".md") == 0;
    });
    git::CommitRequest req{
        clip(std::string(docs ? "docs" : "feat") + "(" + run_.bundle() +
                 "): " + (s.title.empty() ? t.id : s.title),
             72),
        "Task " + t.id + " of bundle " + run_.bundle() + "; footprint " + join(s.files, ", ") + ".",
        {{kTaskTrailer, key}}};
    auto c = git::commit_paths(
        run_.git, report.add_pathspec, req,
        [&](const char* label) { run_.crash.reach(label, key); }, pre_commit_done);
    if (!c && c.error().kind == ErrorKind::hook) {
      // commit-msg refused the message devgraph wrote: no writer can
      // change that, so a person decides.
      std::string why = c.error().message;
      if (!c.error().output.empty()) why += ": " + one_line(clip_tail(c.error().output, 300));
      return block(t, why);
    }
    if (!c) return block(t, c.error().message);
    commit = *c;
  }
  t.stage = Stage::done;
  if (files.size() > 50) files.resize(50);
  return run_.journal.move(t.id, node, lane::event::kTaskCommitted, Json{{"commit", commit}},
                           Json{{"files", files}});
}

// -- the scheduler ----------------------------------------------------------------

Status TaskLane::start_task(TaskRun& t) {
  t.started_here = run_.journal.task_cursor(t.id).empty();
  auto head = run_.git.rev_parse("HEAD");
  t.base_commit = head ? *head : "";
  auto scheduler = run_.walker.node_of_type("bundle", "scheduler");
  if (!scheduler) return fail(ErrorKind::internal, "GRAPH.yaml's bundle lane has no scheduler");
  DG_TRY(auto first, run_.walker.next(*scheduler, lane::route::kTaskAvailable));
  DG_CHECK(run_.journal.move(t.id, first, lane::event::kTaskStarted,
                             Json{{"base_commit", t.base_commit}}));
  t.stage = Stage::active;
  t.node = first;
  if (auto b = write_brief(t.id); !b) return block(t, b.error().message);
  return enter(t, first);
}

// Adopts recorded task cursors (resume). Every earlier worker is gone.
Status TaskLane::adopt_cursors() {
  for (auto& [id, t] : tasks_) {
    Json c = run_.journal.task_cursor(id);
    if (c.empty()) continue;
    t.base_commit = json_str(c, "base_commit");
    t.repairs = static_cast<int>(c.value("repairs", 0LL));
    std::string status = json_str(c, "status");
    if (status == "complete") {
      t.stage = Stage::done;
    } else if (status == "waiting_human") {
      t.stage = Stage::blocked;
      t.blocker = json_str(c, kWaitingWhyKey, "awaiting human input from a previous session");
      t.held = json_str_list(c, "footprint_outside");
    } else {
      t.stage = Stage::active;
      t.node = json_str(c, "node");
    }
  }
  const GraphLane* lane = run_.walker.graph().lane(kLane);
  for (auto& [id, t] : tasks_) {
    if (t.stage != Stage::active) continue;
    if (run_.committed_with(kTaskTrailer, run_.bundle() + "/" + id) ||
        (lane && t.node == lane->complete_at)) {
      DG_CHECK(commit(t));  // reconciles: records the commit that exists
      continue;
    }
    const GraphNode* n = run_.walker.graph().node(t.node);
    if (n && n->type == "recovery") {
      DG_TRY(auto where, resume(run_, kLane, id));
      if (!where.retry) t.held = json_str_list(run_.journal.task_cursor(id), "footprint_outside");
      std::ignore = write_brief(id);  // a missing brief fails the relaunch, not the resume
      DG_CHECK(recovered(t, where, where.extra));
      continue;
    }
    std::ignore = write_brief(id);  // as above
    std::string extra;
    if (n && !n->selector.empty() && n->selector == "finding_owner") {
      auto f = read_file(run_.layout.task_findings(id));
      extra = "Repair the findings recorded for this task: " +
              fence_untrusted("findings", f ? *f : "");
    }
    // A person's answer set this cursor going: its next dispatch carries it.
    std::string answer = answer_for_dispatch(run_.layout, id, run_.journal.task_cursor(id));
    if (!answer.empty()) extra += (extra.empty() ? "" : "\n\n") + answer;
    DG_CHECK(enter(t, t.node, extra));
  }
  return {};
}

// The scheduler's view of the task cursors. A task waiting for a human is
// neither complete nor active in state.json, so the scheduler would offer
// it as runnable again and give it a slot. It is filtered out here: it
// counts as in flight, so its footprint stays claimed (its uncommitted
// files are still in the worktree), and the ceiling grows by the same
// count, so it costs no slot.
Expected<schedule::RunnableSet> TaskLane::runnable() const {
  auto cursors = schedule::cursors_from_state(run_.journal.state(), run_.bundle());
  int waiting = 0;
  for (const auto& [id, t] : tasks_)
    if (t.stage == Stage::blocked && cursors.in_flight.insert(id).second) ++waiting;
  return schedule::compute_runnable(plan_, cursors, max_parallel_ + waiting);
}

Expected<std::string> TaskLane::run() {
  // Whether the tasks' commits run the repository's hooks, for whoever
  // wonders why a hook did or did not run.
  run_.journal.log("git_hooks", Json{{"run", run_.git.runs_hooks()}});
  // What is there before any task runs (the planner's leftovers) is no
  // task's doing.
  observe_strays();
  DG_CHECK(adopt_cursors());
  while (true) {
    if (int sig = run_.dispatch.stop_signal()) {
      if (run_.dispatch.unhandled() == 0)
        return fail(ErrorKind::interrupted, "stopped by " + stop_signal_name(sig));
      DG_TRY(auto c, run_.dispatch.next());
      (void)c;  // drained: every launch ends before the driver does
      continue;
    }
    // The run's limits allow no new launch: what is in flight finishes and
    // its cursor moves on to its next node, where it parks.
    if (auto why = run_.dispatch.halted()) {
      if (run_.dispatch.unhandled() == 0) return *why;
      DG_TRY(auto c, run_.dispatch.next());
      if (c && c->task) DG_CHECK(on_result(*c));
      continue;
    }
    DG_TRY(auto rs, runnable());
    if (rs.route == schedule::kRouteComplete && run_.dispatch.unhandled() == 0)
      return std::string();
    // Longest chain ahead first (stable: plan order among equals).
    std::stable_sort(rs.runnable.begin(), rs.runnable.end(),
                     [&](const std::string& a, const std::string& b) {
                       return tails_[plan_.index.at(a)] > tails_[plan_.index.at(b)];
                     });
    for (const auto& id : rs.runnable) {
      auto& t = tasks_[id];
      if (t.stage != Stage::none) continue;
      if (run_.dispatch.unhandled() + 1 > max_live_) break;
      DG_CHECK(start_task(t));
    }
    if (run_.dispatch.unhandled() == 0) {
      std::vector<std::string> blocked;
      for (const auto& [id, t] : tasks_)
        if (t.stage == Stage::blocked) blocked.push_back(id + ": " + t.blocker);
      if (!blocked.empty()) return join(blocked, "; ");
      DG_TRY(auto again, runnable());
      if (again.route == schedule::kRouteComplete) return std::string();
      if (again.route == schedule::kRouteDeadlock) return std::string("plan deadlock");
      bool startable = false;
      for (const auto& id : again.runnable) startable |= tasks_[id].stage == Stage::none;
      if (startable) continue;
      return std::string("scheduler waits but nothing is in flight (state and worktree disagree)");
    }
    DG_TRY(auto c, run_.dispatch.next());
    if (!c) continue;
    if (!c->task) return fail(c->persona + " finished while the tasks ran, for no task");
    DG_CHECK(on_result(*c));
  }
}

}  // namespace devgraph::bundle
