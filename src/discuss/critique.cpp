#include "discuss/critique.h"

#include <algorithm>
#include <cstdio>

#include "agents/headless.h"
#include "agents/runtime.h"
#include "proc/stop_signals.h"
#include "skill/skill.h"
#include "templates/render.h"
#include "util/args.h"
#include "util/fs.h"
#include "util/text.h"

namespace devgraph::discuss {
namespace {

constexpr int kExitUsage = 3;

Error usage(const std::string& why) {
  return fail(ErrorKind::usage, why, kExitUsage);
}

std::string report_lines(const DiscussPerspective& p) {
  std::string out;
  for (const auto& r : p.reports) {
    if (r == "risk_level")
      out += "- `risk_level`: the highest risk you found, `low`, `medium`, `high` or `critical`\n";
    else if (r == "missing_requirements")
      out +=
          "- `missing_requirements`: every requirement the artifact does not meet or mention, in "
          "the requirements' own words (an empty list when none is missing)\n";
  }
  return out.empty() ? std::string("- nothing more\n") : out;
}

// Text for one line of a record: a long text keeps its first 300 bytes.
std::string one_line(const std::string& text) {
  return devgraph::one_line(text, 300);
}

std::string seconds_text(long long ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", static_cast<double>(ms) / 1000.0);
  return buf;
}

}  // namespace

std::vector<std::string> backend_order(const std::vector<std::string>& first,
                                       const std::vector<std::string>& fallback) {
  std::vector<std::string> out;
  for (const auto* list : {&first, &fallback})
    for (const auto& b : *list)
      if (!b.empty() && std::find(out.begin(), out.end(), b) == out.end()) out.push_back(b);
  return out;
}

Expected<std::string> dispatch_text(const std::string& skill_dir,
                                    const DiscussPerspective& perspective, const std::string& round,
                                    const std::string& artifact, const std::string& context) {
  std::string focus;
  for (const auto& f : perspective.focus) focus += "- " + f + "\n";
  if (focus.empty()) focus = "- whatever your role looks at\n";
  templates::Values v{
      {"round", round},
      {"perspective", perspective.name},
      {"role", perspective.role},
      {"focus", focus},
      {"artifact", artifact},
      {"context_line", context.empty() ? std::string("There is no requirements file.")
                                       : "The requirements to check it against: `" + context + "`"},
      {"reports", report_lines(perspective)},
  };
  return templates::render_skill_template(skill_dir, "critique-dispatch", v);
}

Expected<Json> check_critique(const Json& result, const DiscussPerspective& perspective,
                              const Schema& answer_schema) {
  std::string status = json_str(result, "status");
  if (status != "DONE" && status != "DONE_WITH_CONCERNS")
    return fail("answered " + (status.empty() ? std::string("no status") : status) + ": " +
                one_line(json_str(result, "summary")));
  if (!result.contains("critique") || !result["critique"].is_object())
    return fail("the result carries no critique object");
  const Json& c = result["critique"];
  if (auto problems = answer_schema.validate(c); !problems.empty())
    return fail("the critique is not an answer: " + one_line(problems.front()));
  if (json_str(c, "perspective") != perspective.name)
    return fail("the critique is " + json_str(c, "perspective") + "'s, not " + perspective.name +
                "'s");
  for (const auto& field : perspective.reports)
    if (!c.contains(field)) return fail("the critique does not report " + field);
  return c;
}

Expected<CritiqueAnswer> critique(const CritiqueRequest& req) {
  auto skill = locate_skill(req.skill);
  if (!skill) return usage(skill.error().message);
  auto graph = Graph::load(*skill);
  if (!graph) return usage(graph.error().message);
  const DiscussRules& rules = graph->discuss;
  const DiscussPerspective* p = rules.perspective(req.perspective);
  if (!p) {
    std::vector<std::string> names;
    for (const auto& q : rules.perspectives) names.push_back(q.name);
    return usage("--perspective " + req.perspective + ": expected one of " + join(names, ", "));
  }
  if (!is_readable_file(req.artifact)) return usage(req.artifact + ": no such readable file");
  if (!req.context.empty() && !is_readable_file(req.context))
    return usage("--context " + req.context + ": no such readable file");
  if (req.context.empty() && p->reads_context)
    return usage("the " + p->name + " perspective needs the requirements: --context FILE");
  auto answer_schema = Schema::load(join_path(*skill, rules.answer_schema));
  if (!answer_schema) return usage(answer_schema.error().message);
  // --backends names them all; else the perspective's, then the fallbacks.
  std::vector<std::string> order = req.backends.empty()
                                       ? backend_order({p->backend}, rules.fallback_backends)
                                       : backend_order(req.backends, {});
  std::vector<agents::BackendKind> kinds;
  for (const auto& b : order) {
    auto k = agents::parse_backend(b);
    if (!k) return usage("backend " + b + ": expected one of " + agents::backend_choices());
    kinds.push_back(*k);
  }
  const std::string artifact = absolute_path(req.artifact);
  const std::string context = req.context.empty() ? std::string() : absolute_path(req.context);
  DG_TRY(std::string dispatch, dispatch_text(*skill, *p, req.round, artifact, context));
  DG_CHECK(make_directories(req.dir));
  DG_TRY(auto stops, StopSignals::watch());  // held while the personas run

  CritiqueAnswer answer;
  answer.perspective = p->name;
  answer.role = p->role;
  // The log's and the simulated agent's "bundle" is the perspective (a
  // scenario's {bundle} and "bundle" rules tell the critics apart).
  const std::string key = p->name;
  for (size_t i = 0; i < order.size(); ++i) {
    agents::RuntimeConfig cfg;
    cfg.backend = agents::headless_backend(
        graph->headless,
        agents::BackendFlags{kinds[i], kinds[i] == agents::BackendKind::claude ? req.agent_bin : "",
                             req.model, req.sim_scenario, req.agent_command});
    // A critic reads; whatever the graph lets other personas do.
    cfg.backend.allowed_tools = {"Read", "Grep", "Glob"};
    for (const char* t : {"Edit", "Write", "NotebookEdit", "Bash"})
      cfg.backend.disallowed_tools.push_back(t);
    cfg.backend.config_dir = join_path(req.dir, "cli-" + order[i]);
    cfg.backend.sim_state_dir = join_path(req.dir, "sim");
    cfg.backend.bundle = key;
    cfg.bundle = key;
    cfg.log_path = join_path(req.dir, "critique.log");
    cfg.prompt_dir = join_path(req.dir, "prompts");
    cfg.children_record = join_path(req.dir, "live-children");
    cfg.result_schema = result_schema_path(*skill);
    cfg.watch_stop_signals = true;
    agents::apply_headless_minutes(cfg, graph->headless.persona_timeout_minutes,
                                   graph->headless.api_retry_minutes);
    if (req.persona_timeout) cfg.persona_timeout = *req.persona_timeout;
    // A failing CLI is not tried again: the next backend answers, and a
    // critique waits for no provider's outage or usage limit.
    cfg.retry_budget = std::chrono::milliseconds(0);
    cfg.max_pause = std::chrono::milliseconds(0);
    CritiqueAttempt attempt;
    attempt.backend = order[i];
    agents::LaunchRequest launch;
    launch.persona = rules.persona;
    launch.dispatch = dispatch;
    launch.worktree = req.worktree.empty() ? absolute_path(".") : req.worktree;
    launch.run_dir = dirname_of(artifact);
    launch.skill_dir = *skill;
    launch.output_path = join_path(req.dir, order[i] + ".out");
    auto done = agents::run_to_completion(cfg, launch);
    if (!done && done.error().kind == ErrorKind::internal) {
      attempt.outcome = "launch_failed";
      attempt.reason = one_line(done.error().message);
      answer.attempts.push_back(attempt);
      continue;
    }
    if (!done && done.error().kind == ErrorKind::usage) return usage(done.error().message);
    if (!done) return done.error();
    attempt.outcome = std::string(agents::outcome_name(done->outcome));
    attempt.elapsed_ms = done->elapsed.count();
    attempt.cost_usd = done->cost_usd;
    attempt.tokens = done->tokens;
    if (done->outcome == agents::Outcome::result) {
      if (auto c = check_critique(done->result, *p, *answer_schema); c) {
        answer.answered = true;
        answer.backend = order[i];
        answer.critique = *c;
        answer.attempts.push_back(attempt);
        break;
      } else {
        attempt.outcome = "invalid_answer";
        attempt.reason = c.error().message;
      }
    } else {
      attempt.reason =
          one_line(done->error.empty() ? json_str(done->result, "summary") : done->error);
    }
    answer.attempts.push_back(attempt);
  }
  if (!answer.answered) {
    std::vector<std::string> why;
    for (const auto& a : answer.attempts) why.push_back(a.backend + ": " + a.reason);
    answer.reason = "every backend failed (" + join(why, "; ") + ")";
  }
  (void)stops;
  return answer;
}

Json to_json(const CritiqueAnswer& a) {
  Json attempts = Json::array();
  for (const auto& t : a.attempts)
    attempts.push_back(Json{{"backend", t.backend},
                            {"outcome", t.outcome},
                            {"reason", t.reason},
                            {"seconds", seconds_text(t.elapsed_ms)},
                            {"cost_usd", t.cost_usd},
                            {"tokens", t.tokens ? Json(*t.tokens) : Json()}});
  return Json{{"perspective", a.perspective}, {"role", a.role},         {"answered", a.answered},
              {"backend", a.backend},         {"critique", a.critique}, {"reason", a.reason},
              {"attempts", attempts}};
}

Expected<CritiqueAnswer> answer_from_json(const Json& j) {
  if (!j.is_object() || !j.contains("perspective") || !j["perspective"].is_string() ||
      !j.contains("answered") || !j["answered"].is_boolean())
    return fail("not a critique answer (perspective and answered are required)");
  CritiqueAnswer a;
  a.perspective = json_str(j, "perspective");
  a.role = json_str(j, "role");
  a.answered = j["answered"].get<bool>();
  a.backend = json_str(j, "backend");
  a.reason = json_str(j, "reason");
  if (j.contains("critique")) a.critique = j["critique"];
  if (a.answered && !a.critique.is_object()) return fail("an answered critique has no critique");
  if (j.contains("attempts") && j["attempts"].is_array())
    for (const auto& t : j["attempts"]) {
      if (!t.is_object()) continue;
      CritiqueAttempt at;
      at.backend = json_str(t, "backend");
      at.outcome = json_str(t, "outcome");
      at.reason = json_str(t, "reason");
      if (auto secs = parse_seconds(json_str(t, "seconds")))
        at.elapsed_ms = static_cast<long long>(*secs * 1000.0);
      if (t.contains("cost_usd") && t["cost_usd"].is_number())
        at.cost_usd = t["cost_usd"].get<double>();
      if (t.contains("tokens") && t["tokens"].is_number_integer())
        at.tokens = t["tokens"].get<long long>();
      a.attempts.push_back(at);
    }
  return a;
}

}  // namespace devgraph::discuss
