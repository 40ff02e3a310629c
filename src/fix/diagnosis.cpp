#include "fix/diagnosis.h"

#include <algorithm>

#include "util/text.h"

namespace devgraph::fix {

namespace {

constexpr std::string_view kEmDash = "\xE2\x80\x94";

// Trimmed, each whitespace run one space: free text on one line.
std::string tidy(std::string_view text) {
  return squeeze_spaces(text);
}

bool could_not_run(const Validation& v) {
  return v.timed_out || v.exit_code == 126 || v.exit_code == 127;
}

std::string validation_evidence(const Validation& v) {
  std::string what = v.timed_out ? "timed out" : "exited " + std::to_string(v.exit_code);
  std::string out = "`" + tidy(v.command) + "` " + what;
  std::string tail = tidy(v.output_tail);
  if (!tail.empty()) out += ": " + tail;
  return out;
}

Error bad(const std::string& what) {
  return fail(ErrorKind::usage, "diagnosis: " + what);
}

// The strings of the array at `key`, each tidied; a missing key is none.
Expected<std::vector<std::string>> text_list(const Json& object, const char* key) {
  std::vector<std::string> out;
  if (!object.contains(key) || object.at(key).is_null()) return out;
  const Json& list = object.at(key);
  if (!list.is_array()) return bad(std::string(key) + " must be an array of strings");
  for (size_t i = 0; i < list.size(); ++i) {
    const Json& item = list.at(i);
    if (!item.is_string())
      return bad(std::string(key) + "[" + std::to_string(i) + "] must be a string, got " +
                 dump_py(item));
    std::string text = tidy(item.get<std::string>());
    if (text.empty()) return bad(std::string(key) + "[" + std::to_string(i) + "] is empty");
    out.push_back(std::move(text));
  }
  return out;
}

Status at_least(const std::vector<std::string>& items, size_t n, const char* key, Cause cause) {
  if (items.size() >= n) return {};
  return bad(std::string(key) + " needs " + (n == 1 ? "one or more" : "two or more") +
             " entries for " + std::string(cause_name(cause)) + ", got " +
             std::to_string(items.size()));
}

}  // namespace

std::string_view cause_name(Cause c) {
  switch (c) {
    case Cause::model_capacity:
      return "model-capacity";
    case Cause::missing_context:
      return "missing-context";
    case Cause::ambiguous_spec:
      return "ambiguous-spec";
    case Cause::env_tool_failure:
      return "env-tool-failure";
    case Cause::overdesigned_plan:
      return "overdesigned-plan";
  }
  return "model-capacity";
}

std::optional<Cause> cause_from(std::string_view name) {
  for (auto c : kCauses)
    if (cause_name(c) == name) return c;
  return std::nullopt;
}

std::optional<Diagnosis> diagnose_by_evidence(const std::vector<Attempt>& attempts) {
  if (attempts.empty()) return std::nullopt;
  const Attempt& last = attempts.back();
  std::vector<std::string> broken;
  for (const auto& v : last.validations)
    if (could_not_run(v)) broken.push_back(validation_evidence(v));
  if (!broken.empty()) {
    Diagnosis d;
    d.cause = Cause::env_tool_failure;
    d.by_code = true;
    d.evidence = "a validation command could not run: " + join(broken, "; ");
    return d;
  }
  if (last.fixer_status == "NEEDS_CONTEXT" || !last.missing_context.empty()) {
    Diagnosis d;
    d.cause = Cause::missing_context;
    d.by_code = true;
    for (const auto& item : last.missing_context) {
      std::string text = tidy(item);
      if (!text.empty()) d.needed.push_back(std::move(text));
    }
    d.evidence = d.needed.empty() ? "the fixer answered NEEDS_CONTEXT without saying what it needs"
                                  : "the fixer asked for: " + join(d.needed, "; ");
    return d;
  }
  return std::nullopt;
}

bool new_evidence(const std::vector<Attempt>& attempts) {
  if (attempts.empty()) return false;
  if (attempts.size() == 1) return true;
  const Attempt& last = attempts.back();
  const Attempt& before = attempts[attempts.size() - 2];
  if (!same_gaps(last.gaps_after, before.gaps_after)) return true;
  // A command run both times whose outcome changed.
  for (const auto& now : last.validations) {
    auto then = std::find_if(before.validations.begin(), before.validations.end(),
                             [&](const Validation& v) { return v.command == now.command; });
    if (then == before.validations.end()) continue;
    if (then->exit_code != now.exit_code || then->timed_out != now.timed_out) return true;
  }
  return false;
}

Expected<Diagnosis> check_proposal(const Json& diagnosis, bool has_new_evidence) {
  if (!diagnosis.is_object()) return bad("must be a JSON object, got " + dump_py(diagnosis));
  Diagnosis d;
  if (!diagnosis.contains("cause")) return bad("cause is missing");
  const Json& cause = diagnosis.at("cause");
  auto parsed = cause.is_string() ? cause_from(cause.get<std::string>()) : std::nullopt;
  if (!parsed)
    return bad(
        "cause must be model-capacity, missing-context, ambiguous-spec, "
        "env-tool-failure or overdesigned-plan, got " +
        dump_py(cause));
  d.cause = *parsed;

  if (!diagnosis.contains("new_evidence")) return bad("new_evidence is missing");
  const Json& evidence = diagnosis.at("new_evidence");
  if (!evidence.is_string()) return bad("new_evidence must be text, got " + dump_py(evidence));
  d.evidence = tidy(evidence.get<std::string>());
  if (d.evidence.empty()) return bad("new_evidence is empty");

  if (!diagnosis.contains("rules_out")) return bad("rules_out is missing");
  const Json& rules_out = diagnosis.at("rules_out");
  if (!rules_out.is_object()) return bad("rules_out must be an object of cause: reason");
  for (auto other : kCauses) {
    if (other == d.cause) continue;
    const std::string name(cause_name(other));
    if (!rules_out.contains(name)) return bad("rules_out." + name + " is missing");
    const Json& reason = rules_out.at(name);
    std::string text = reason.is_string() ? tidy(reason.get<std::string>()) : "";
    if (text.empty()) return bad("rules_out." + name + " needs a reason");
    d.rules_out[other] = std::move(text);
  }

  DG_TRY(d.readings, text_list(diagnosis, "readings"));
  DG_TRY(d.machinery, text_list(diagnosis, "machinery"));
  DG_TRY(d.needed, text_list(diagnosis, "needed"));
  if (d.cause == Cause::ambiguous_spec) {
    DG_CHECK(at_least(d.readings, 2, "readings", d.cause));
  }
  if (d.cause == Cause::overdesigned_plan) {
    DG_CHECK(at_least(d.machinery, 1, "machinery", d.cause));
  }
  if (d.cause == Cause::missing_context) {
    DG_CHECK(at_least(d.needed, 1, "needed", d.cause));
  }
  if (d.cause == Cause::model_capacity && !has_new_evidence)
    return fail(ErrorKind::refused,
                "diagnosis: model-capacity refused: no new evidence since the attempt before "
                "(the same blocking gaps, the same validation exit codes)");
  return d;
}

Raise next_raise(const std::map<std::string, std::vector<std::string>>& ladder,
                 const std::string& backend, const std::string& current, int raises_used,
                 int max_raises) {
  Raise r;
  r.from = current;
  auto it = ladder.find(backend);
  if (it == ladder.end() || it->second.empty()) {
    r.why_not = "backend " + backend + " has no escalation ladder (GRAPH.yaml escalation.ladder)";
    return r;
  }
  const auto& steps = it->second;
  auto at = std::find(steps.begin(), steps.end(), current);
  // Off the ladder counts as below its first step.
  size_t next = at == steps.end() ? 0 : static_cast<size_t>(at - steps.begin()) + 1;
  if (next >= steps.size()) {
    r.why_not = "backend " + backend + " is already at the top of its ladder (" + current + ")";
    return r;
  }
  if (raises_used >= max_raises) {
    r.needs_person = true;
    r.why_not = "the escalation cap is reached (" + std::to_string(raises_used) + "/" +
                std::to_string(max_raises) + " raises): a person's recorded decision is needed";
    return r;
  }
  r.allowed = true;
  r.to = steps[next];
  return r;
}

std::string render_record(const RecordInput& input) {
  std::string out = "# " + tidy(input.subject) + ": stopped, " + tidy(input.why_stopped) +
                    "; the work stays in progress\n";

  out += "\n## Remaining gaps\n";
  if (input.remaining.empty()) out += "- none\n";
  for (const auto& g : input.remaining) out += "- " + render_gap(g) + "\n";

  out += "\n## Cause\n";
  if (!input.diagnosis) {
    out += "not diagnosed\n";
  } else {
    const Diagnosis& d = *input.diagnosis;
    out += std::string(cause_name(d.cause)) +
           (d.by_code ? " (decided by the evidence)" : " (proposed by the diagnosis persona)") +
           "\n";
    auto list = [&out](const char* title, const std::vector<std::string>& items) {
      if (items.empty()) return;
      out += std::string("\n") + title + ":\n";
      for (const auto& item : items) out += "- " + tidy(item) + "\n";
    };
    list("Readings", d.readings);
    list("Machinery", d.machinery);
    list("Needed", d.needed);
    if (!d.rules_out.empty()) {
      out += "\nRuled out:\n";
      for (const auto& [cause, reason] : d.rules_out)
        out += "- " + std::string(cause_name(cause)) + ": " + tidy(reason) + "\n";
    }
  }

  out += "\n## New evidence\n";
  std::string evidence = input.diagnosis ? tidy(input.diagnosis->evidence) : "";
  out += (evidence.empty() ? "none" : evidence) + "\n";

  out += "\n## Route\n";
  std::string route = tidy(input.route);
  out += (route.empty() ? "none" : route) + "\n";

  out += "\n## Budget\n";
  out += "attempts=" + std::to_string(input.attempts) + "/" + std::to_string(input.max_attempts) +
         "; escalations=" + std::to_string(input.escalations) + "/" +
         std::to_string(input.max_escalations) + "\n";

  if (input.appeal) {
    const Appeal& a = *input.appeal;
    const std::string dash = " " + std::string(kEmDash) + " ";
    out += "\n## Appeal\n";
    out += "- Reviewer: " + tidy(a.reviewer_verdict) + dash + tidy(a.reviewer_evidence) + "\n";
    out +=
        "- Final gate: " + tidy(a.final_gate_verdict) + dash + tidy(a.final_gate_evidence) + "\n";
    out += "- Contested criterion: " + tidy(a.criterion) + "\n";
  }
  return out;
}

}  // namespace devgraph::fix
