#include "agents/backend.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <ctime>

namespace devgraph::agents {
namespace {

using SysTime = std::chrono::system_clock::time_point;
const SysTime kNow{std::chrono::seconds(1'750'000'000)};

LaunchRequest request() {
  return {"developer", "T1", "Task T1 of bundle b1. Brief: x.", "/wt", "/run", "/skill"};
}

TEST(Backend, ClaudeArgvMatchesTheReference) {
  BackendOptions o;
  o.binary = "/bin/fake-claude";
  o.permission_mode = "acceptEdits";
  o.max_turns = 80;
  o.allowed_tools = {"Read", "Bash(make *)"};
  o.disallowed_tools = {"Bash(git push *)"};
  o.model = "opus";
  auto b = make_backend(o);
  ASSERT_TRUE(b.ok());
  PromptRef p{build_prompt(request()), ""};
  std::vector<std::string> want = {"/bin/fake-claude",
                                   "-p",
                                   p.text,
                                   "--output-format",
                                   "json",
                                   "--permission-mode",
                                   "acceptEdits",
                                   "--max-turns",
                                   "80",
                                   "--add-dir",
                                   "/run",
                                   "--allowedTools",
                                   "Read",
                                   "Bash(make *)",
                                   "--disallowedTools",
                                   "Bash(git push *)",
                                   "--model",
                                   "opus"};
  EXPECT_EQ((*b)->launch_argv(request(), p), want);
  PromptRef rp{resume_prompt(), ""};
  std::vector<std::string> resume = {
      "/bin/fake-claude", "-p",   rp.text,       "--resume", "sess-1",
      "--output-format",  "json", "--max-turns", "2"};
  EXPECT_EQ((*b)->resume_argv(request(), "sess-1", rp), resume);
}

TEST(Backend, PromptNamesThePersonaFileFirstAndTheTask) {
  std::string p = build_prompt(request());
  EXPECT_EQ(p.find("/skill/agents/developer.md"), p.find('/'));
  EXPECT_NE(p.find("Task T1"), std::string::npos);
  EXPECT_NE(p.find("RESULT_JSON:"), std::string::npos);
}

TEST(Backend, ClaudeBinaryFromTheEnvironment) {
  ::setenv("DEVELOP_CLAUDE_BIN", "/opt/fake", 1);
  auto b = make_backend({});
  ::unsetenv("DEVELOP_CLAUDE_BIN");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ((*b)->launch_argv(request(), {"p", ""})[0], "/opt/fake");
}

TEST(Backend, ClaudeOutputIsParsed) {
  auto b = make_backend({});
  ASSERT_TRUE(b.ok());
  AgentOutput o = (*b)->parse(
      0, 0,
      R"({"type":"result","subtype":"success","is_error":false,"result":"x\nRESULT_JSON: {}","session_id":"s1","total_cost_usd":0.5,"duration_api_ms":1200,"usage":{"input_tokens":9}})",
      "", kNow);
  EXPECT_FALSE(o.failed);
  EXPECT_EQ(o.final_text, "x\nRESULT_JSON: {}");
  EXPECT_EQ(o.session_id, "s1");
  EXPECT_DOUBLE_EQ(o.cost_usd, 0.5);
  EXPECT_EQ(o.duration_ms, 1200);
  EXPECT_EQ(o.usage["input_tokens"], 9);

  o = (*b)->parse(0, 0, R"({"subtype":"error_max_turns","is_error":false,"result":"cut"})", "",
                  kNow);
  EXPECT_TRUE(o.failed) << "an error subtype is a CLI failure";
  o = (*b)->parse(0, 0, R"({"is_error":true,"result":"API Error"})", "", kNow);
  EXPECT_TRUE(o.failed);
  o = (*b)->parse(2, 0, "not json", "boom", kNow);
  EXPECT_TRUE(o.failed);
  EXPECT_EQ(o.final_text, "not json");
  EXPECT_NE(o.error.find("exit 2"), std::string::npos);
  EXPECT_NE(o.error.find("boom"), std::string::npos);
  o = (*b)->parse(0, 0, R"({"result":"t","structured_output":{"status":"DONE"}})", "", kNow);
  ASSERT_TRUE(o.structured.has_value());
  EXPECT_EQ((*o.structured)["status"], "DONE");
}

TEST(Backend, CodexArgvAndJsonlEvents) {
  BackendOptions opt;
  opt.kind = BackendKind::codex;
  opt.model = "gpt-5";
  auto b = make_backend(opt);
  ASSERT_TRUE(b.ok());
  auto argv = (*b)->launch_argv(request(), {"PROMPT", ""});
  // Telemetry off unless asked for (agents/cli_setup.h).
  std::vector<std::string> want = {"codex",
                                   "exec",
                                   "--json",
                                   "--sandbox",
                                   "workspace-write",
                                   "--skip-git-repo-check",
                                   "--cd",
                                   "/wt",
                                   "-c",
                                   "analytics.enabled=false",
                                   "-c",
                                   "features.plugins=false",
                                   "-c",
                                   "check_for_update_on_startup=false",
                                   "--add-dir",
                                   "/run",
                                   "--model",
                                   "gpt-5",
                                   "PROMPT"};
  EXPECT_EQ(argv, want);
  std::vector<std::string> resume = {"codex",  "exec",
                                     "--json", "--skip-git-repo-check",
                                     "-c",     "analytics.enabled=false",
                                     "-c",     "features.plugins=false",
                                     "-c",     "check_for_update_on_startup=false",
                                     "resume", "th_1",
                                     "R"};
  EXPECT_EQ((*b)->resume_argv(request(), "th_1", {"R", ""}), resume);
  opt.cli_telemetry = true;
  auto with_telemetry = make_backend(opt);
  ASSERT_TRUE(with_telemetry.ok());
  EXPECT_EQ((*with_telemetry)->launch_argv(request(), {"PROMPT", ""}),
            (std::vector<std::string>{"codex", "exec", "--json", "--sandbox", "workspace-write",
                                      "--skip-git-repo-check", "--cd", "/wt", "--add-dir", "/run",
                                      "--model", "gpt-5", "PROMPT"}));
  AgentOutput o = (*b)->parse(
      0, 0,
      "{\"type\":\"thread.started\",\"thread_id\":\"th_1\"}\n"
      "{\"type\":\"item.completed\",\"item\":{\"type\":\"reasoning\",\"text\":\"hmm\"}}\n"
      "{\"type\":\"item.completed\",\"item\":{\"type\":\"agent_message\",\"text\":\"RESULT_JSON: "
      "{}\"}}\n"
      "{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":5,\"output_tokens\":2}}\n",
      "", kNow);
  EXPECT_FALSE(o.failed);
  EXPECT_EQ(o.session_id, "th_1");
  EXPECT_EQ(o.final_text, "RESULT_JSON: {}");
  EXPECT_EQ(o.usage["output_tokens"], 2);
  o = (*b)->parse(1, 0,
                  "{\"type\":\"turn.failed\",\"error\":{\"message\":\"You've hit your usage limit. "
                  "Try again in 2 hours 5 minutes.\"}}\n",
                  "", kNow);
  EXPECT_TRUE(o.failed);
  ASSERT_TRUE(o.limit.has_value());
  ASSERT_TRUE(o.limit->resets_at.has_value());
  EXPECT_EQ(*o.limit->resets_at - kNow, std::chrono::minutes(125));
}

TEST(Backend, GeminiArgvAndJson) {
  BackendOptions opt;
  opt.kind = BackendKind::gemini;
  auto b = make_backend(opt);
  ASSERT_TRUE(b.ok());
  std::vector<std::string> want = {"gemini",    "-p",
                                   "P",         "--output-format",
                                   "json",      "--approval-mode",
                                   "auto_edit", "--include-directories",
                                   "/skill",    "--include-directories",
                                   "/run"};
  EXPECT_EQ((*b)->launch_argv(request(), {"P", ""}), want);
  // With a configuration directory, devgraph's admin-tier denials.
  opt.config_dir = "/run/cli";
  auto configured = make_backend(opt);
  ASSERT_TRUE(configured.ok());
  want.insert(want.begin() + 7, {"--admin-policy", "/run/cli/gemini-admin-policies"});
  EXPECT_EQ((*configured)->launch_argv(request(), {"P", ""}), want);
  AgentOutput o =
      (*b)->parse(0, 0, R"({"response":"RESULT_JSON: {}","stats":{"models":{}}})", "", kNow);
  EXPECT_FALSE(o.failed);
  EXPECT_EQ(o.final_text, "RESULT_JSON: {}");
  o = (*b)->parse(
      1, 0,
      R"({"error":{"type":"ApiError","message":"Quota exceeded for quota metric. Please retry in 37.5s.","code":429}})",
      "", kNow);
  EXPECT_TRUE(o.failed);
  ASSERT_TRUE(o.limit.has_value());
  EXPECT_EQ(*o.limit->resets_at - kNow, std::chrono::milliseconds(37500));
}

TEST(Backend, CommandTemplate) {
  BackendOptions opt;
  opt.kind = BackendKind::command;
  opt.model = "m1";
  opt.command_template = {"my-agent",   "--prompt={prompt_file}", "--cwd",
                          "{worktree}", "{persona}/{task}",       "{model}"};
  auto b = make_backend(opt);
  ASSERT_TRUE(b.ok());
  std::vector<std::string> want = {"my-agent", "--prompt=/tmp/p.md", "--cwd",
                                   "/wt",      "developer/T1",       "m1"};
  EXPECT_EQ((*b)->launch_argv(request(), {"text", "/tmp/p.md"}), want);
  EXPECT_FALSE((*b)->can_resume());
  AgentOutput o = (*b)->parse(0, 0, "chatter\nRESULT_JSON: {}\n", "", kNow);
  EXPECT_EQ(o.final_text, "chatter\nRESULT_JSON: {}\n");
  EXPECT_FALSE(o.failed);

  opt.command_template = {"my-agent"};
  auto bad = make_backend(opt);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("{prompt_file}"), std::string::npos);
  opt.command_template.clear();
  EXPECT_FALSE(make_backend(opt).ok());
  BackendOptions sim;
  sim.kind = BackendKind::sim;
  EXPECT_FALSE(make_backend(sim).ok()) << "sim needs a scenario";
}

TEST(Backend, SimArgvNamesTheBundleTaskAndCounters) {
  BackendOptions o;
  o.kind = BackendKind::sim;
  o.binary = "/bin/devgraph";
  o.sim_scenario = "/no/such/scenario.json";  // the agent reports it, on every launch
  o.sim_state_dir = "/run/bundles/b1/sim";
  o.bundle = "b1";
  auto b = make_backend(o);
  ASSERT_TRUE(b.ok()) << b.error().message;
  auto argv = (*b)->launch_argv(request(), {"P", "/p.md"});
  ASSERT_GE(argv.size(), 14u);
  std::vector<std::string> head(argv.begin(), argv.begin() + 14);
  std::vector<std::string> want = {
      "/bin/devgraph", "sim-agent", "--scenario", "/no/such/scenario.json",
      "--persona",     "developer", "--task",     "T1",
      "--bundle",      "b1",        "--state",    "/run/bundles/b1/sim",
      "--prompt-file", "/p.md"};
  EXPECT_EQ(head, want);
  o.bundle.clear();
  auto unnamed = make_backend(o);
  ASSERT_TRUE(unnamed.ok());
  auto without = (*unnamed)->launch_argv(request(), {"P", ""});
  EXPECT_EQ(std::find(without.begin(), without.end(), "--bundle"), without.end());
}

TEST(Backend, ProviderLimitsAndResetTimes) {
  auto l =
      detect_provider_limit(BackendKind::claude, "Claude AI usage limit reached|1750003600", kNow);
  ASSERT_TRUE(l && l->resets_at);
  EXPECT_EQ(*l->resets_at - kNow, std::chrono::hours(1));
  l = detect_provider_limit(BackendKind::codex, "stream error: 429 Too Many Requests", kNow);
  ASSERT_TRUE(l);
  EXPECT_FALSE(l->resets_at.has_value());
  l = detect_provider_limit(BackendKind::claude, "You've hit your limit \xC2\xB7 resets 3pm", kNow);
  ASSERT_TRUE(l && l->resets_at);
  EXPECT_GT(*l->resets_at, kNow);
  EXPECT_LE(*l->resets_at - kNow, std::chrono::hours(25));
  l = detect_provider_limit(BackendKind::codex,
                            "Rate limit reached for gpt-5. Please try again in 20s.", kNow);
  ASSERT_TRUE(l && l->resets_at);
  EXPECT_EQ(*l->resets_at - kNow, std::chrono::seconds(20));
  EXPECT_FALSE(detect_provider_limit(BackendKind::claude, "API Error: 500 internal", kNow));
  EXPECT_FALSE(detect_provider_limit(BackendKind::claude, "tests failed: 3 of 10", kNow));
}

// codex prints a usage limit's reset as a local clock time when it is
// today, and with its date when it is on another day (the next morning, or
// days off): "try again at Dec 5th, 2026 4:42 AM".
TEST(Backend, ALaunchsOwnModelAndEffortWinOverTheBackends) {
  BackendOptions opt;
  opt.kind = BackendKind::codex;
  opt.model = "gpt-5";
  auto b = make_backend(opt);
  ASSERT_TRUE(b.ok());
  LaunchRequest r = request();
  r.model = "gpt-5-pro";
  r.effort = "high";
  auto argv = (*b)->launch_argv(r, {"PROMPT", ""});
  auto at = std::find(argv.begin(), argv.end(), "--model");
  ASSERT_NE(at, argv.end());
  EXPECT_EQ(*(at + 1), "gpt-5-pro");
  auto c = std::find(argv.begin(), argv.end(), "model_reasoning_effort=\"high\"");
  ASSERT_NE(c, argv.end());
  EXPECT_EQ(*(c - 1), "-c");
  // Without its own, the launch runs at the backend's model and no effort.
  argv = (*b)->launch_argv(request(), {"PROMPT", ""});
  EXPECT_EQ(*(std::find(argv.begin(), argv.end(), "--model") + 1), "gpt-5");
  for (const auto& w : argv) EXPECT_EQ(w.find("model_reasoning_effort"), std::string::npos) << w;
  BackendOptions claude;
  claude.binary = "/bin/fake-claude";
  auto cb = make_backend(claude);
  ASSERT_TRUE(cb.ok());
  r.effort.reset();
  argv = (*cb)->launch_argv(r, {"PROMPT", ""});
  EXPECT_EQ(*(std::find(argv.begin(), argv.end(), "--model") + 1), "gpt-5-pro");
}

TEST(Backend, CodexUsageLimitResetOnAnotherDayKeepsItsDate) {
  auto local = [](int year, int month, int day, int hour, int minute) {
    std::tm t{};
    t.tm_year = year - 1900;
    t.tm_mon = month - 1;
    t.tm_mday = day;
    t.tm_hour = hour;
    t.tm_min = minute;
    t.tm_isdst = -1;
    return std::chrono::system_clock::from_time_t(std::mktime(&t));
  };
  const std::string head =
      "You\xE2\x80\x99ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), "
      "visit https://chatgpt.com/settings/usage to purchase more credits or try again at ";
  auto l = detect_provider_limit(BackendKind::codex, head + "Jun 18th, 2025 4:42 AM.", kNow);
  ASSERT_TRUE(l && l->resets_at) << (l ? l->message : "no limit");
  EXPECT_EQ(*l->resets_at, local(2025, 6, 18, 4, 42));
  l = detect_provider_limit(BackendKind::codex, head + "Jul 1st, 2025 12:05 PM.", kNow);
  ASSERT_TRUE(l && l->resets_at);
  EXPECT_EQ(*l->resets_at, local(2025, 7, 1, 12, 5));
  l = detect_provider_limit(BackendKind::codex, head + "Aug 2nd, 2025 12:30 AM.", kNow);
  ASSERT_TRUE(l && l->resets_at);
  EXPECT_EQ(*l->resets_at, local(2025, 8, 2, 0, 30));

  // Tomorrow at 1:05 AM: earlier in the day than now, so the time alone
  // would say today's, or tomorrow's only by chance of the hour.
  std::time_t now = std::chrono::system_clock::to_time_t(kNow);
  std::tm today{};
  ::localtime_r(&now, &today);
  std::tm next = today;
  next.tm_mday += 1;
  next.tm_hour = 12;
  next.tm_isdst = -1;
  std::mktime(&next);  // normalized: the next local date
  char date[64];
  std::strftime(date, sizeof date, "%b %d, %Y", &next);
  std::string text = date;
  if (text[4] == '0') text.erase(4, 1);  // "Jun 6", as codex prints it
  text.insert(text.find(','), "th");
  l = detect_provider_limit(BackendKind::codex, head + text + " 1:05 AM.", kNow);
  ASSERT_TRUE(l && l->resets_at) << text;
  EXPECT_EQ(*l->resets_at, local(next.tm_year + 1900, next.tm_mon + 1, next.tm_mday, 1, 5)) << text;

  // Today's reset is still the time alone.
  l = detect_provider_limit(BackendKind::codex, head + "11:59 PM.", kNow);
  ASSERT_TRUE(l && l->resets_at);
  EXPECT_GT(*l->resets_at, kNow);
  EXPECT_LE(*l->resets_at - kNow, std::chrono::hours(24));
}

TEST(Backend, ChildEnvironmentKeepsSecretsOut) {
  std::vector<std::string> parent = {"PATH=/bin",
                                     "HOME=/root",
                                     "GH_TOKEN=t",
                                     "GITHUB_TOKEN=t",
                                     "ANTHROPIC_API_KEY=a",
                                     "OPENAI_API_KEY=o",
                                     "GEMINI_API_KEY=g",
                                     "MY_DB_PASSWORD=p",
                                     "OTHER=x",
                                     "DEVGRAPH_LIMITS_SOCKET=/run/x/limits.sock",
                                     "DEVGRAPH_SECRET_ENV=MY_DB_PASSWORD, OTHER"};
  auto names = [](const std::vector<std::string>& env) {
    std::set<std::string> s;
    for (const auto& e : env) s.insert(e.substr(0, e.find('=')));
    return s;
  };
  EXPECT_EQ(names(child_environment(BackendKind::claude, parent)),
            (std::set<std::string>{"PATH", "HOME", "ANTHROPIC_API_KEY"}));
  EXPECT_EQ(names(child_environment(BackendKind::codex, parent)),
            (std::set<std::string>{"PATH", "HOME", "OPENAI_API_KEY"}));
  EXPECT_EQ(names(child_environment(BackendKind::gemini, parent)),
            (std::set<std::string>{"PATH", "HOME", "GEMINI_API_KEY"}));
  EXPECT_EQ(names(child_environment(BackendKind::sim, parent)),
            (std::set<std::string>{"PATH", "HOME"}));
  EXPECT_EQ(names(child_environment(BackendKind::command, parent)),
            (std::set<std::string>{"PATH", "HOME", "ANTHROPIC_API_KEY", "OPENAI_API_KEY",
                                   "GEMINI_API_KEY"}));
}

TEST(Backend, ToolCallsAsEachCliReportsThem) {
  auto claude = make_backend({});
  ASSERT_TRUE(claude.ok());
  auto turns = [&](const std::string& json) { return (*claude)->parse(0, 0, json, "", kNow); };
  EXPECT_EQ(turns(R"({"result":"RESULT_JSON: {}","num_turns":1})").tool_calls, 0)
      << "one turn is the answer alone";
  EXPECT_EQ(turns(R"({"result":"RESULT_JSON: {}","num_turns":7})").tool_calls, 6);
  EXPECT_FALSE(turns(R"({"result":"RESULT_JSON: {}"})").tool_calls.has_value())
      << "the sim reports no count";

  BackendOptions copt;
  copt.kind = BackendKind::codex;
  auto codex = make_backend(copt);
  ASSERT_TRUE(codex.ok());
  const std::string started = "{\"type\":\"thread.started\",\"thread_id\":\"t\"}\n";
  const std::string answer =
      "{\"type\":\"item.completed\",\"item\":{\"type\":\"agent_message\",\"text\":\"x\"}}\n";
  EXPECT_EQ((*codex)->parse(0, 0, started + answer, "", kNow).tool_calls, 0);
  std::string worked = started +
                       "{\"type\":\"item.completed\",\"item\":{\"type\":\"command_execution\"}}\n"
                       "{\"type\":\"item.completed\",\"item\":{\"type\":\"file_change\"}}\n" +
                       answer;
  EXPECT_EQ((*codex)->parse(0, 0, worked, "", kNow).tool_calls, 2);
  EXPECT_FALSE((*codex)->parse(1, 0, "", "crashed", kNow).tool_calls.has_value());

  BackendOptions gopt;
  gopt.kind = BackendKind::gemini;
  auto gemini = make_backend(gopt);
  ASSERT_TRUE(gemini.ok());
  EXPECT_EQ((*gemini)
                ->parse(0, 0, R"({"response":"x","stats":{"tools":{"totalCalls":3}}})", "", kNow)
                .tool_calls,
            3);
  EXPECT_EQ((*gemini)
                ->parse(0, 0, R"({"response":"x","stats":{"tools":{"totalCalls":0}}})", "", kNow)
                .tool_calls,
            0);
  EXPECT_FALSE(
      (*gemini)->parse(0, 0, R"({"response":"x","stats":{}})", "", kNow).tool_calls.has_value());
}

TEST(Backend, PersonasMayRunTheProjectsCommandsAndDevgraphsReadOnlyVerbs) {
  const std::vector<std::string> verbs = {"Bash(devgraph schedule *)", "Bash(devgraph guard *)"};
  auto with = [&](std::vector<std::string> v) {
    v.insert(v.end(), verbs.begin(), verbs.end());
    return v;
  };
  EXPECT_EQ(persona_extra_tools("  pytest -q tests", "make"),
            with({"Bash(pytest *)", "Bash(make *)"}));
  EXPECT_EQ(persona_extra_tools("", " "), verbs);
  for (const auto& t : persona_extra_tools("npm test", "make"))
    for (const char* mutating : {"checkpoint", "answer", "devgraph run", "devgraph *"})
      EXPECT_EQ(t.find(mutating), std::string::npos) << t;
}

}  // namespace
}  // namespace devgraph::agents
