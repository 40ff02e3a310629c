// The failure tables with the real agent CLIs, offline (as in
// real_cli_test.cpp): the scripted model server answers a persona's model
// request with each failure shape of tests/fixtures/cli-failures/ (the
// providers' own error bodies, from tests/support/capture_cli_failures.py),
// the real CLI reports it its own way, and the persona runtime must handle
// it as the row of the backend's failure table says (src/agents/backend.h,
// docs/agents.md "Failure tables"): a rate limit pauses the backend and
// relaunches, a reset the CLI prints is waited for, a server error is
// backed off and relaunched, a rejected key ends the launch at once, a
// persona out of turns is resumed, and codex waiting out a long
// Retry-After by itself is stopped after limit_stall and paused.
//
// Each CLI's own retries are cut to none (limit_own_retries), so every
// launch is one model request and the server's "times" says which launch
// fails; the tests of codex waiting by itself keep one retry and one
// reconnect, as its fixtures were captured. The runtime's timers are short; nothing here sleeps,
// and the deadlines are failure conditions only.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "agents/runtime.h"
#include "contracts/schema.h"
#include "support/real_cli.h"
#include "support/test_util.h"
#include "util/fs.h"
#include "util/json.h"

namespace devgraph {
namespace {

using namespace std::chrono_literals;
using namespace devgraph::realcli;
using agents::BackendKind;
using agents::Outcome;
using Kind = agents::RuntimeEvent::Kind;
using SysClock = std::chrono::system_clock;

// ------------------------------------------------------------ error bodies
// As the providers send them (tests/support/capture_cli_failures.py).

Json anthropic_error(const std::string& type, const std::string& message) {
  return {{"type", "error"}, {"error", {{"type", type}, {"message", message}}}};
}
Json openai_error(const std::string& type, const Json& code, const std::string& message) {
  return {{"error", {{"message", message}, {"type", type}, {"param", nullptr}, {"code", code}}}};
}
Json gemini_error(int code, const std::string& status, const std::string& message,
                  Json details = nullptr) {
  Json e = {{"code", code}, {"message", message}, {"status", status}};
  if (!details.is_null()) e["details"] = std::move(details);
  return {{"error", e}};
}

// A rate limit whose message names no reset.
Json rate_limit_body(BackendKind kind) {
  switch (kind) {
    case BackendKind::claude:
      return anthropic_error(
          "rate_limit_error",
          "This request would exceed your account's rate limit. Please try again later.");
    case BackendKind::codex:
      return openai_error("tokens", "rate_limit_exceeded",
                          "Rate limit reached for gpt-5-codex in organization org-x on tokens "
                          "per min (TPM): Limit 30000, Used 30000, Requested 1000.");
    default:
      return gemini_error(429, "RESOURCE_EXHAUSTED",
                          "Resource has been exhausted (e.g. check quota).");
  }
}

Json server_error_body(BackendKind kind, int status) {
  switch (kind) {
    case BackendKind::claude:
      return status == 529 ? anthropic_error("overloaded_error", "Overloaded")
                           : anthropic_error("api_error", "Internal server error");
    case BackendKind::codex:
      return openai_error(
          "server_error", nullptr,
          "The server had an error while processing your request. Sorry about that!");
    default:
      return status == 503
                 ? gemini_error(503, "UNAVAILABLE",
                                "The model is overloaded. Please try again later.")
                 : gemini_error(500, "INTERNAL",
                                "An internal error has occurred. Please retry or report in "
                                "https://developers.generativeai.google/guide/troubleshooting");
  }
}

// A rejected key: 401, but for gemini the 400 with API_KEY_INVALID that
// the Gemini API really answers.
std::pair<int, Json> auth_error(BackendKind kind) {
  switch (kind) {
    case BackendKind::claude:
      return {401, anthropic_error("authentication_error", "invalid x-api-key")};
    case BackendKind::codex:
      return {401, openai_error("invalid_request_error", "invalid_api_key",
                                "Incorrect API key provided: dummy. You can find your API key at "
                                "https://platform.openai.com/account/api-keys.")};
    default:
      return {400, gemini_error(400, "INVALID_ARGUMENT",
                                "API key not valid. Please pass a valid API key.",
                                Json::array({{{"@type", "type.googleapis.com/google.rpc.ErrorInfo"},
                                              {"reason", "API_KEY_INVALID"},
                                              {"domain", "googleapis.com"}}}))};
  }
}

// The Gemini API's per-minute quota 429 with its RetryInfo delay `retry`
// ("3s"), which gemini prints as "Please retry in 3s."
Json gemini_quota(const std::string& retry) {
  return gemini_error(
      429, "RESOURCE_EXHAUSTED",
      "You exceeded your current quota, please check your plan and billing details. For more "
      "information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.\n"
      "* Quota exceeded for metric: generativelanguage.googleapis.com/"
      "generate_content_free_tier_requests, limit: 10, model: gemini-2.5-pro\nPlease retry in " +
          retry + ".",
      Json::array(
          {{{"@type", "type.googleapis.com/google.rpc.QuotaFailure"},
            {"violations",
             Json::array(
                 {{{"quotaMetric",
                    "generativelanguage.googleapis.com/generate_content_free_tier_requests"},
                   {"quotaId", "GenerateRequestsPerMinutePerProjectPerModel-FreeTier"},
                   {"quotaValue", "10"}}})}},
           {{"@type", "type.googleapis.com/google.rpc.RetryInfo"}, {"retryDelay", retry}}}));
}

// The ChatGPT plan's usage limit, reset at `resets_at` (epoch seconds).
Json codex_usage_limit(long long resets_at) {
  return {{"error",
           {{"type", "usage_limit_reached"},
            {"message", "The usage limit has been reached"},
            {"plan_type", "plus"},
            {"resets_at", resets_at},
            {"resets_in_seconds", resets_at - SysClock::to_time_t(SysClock::now())}}}};
}

// A turn that fails the first `times` requests of its step with `status`
// and `body`, then plays `then`.
Json failing(int status, const Json& body, int times, const Json& then,
             std::optional<int> retry_after = std::nullopt) {
  Json t = {{"http_error", status}, {"body", body}, {"times", times}, {"then", then}};
  if (retry_after) t["retry_after"] = *retry_after;
  return t;
}

const CliSetup& named(const std::string& name) {
  for (const auto& c : kClis)
    if (c.name == name) return c;
  return kClis[0];
}

// ------------------------------------------------------------ the fixture

// One launch of developer/T1 through the persona runtime: every event in
// order (with the wall time it came), its completion, and run_bundle.log.
struct Trace {
  std::vector<agents::RuntimeEvent> events;
  std::vector<SysClock::time_point> seen_at;
  std::optional<agents::Completion> done;
  std::vector<Json> log;

  std::vector<agents::RuntimeEvent> of(Kind kind) const {
    std::vector<agents::RuntimeEvent> out;
    for (const auto& e : events)
      if (e.kind == kind) out.push_back(e);
    return out;
  }
  // The wall time the first event of `kind` came.
  std::optional<SysClock::time_point> when(Kind kind) const {
    for (size_t i = 0; i < events.size(); ++i)
      if (events[i].kind == kind) return seen_at[i];
    return std::nullopt;
  }
  // The runtime's events, by name, in order.
  std::vector<std::string> kinds() const {
    std::vector<std::string> out;
    for (const auto& e : events) out.emplace_back(agents::event_kind_name(e.kind));
    return out;
  }
  // The log's records, by event name, in order.
  std::vector<std::string> log_events() const {
    std::vector<std::string> out;
    for (const auto& r : log) out.push_back(r.value("event", ""));
    return out;
  }
  std::vector<Json> records(const std::string& event) const {
    std::vector<Json> out;
    for (const auto& r : log)
      if (r.value("event", "") == event) out.push_back(r);
    return out;
  }
};

class RealCliFailure : public RealCli {
 protected:
  std::string worktree = s / "wt";
  std::string run_dir = s / "run";
  agents::RuntimeConfig cfg;
  std::optional<ScopedEnv> env;

  void SetUp() override {
    RealCli::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    ASSERT_TRUE(make_directories(worktree + "/src").ok());
    ASSERT_TRUE(make_directories(run_dir).ok());
    cfg = runtime_config(run_dir);
    // The runtime's own timers, short; the timeout a failure condition only.
    cfg.kill_grace = 2s;
    cfg.backoff_base = 100ms;
    cfg.backoff_cap = 400ms;
    cfg.retry_budget = 5s;
    cfg.rate_limit_pause = 200ms;
    cfg.limit_stall = 2s;
    cfg.default_pause = 30min;
    cfg.max_pause = 6h;
  }

  // Starts the server with developer/T1's `turns`, readies the CLI's home
  // with its own retries cut (`reconnects`: codex's), and sets its
  // environment for this test.
  void serve(const Json& turns, int reconnects = 0, int codex_retries = 0) {
    Json script = {{"conversations",
                    Json::array({{{"persona", "developer"}, {"task", "T1"}, {"turns", turns}}})}};
    auto vars = start(script);
    limit_own_retries(cli.kind, home, vars, cli.kind == BackendKind::codex ? codex_retries : 0,
                      reconnects);
    env.emplace(vars);
  }

  // Launches developer/T1 and runs the loop until it completes;
  // `on_event` sees every other event with the runtime (to stop it).
  Trace run(const std::function<void(agents::PersonaRuntime&, const agents::RuntimeEvent&)>&
                on_event = nullptr) {
    Trace out;
    auto rt = agents::PersonaRuntime::create(cfg);
    if (!rt) {
      ADD_FAILURE() << rt.error().message;
      return out;
    }
    auto id =
        (*rt)->launch({"developer", "T1", "Task T1 of bundle b1.\nWrite hello to src/T1.txt.\n",
                       worktree, run_dir, test::source_dir() + "/skill"});
    if (!id) {
      ADD_FAILURE() << id.error().message;
      return out;
    }
    auto deadline = std::chrono::steady_clock::now() + 200s;  // a failure condition only
    while (!out.done) {
      auto ev = (*rt)->next_event(deadline);
      if (!ev) {
        ADD_FAILURE() << "no completion within 200 s; events: "
                      << testing::PrintToString(out.kinds());
        (*rt)->stop_all(0ms);
        deadline = std::chrono::steady_clock::now() + 30s;
        while (auto rest = (*rt)->next_event(deadline))
          if (rest->completion) break;
        break;
      }
      out.events.push_back(*ev);
      out.seen_at.push_back(SysClock::now());
      if (ev->completion)
        out.done = ev->completion;
      else if (on_event)
        on_event(**rt, *ev);
    }
    out.log = test::read_jsonl(cfg.log_path);
    return out;
  }

  // The model requests of developer/T1 the server answered.
  size_t model_requests() const {
    size_t n = 0;
    for (const auto& r : server.of_kind("turn"))
      if (r.value("persona", "") == "developer") ++n;
    return n;
  }
};

Json done_turn() {
  return final_turn("T1 done");
}

void expect_answered(const Trace& run, int attempts) {
  ASSERT_TRUE(run.done) << testing::PrintToString(run.kinds());
  EXPECT_EQ(run.done->outcome, Outcome::result) << run.done->error;
  EXPECT_EQ(run.done->result["status"], "DONE") << run.done->result.dump();
  EXPECT_EQ(run.done->result["summary"], "T1 done");
  EXPECT_EQ(run.done->attempts, attempts);
}

// ------------------------------------------------------------ every CLI

// Row rate-limit: a 429 whose message names no reset. The backend pauses
// for rate_limit_pause, the launch is queued without spending a retry, and
// the relaunch answers.
TEST_P(RealCliFailure, RateLimitWithoutAResetPausesForTheRateLimitPauseThenTheRelaunchAnswers) {
  serve(Json::array({failing(429, rate_limit_body(cli.kind), 1, done_turn())}));
  ASSERT_FALSE(HasFailure());
  Trace r = run();

  expect_answered(r, 1);
  EXPECT_EQ(r.kinds(),
            (std::vector<std::string>{"launched", "paused", "unpaused", "launched", "completed"}));
  auto paused = r.of(Kind::paused);
  ASSERT_EQ(paused.size(), 1u);
  EXPECT_EQ(paused[0].delay, cfg.rate_limit_pause);
  EXPECT_FALSE(paused[0].detail.empty());
  EXPECT_TRUE(r.of(Kind::backoff).empty());
  auto logged = r.records("paused");
  ASSERT_EQ(logged.size(), 1u);
  EXPECT_EQ(logged[0]["reset_given"], false) << logged[0].dump();
  EXPECT_EQ(logged[0]["agent"], cli.name);
  auto finished = r.records("finished");
  ASSERT_EQ(finished.size(), 2u);
  EXPECT_TRUE(finished[0]["error"].is_string()) << finished[0].dump();
  EXPECT_EQ(finished[1]["status"], "DONE") << finished[1].dump();
  EXPECT_EQ(model_requests(), 2u);
  expect_nothing_left_the_machine();
}

// Rows server-error (and claude's overloaded): 500, 503 (and 529) in turn,
// each backed off with the doubling delay and relaunched; the relaunch
// after the last one answers.
TEST_P(RealCliFailure, ServerErrorsAreBackedOffAndTheRelaunchAnswers) {
  std::vector<int> statuses = {500, 503};
  if (cli.kind == BackendKind::claude) statuses.push_back(529);
  Json turn = done_turn();
  for (auto it = statuses.rbegin(); it != statuses.rend(); ++it)
    turn = failing(*it, server_error_body(cli.kind, *it), 1, turn);
  serve(Json::array({turn}));
  ASSERT_FALSE(HasFailure());
  Trace r = run();

  int failures = static_cast<int>(statuses.size());
  expect_answered(r, failures + 1);
  auto backoffs = r.of(Kind::backoff);
  ASSERT_EQ(backoffs.size(), statuses.size()) << testing::PrintToString(r.kinds());
  for (int i = 0; i < failures; ++i) {
    EXPECT_EQ(backoffs[i].attempt, i + 1);
    EXPECT_EQ(backoffs[i].delay, std::min(cfg.backoff_cap, cfg.backoff_base * (1 << i)));
    EXPECT_FALSE(backoffs[i].detail.empty());
  }
  EXPECT_TRUE(r.of(Kind::paused).empty()) << testing::PrintToString(r.kinds());
  EXPECT_EQ(r.of(Kind::launched).size(), statuses.size() + 1);
  auto logged = r.records("backoff");
  ASSERT_EQ(logged.size(), statuses.size());
  for (int i = 0; i < failures; ++i) EXPECT_EQ(logged[i]["attempt"], i + 1) << logged[i].dump();
  EXPECT_EQ(model_requests(), statuses.size() + 1);
  expect_nothing_left_the_machine();
}

// Row auth: a rejected key ends the launch at once as cli_error, without
// a back-off or a pause.
TEST_P(RealCliFailure, RejectedKeyIsNotRetried) {
  auto [status, body] = auth_error(cli.kind);
  serve(Json::array({failing(status, body, 1, done_turn())}));
  ASSERT_FALSE(HasFailure());
  Trace r = run();

  ASSERT_TRUE(r.done);
  EXPECT_EQ(r.done->outcome, Outcome::cli_error) << r.done->error;
  EXPECT_EQ(r.done->attempts, 1);
  EXPECT_EQ(r.done->error.rfind("not retried (auth)", 0), 0u) << r.done->error;
  EXPECT_EQ(r.done->result["status"], "BLOCKED");
  EXPECT_EQ(r.kinds(), (std::vector<std::string>{"launched", "completed"}));
  EXPECT_TRUE(r.records("backoff").empty());
  EXPECT_TRUE(r.records("paused").empty());
  EXPECT_EQ(model_requests(), 1u);
  expect_nothing_left_the_machine();
}

// ------------------------------------------------------------ claude, gemini

// Rows max-turns (claude: --max-turns from BackendOptions::max_turns) and
// turn-limit (gemini: model.maxSessionTurns): the persona runs out of
// turns after writing its file, is resumed by session id, and the resumed
// call answers. codex has no turn limit.
class RealCliOutOfTurns : public RealCliFailure {};

TEST_P(RealCliOutOfTurns, PersonaOutOfTurnsIsResumedForItsResult) {
  serve(Json::array({write_turn(worktree + "/src/T1.txt", "hello\n"), done_turn()}));
  ASSERT_FALSE(HasFailure());
  if (cli.kind == BackendKind::claude) cfg.backend.max_turns = 1;
  if (cli.kind == BackendKind::gemini) {
    std::string path = home + "/.gemini/settings.json";
    Json settings = Json::parse(test::slurp(path));
    settings["model"]["maxSessionTurns"] = 1;
    test::write_text(path, dump_py(settings, 2) + "\n");
  }
  Trace r = run();

  expect_answered(r, 1);
  EXPECT_TRUE(r.done->resumed);
  EXPECT_EQ(r.kinds(), (std::vector<std::string>{"launched", "resuming", "launched", "completed"}));
  auto resuming = r.of(Kind::resuming);
  ASSERT_EQ(resuming.size(), 1u);
  EXPECT_FALSE(resuming[0].detail.empty());
  auto launched = r.records("launched");
  ASSERT_EQ(launched.size(), 2u);
  EXPECT_EQ(launched[1]["resumed"], true) << launched[1].dump();
  EXPECT_TRUE(r.records("backoff").empty());
  EXPECT_EQ(test::slurp(worktree + "/src/T1.txt"), "hello\n");
  // Both calls are paid for, once each: claude's resumed call reports the
  // session's cost so far (gemini reports none), and the tokens are each
  // call's own, 10 in and 5 out per model request answered. gemini prints
  // no stats for a run that ends at its turn limit, so only the resumed
  // call's tokens are known there.
  auto finished = r.records("finished");
  ASSERT_EQ(finished.size(), 2u);
  EXPECT_NEAR(r.done->cost_usd, finished[1]["cost_usd"].get<double>(), 1e-12);
  if (cli.kind == BackendKind::claude) {
    EXPECT_GT(finished[1]["cost_usd"].get<double>(), finished[0]["cost_usd"].get<double>());
  }
  long long answered = 0;
  for (const auto& rec : server.records())
    answered += rec.value("method", "") == "POST" &&
                (rec.value("kind", "") == "turn" || rec.value("kind", "") == "side") &&
                rec.value("path", "").find("count_tokens") == std::string::npos &&
                rec.value("path", "").find("countTokens") == std::string::npos;
  ASSERT_TRUE(r.done->tokens);
  if (cli.kind == BackendKind::claude) {
    EXPECT_EQ(*r.done->tokens, 15 * answered) << r.done->usage.dump();
  } else {
    EXPECT_EQ(*r.done->tokens % 15, 0) << r.done->usage.dump();
    EXPECT_LT(*r.done->tokens, 15 * answered) << r.done->usage.dump();
  }
  expect_nothing_left_the_machine();
}

// ------------------------------------------------------------ gemini

class RealCliGeminiFailure : public RealCliFailure {};

// Row rate-limit with the reset gemini prints ("Please retry in 3s.",
// from the quota error's RetryInfo): paused until then, and the relaunch
// answers.
TEST_P(RealCliGeminiFailure, RetryInSecondsPausesUntilThenAndTheRelaunchAnswers) {
  serve(Json::array({failing(429, gemini_quota("3s"), 1, done_turn(), 3)}));
  ASSERT_FALSE(HasFailure());
  Trace r = run();

  expect_answered(r, 1);
  EXPECT_EQ(r.kinds(),
            (std::vector<std::string>{"launched", "paused", "unpaused", "launched", "completed"}));
  auto paused = r.of(Kind::paused);
  ASSERT_EQ(paused.size(), 1u);
  auto at = *r.when(Kind::paused);
  EXPECT_GT(paused[0].until, at + 2s);
  EXPECT_LE(paused[0].until, at + 3s);
  EXPECT_GT(paused[0].delay, 2s);
  EXPECT_LE(paused[0].delay, 3s);
  auto logged = r.records("paused");
  ASSERT_EQ(logged.size(), 1u);
  EXPECT_EQ(logged[0]["reset_given"], true) << logged[0].dump();
  EXPECT_EQ(model_requests(), 2u);
  expect_nothing_left_the_machine();
}

// ------------------------------------------------------------ codex

class RealCliCodexFailure : public RealCliFailure {};

// Row usage-limit: codex prints the reset of the plan's limit ("try again
// at 5:53 AM", local time); the backend is paused until then.
TEST_P(RealCliCodexFailure, UsageLimitPausesUntilTheResetItPrinted) {
  long long reset = SysClock::to_time_t(SysClock::now()) + 2 * 3600;
  serve(Json::array({failing(429, codex_usage_limit(reset), 1, done_turn())}));
  ASSERT_FALSE(HasFailure());
  Trace r = run([](agents::PersonaRuntime& rt, const agents::RuntimeEvent& ev) {
    if (ev.kind == Kind::paused) rt.stop_all();  // the reset is hours away
  });

  ASSERT_TRUE(r.done);
  EXPECT_EQ(r.done->outcome, Outcome::interrupted) << r.done->error;
  EXPECT_EQ(r.done->attempts, 1);
  EXPECT_EQ(r.kinds(), (std::vector<std::string>{"launched", "paused", "completed"}));
  auto paused = r.of(Kind::paused);
  ASSERT_EQ(paused.size(), 1u);
  auto at = *r.when(Kind::paused);
  EXPECT_GT(paused[0].until, at);
  EXPECT_LT(paused[0].until, at + 24h);
  // The minute codex printed.
  auto reset_at = SysClock::from_time_t(reset);
  EXPECT_GT(paused[0].until, reset_at - 2min) << paused[0].detail;
  EXPECT_LT(paused[0].until, reset_at + 2min) << paused[0].detail;
  EXPECT_NE(paused[0].detail.find("usage limit"), std::string::npos) << paused[0].detail;
  auto logged = r.records("paused");
  ASSERT_EQ(logged.size(), 1u);
  EXPECT_EQ(logged[0]["reset_given"], true) << logged[0].dump();
  EXPECT_EQ(model_requests(), 1u);
  expect_nothing_left_the_machine();
}

// The same limit reset days from now: codex prints the date ("try again at
// Dec 5th, 2026 4:42 AM"), the reset lies beyond max_pause, and the launch
// ends at once as provider_limit, naming that reset.
TEST_P(RealCliCodexFailure, UsageLimitResetDaysAwayEndsTheLaunchAsProviderLimit) {
  long long reset = SysClock::to_time_t(SysClock::now()) + 3 * 24 * 3600;
  serve(Json::array({failing(429, codex_usage_limit(reset), 1, done_turn())}));
  ASSERT_FALSE(HasFailure());
  Trace r = run([](agents::PersonaRuntime& rt, const agents::RuntimeEvent& ev) {
    if (ev.kind != Kind::paused) return;
    ADD_FAILURE() << "paused until a reset it did not read: " << ev.detail;
    rt.stop_all();
  });

  ASSERT_TRUE(r.done);
  EXPECT_EQ(r.done->outcome, Outcome::provider_limit) << r.done->error;
  EXPECT_EQ(r.done->attempts, 1);
  EXPECT_EQ(r.kinds(), (std::vector<std::string>{"launched", "completed"}));
  // The minute codex printed, in UTC.
  std::time_t minute = static_cast<std::time_t>(reset - reset % 60);
  std::tm utc{};
  ::gmtime_r(&minute, &utc);
  char until[32];
  std::strftime(until, sizeof until, "%Y-%m-%dT%H:%M:%S+00:00", &utc);
  EXPECT_EQ(r.done->error.rfind(std::string("provider limit until ") + until, 0), 0u)
      << r.done->error;
  EXPECT_TRUE(r.records("paused").empty());
  EXPECT_EQ(model_requests(), 1u);
  expect_nothing_left_the_machine();
}

// Row waiting-out-limit: a 429 with a long Retry-After, which codex waits
// out by itself after one "Reconnecting..." event, printing nothing. The
// runtime stops it after limit_stall and pauses; the relaunch answers.
TEST_P(RealCliCodexFailure, LongRetryAfterIsStoppedAfterLimitStallAndPaused) {
  serve(Json::array({failing(429, rate_limit_body(cli.kind), 1, done_turn(), 3600)}),
        /*reconnects=*/1, /*codex_retries=*/1);
  ASSERT_FALSE(HasFailure());
  Trace r = run();

  expect_answered(r, 1);
  EXPECT_EQ(r.kinds(),
            (std::vector<std::string>{"launched", "paused", "unpaused", "launched", "completed"}));
  auto paused = r.of(Kind::paused);
  ASSERT_EQ(paused.size(), 1u);
  EXPECT_EQ(paused[0].delay, cfg.rate_limit_pause);
  EXPECT_NE(paused[0].detail.find("429"), std::string::npos) << paused[0].detail;
  auto events = r.log_events();
  auto waiting = std::find(events.begin(), events.end(), "waiting_out_limit");
  auto pause = std::find(events.begin(), events.end(), "paused");
  ASSERT_NE(waiting, events.end()) << testing::PrintToString(events);
  EXPECT_LT(waiting, pause) << testing::PrintToString(events);
  EXPECT_EQ(r.records("waiting_out_limit")[0]["stall_s"], 2) << r.records("waiting_out_limit")[0];
  auto finished = r.records("finished");
  ASSERT_EQ(finished.size(), 2u);
  EXPECT_NE(finished[0].value("error", "").find("waiting out a provider limit"), std::string::npos)
      << finished[0].dump();
  EXPECT_EQ(finished[1]["status"], "DONE") << finished[1].dump();
  EXPECT_EQ(model_requests(), 2u);
  expect_nothing_left_the_machine();
}

// A short Retry-After codex waits out by itself within limit_stall: the
// runtime leaves it alone, and the same launch answers.
TEST_P(RealCliCodexFailure, ShortRetryAfterItWaitsOutItselfIsLeftAlone) {
  cfg.limit_stall = 30s;  // well beyond the 1 s codex waits
  serve(Json::array({failing(429, rate_limit_body(cli.kind), 1, done_turn(), 1)}),
        /*reconnects=*/1, /*codex_retries=*/1);
  ASSERT_FALSE(HasFailure());
  Trace r = run();

  expect_answered(r, 1);
  EXPECT_EQ(r.kinds(), (std::vector<std::string>{"launched", "completed"}));
  // The runtime saw it wait, and saw it work again.
  EXPECT_EQ(r.records("waiting_out_limit").size(), 1u) << testing::PrintToString(r.log_events());
  EXPECT_TRUE(r.records("paused").empty());
  EXPECT_EQ(model_requests(), 2u);
  expect_nothing_left_the_machine();
}

INSTANTIATE_TEST_SUITE_P(Installed, RealCliFailure, testing::ValuesIn(kClis), cli_name);
INSTANTIATE_TEST_SUITE_P(Installed, RealCliOutOfTurns,
                         testing::Values(named("claude"), named("gemini")), cli_name);
INSTANTIATE_TEST_SUITE_P(Installed, RealCliGeminiFailure, testing::Values(named("gemini")),
                         cli_name);
INSTANTIATE_TEST_SUITE_P(Installed, RealCliCodexFailure, testing::Values(named("codex")), cli_name);

}  // namespace
}  // namespace devgraph
