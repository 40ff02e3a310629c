#include "fix/diagnosis.h"

#include <gtest/gtest.h>

namespace devgraph::fix {
namespace {

Gap gap(Severity s, std::string file, std::optional<int> line, std::string description) {
  Gap g;
  g.severity = s;
  g.file = std::move(file);
  g.line = line;
  g.description = std::move(description);
  return g;
}

const Gap kLeak = gap(Severity::high, "src/a.cpp", 12, "leaks the handle");
const Gap kStub = gap(Severity::critical, "src/b.cpp", 3, "stub returns ok");
const Gap kNaming = gap(Severity::medium, "src/c.cpp", 8, "naming");

Validation validation(std::string command, int exit_code, bool timed_out = false,
                      std::string tail = "") {
  Validation v;
  v.command = std::move(command);
  v.exit_code = exit_code;
  v.timed_out = timed_out;
  v.output_tail = std::move(tail);
  return v;
}

Attempt attempt(std::vector<Gap> after, std::vector<Validation> validations = {},
                std::string status = "DONE") {
  Attempt a;
  a.gaps_before = {kLeak};
  a.gaps_after = std::move(after);
  a.fixer_status = std::move(status);
  a.validations = std::move(validations);
  return a;
}

// A complete proposal for `cause`, ruling out the four others.
Json proposal(Cause cause) {
  Json rules = Json::object();
  for (auto c : kCauses)
    if (c != cause) rules[std::string(cause_name(c))] = "not it: " + std::string(cause_name(c));
  Json d = {{"cause", std::string(cause_name(cause))},
            {"new_evidence", "the second attempt fixed the leak but broke the build"},
            {"rules_out", rules}};
  if (cause == Cause::ambiguous_spec) d["readings"] = {"retry forever", "retry three times"};
  if (cause == Cause::overdesigned_plan) d["machinery"] = {"a plugin registry for one plugin"};
  if (cause == Cause::missing_context) d["needed"] = {"the wire format of v2"};
  return d;
}

TEST(FixDiagnosis, CauseNames) {
  const std::pair<Cause, std::string> rows[] = {
      {Cause::model_capacity, "model-capacity"},
      {Cause::missing_context, "missing-context"},
      {Cause::ambiguous_spec, "ambiguous-spec"},
      {Cause::env_tool_failure, "env-tool-failure"},
      {Cause::overdesigned_plan, "overdesigned-plan"},
  };
  for (const auto& [cause, name] : rows) {
    EXPECT_EQ(cause_name(cause), name);
    EXPECT_EQ(cause_from(name), cause);
  }
  EXPECT_EQ(cause_from("model_capacity"), std::nullopt);
  EXPECT_EQ(cause_from("Model-Capacity"), std::nullopt);
  EXPECT_EQ(cause_from(""), std::nullopt);
}

TEST(FixDiagnosis, EvidenceDecidesEnvToolFailureFirst) {
  struct Row {
    Validation v;
    bool env;
  };
  const Row rows[] = {
      {validation("ctest", 127, false, "ctest: not found"), true},
      {validation("./run.sh", 126, false, "Permission denied"), true},
      {validation("make test", 0, true, "still running"), true},
      {validation("make test", 1, false, "1 test failed"), false},
      {validation("make test", 125, false, ""), false},
      {validation("make test", 128, false, ""), false},
      {validation("make test", 0, false, ""), false},
  };
  for (const auto& row : rows) {
    // Even a fixer asking for context comes second to a tool that could not run.
    Attempt a = attempt({kLeak}, {validation("lint", 0), row.v}, "NEEDS_CONTEXT");
    a.missing_context = {"the spec"};
    auto d = diagnose_by_evidence({a});
    ASSERT_TRUE(d.has_value()) << row.v.command;
    EXPECT_TRUE(d->by_code);
    if (row.env) {
      EXPECT_EQ(d->cause, Cause::env_tool_failure) << row.v.exit_code;
      EXPECT_NE(d->evidence.find("`" + row.v.command + "`"), std::string::npos) << d->evidence;
      EXPECT_NE(d->evidence.find(row.v.output_tail), std::string::npos) << d->evidence;
    } else {
      EXPECT_EQ(d->cause, Cause::missing_context) << row.v.exit_code;
    }
  }
  auto d = diagnose_by_evidence({attempt({kLeak}, {validation("ctest", 127, false, "a\nb")})});
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->evidence, "a validation command could not run: `ctest` exited 127: a b");
  auto t = diagnose_by_evidence({attempt({kLeak}, {validation("ctest", 0, true)})});
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->evidence, "a validation command could not run: `ctest` timed out");
}

TEST(FixDiagnosis, OnlyTheLastAttemptCounts) {
  std::vector<Attempt> attempts = {attempt({kLeak}, {validation("ctest", 127)}, "NEEDS_CONTEXT"),
                                   attempt({kLeak}, {validation("ctest", 1)})};
  EXPECT_FALSE(diagnose_by_evidence(attempts).has_value());
  EXPECT_FALSE(diagnose_by_evidence({}).has_value());
}

TEST(FixDiagnosis, EvidenceDecidesMissingContext) {
  Attempt asked = attempt({kLeak}, {}, "NEEDS_CONTEXT");
  asked.missing_context = {"the v2 wire format", "which branch to target"};
  auto d = diagnose_by_evidence({asked});
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->cause, Cause::missing_context);
  EXPECT_TRUE(d->by_code);
  EXPECT_EQ(d->needed, asked.missing_context);
  EXPECT_EQ(d->evidence, "the fixer asked for: the v2 wire format; which branch to target");

  Attempt listed = attempt({kLeak}, {}, "DONE_WITH_CONCERNS");
  listed.missing_context = {"the schema"};
  auto l = diagnose_by_evidence({listed});
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(l->cause, Cause::missing_context);

  auto bare = diagnose_by_evidence({attempt({kLeak}, {}, "NEEDS_CONTEXT")});
  ASSERT_TRUE(bare.has_value());
  EXPECT_EQ(bare->cause, Cause::missing_context);
  EXPECT_TRUE(bare->needed.empty());

  for (std::string status : {"DONE", "BLOCKED", "DONE_WITH_CONCERNS", ""}) {
    EXPECT_FALSE(
        diagnose_by_evidence({attempt({kLeak}, {validation("ctest", 1)}, status)}).has_value())
        << status;
  }
}

TEST(FixDiagnosis, NewEvidence) {
  struct Row {
    std::string name;
    std::vector<Attempt> attempts;
    bool want;
  };
  const Row rows[] = {
      {"none", {}, false},
      {"one attempt", {attempt({kLeak})}, true},
      {"identical gaps", {attempt({kLeak}), attempt({kLeak})}, false},
      {"same key, moved line and severity",
       {attempt({kLeak}), attempt({gap(Severity::critical, "src/a.cpp", 40, "Leaks the handle.")})},
       false},
      {"only a medium gap changed", {attempt({kLeak}), attempt({kLeak, kNaming})}, false},
      {"a blocking gap added", {attempt({kLeak}), attempt({kLeak, kStub})}, true},
      {"a blocking gap fixed", {attempt({kLeak, kStub}), attempt({kStub})}, true},
      {"exit code changed",
       {attempt({kLeak}, {validation("ctest", 1)}), attempt({kLeak}, {validation("ctest", 2)})},
       true},
      {"timed out now",
       {attempt({kLeak}, {validation("ctest", 1)}),
        attempt({kLeak}, {validation("ctest", 1, true)})},
       true},
      {"same exit code",
       {attempt({kLeak}, {validation("ctest", 1, false, "x")}),
        attempt({kLeak}, {validation("ctest", 1, false, "y")})},
       false},
      {"a command run only once",
       {attempt({kLeak}, {validation("ctest", 1)}), attempt({kLeak}, {validation("lint", 2)})},
       false},
      {"only the last two count", {attempt({kStub}), attempt({kLeak}), attempt({kLeak})}, false},
  };
  for (const auto& row : rows) EXPECT_EQ(new_evidence(row.attempts), row.want) << row.name;
}

TEST(FixDiagnosis, ProposalAcceptedForEachCause) {
  for (auto cause : kCauses) {
    auto d = check_proposal(proposal(cause), true);
    ASSERT_TRUE(d) << cause_name(cause) << ": " << d.error().message;
    EXPECT_EQ(d->cause, cause);
    EXPECT_FALSE(d->by_code);
    EXPECT_EQ(d->evidence, "the second attempt fixed the leak but broke the build");
    EXPECT_EQ(d->rules_out.size(), 4u);
    EXPECT_EQ(d->rules_out.count(cause), 0u);
  }
  auto spec = check_proposal(proposal(Cause::ambiguous_spec), false);
  ASSERT_TRUE(spec) << spec.error().message;
  EXPECT_EQ(spec->readings, (std::vector<std::string>{"retry forever", "retry three times"}));
  auto plan = check_proposal(proposal(Cause::overdesigned_plan), false);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->machinery, std::vector<std::string>{"a plugin registry for one plugin"});
  auto context = check_proposal(proposal(Cause::missing_context), false);
  ASSERT_TRUE(context);
  EXPECT_EQ(context->needed, std::vector<std::string>{"the wire format of v2"});
  EXPECT_TRUE(check_proposal(proposal(Cause::env_tool_failure), false));
}

TEST(FixDiagnosis, ModelCapacityNeedsNewEvidence) {
  auto refused = check_proposal(proposal(Cause::model_capacity), false);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, ErrorKind::refused);
  EXPECT_NE(refused.error().message.find("no new evidence"), std::string::npos);
  EXPECT_NE(refused.error().message.find("model-capacity"), std::string::npos);
  EXPECT_EQ(refused.error().message.find('\n'), std::string::npos);
  EXPECT_TRUE(check_proposal(proposal(Cause::model_capacity), true));
}

TEST(FixDiagnosis, ProposalFieldsMissingAreNamed) {
  struct Row {
    std::string name;
    Json proposal;
    std::string message;
  };
  auto without = [](Cause cause, const char* key) {
    Json d = proposal(cause);
    d.erase(key);
    return d;
  };
  auto with = [](Cause cause, const char* key, Json value) {
    Json d = proposal(cause);
    d[key] = std::move(value);
    return d;
  };
  auto rules_without = [](Cause cause, Cause other) {
    Json d = proposal(cause);
    d["rules_out"].erase(std::string(cause_name(other)));
    return d;
  };
  auto rules_with = [](Cause cause, Cause other, Json reason) {
    Json d = proposal(cause);
    d["rules_out"][std::string(cause_name(other))] = std::move(reason);
    return d;
  };
  const Row rows[] = {
      {"not an object", Json::array(), "must be a JSON object"},
      {"no cause", without(Cause::ambiguous_spec, "cause"), "cause is missing"},
      {"unknown cause", with(Cause::ambiguous_spec, "cause", "bad-luck"), "cause must be"},
      {"cause not text", with(Cause::ambiguous_spec, "cause", 3), "cause must be"},
      {"no new_evidence", without(Cause::ambiguous_spec, "new_evidence"),
       "new_evidence is missing"},
      {"new_evidence empty", with(Cause::ambiguous_spec, "new_evidence", " "),
       "new_evidence is empty"},
      {"new_evidence not text", with(Cause::ambiguous_spec, "new_evidence", Json::array()),
       "new_evidence must be text"},
      {"no rules_out", without(Cause::ambiguous_spec, "rules_out"), "rules_out is missing"},
      {"rules_out not an object", with(Cause::ambiguous_spec, "rules_out", Json::array()),
       "rules_out must be an object"},
      {"model-capacity not ruled out", rules_without(Cause::ambiguous_spec, Cause::model_capacity),
       "rules_out.model-capacity is missing"},
      {"missing-context not ruled out",
       rules_without(Cause::ambiguous_spec, Cause::missing_context),
       "rules_out.missing-context is missing"},
      {"env-tool-failure not ruled out",
       rules_without(Cause::ambiguous_spec, Cause::env_tool_failure),
       "rules_out.env-tool-failure is missing"},
      {"overdesigned-plan not ruled out",
       rules_without(Cause::ambiguous_spec, Cause::overdesigned_plan),
       "rules_out.overdesigned-plan is missing"},
      {"ambiguous-spec not ruled out", rules_without(Cause::model_capacity, Cause::ambiguous_spec),
       "rules_out.ambiguous-spec is missing"},
      {"empty reason", rules_with(Cause::ambiguous_spec, Cause::model_capacity, "  "),
       "rules_out.model-capacity needs a reason"},
      {"reason not text", rules_with(Cause::ambiguous_spec, Cause::model_capacity, true),
       "rules_out.model-capacity needs a reason"},
      {"no readings", without(Cause::ambiguous_spec, "readings"), "readings needs two or more"},
      {"one reading", with(Cause::ambiguous_spec, "readings", {"only one"}),
       "readings needs two or more"},
      {"a reading not text", with(Cause::ambiguous_spec, "readings", {"a", 2}),
       "readings[1] must be a string"},
      {"a reading empty", with(Cause::ambiguous_spec, "readings", {"a", ""}),
       "readings[1] is empty"},
      {"no machinery", without(Cause::overdesigned_plan, "machinery"),
       "machinery needs one or more"},
      {"machinery empty", with(Cause::overdesigned_plan, "machinery", Json::array()),
       "machinery needs one or more"},
      {"no needed", without(Cause::missing_context, "needed"), "needed needs one or more"},
      {"needed not an array", with(Cause::missing_context, "needed", "the spec"),
       "needed must be an array"},
  };
  for (const auto& row : rows) {
    auto d = check_proposal(row.proposal, true);
    ASSERT_FALSE(d) << row.name;
    EXPECT_EQ(d.error().kind, ErrorKind::usage) << row.name;
    EXPECT_NE(d.error().message.find(row.message), std::string::npos)
        << row.name << ": " << d.error().message;
    EXPECT_EQ(d.error().message.find('\n'), std::string::npos) << row.name;
  }
}

TEST(FixDiagnosis, NextRaise) {
  const std::map<std::string, std::vector<std::string>> ladder = {
      {"claude", {"sonnet", "opus"}},
      {"codex", {"low", "medium", "high"}},
      {"empty", {}},
  };
  struct Row {
    std::string name, backend, current;
    int used, max;
    bool allowed;
    std::string to;
    bool needs_person;
    std::string why;  // a part of why_not
  };
  const Row rows[] = {
      {"one step up", "codex", "low", 0, 2, true, "medium", false, ""},
      {"second step", "codex", "medium", 1, 2, true, "high", false, ""},
      {"off the ladder", "codex", "xhigh-preview", 0, 2, true, "low", false, ""},
      {"none set", "claude", "", 0, 2, true, "sonnet", false, ""},
      {"at the top", "claude", "opus", 0, 2, false, "", false, "top of its ladder"},
      {"at the top and capped", "codex", "high", 2, 2, false, "", false, "top of its ladder"},
      {"no ladder", "gemini", "pro", 0, 2, false, "", false, "no escalation ladder"},
      {"an empty ladder", "empty", "", 0, 2, false, "", false, "no escalation ladder"},
      {"cap reached", "codex", "low", 2, 2, false, "", true, "2/2"},
      {"cap passed", "codex", "low", 3, 2, false, "", true, "3/2"},
      {"no raises allowed", "claude", "sonnet", 0, 0, false, "", true, "0/0"},
  };
  for (const auto& row : rows) {
    Raise r = next_raise(ladder, row.backend, row.current, row.used, row.max);
    EXPECT_EQ(r.allowed, row.allowed) << row.name;
    EXPECT_EQ(r.from, row.current) << row.name;
    EXPECT_EQ(r.to, row.to) << row.name;
    EXPECT_EQ(r.needs_person, row.needs_person) << row.name;
    if (row.allowed) {
      EXPECT_TRUE(r.why_not.empty()) << row.name;
    } else {
      EXPECT_NE(r.why_not.find(row.why), std::string::npos) << row.name << ": " << r.why_not;
    }
  }
}

RecordInput full_input() {
  RecordInput in;
  in.subject = "bundle b1";
  in.why_stopped = "fix loop exhausted (2/2)";
  in.remaining = {kLeak, gap(Severity::low, "docs/x.md", std::nullopt, "typo\nin heading")};
  Diagnosis d;
  d.cause = Cause::ambiguous_spec;
  d.evidence = "attempt 2 fixed the retry count the other way";
  d.readings = {"retry forever", "retry three times"};
  d.rules_out = {{Cause::overdesigned_plan, "the plan is two functions"},
                 {Cause::model_capacity, "both attempts built and passed"},
                 {Cause::env_tool_failure, "every command ran"},
                 {Cause::missing_context, "the fixer asked for nothing"}};
  in.diagnosis = d;
  in.route = "ask the spec's author which reading holds";
  in.attempts = 2;
  in.max_attempts = 2;
  in.escalations = 1;
  in.max_escalations = 2;
  Appeal a;
  a.reviewer_verdict = "FIX-FIRST";
  a.reviewer_evidence = "src/a.cpp:12 leaks the handle";
  a.final_gate_verdict = "SHIP";
  a.final_gate_evidence = "the handle is closed by the guard at src/a.cpp:30";
  a.criterion = "no resource leaks";
  in.appeal = a;
  return in;
}

TEST(FixDiagnosis, RenderRecordFull) {
  const std::string want =
      "# bundle b1: stopped, fix loop exhausted (2/2); the work stays in progress\n"
      "\n"
      "## Remaining gaps\n"
      "- [HIGH] leaks the handle \xE2\x80\x94 src/a.cpp:12\n"
      "- [LOW] typo in heading \xE2\x80\x94 docs/x.md\n"
      "\n"
      "## Cause\n"
      "ambiguous-spec (proposed by the diagnosis persona)\n"
      "\n"
      "Readings:\n"
      "- retry forever\n"
      "- retry three times\n"
      "\n"
      "Ruled out:\n"
      "- model-capacity: both attempts built and passed\n"
      "- missing-context: the fixer asked for nothing\n"
      "- env-tool-failure: every command ran\n"
      "- overdesigned-plan: the plan is two functions\n"
      "\n"
      "## New evidence\n"
      "attempt 2 fixed the retry count the other way\n"
      "\n"
      "## Route\n"
      "ask the spec's author which reading holds\n"
      "\n"
      "## Budget\n"
      "attempts=2/2; escalations=1/2\n"
      "\n"
      "## Appeal\n"
      "- Reviewer: FIX-FIRST \xE2\x80\x94 src/a.cpp:12 leaks the handle\n"
      "- Final gate: SHIP \xE2\x80\x94 the handle is closed by the guard at src/a.cpp:30\n"
      "- Contested criterion: no resource leaks\n";
  EXPECT_EQ(render_record(full_input()), want);
  EXPECT_EQ(render_record(full_input()), render_record(full_input()));
}

TEST(FixDiagnosis, RenderRecordWithoutDiagnosisOrAppeal) {
  RecordInput in;
  in.subject = "branch feature/x";
  in.why_stopped = "reviewer BLOCKED";
  in.route = "a person reads the blockers";
  in.attempts = 0;
  const std::string want =
      "# branch feature/x: stopped, reviewer BLOCKED; the work stays in progress\n"
      "\n"
      "## Remaining gaps\n"
      "- none\n"
      "\n"
      "## Cause\n"
      "not diagnosed\n"
      "\n"
      "## New evidence\n"
      "none\n"
      "\n"
      "## Route\n"
      "a person reads the blockers\n"
      "\n"
      "## Budget\n"
      "attempts=0/2; escalations=0/2\n";
  EXPECT_EQ(render_record(in), want);
}

TEST(FixDiagnosis, RenderRecordOfADiagnosisByCode) {
  RecordInput in;
  in.subject = "bundle b2";
  in.why_stopped = "fix loop exhausted (1/1)";
  in.remaining = {kStub};
  in.diagnosis = diagnose_by_evidence({attempt({kStub}, {validation("ctest", 127, false, "")})});
  in.route = "install ctest, then resume";
  in.attempts = 1;
  in.max_attempts = 1;
  std::string record = render_record(in);
  EXPECT_NE(record.find("## Cause\nenv-tool-failure (decided by the evidence)\n\n## New evidence\n"
                        "a validation command could not run: `ctest` exited 127\n"),
            std::string::npos)
      << record;
  EXPECT_EQ(record.find("## Appeal"), std::string::npos);
  EXPECT_NE(record.find("attempts=1/1; escalations=0/2\n"), std::string::npos);
}

}  // namespace
}  // namespace devgraph::fix
