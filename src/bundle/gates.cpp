#include "bundle/gates.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>

#include "bundle/answer.h"
#include "bundle/critique_gate.h"
#include "lane/node_kind.h"
#include "bundle/quarantine.h"
#include "bundle/recovery.h"
#include "fix/loop.h"
#include "fix/personas.h"
#include "lane/routes.h"
#include "proc/stop_signals.h"
#include "schedule/schedule.h"
#include "templates/render.h"
#include "util/fs.h"
#include "util/text.h"
#include "util/unsynced_files.h"
#include "util/words.h"
#include "util/untrusted.h"

namespace devgraph::bundle {
using lane::node_kind;
using lane::NodeKind;
namespace {

constexpr const char* kLane = "bundle";
// The bundle cursor's record of a fix loop's overdesigned-plan diagnosis
// sending it back to plan_bundle: count, pending, record, without, taken.
constexpr const char* kReplanKey = "replan";
const std::optional<std::string> kBundleCursor;

// What a gate did: moved on (the loop reads the cursor's new node), or
// stopped with a reason for a person.
struct Step {
  std::string blocker;  // "" when the cursor moved on
  std::string extra;    // for the next launch (recovered context, problems)
  bool delivered = false;
};

// An interrupted error once a stop signal arrived: the gate stops where
// its cursor stands, and the next run resumes there.
Status stopping(BundleRun& run) {
  if (int sig = run.dispatch.stop_signal())
    return fail(ErrorKind::interrupted, "stopped by " + stop_signal_name(sig));
  return {};
}

// A refused error once the run's limits allow no new launch: the gate
// parks where its cursor stands, and the error's message says why.
Status halting(BundleRun& run) {
  if (auto why = run.dispatch.halted()) return fail(ErrorKind::refused, *why);
  return {};
}

// The persona of `node` for the bundle cursor: a result saved for this
// visit, or a new launch, waited for.
Expected<PersonaResult> bundle_persona(BundleRun& run, const std::string& node,
                                       std::string dispatch, const std::string& extra) {
  DG_TRY(auto personas, run.walker.personas(node));
  if (personas.size() != 1) return fail("bundle node " + node + " must name one persona");
  Visit v{personas.front(), std::nullopt, node, run.journal.moves(kBundleCursor)};
  if (auto r = run.dispatch.recorded(v)) {
    run.journal.log("reused_result", Json{{"persona", v.persona}, {"node", node}});
    return *r;
  }
  if (!extra.empty()) dispatch += "\n\n" + extra + "\n";
  DG_CHECK(stopping(run));
  DG_CHECK(halting(run));
  DG_TRY(auto id, run.dispatch.launch(v, dispatch));
  DG_TRY(auto r, run.dispatch.wait_for(id));
  DG_CHECK(stopping(run));
  // Given up before it started: the cursor stays at this node.
  if (r.outcome == kOutcomeWithdrawn)
    return fail(ErrorKind::refused, run.dispatch.halted().value_or(r.summary));
  return r;
}

// A persona at a bundle node stopped: through recovery, back to the node
// (extra names what was found) or to a person (blocker).
Expected<Step> stopped(BundleRun& run, const std::string& node, const PersonaResult& r) {
  ContextFound found;
  if (r.status == "NEEDS_CONTEXT") {
    DG_TRY(found, look_for_context(run, kBundleCursor, node, r, {}));
  }
  auto decision = decide(run.walker, node, r, spent_budgets(run.journal.cursor()), found.pointers,
                         found.searched);
  decision.search = found.record;
  decision.researcher_runs = found.researcher_runs;
  DG_TRY(auto where, pass(run, kLane, kBundleCursor, node, decision, r.detail()));
  if (!where.retry)
    return Step{r.persona + " " + r.status + ": " + clip(r.summary, 300), "", false};
  auto missing = r.missing_context.empty() ? r.blockers : r.missing_context;
  std::string extra = "The previous attempt stopped on: " + join(missing, "; ");
  if (!where.extra.empty()) extra += "\n" + where.extra;
  return Step{"", extra, false};
}

int repairs_of(BundleRun& run) {
  return static_cast<int>(run.journal.cursor().value("repairs", 0LL));
}

// Findings go to repair_bundle while its cycles last; then the repair
// node is exhausted and the bundle waits for a person.
Expected<Step> to_repair(BundleRun& run, const std::string& node, std::string_view route,
                         std::string_view event, Json detail, const std::string& findings,
                         const std::string& what, Json merge = Json::object()) {
  int repairs = repairs_of(run) + 1;
  DG_TRY(auto target,
         run.walker.follow(kLane, node, route, run.journal.previous_node(kBundleCursor)));
  DG_CHECK(write_file_atomic(run.layout.repair_findings(), findings + "\n"));
  detail["repair"] = repairs;
  merge["repairs"] = repairs;
  DG_CHECK(run.journal.move(kBundleCursor, target, event, merge, detail));
  if (repairs <= run.walker.max_cycles(target)) return Step{};
  DG_TRY(auto human, run.walker.follow(kLane, target, lane::route::kExhausted, ""));
  std::string why = what + " after " + std::to_string(repairs - 1) + " repairs";
  DG_CHECK(run.journal.move(kBundleCursor, human, lane::event::kAwaitingHuman, waiting_merge(why),
                            Json{{"blocker", why}, {"recovery", "exhausted"}}));
  return Step{why, "", false};
}

// Whether a persona's reported artifact names the changed `path`: the
// path itself, a path ending in it (an absolute path inside the worktree),
// a tail of it, or a glob matching it. An empty name names nothing.
bool names_path(const std::string& name, const std::string& path) {
  if (name.empty()) return false;
  bool tail =
      name.size() <= path.size() && path.compare(path.size() - name.size(), name.size(), name) == 0;
  return tail || path_ends_with(name, path) || schedule::glob_matches(name, path);
}

// The changed paths (git status: never a file git ignores) that `names`
// name, as ":(literal)" pathspec words; `rest` gets the other changed
// paths.
std::vector<std::string> named_changes(const std::vector<git::StatusEntry>& st,
                                       const std::vector<std::string>& names,
                                       std::vector<std::string>& rest) {
  std::vector<std::string> chosen;
  for (const auto& e : st) {
    bool named = std::any_of(names.begin(), names.end(),
                             [&](const std::string& n) { return names_path(n, e.path); });
    if (named)
      chosen.push_back(":(literal)" + e.path);
    else
      rest.push_back(e.path);
  }
  return chosen;
}

Expected<std::string> commit_reported(BundleRun& run, const PersonaResult& r,
                                      const std::string& subject, const std::string& step) {
  std::string key = run.bundle() + "/" + step;
  // Only a result an earlier driver saved can have been committed already.
  if (r.reused)
    if (auto c = run.committed_with(kBundleTrailer, key)) return *c;
  DG_TRY(auto st, run.git.status());
  std::vector<std::string> dirty;
  std::vector<std::string> chosen = named_changes(st, r.artifacts, dirty);
  if (chosen.empty()) {
    if (!dirty.empty() && r.artifacts.empty())
      run.concerns.push_back("persona changed files but reported none: " +
                             clip(join(dirty, ", "), 300));
    return std::string();
  }
  DG_CHECK(run.journal.event(
      lane::event::kNote,
      Json{{"topic", "commit_intent"}, {"bundle", run.bundle()}, {"step", step}}));
  git::CommitRequest req{clip(subject, 72), "", {{kBundleTrailer, key}}};
  return git::commit_paths(run.git, chosen, req,
                           [&](const char* label) { run.crash.reach(label, key); });
}

std::pair<bool, std::string> run_recorded(BundleRun& run, const GateInputs& in, const char* key) {
  std::string cmd = run.command(key);
  if (cmd.empty()) return {true, std::string("no ") + key + " command recorded"};
  auto argv = split_command(cmd);
  if (!argv) return {false, std::string(key) + " " + argv.error().message};
  auto r = run_logged(run, in, key, *argv, cmd);
  if (!r) return {false, r.error().message};
  return {r->ok(), clip_tail(r->out + r->err, 4000)};
}

std::string write_diff(BundleRun& run) {
  auto d = run.git.diff(run.ctx.base + "...HEAD");
  // Reviewers read the diff from this file; an empty one says git failed.
  std::ignore = write_file_atomic(run.layout.whole_diff(), d ? *d : "");
  return run.layout.whole_diff();
}

std::set<std::string> fingerprints(const Json& findings) {
  std::set<std::string> out;
  for (const auto& f : findings) {
    Json key = Json::object();
    for (const char* k : {"file", "path", "title", "summary", "id"})
      if (f.is_object() && f.contains(k)) key[k] = f[k];
    out.insert(dump_py(key.empty() ? f : key));
  }
  return out;
}

// A discuss round's record on the bundle cursor (cursor["discuss"][name]):
// how many times it ran, how many revisions it sent back, whether the
// cursor waits for a person because of it, and its last round id.
struct RoundState {
  int rounds = 0;
  int revisions = 0;
  bool waiting = false;
  std::string last;
};

RoundState round_state(const Json& cursor, const std::string& name) {
  RoundState st;
  if (!cursor.is_object() || !cursor.contains("discuss")) return st;
  const Json& all = cursor["discuss"];
  if (!all.is_object() || !all.contains(name) || !all[name].is_object()) return st;
  const Json& r = all[name];
  st.rounds = static_cast<int>(r.value("rounds", 0LL));
  st.revisions = static_cast<int>(r.value("revisions", 0LL));
  st.waiting = r.value("waiting", false);
  st.last = json_str(r, "last");
  return st;
}

Json round_merge(const std::string& name, const RoundState& st, const std::string& warning = "") {
  Json r = {{"rounds", st.rounds},
            {"revisions", st.revisions},
            {"waiting", st.waiting},
            {"last", st.last}};
  if (!warning.empty()) r["warning"] = clip(warning, 300);
  return Json{{"discuss", Json{{name, r}}}};
}

// The kind of the answer that set the cursor's current visit going; ""
// when no answer did.
std::string answer_kind_for_visit(const Json& cursor) {
  if (!cursor.is_object() || !cursor.contains(kAnswerKey)) return "";
  const Json& a = cursor.at(kAnswerKey);
  if (!a.is_object() || a.value("moves", -1LL) != cursor.value("moves", -2LL)) return "";
  return json_str(a, "kind", kAnswerSupplied);
}

// The kind of the answer a person gave to a wait this round caused, when
// the cursor's current visit is the one that answer set going.
std::string answered_round(const Json& cursor, const std::string& name) {
  if (!round_state(cursor, name).waiting) return "";
  return answer_kind_for_visit(cursor);
}

// The round a gate runs at `node` (after it, or before `before`), when the
// run has the rounds on.
const DiscussRound* gate_round(BundleRun& run, const GateInputs& in, const std::string& after,
                               const std::string& before) {
  if (!in.critique.enabled) return nullptr;
  const Graph& g = run.walker.graph();
  return after.empty() ? round_before(g, before) : round_after(g, after);
}

// What a round decided for the gate that ran it.
struct Critiqued {
  RoundRoute route = RoundRoute::proceed;
  std::string extra;    // revise: the next dispatch's brief
  std::string blocker;  // park
  Json merge;           // proceed: for the cursor's next move
  Json detail;          // the DISCUSS_ROUND_DONE event's
};

// Runs the next round of `round` on `artifact` at `node` and follows its
// verdict: a revision goes back by the node's discuss_revise route (one
// DISCUSS_ROUND_DONE move), a wait by discuss_blocked (the event, then the
// AWAITING_HUMAN move); proceeding records the event and leaves the move
// to the caller.
Expected<Critiqued> critique(BundleRun& run, const GateInputs& in, const DiscussRound& round,
                             const std::string& node, const std::string& artifact, bool sign_off) {
  DG_CHECK(stopping(run));
  DG_CHECK(halting(run));
  RoundState st = round_state(run.journal.cursor(), round.name);
  RoundRequest q;
  q.round = &round;
  q.id = round.name + "-" + std::to_string(st.rounds + 1);
  q.artifact = artifact;
  q.context = in.spec_path;
  q.sign_off = sign_off;
  q.already_revised = st.revisions > 0;
  q.timeout = in.command_timeout * 4;  // each critic may fall back to other backends
  q.on_wait = in.on_wait;
  auto result = run_round(run, in.critique, q);
  if (!result && result.error().kind == ErrorKind::interrupted) return result.error();
  if (result) run.crash.reach("critiqued", run.bundle() + "/" + q.id);
  Json r = result ? *result : Json{{"round", q.id}, {"error", result.error().message}};
  RoundDecision d = result ? decide_round(r, sign_off, st.revisions, round.revisions)
                           : RoundDecision{RoundRoute::park, result.error().message};
  const char* route = d.route == RoundRoute::proceed  ? "proceed"
                      : d.route == RoundRoute::revise ? "revise"
                                                      : "wait_for_person";
  Json detail = {{"bundle", run.bundle()}, {"round", q.id}, {"gate", round.name}, {"route", route}};
  for (const char* k :
       {"verdict", "severity", "average", "recommendation", "record", "action_items", "error"})
    if (r.contains(k)) detail[k] = r[k];
  if (!d.note.empty()) detail["note"] = d.note;
  // For the live view's recent lines.
  run.journal.log("discuss_round",
                  Json{{"command", q.id},
                       {"status", json_str(r, "verdict", "no verdict") + " " +
                                      json_str(r, "severity", "") + " -> " + route}});
  Critiqued out;
  out.detail = detail;
  st.rounds += 1;
  st.last = q.id;
  if (d.route == RoundRoute::revise) {
    st.revisions += 1;
    DG_TRY(auto back, run.walker.follow(kLane, node, lane::route::kDiscussRevise, ""));
    DG_CHECK(run.journal.move(kBundleCursor, back, lane::event::kDiscussRoundDone,
                              round_merge(round.name, st), detail));
    out.route = d.route;
    out.extra = round_brief(r, "The critique " + q.id + " blocked this at HIGH; revise it.");
    return out;
  }
  // The event once per round, even when a killed driver's successor reads
  // the round back.
  if (!r.value("event_recorded", false)) {
    DG_CHECK(run.journal.event(lane::event::kDiscussRoundDone, detail));
    if (result) {
      r["event_recorded"] = true;
      DG_CHECK(write_file_atomic(run.layout.discussion_result(q.id), dump_py(r, 2) + "\n"));
    }
  }
  if (d.route == RoundRoute::park) {
    st.waiting = true;
    DG_TRY(auto human, run.walker.follow(kLane, node, lane::route::kDiscussBlocked, ""));
    Json merge = round_merge(round.name, st);
    merge.update(waiting_merge(d.note));
    DG_CHECK(run.journal.move(
        kBundleCursor, human, lane::event::kAwaitingHuman, merge,
        Json{{"blocker", d.note}, {"round", q.id}, {"record", r.value("record", Json())}}));
    out.route = d.route;
    out.blocker = d.note;
    return out;
  }
  if (!d.note.empty()) run.concerns.push_back(d.note);
  out.merge = round_merge(round.name, st, d.note);
  return out;
}

// The brief of the round a person answered, for the dispatch that acts on
// their answer.
std::string last_round_brief(BundleRun& run, const std::string& name, const std::string& lead) {
  RoundState st = round_state(run.journal.cursor(), name);
  auto r = load_json_file(run.layout.discussion_result(st.last));
  return r ? round_brief(*r, lead) : std::string();
}

Expected<Step> verify_gate(BundleRun& run, const GateInputs& in, const std::string& node,
                           std::string& evidence) {
  std::string why;
  auto st = run.git.status();
  if (!st) {
    why = st.error().message;
  } else if (!st->empty()) {
    std::vector<std::string> paths;
    for (const auto& e : *st) paths.push_back(e.path);
    why = "worktree not clean before " + node + ":\n" + join(paths, "\n");
  } else {
    auto [ok, out] = run_recorded(run, in, "test");
    DG_CHECK(stopping(run));
    if (!ok) why = "test command failed:\n" + out;
    if (ok) {
      auto [bok, bout] = run_recorded(run, in, "build");
      DG_CHECK(stopping(run));
      if (!bok) why = "build command failed:\n" + bout;
    }
  }
  if (!why.empty())
    return to_repair(run, node, lane::route::kFailed, lane::event::kVerifyFailed,
                     Json{{"evidence", clip(why, 1000)}}, why,
                     node + " still failing: " + clip(why, 500));
  evidence = "test and build passed";
  DG_TRY(auto next, run.walker.follow(kLane, node, lane::route::kPassed, ""));
  DG_CHECK(run.journal.move(kBundleCursor, next, lane::event::kVerifyPassed, Json(),
                            Json{{"evidence", evidence}}));
  return Step{};
}

Expected<Step> review_gate(BundleRun& run, const GateInputs& in, const std::string& node,
                           const std::string& extra) {
  templates::Values v{{"bundle_id", run.bundle()},
                      {"spec_path", in.spec_path},
                      {"plan_path", run.layout.plan_md()},
                      {"worktree", run.ctx.worktree},
                      {"diff_path", write_diff(run)},
                      {"base", run.ctx.base},
                      {"task_results_dir", run.layout.tasks_dir()}};
  DG_TRY(auto dispatch, run.render("final-review-dispatch", v));
  // Strays kept out of the branch: the reviewer says if the bundle needs one.
  std::string note = extra;
  DG_TRY(auto kept, quarantined(run.layout));
  if (!kept.empty()) {
    std::string list;
    for (const auto& k : kept) list += "- " + json_str(k, "path") + "\n";
    if (!note.empty()) note += "\n\n";
    note +=
        "Kept out of the branch: these files were written outside every task's footprint and "
        "reported by no persona, so they are in the run's quarantine, not committed. Report a "
        "finding if the bundle needs one of them.\n" +
        fence_untrusted("quarantined paths", list);
  }
  DG_TRY(auto r, bundle_persona(run, node, dispatch, note));
  if (r.stopped()) return stopped(run, node, r);
  if (r.status == "DONE" && !r.has_findings()) {
    DG_TRY(auto next, run.walker.follow(kLane, node, lane::route::kApproved, ""));
    DG_CHECK(
        run.journal.move(kBundleCursor, next, lane::event::kReviewApproved, Json(), r.detail()));
    return Step{};
  }
  // A finding the previous review also reported survived a repair cycle:
  // another cycle is unlikely to fix it, so a person looks now.
  auto now = fingerprints(r.findings);
  auto prev = load_json_file(run.layout.review_findings());
  std::vector<std::string> survived;
  if (prev && prev->is_array())
    for (const auto& p : *prev)
      if (p.is_string() && now.count(p.get<std::string>()))
        survived.push_back(p.get<std::string>());
  DG_CHECK(write_file_atomic(run.layout.review_findings(),
                             dump_py(Json(std::vector<std::string>(now.begin(), now.end())))));
  if (!survived.empty()) {
    auto park = run.walker.shared_node_of_type("cursor_interrupt");
    if (!park) return fail("GRAPH.yaml has no shared node where a cursor waits for a person");
    std::string why = "review findings survived a repair cycle: " + clip(join(survived, "; "), 300);
    DG_CHECK(run.journal.move(
        kBundleCursor, *park, lane::event::kAwaitingHuman, waiting_merge(why),
        Json{{"blocker", "review findings survived a repair cycle"}, {"findings", survived}}));
    return Step{why, "", false};
  }
  Json f = {{"findings", r.findings}, {"concerns", r.raw.value("concerns", Json::array())}};
  return to_repair(run, node, lane::route::kFindings, lane::event::kReviewFindings, r.detail(),
                   dump_py(f, 2), "review findings survive: " + clip(r.summary, 300));
}

// The fix loop's personas as bundle-level visits of repair_bundle, each
// call its own visit ("repair_bundle/loop-2/fix"), through the bundle's
// dispatch: its ledger, limits, stop signals and live view. Each answer is
// also kept in the call's own directory, so a driver killed in a later
// loop replays the earlier ones from their answers instead of launching
// them again (a persona's result file holds its last call only).
//
// A call on another backend than the bundle's (fix.reviewer_backend,
// fix.final_gate_backend) runs on a persona runtime of its own
// (fix::RuntimePersonas: a new process and session on that CLI), in this
// thread; its spend is a line of the bundle's ledger, and a stop signal
// it meets stops the bundle's launches too.
class BundleFixPersonas final : public fix::FixPersonas {
 public:
  BundleFixPersonas(BundleRun& run, const CritiqueSettings& flags) : run_(run), flags_(flags) {}
  Expected<fix::PersonaAnswer> run(const fix::PersonaCall& call) override {
    if (auto a = fix::kept_answer(call.dir)) {
      run_.journal.log("reused_result", Json{{"persona", call.persona}, {"call", call.dir}});
      return *a;
    }
    if (call.backend != flags_.agent) {
      DG_TRY(auto a, elsewhere(call));
      DG_CHECK(fix::keep_answer(call.dir, a));
      return a;
    }
    Visit v{call.persona,
            std::nullopt,
            "repair_bundle/" + basename_of(dirname_of(call.dir)) + "/" + call.role,
            run_.journal.moves(kBundleCursor),
            call.model,
            call.effort};
    std::optional<PersonaResult> r = run_.dispatch.recorded(v);
    if (!r) {
      DG_CHECK(stopping(run_));
      DG_CHECK(halting(run_));
      DG_TRY(auto id, run_.dispatch.launch(v, call.dispatch));
      DG_TRY(auto done, run_.dispatch.wait_for(id));
      DG_CHECK(stopping(run_));
      if (done.outcome == kOutcomeWithdrawn)
        return fail(ErrorKind::refused, run_.dispatch.halted().value_or(done.summary));
      r = std::move(done);
    }
    fix::PersonaAnswer a;
    a.result = r->raw;
    a.outcome = r->outcome;
    a.handle = r->handle;
    a.session_id = r->session_id;
    a.cost_usd = r->cost_usd;
    DG_CHECK(fix::keep_answer(call.dir, a));
    return a;
  }

 private:
  Expected<fix::PersonaAnswer> elsewhere(const fix::PersonaCall& call) {
    DG_CHECK(stopping(run_));
    DG_CHECK(halting(run_));
    fix::RuntimeFlags rf;
    rf.agent_bin = flags_.agent_bin;
    rf.sim_scenario = flags_.sim_scenario;
    if (flags_.agent_command) {
      auto words = split_command(*flags_.agent_command);
      if (words) rf.agent_command = *words;
    }
    if (flags_.persona_timeout_seconds)
      rf.persona_timeout =
          std::chrono::milliseconds(static_cast<long long>(*flags_.persona_timeout_seconds * 1000));
    // The bundle's --claude-bin names the bundle's claude, not another CLI.
    if (call.backend != "claude") rf.agent_bin.clear();
    fix::RuntimePersonas other(run_.walker.graph(), run_.skill_dir, run_.ctx.worktree, rf);
    run_.journal.log(
        "fix_call_elsewhere",
        Json{{"persona", call.persona}, {"role", call.role}, {"backend", call.backend}});
    auto a = other.run(call);
    if (!a && a.error().kind == ErrorKind::interrupted && a.error().exit_code > 128) {
      run_.dispatch.stop(a.error().exit_code - 128);
      return a.error();
    }
    DG_TRY(auto answer, std::move(a));
    Json line = {{"handle", answer.handle.empty() ? "fix/" + call.role : answer.handle},
                 {"persona", call.persona},
                 {"cost_usd", answer.cost_usd},
                 {"backend", call.backend}};
    if (auto st = append_file(run_.layout.ledger(), dump_py(line) + "\n"); !st)
      run_.journal.log("file_not_written", Json{{"error", st.error().message}});
    return answer;
  }

  BundleRun& run_;
  const CritiqueSettings& flags_;
};

// Review findings with a blocking gap run the fix loop (fix/loop.h) inside
// repair_bundle: SHIP goes on to bundle_verify; any other end is a
// FIX_DIAGNOSED event and a wait for a person, the bundle still in
// progress. nullopt: the findings are not a review the loop can read (no
// severity, no file) or hold no blocking gap, and the single repair runs.
Expected<std::optional<Step>> fix_gate(BundleRun& run, const GateInputs& in,
                                       const std::string& node) {
  const Graph& g = run.walker.graph();
  // The review node the findings came from (any node of the review kind).
  const std::string reviewed = run.journal.previous_node(kBundleCursor);
  const Json cursor = run.journal.cursor();
  const Json fx =
      cursor.contains("fix") && cursor.at("fix").is_object() ? cursor.at("fix") : Json::object();
  // A person approved the raise past the cap the loop stopped for: that
  // approval, with its time, is the recorded decision the loop needs.
  std::optional<fix::RaiseDecision> decision;
  if (json_str(fx, "waiting") == "raise" &&
      answer_kind_for_visit(cursor) == std::string(kAnswerApproved)) {
    auto text = read_file(run.layout.answer(kBundleCursor));
    const char* user = std::getenv("USER");
    decision = fix::RaiseDecision{json_str(fx, "raise_from"), json_str(fx, "raise_to"),
                                  text && !squeeze_spaces(*text).empty()
                                      ? one_line(squeeze_spaces(*text), 300)
                                      : "approved in the inbox",
                                  std::string("a person, through devgraph answer") +
                                      (user ? std::string(" (") + user + ")" : ""),
                                  json_str(cursor.at(kAnswerKey), "at")};
  }
  if (g.fix.fixer.empty() ||
      (node_kind(g, reviewed) != NodeKind::review && !decision))
    return std::optional<Step>();
  const int cycle = repairs_of(run);
  const std::string dir = run.layout.fix_dir(cycle);
  // The review the loop starts from, kept with the loop: the reviewer's
  // result file is the loop's re-reviews' too.
  const std::string start = join_path(dir, "review.json");
  auto saved = load_json_file(start);
  Json review;
  if (saved && saved->is_object()) {
    review = *saved;
  } else {
    // The review the reviewing node's persona (GRAPH.yaml) saved.
    DG_TRY(auto reviewers, run.walker.personas(reviewed));
    if (reviewers.size() != 1) return std::optional<Step>();
    auto r = load_json_file(run.layout.result(reviewers.front(), std::nullopt));
    if (!r || !r->is_object() || !r->contains("result")) return std::optional<Step>();
    review = r->at("result");
  }
  auto parsed = fix::review_from_result(review);
  if (!parsed || parsed->verdict != fix::Verdict::fix_first) return std::optional<Step>();
  DG_CHECK(make_directories(dir));
  DG_CHECK(write_file_atomic(start, dump_py(review, 2) + "\n"));
  fix::FixRequest req;
  req.worktree = run.ctx.worktree;
  req.base = run.ctx.base;
  req.dir = dir;
  req.subject = "bundle " + run.bundle();
  req.criteria = is_readable_file(in.spec_path) ? in.spec_path : "";
  for (const char* k : {"test", "build"})
    if (!run.command(k).empty()) req.validate.push_back(run.command(k));
  req.review = *parsed;
  req.rules = g.fix;
  req.escalation = g.escalation;
  req.skill_dir = run.skill_dir;
  req.backend = in.critique.agent;
  // The setting an earlier loop of this bundle raised to, else the run's.
  req.model = fx.contains("model") && fx.at("model").is_string()
                  ? std::optional<std::string>(fx.at("model").get<std::string>())
                  : in.critique.model;
  if (fx.contains("effort") && fx.at("effort").is_string())
    req.effort = fx.at("effort").get<std::string>();
  req.raises_used = static_cast<int>(fx.value("raises_used", 0LL));
  req.decision = decision;
  req.command_timeout = in.command_timeout;
  req.on_log = [&run](const Json& rec) { run.journal.log("fix_" + json_str(rec, "event"), rec); };
  BundleFixPersonas personas(run, in.critique);
  DG_TRY(auto out, fix::run_fix(req, personas, run.git, run.runner));
  Json merge = {{"fix",
                 {{"raises_used", out.raises_used},
                  {"model", out.model ? Json(*out.model) : Json()},
                  {"effort", out.effort ? Json(*out.effort) : Json()},
                  {"waiting", out.raise_needed ? "raise" : ""},
                  {"raise_from", out.raise_needed ? out.raise_needed->first : ""},
                  {"raise_to", out.raise_needed ? out.raise_needed->second : ""}}}};
  Json detail = fix::to_json(out);
  detail["bundle"] = run.bundle();
  if (out.end == "ship") {
    DG_TRY(auto next, run.walker.follow(kLane, node, lane::route::kDone, ""));
    DG_CHECK(run.journal.move(kBundleCursor, next, lane::event::kRepairCommitted, merge, detail));
    return std::optional<Step>(Step{});
  }
  DG_CHECK(run.journal.event(lane::event::kFixDiagnosed, detail));
  const Json replan = cursor.contains(kReplanKey) && cursor.at(kReplanKey).is_object()
                          ? cursor.at(kReplanKey)
                          : Json::object();
  const int replans = static_cast<int>(replan.value("count", 0LL));
  if (out.end == "replan" && out.diagnosis && replans < g.fix.max_replans) {
    // Back to plan_bundle without the machinery the diagnosis named. The
    // tasks committed so far stay on the branch; the new plan takes it
    // from there with task ids of its own (checked_plan refuses the old).
    std::vector<std::string> taken;
    for (const auto& t : run.journal.task_ids()) taken.push_back(t);
    DG_TRY(auto plan, run.walker.follow(kLane, node, lane::route::kReplan, ""));
    merge[kReplanKey] = {{"count", replans + 1},
                         {"pending", true},
                         {"record", out.record},
                         {"without", out.diagnosis->machinery},
                         {"taken", taken}};
    Json moved = {{"record", out.record},
                  {"without", out.diagnosis->machinery},
                  {"replan", replans + 1},
                  {"route", out.route}};
    DG_CHECK(run.journal.move(kBundleCursor, plan, lane::event::kBundleReplanned, merge, moved));
    return std::optional<Step>(Step{});
  }
  if (out.end == "replan")
    out.route += " (the bundle was planned again " + std::to_string(replans) +
                 " time(s) already, GRAPH.yaml fix.max_replans " +
                 std::to_string(g.fix.max_replans) + ")";
  auto park = run.walker.shared_node_of_type("cursor_interrupt");
  if (!park) return fail("GRAPH.yaml has no shared node where a cursor waits for a person");
  std::string why = "fix loop stopped (" + out.why_stopped + "): " + out.route +
                    (out.question.empty() ? "" : "; " + out.question);
  merge.update(waiting_merge(why));
  DG_CHECK(run.journal.move(
      kBundleCursor, *park, lane::event::kAwaitingHuman, merge,
      Json{{"blocker", clip(why, 300)}, {"recovery", "fix_diagnosis"}, {"record", out.record}}));
  return std::optional<Step>(Step{clip(why, 500), "", false});
}

Expected<Step> repair_gate(BundleRun& run, const GateInputs& in, const std::string& node,
                           const std::string& extra) {
  DG_TRY(auto looped, fix_gate(run, in, node));
  if (looped) return *looped;
  auto findings = read_file(run.layout.repair_findings());
  templates::Values v{{"bundle_id", run.bundle()},
                      {"worktree", run.ctx.worktree},
                      {"spec_path", in.spec_path},
                      {"plan_path", run.layout.plan_md()},
                      {"test_command", run.command("test")},
                      {"findings_path", run.layout.repair_findings()},
                      {"findings", fence_untrusted("findings", findings ? *findings : "")}};
  DG_TRY(auto dispatch, run.render("bundle-repair-dispatch", v));
  DG_TRY(auto r, bundle_persona(run, node, dispatch, extra));
  if (r.stopped()) return stopped(run, node, r);
  DG_TRY(auto c, commit_reported(
                     run, r, "fix(" + run.bundle() + "): repair review and verification findings",
                     "repair-" + std::to_string(repairs_of(run))));
  Json d = r.detail();
  d["commits"] = c.empty() ? Json::array() : Json::array({c});
  DG_TRY(auto next, run.walker.follow(kLane, node, lane::route::kDone, ""));
  DG_CHECK(run.journal.move(kBundleCursor, next, lane::event::kRepairCommitted, Json(), d));
  return Step{};
}

// The documentation review done into `target`: delivery when it is the
// lane's completion node (the driver records PR_CREATED or BRANCH_READY
// there), else the cursor moves on to it.
Expected<Step> done_into(BundleRun& run, const std::string& target, Json detail) {
  const GraphLane* lane = run.walker.graph().lane(kLane);
  if (lane && target == lane->complete_at) return Step{"", "", true};
  DG_CHECK(run.journal.move(kBundleCursor, target, lane::event::kReviewApproved, Json(), detail));
  return Step{};
}

Expected<Step> docs_gate(BundleRun& run, const GateInputs& in, const std::string& node,
                         const std::string& extra) {
  // The sign-off stands before the node the documentation review is done into.
  DG_TRY(auto delivery, run.walker.follow(kLane, node, lane::route::kDone, ""));
  const DiscussRound* round = gate_round(run, in, "", delivery);
  const std::string answered = round ? answered_round(run.journal.cursor(), round->name) : "";
  if (answered == kAnswerApproved) {
    // A person approved the branch the sign-off blocked: it is delivered as
    // it is, neither reviewed nor critiqued again.
    run.journal.log("sign_off_approved", Json{{"bundle", run.bundle()}});
    return done_into(run, delivery, Json());
  }
  if (answered == kAnswerSupplied) {
    // What the person wrote goes to repair_bundle with the round's action
    // items; the branch then passes every gate and the sign-off again.
    RoundState st = round_state(run.journal.cursor(), round->name);
    st.waiting = false;
    auto text = read_file(run.layout.answer(kBundleCursor));
    std::string findings =
        last_round_brief(run, round->name, "The sign-off critique blocked the branch at HIGH.") +
        "\n\nA person answered that wait:\n" + (text ? *text : std::string());
    return to_repair(run, node, lane::route::kDiscussRevise, lane::event::kDiscussRoundDone,
                     Json{{"round", st.last}, {"route", "repair"}, {"answer", kAnswerSupplied}},
                     findings, "the sign-off critique's findings", round_merge(round->name, st));
  }
  templates::Values v{{"bundle_id", run.bundle()},         {"spec_path", in.spec_path},
                      {"plan_path", run.layout.plan_md()}, {"worktree", run.ctx.worktree},
                      {"diff_path", write_diff(run)},      {"base", run.ctx.base}};
  DG_TRY(auto dispatch, run.render("documentation-reviewer-dispatch", v));
  DG_TRY(auto r, bundle_persona(run, node, dispatch, extra));
  if (r.stopped()) return stopped(run, node, r);
  DG_TRY(auto repair, run.walker.follow(kLane, node, lane::route::kDoneWithConcerns, ""));
  if (r.status == "DONE_WITH_CONCERNS" && repairs_of(run) < run.walker.max_cycles(repair)) {
    Json f = {{"concerns", r.raw.value("concerns", Json::array())}, {"findings", r.findings}};
    return to_repair(run, node, lane::route::kDoneWithConcerns, lane::event::kDocReviewFindings,
                     r.detail(), dump_py(f, 2), "documentation concerns");
  }
  // With the repair cycles spent, documentation concerns are reported,
  // not a reason to hold the branch back.
  if (r.status == "DONE_WITH_CONCERNS")
    for (const auto& c : r.concerns) run.concerns.push_back("documentation: " + c);
  DG_TRY(auto c,
         commit_reported(run, r, "docs: align documentation with the delivered change", "docs"));
  (void)c;  // the commit, if any, is on the branch; delivery reads HEAD
  // The sign-off: the whole branch, documentation included, before its
  // pull request. At HIGH it always waits for a person.
  if (round) {
    DG_TRY(auto cr, critique(run, in, *round, node, write_diff(run), true));
    if (cr.route != RoundRoute::proceed) return Step{cr.blocker, "", false};
  }
  return done_into(run, delivery, r.detail());
}

// The plan at tasks.json, if it passes the plan check; else the problems.
// The replan record on the bundle cursor while a new plan is due; null
// otherwise.
Json pending_replan(const Json& cursor) {
  if (!cursor.contains(kReplanKey) || !cursor.at(kReplanKey).is_object()) return Json();
  const Json& r = cursor.at(kReplanKey);
  return r.value("pending", false) ? r : Json();
}

Expected<schedule::Plan> checked_plan(BundleRun& run) {
  DG_TRY(auto doc, load_json_file(run.layout.tasks_json()));
  auto problems = schedule::check_plan(doc);
  if (!problems.empty())
    return fail(ErrorKind::refused,
                "tasks.json failed the schedule check: " + join(problems, "; "));
  DG_TRY(auto plan, schedule::plan_from_json(doc));
  // A plan made again keeps the earlier plan's commits on the branch: a
  // task id of that plan would read as already done.
  Json replan = pending_replan(run.journal.cursor());
  if (replan.is_object() && replan.contains("taken") && replan.at("taken").is_array()) {
    std::vector<std::string> reused;
    for (const auto& t : plan.tasks)
      for (const auto& taken : replan.at("taken"))
        if (taken == t.id) reused.push_back(t.id);
    if (!reused.empty())
      return fail(ErrorKind::refused, "tasks.json reuses task ids of the earlier plan (" +
                                          join(reused, ", ") + "); give each new task a new id");
  }
  return plan;
}

// What the planner is told when the fix loop sent the bundle back.
std::string replan_brief(const Json& replan) {
  std::vector<std::string> without, taken;
  for (const auto& w : replan.value("without", Json::array()))
    if (w.is_string()) without.push_back(w.get<std::string>());
  for (const auto& t : replan.value("taken", Json::array()))
    if (t.is_string()) taken.push_back(t.get<std::string>());
  return "This bundle was sent back to planning: its fix loop diagnosed the plan as "
         "overdesigned (the record: " +
         json_str(replan, "record") + "). Plan it again without: " + join(without, "; ") +
         ". The branch keeps the commits of the earlier plan's tasks (" + join(taken, ", ") +
         "): write tasks that take the branch from where it stands to the simpler design, "
         "each with a new id (none of those), depending only on tasks of the new plan.";
}

// The plan is part of the branch: commit it (once per planning) with
// everything else the planner reported writing (its copy of the spec), so
// the tree is clean for the task commits' footprint checks and for
// bundle_verify, and no task's commit takes the planner's files. Each
// planning after a critique round has its own step (plan-r<rounds>).
Status commit_plan(BundleRun& run, const PersonaResult& r, int rounds) {
  const Json cursor = run.journal.cursor();
  const long long replans = cursor.contains(kReplanKey) && cursor.at(kReplanKey).is_object()
                                ? cursor.at(kReplanKey).value("count", 0LL)
                                : 0;
  std::string key = run.bundle() + "/plan" + (replans ? "-p" + std::to_string(replans) : "") +
                    (rounds ? "-r" + std::to_string(rounds) : "");
  if (r.reused && run.committed_with(kBundleTrailer, key)) return {};
  std::vector<std::string> names = r.artifacts;
  names.push_back(run.layout.plan_rel());
  names.push_back(run.layout.tasks_json_rel());
  DG_TRY(auto st, run.git.status());
  std::vector<std::string> rest;
  std::vector<std::string> paths = named_changes(st, names, rest);
  if (!rest.empty())
    run.journal.log("paths_left_by_plan", Json{{"bundle", run.bundle()}, {"paths", rest}});
  std::string subject = "docs(" + run.bundle() + "): plan";
  if (replans) subject += " (planned again)";
  if (rounds) subject += " (revised)";
  git::CommitRequest req{subject, "", {{kBundleTrailer, key}}};
  DG_TRY(auto c, git::commit_paths(run.git, paths, req,
                                   [&](const char* label) { run.crash.reach(label, key); }));
  (void)c;  // found again by its trailer
  return {};
}

}  // namespace

Expected<std::string> run_plan(BundleRun& run, const GateInputs& in) {
  const std::string node = run.journal.node(kBundleCursor);
  if (node_kind(run.walker.graph(), node) != NodeKind::plan) return std::string();
  const DiscussRound* round = gate_round(run, in, node, "");
  // A person's answer set the cursor going again: the first dispatch has it.
  std::string extra = answer_for_dispatch(run.layout, kBundleCursor, run.journal.cursor());
  // Sent back by the fix loop: every planning of this visit is told why.
  const Json replan = pending_replan(run.journal.cursor());
  const std::string brief = replan.is_object() ? replan_brief(replan) : "";
  while (run.journal.node(kBundleCursor) == node) {
    Json detail;
    Json merge;
    const std::string answered = round ? answered_round(run.journal.cursor(), round->name) : "";
    if (answered == kAnswerApproved) {
      // A person approved the plan the critique blocked: it goes on as it
      // is, neither planned nor critiqued again.
      DG_TRY(auto plan, checked_plan(run));
      RoundState st = round_state(run.journal.cursor(), round->name);
      st.waiting = false;
      merge = round_merge(round->name, st);
      auto cp = schedule::critical_path(plan, std::nullopt);
      detail = Json{{"approved_by_person", true},
                    {"round", st.last},
                    {"critical_path", cp.path},
                    {"task_count", cp.task_count}};
    } else {
      if (answered == kAnswerSupplied)
        extra += "\n\n" + last_round_brief(run, round->name,
                                           "Before the person answered, the plan critique "
                                           "blocked the plan at HIGH.");
      templates::Values v{{"bundle_id", run.bundle()},
                          {"spec_path", in.spec_path},
                          {"worktree", run.ctx.worktree},
                          {"branch", run.ctx.branch},
                          {"default_branch", run.ctx.default_branch},
                          {"plan_path", run.layout.plan_md()},
                          {"tasks_json_path", run.layout.tasks_json()}};
      DG_TRY(auto dispatch, run.render("planner-dispatch", v));
      DG_TRY(auto r, bundle_persona(
                         run, node, dispatch,
                         brief.empty() || extra.empty() ? brief + extra : brief + "\n\n" + extra));
      // The plan is accepted only when the plan check passes: a plan that
      // fails it is a blocked planner, retried with the problems named.
      std::optional<schedule::Plan> plan;
      if (!r.stopped()) {
        auto p = checked_plan(run);
        if (p) plan = std::move(*p);
        if (!p) {
          r.status = "BLOCKED";
          r.summary = p.error().message;
          r.blockers = {p.error().message};
        }
      }
      if (r.stopped()) {
        DG_TRY(auto step, stopped(run, node, r));
        if (!step.blocker.empty()) return step.blocker;
        extra = step.extra;
        continue;
      }
      const int rounds = round ? round_state(run.journal.cursor(), round->name).rounds : 0;
      DG_CHECK(commit_plan(run, r, rounds));
      // The plan round: before any task starts.
      if (round) {
        const std::string artifact =
            is_readable_file(run.layout.plan_md()) ? run.layout.plan_md() : run.layout.tasks_json();
        DG_TRY(auto c, critique(run, in, *round, node, artifact, false));
        if (c.route == RoundRoute::park) return c.blocker;
        if (c.route == RoundRoute::revise) {
          extra = c.extra;
          continue;
        }
        merge = c.merge;
        detail = r.detail();
        detail["discuss"] = c.detail;
      } else {
        detail = r.detail();
      }
      auto cp = schedule::critical_path(*plan, std::nullopt);
      detail["critical_path"] = cp.path;
      detail["task_count"] = cp.task_count;
    }
    if (replan.is_object()) merge[kReplanKey] = {{"pending", false}};
    DG_TRY(auto next, run.walker.follow(kLane, node, lane::route::kDone, ""));
    DG_CHECK(run.journal.move(kBundleCursor, next, lane::event::kPlanDone, merge, detail,
                              run.layout.tasks_json()));
  }
  return std::string();
}

Expected<std::string> run_gates(BundleRun& run, const GateInputs& in, std::string& evidence) {
  std::string extra = answer_for_dispatch(run.layout, kBundleCursor, run.journal.cursor());
  while (true) {
    std::string node = run.journal.node(kBundleCursor);
    Expected<Step> step = Step{};
    switch (node_kind(run.walker.graph(), node)) {
      case NodeKind::verify:
        step = verify_gate(run, in, node, evidence);
        break;
      case NodeKind::review:
        step = review_gate(run, in, node, extra);
        break;
      case NodeKind::repair:
        step = repair_gate(run, in, node, extra);
        break;
      case NodeKind::docs:
        step = docs_gate(run, in, node, extra);
        break;
      case NodeKind::deliver:  // wherever a route led to it: the driver delivers
      case NodeKind::plan:     // sent back to planning: the driver plans again
        return std::string();
      case NodeKind::schedule:
      case NodeKind::unknown:
        return std::string("bundle cursor at " + node + " is not a bundle gate");
    }
    if (!step) return step.error();
    if (!step->blocker.empty()) return step->blocker;
    if (step->delivered) return std::string();
    extra = step->extra;
  }
}

Expected<CommandResult> run_logged(BundleRun& run, const GateInputs& in, const std::string& label,
                                   const std::vector<std::string>& argv, const std::string& text) {
  CommandSpec spec;
  spec.argv = argv;
  spec.cwd = run.ctx.worktree;
  spec.timeout = in.command_timeout;
  spec.max_output_bytes = 256 * 1024;
  spec.on_wait = in.on_wait;
  spec.stop_on_signal = true;
  // A project's test suite can take minutes: the records let the live
  // view (and anyone reading the log) see what runs and how long it took.
  run.journal.log("command_started", Json{{"command", label}, {"argv", text}});
  const auto began = std::chrono::steady_clock::now();
  auto r = run.runner.run(spec);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  Json done = {{"command", label},
               {"exit", r ? Json(r->exit_code) : Json(nullptr)},
               {"timed_out", r ? r->timed_out : false},
               {"seconds", std::round(seconds * 10) / 10}};
  if (!r) done["error"] = r.error().message;
  if (r && r->interrupted()) done["interrupted_by"] = r->interrupted_by;
  run.journal.log("command_finished", std::move(done));
  if (r && r->interrupted()) run.dispatch.stop(r->interrupted_by);
  return r;
}

}  // namespace devgraph::bundle
