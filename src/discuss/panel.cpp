#include "discuss/panel.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <set>

#include "agents/backend.h"
#include "discuss/critique.h"
#include "discuss/rules.h"
#include "graph/graph.h"
#include "proc/stop_signals.h"
#include "proc/supervisor.h"
#include "skill/skill.h"
#include "util/fs.h"
#include "util/text.h"

namespace devgraph::discuss {
namespace {

constexpr int kExitUsage = 3;

Error usage(const std::string& why) {
  return fail(ErrorKind::usage, why, kExitUsage);
}

// A round id names files: letters, digits, '.', '_' and '-', not starting
// with '.'.
bool safe_round(const std::string& id) {
  if (id.empty() || id.size() > 100 || id[0] == '.') return false;
  return std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
  });
}

std::string base_name(const std::string& path) {
  auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

Status copy_into(const std::string& from, const std::string& to) {
  DG_TRY(std::string bytes, read_file(from));
  return write_file_atomic(to, bytes);
}

std::string seconds_text(std::chrono::milliseconds ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", static_cast<double>(ms.count()) / 1000.0);
  return buf;
}

struct Critic {
  const DiscussPerspective* perspective = nullptr;
  std::vector<std::string> backends;
  std::string answer_path;
  ChildId child = 0;
  std::optional<ChildExit> exit;
};

}  // namespace

Expected<PanelReport> run_panel(const PanelRequest& req) {
  auto skill = locate_skill(req.skill);
  if (!skill) return usage(skill.error().message);
  auto graph = Graph::load(*skill);
  if (!graph) return usage(graph.error().message);
  const DiscussRules& rules = graph->discuss;
  if (rules.perspectives.empty()) return usage(*skill + "/GRAPH.yaml has no discuss section");
  if (!safe_round(req.round))
    return usage("--round " + req.round +
                 ": use letters, digits, '.', '_' and '-' (it names the record's file)");
  if (!path_exists(req.artifact))
    return fail(ErrorKind::not_found, "artifact " + req.artifact + ": no such file");
  if (!is_readable_file(req.artifact))
    return fail(ErrorKind::not_found, "artifact " + req.artifact + ": not a readable file");
  if (!req.context.empty() && !is_readable_file(req.context))
    return usage("--context " + req.context + ": no such readable file");

  std::vector<std::string> names = req.perspectives;
  std::vector<std::string> left_out;
  if (names.empty())
    for (const auto& p : rules.perspectives) {
      // By default only: a perspective named on purpose needs its file.
      if (p.reads_context && req.context.empty()) {
        left_out.push_back(p.name +
                           ": no requirements file to check the artifact against (--context FILE)");
        continue;
      }
      names.push_back(p.name);
    }
  if (names.empty()) return usage("every perspective checks the requirements: give --context FILE");
  std::vector<std::string> known;
  for (const auto& p : rules.perspectives) known.push_back(p.name);
  std::set<std::string> seen;
  for (const auto& n : names) {
    if (!rules.perspective(n))
      return usage("--perspectives: " + n + " is not one of " + join(known, ", "));
    if (!seen.insert(n).second) return usage("--perspectives: " + n + " is named twice");
  }
  for (const auto& [p, b] : req.agent_map)
    if (!seen.count(p)) return usage("--agent-map: " + p + " is not a perspective of this round");
  std::vector<std::string> fallback = req.fallback.value_or(rules.fallback_backends);

  std::vector<Critic> critics;
  for (const auto& n : names) {
    Critic c;
    c.perspective = rules.perspective(n);
    if (c.perspective->reads_context && req.context.empty())
      return usage("the " + n + " perspective checks the requirements: give --context FILE");
    std::string first = c.perspective->backend;
    if (req.agent) first = *req.agent;
    if (auto m = req.agent_map.find(n); m != req.agent_map.end()) first = m->second;
    c.backends = backend_order({first}, fallback);
    for (const auto& b : c.backends)
      if (!agents::parse_backend(b))
        return usage("backend " + b + ": expected one of " + agents::backend_choices());
    critics.push_back(std::move(c));
  }

  // The round's own copies of what the critics read.
  const std::string out = absolute_path(req.out.empty() ? std::string(".") : req.out);
  const std::string dir = join_path(out, "discussions/" + req.round);
  const std::string input = join_path(dir, "input");
  DG_CHECK(make_directories(input));
  const std::string artifact = join_path(input, base_name(req.artifact));
  DG_CHECK(copy_into(req.artifact, artifact));
  std::string context;
  if (!req.context.empty()) {
    context = join_path(input, "context-" + base_name(req.context));
    if (context == artifact) context = join_path(input, "context-of-" + base_name(req.context));
    DG_CHECK(copy_into(req.context, context));
  }

  DG_TRY(ChildLoop loop, ChildLoop::create());
  DG_CHECK(loop.watch_stop_signals());
  const auto started = loop.clock().steady();
  double attempt_s = req.persona_timeout_seconds.value_or(
      60.0 * std::max(1, graph->headless.persona_timeout_minutes));
  const std::vector<std::string> env = agents::current_environment();
  for (auto& c : critics) {
    const std::string name = c.perspective->name;
    c.answer_path = join_path(dir, name + ".json");
    if (path_exists(c.answer_path)) ::unlink(c.answer_path.c_str());  // an earlier round's
    std::vector<std::string> argv = {self_executable(),
                                     "critique",
                                     artifact,
                                     "--perspective",
                                     name,
                                     "--round",
                                     req.round,
                                     "--out",
                                     c.answer_path,
                                     "--dir",
                                     join_path(dir, name),
                                     "--backends",
                                     join(c.backends, ","),
                                     "--skill",
                                     *skill};
    if (c.perspective->reads_context) {
      argv.push_back("--context");
      argv.push_back(context);
    }
    auto add = [&](const char* flag, const std::string& value) {
      argv.push_back(flag);
      argv.push_back(value);
    };
    if (!req.agent_bin.empty()) add("--claude-bin", req.agent_bin);
    if (req.model) add("--model", *req.model);
    if (!req.sim_scenario.empty()) add("--sim-scenario", absolute_path(req.sim_scenario));
    if (req.agent_command) add("--agent-command", *req.agent_command);
    if (req.persona_timeout_seconds)
      add("--persona-timeout-seconds", std::to_string(*req.persona_timeout_seconds));
    ChildSpec spec;
    spec.argv = std::move(argv);
    spec.env = env;
    // Every backend's attempt (and its one resume for a missing result),
    // and a margin.
    spec.timeout = std::chrono::milliseconds(static_cast<long long>(
        1000.0 * (static_cast<double>(c.backends.size()) * 2 * attempt_s + 60.0)));
    spec.max_output_bytes = 1 << 20;
    DG_TRY(c.child, loop.spawn(spec));
  }

  int stopped_by = 0;
  size_t running = critics.size();
  while (running > 0) {
    auto e = loop.wait();
    if (!e) break;
    if (auto* stop = std::get_if<StopRequested>(&*e)) {
      if (!stopped_by) stopped_by = stop->signal;
      for (auto& c : critics)
        if (!c.exit) loop.terminate(c.child);
    } else if (auto* ex = std::get_if<ChildExit>(&*e)) {
      for (auto& c : critics)
        if (c.child == ex->id) {
          c.exit = *ex;
          --running;
        }
    }
  }
  if (stopped_by)
    return fail(ErrorKind::interrupted,
                "stopped by " + stop_signal_name(stopped_by) + "; no record written",
                128 + stopped_by);
  const auto wall =
      std::chrono::duration_cast<std::chrono::milliseconds>(loop.clock().steady() - started);

  std::vector<Perspective> perspectives;
  Json timings = Json::array();
  for (const auto& c : critics) {
    const std::string& name = c.perspective->name;
    const std::string& role = c.perspective->role;
    Json t = {{"perspective", name},
              {"seconds", c.exit ? seconds_text(c.exit->elapsed) : std::string()}};
    std::optional<CritiqueAnswer> answer;
    std::string why;
    if (auto text = load_json_file(c.answer_path)) {
      if (auto a = answer_from_json(*text); a)
        answer = *a;
      else
        why = "its answer cannot be read: " + a.error().message;
    } else if (c.exit) {
      why = c.exit->timed_out
                ? std::string("the critic ran out of time")
                : "the critic ended with exit " + std::to_string(c.exit->exit_code) +
                      (c.exit->err.empty() ? std::string() : ": " + last_line(c.exit->err));
    } else {
      why = "the critic never ended";
    }
    // What each attempt cost, for whoever counts the spend (a bundle's
    // ledger, when the round is a gate).
    if (answer) {
      Json attempts = Json::array();
      for (const auto& at : answer->attempts) {
        Json a = {{"backend", at.backend}, {"outcome", at.outcome}, {"cost_usd", at.cost_usd}};
        if (at.tokens) a["tokens"] = *at.tokens;
        attempts.push_back(std::move(a));
      }
      t["attempts"] = std::move(attempts);
    }
    if (answer && answer->answered) {
      t["backend"] = answer->backend;
      auto p = parse_answer(answer->critique, name, role, c.perspective->reports);
      if (p) {
        perspectives.push_back(*p);
      } else {
        perspectives.push_back(
            failed_perspective(name, role, p.error().message, c.perspective->reports));
      }
    } else {
      perspectives.push_back(
          failed_perspective(name, role, answer ? answer->reason : why, c.perspective->reports));
    }
    timings.push_back(std::move(t));
  }

  Round round{req.round, req.final_sign_off, req.already_revised, left_out};
  Outcome outcome = discuss(perspectives, round);
  PanelReport report;
  report.record_path = join_path(out, "discussions/" + req.round + "-discussion.md");
  DG_CHECK(write_file_atomic(report.record_path,
                             render_record(round, req.artifact, perspectives, outcome)));
  report.result = result_json(round, req.artifact, perspectives, outcome, report.record_path);
  report.result["critics"] = timings;
  report.result["wall_seconds"] = seconds_text(wall);
  report.exit_code = outcome.consensus.reached ? 0 : 2;
  return report;
}

}  // namespace devgraph::discuss
