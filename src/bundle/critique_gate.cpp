#include "bundle/critique_gate.h"

#include <algorithm>

#include "agents/result.h"
#include "proc/stop_signals.h"
#include "skill/skill.h"
#include "templates/render.h"
#include "util/fs.h"
#include "util/text.h"
#include "util/unsynced_files.h"
#include "util/untrusted.h"

namespace devgraph::bundle {
namespace {

std::string str_or(const Json& j, const char* key, const std::string& fallback = "") {
  if (!j.is_object()) return fallback;
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : fallback;
}

// The first divergence's description, else the first action item: what a
// person reads first about a round.
std::string headline(const Json& result) {
  auto first_of = [&](const char* key) -> std::string {
    if (!result.is_object() || !result.contains(key)) return "";
    const Json& list = result.at(key);
    if (!list.is_array() || list.empty()) return "";
    const Json& v = list.at(0);
    return v.is_string() ? v.get<std::string>() : str_or(v, "description");
  };
  std::string h = first_of("divergences");
  return h.empty() ? first_of("action_items") : h;
}

}  // namespace

std::vector<std::string> discuss_flags(const CritiqueSettings& s,
                                       const std::vector<std::string>& graph_fallback) {
  std::vector<std::string> argv;
  auto add = [&](const char* flag, const std::string& value) {
    argv.push_back(flag);
    argv.push_back(value);
  };
  if (s.agent == "sim" || s.agent == "command") {
    add("--agent", s.agent);
    add("--fallback", "none");
    if (s.model) add("--model", *s.model);
    if (!s.sim_scenario.empty()) add("--sim-scenario", s.sim_scenario);
    if (s.agent_command) add("--agent-command", *s.agent_command);
  } else {
    std::vector<std::string> fallback = {s.agent};
    for (const auto& b : graph_fallback)
      if (std::find(fallback.begin(), fallback.end(), b) == fallback.end()) fallback.push_back(b);
    add("--fallback", join(fallback, ","));
    if (s.agent == "claude" && !s.agent_bin.empty()) add("--claude-bin", s.agent_bin);
  }
  if (s.persona_timeout_seconds) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", *s.persona_timeout_seconds);
    add("--persona-timeout-seconds", text);
  }
  return argv;
}

RoundDecision decide_round(const Json& result, bool sign_off, int revisions_done,
                           int revisions_allowed) {
  const std::string round = str_or(result, "round", "the critique");
  const std::string verdict = str_or(result, "verdict");
  const std::string severity = str_or(result, "severity");
  const std::string why = clip(headline(result), 300);
  if (verdict == "consensus_reached") return {RoundRoute::proceed, ""};
  if (verdict == "consensus_blocked" && (severity == "MEDIUM" || severity == "LOW"))
    return {RoundRoute::proceed, "critique " + round + " blocked at " + severity + " (" +
                                     str_or(result, "recommendation", "proceed-with-caution") +
                                     ")" + (why.empty() ? "" : ": " + why)};
  if (verdict != "consensus_blocked" || severity != "HIGH")
    return {RoundRoute::park, "critique " + round + " gave no verdict a gate can follow"};
  std::string note = "critique " + round + " blocked at HIGH" + (why.empty() ? "" : ": " + why);
  if (!sign_off && revisions_done < revisions_allowed) return {RoundRoute::revise, note};
  return {RoundRoute::park, note};
}

const DiscussRound* round_after(const Graph& graph, const std::string& node) {
  for (const auto& r : graph.discuss.rounds)
    if (r.after == node) return &r;
  return nullptr;
}

const DiscussRound* round_before(const Graph& graph, const std::string& node) {
  for (const auto& r : graph.discuss.rounds)
    if (r.before == node) return &r;
  return nullptr;
}

Expected<Json> run_round(BundleRun& run, const CritiqueSettings& settings, const RoundRequest& q) {
  const std::string saved = run.layout.discussion_result(q.id);
  if (auto prev = load_json_file(saved); prev && prev->is_object() && prev->contains("verdict")) {
    run.journal.log("reused_discussion", Json{{"round", q.id}});
    return *prev;
  }
  const Graph& graph = run.walker.graph();
  // The coverage perspective reads the requirements: without them it
  // cannot run, so it is left out rather than failing the whole round.
  std::vector<std::string> perspectives;
  const bool have_context = !q.context.empty() && is_readable_file(q.context);
  for (const auto& name : q.round->perspectives) {
    const DiscussPerspective* p = graph.discuss.perspective(name);
    if (p && p->reads_context && !have_context) continue;
    perspectives.push_back(name);
  }
  CommandSpec spec;
  spec.argv = {self_executable(), "discuss",        q.artifact, "--round",    q.id,
               "--out",           run.layout.dir(), "--skill",  run.skill_dir};
  if (!perspectives.empty()) {
    spec.argv.push_back("--perspectives");
    spec.argv.push_back(join(perspectives, ","));
  }
  if (have_context) {
    spec.argv.push_back("--context");
    spec.argv.push_back(q.context);
  }
  if (q.sign_off) spec.argv.push_back("--sign-off");
  if (q.already_revised) spec.argv.push_back("--revised");
  for (auto& w : discuss_flags(settings, graph.discuss.fallback_backends))
    spec.argv.push_back(std::move(w));
  spec.cwd = run.ctx.worktree;
  spec.timeout = q.timeout;
  // The critics are discuss's own children: it ends them on its TERM, and
  // needs the time to.
  spec.kill_grace = std::chrono::seconds(20);
  spec.max_output_bytes = 1024 * 1024;
  spec.on_wait = q.on_wait;
  spec.stop_on_signal = true;
  run.journal.log("command_started", Json{{"command", "discuss"},
                                          {"round", q.id},
                                          {"argv", "devgraph discuss (round " + q.id + ")"}});
  auto r = run.runner.run(spec);
  run.journal.log("command_finished", Json{{"command", "discuss"},
                                           {"round", q.id},
                                           {"exit", r ? Json(r->exit_code) : Json(nullptr)},
                                           {"timed_out", r ? r->timed_out : false}});
  if (!r) return fail("discuss round " + q.id + " could not start: " + r.error().message);
  if (r->interrupted()) {
    run.dispatch.stop(r->interrupted_by);
    return fail(ErrorKind::interrupted, "stopped by " + stop_signal_name(r->interrupted_by));
  }
  std::optional<Json> result;
  if (auto line = agents::last_result_line(r->out))
    if (auto j = parse_json(*line, "RESULT_JSON"); j && j->is_object()) result = *j;
  const bool judged = r->exit_code == 0 || r->exit_code == 2;
  if (!judged || !result || !result->contains("verdict")) {
    std::string said = last_line(r->err);
    return fail("discuss round " + q.id + " failed" +
                (r->timed_out ? std::string(" (timed out)")
                              : " (exit " + std::to_string(r->exit_code) + ")") +
                (said.empty() ? "" : ": " + clip(said, 300)));
  }
  // The critics' spend, one ledger line per attempt, before the round is
  // taken as done: a kill between the two counts it twice, never not at all.
  int n = 0;
  for (const auto& c : result->value("critics", Json::array())) {
    for (const auto& a : c.value("attempts", Json::array())) {
      Json line = {{"handle",
                    "discuss/" + q.id + "/" + str_or(c, "perspective") + "/" + std::to_string(++n)},
                   {"persona", graph.discuss.persona},
                   {"cost_usd", a.value("cost_usd", 0.0)}};
      if (a.contains("tokens") && a["tokens"].is_number_integer()) line["tokens"] = a["tokens"];
      if (auto st = append_file(run.layout.ledger(), dump_py(line) + "\n"); !st)
        run.journal.log("file_not_written", Json{{"error", st.error().message}});
    }
  }
  DG_CHECK(make_directories(run.layout.discussions()));
  DG_CHECK(write_file_atomic(saved, dump_py(*result, 2) + "\n"));
  return *result;
}

std::string round_brief(const Json& result, const std::string& lead) {
  std::string items;
  for (const auto& a : result.value("action_items", Json::array()))
    if (a.is_string()) items += "- " + a.get<std::string>() + "\n";
  std::string out = lead;
  std::string record = str_or(result, "record");
  if (!record.empty()) out += " The whole discussion record is " + record + ".";
  if (!items.empty())
    out += " The critics' action items, most important first:\n" +
           fence_untrusted("critique action items", items);
  return out;
}

}  // namespace devgraph::bundle
