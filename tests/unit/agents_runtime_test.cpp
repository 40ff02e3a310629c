// The persona runtime against fake agent CLIs (tests/fixtures/fake-cli):
// every result path, back-off, provider pauses, timeouts, floods, signals,
// concurrency, and the run_bundle.log records.
#include "agents/runtime.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <ctime>
#include <set>

#include "contracts/schema.h"
#include "support/stop_signal_sandbox.h"
#include "support/test_util.h"

namespace devgraph::agents {
namespace {

using namespace std::chrono_literals;

std::string fake_claude() {
  return test::test_dir() + "/fixtures/fake-cli/fake-claude";
}

std::vector<Json> read_log(const std::string& path) {
  return test::read_jsonl(path);
}

class ManualClock final : public Clock {
 public:
  std::chrono::system_clock::time_point wall() const override { return wall_; }
  std::chrono::steady_clock::time_point steady() const override { return steady_; }
  void advance(std::chrono::milliseconds d) {
    wall_ += d;
    steady_ += d;
  }
  void set_wall(std::chrono::system_clock::time_point w) { wall_ = w; }

 private:
  std::chrono::system_clock::time_point wall_{std::chrono::seconds(1'700'000'000)};
  std::chrono::steady_clock::time_point steady_{std::chrono::hours(1)};
};

class Runtime : public ::testing::Test {
 protected:
  void SetUp() override {
    worktree = scratch / "wt";
    run_dir = scratch / "run";
    ASSERT_TRUE(make_directories(worktree).ok());
    ASSERT_TRUE(make_directories(run_dir).ok());
    log_path = run_dir + "/bundles/b1/run_bundle.log";
    cfg.backend.binary = fake_claude();
    cfg.bundle = "b1";
    cfg.log_path = log_path;
    cfg.result_schema = result_schema_path(test::source_dir() + "/skill");
    cfg.persona_timeout = 20s;
    cfg.kill_grace = 1s;
    cfg.backoff_base = 10ms;
    cfg.backoff_cap = 40ms;
    cfg.retry_budget = 1s;
  }

  std::unique_ptr<PersonaRuntime> make(const Clock& clock = system_clock()) {
    auto rt = PersonaRuntime::create(cfg, clock);
    if (!rt) ADD_FAILURE() << rt.error().message;
    return rt ? std::move(rt).value() : nullptr;
  }

  LaunchRequest req(const std::string& persona, const std::string& dispatch,
                    std::optional<std::string> task = "T1") {
    return {persona, std::move(task), dispatch, worktree, run_dir, test::source_dir() + "/skill"};
  }

  // Runs the loop until `want` launches completed; returns every event.
  std::vector<RuntimeEvent> drain(PersonaRuntime& rt) {
    std::vector<RuntimeEvent> events;
    while (auto ev = rt.next_event()) events.push_back(std::move(*ev));
    return events;
  }

  static std::vector<Completion> completions(const std::vector<RuntimeEvent>& events) {
    std::vector<Completion> out;
    for (const auto& e : events)
      if (e.completion) out.push_back(*e.completion);
    return out;
  }

  static std::vector<std::string> kinds(const std::vector<RuntimeEvent>& events) {
    std::vector<std::string> out;
    for (const auto& e : events) out.emplace_back(event_kind_name(e.kind));
    return out;
  }

  test::Scratch scratch;
  std::string worktree, run_dir, log_path;
  RuntimeConfig cfg;
};

TEST_F(Runtime, GoodResultAndTheReferenceLogRecords) {
  auto rt = make();
  ASSERT_TRUE(rt);
  auto id = rt->launch(req("developer", "Task T1 of bundle b1. fake-mode=good"));
  ASSERT_TRUE(id.ok()) << id.error().message;
  auto events = drain(*rt);
  EXPECT_EQ(kinds(events), (std::vector<std::string>{"launched", "completed"}));
  auto done = completions(events);
  ASSERT_EQ(done.size(), 1u);
  const Completion& c = done[0];
  EXPECT_EQ(c.id, *id);
  EXPECT_EQ(c.outcome, Outcome::result);
  EXPECT_EQ(c.result["status"], "DONE");
  EXPECT_EQ(c.result["summary"], "ok");
  EXPECT_EQ(c.session_id, "sess-1");
  EXPECT_DOUBLE_EQ(c.cost_usd, 0.25);
  EXPECT_EQ(c.tokens, 7) << "input_tokens 3 and output_tokens 4";
  EXPECT_EQ(c.token_usage, (TokenUsage{3, std::nullopt, std::nullopt, 4, std::nullopt}));
  EXPECT_EQ(c.duration_ms, 7);
  EXPECT_EQ(c.attempts, 1);
  EXPECT_FALSE(c.resumed);
  EXPECT_EQ(c.handle.size(), 15u);
  EXPECT_EQ(c.handle.rfind("hl-", 0), 0u);
  EXPECT_EQ(rt->outstanding(), 0u);
  EXPECT_DOUBLE_EQ(rt->total_cost(), 0.25);

  auto log = read_log(log_path);
  ASSERT_EQ(log.size(), 2u);
  for (const char* key : {"ts", "bundle", "event", "persona", "task", "handle", "resumed"})
    EXPECT_TRUE(log[0].contains(key)) << key;
  EXPECT_EQ(log[0]["event"], "launched");
  EXPECT_EQ(log[0]["bundle"], "b1");
  EXPECT_EQ(log[0]["resumed"], false);
  EXPECT_EQ(log[1]["event"], "finished");
  for (const char* key : {"persona", "task", "handle", "exit", "status", "cost_usd", "duration_ms",
                          "session_id", "error"})
    EXPECT_TRUE(log[1].contains(key)) << key;
  EXPECT_EQ(log[1]["exit"], 0);
  EXPECT_EQ(log[1]["status"], "DONE");
  EXPECT_EQ(log[1]["handle"], c.handle);
  EXPECT_TRUE(log[1]["error"].is_null());
  // The steady clock orders the records of different bundles' logs.
  ASSERT_TRUE(log[0]["mono_us"].is_number_integer());
  ASSERT_TRUE(log[1]["mono_us"].is_number_integer());
  EXPECT_LE(log[0]["mono_us"].get<long long>(), log[1]["mono_us"].get<long long>());
}

TEST_F(Runtime, ACliThatReportsNoTokensHasNone) {
  auto rt = make();
  ASSERT_TRUE(rt->launch(req("developer", "fake-mode=fenced")).ok());
  auto done = completions(drain(*rt));
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].tokens, std::nullopt);
  EXPECT_TRUE(done[0].token_usage.empty());
  EXPECT_DOUBLE_EQ(done[0].cost_usd, 0.1);
}

TEST_F(Runtime, APauseFromAnotherBundlesLimitQueuesNewLaunchesUntilItEnds) {
  ManualClock clock;
  auto rt = make(clock);
  ASSERT_TRUE(rt);
  rt->pause(clock.wall() - 1s, "already over");
  EXPECT_FALSE(rt->paused_until().has_value()) << "a time already past changes nothing";
  rt->pause(clock.wall() + 60s, "b2 met a usage limit");
  rt->pause(clock.wall() + 30s, "an earlier end");
  ASSERT_TRUE(rt->paused_until().has_value());
  EXPECT_EQ(*rt->paused_until(), clock.wall() + 60s) << "the later pause is kept";
  ASSERT_TRUE(rt->launch(req("developer", "fake-mode=good")).ok());
  EXPECT_EQ(rt->live(), 0u);
  EXPECT_EQ(rt->outstanding(), 1u);
  EXPECT_FALSE(rt->next_event(clock.steady()).has_value()) << "nothing happens while paused";
  clock.advance(60s);
  auto ev = rt->next_event(clock.steady());
  ASSERT_TRUE(ev.has_value());
  EXPECT_EQ(ev->kind, RuntimeEvent::Kind::unpaused);
  auto done = completions(drain(*rt));
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].outcome, Outcome::result);
  auto log = read_log(log_path);
  ASSERT_FALSE(log.empty());
  EXPECT_EQ(log[0]["event"], "paused");
  EXPECT_EQ(log[0]["run_wide"], true);
  EXPECT_TRUE(log[0]["persona"].is_null());
  EXPECT_EQ(log[0]["reason"], "b2 met a usage limit");
  EXPECT_EQ(log[0]["wait_s"], 60.0);
}

TEST_F(Runtime, FencedResult) {
  auto rt = make();
  ASSERT_TRUE(rt->launch(req("tester", "fake-mode=fenced")).ok());
  auto done = completions(drain(*rt));
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].outcome, Outcome::result);
  EXPECT_EQ(done[0].result["status"], "DONE_WITH_CONCERNS");
}

TEST_F(Runtime, JunkWithoutASessionIsMalformedAtOnce) {
  auto rt = make();
  ASSERT_TRUE(rt->launch(req("tester", "fake-mode=junk")).ok());
  auto events = drain(*rt);
  EXPECT_EQ(kinds(events), (std::vector<std::string>{"launched", "completed"}));
  const Completion& c = *events.back().completion;
  EXPECT_EQ(c.outcome, Outcome::malformed_result);
  EXPECT_EQ(c.result["status"], "BLOCKED");
  EXPECT_EQ(c.result["blockers"], Json::array({"malformed_result"}));
  EXPECT_NE(c.error.find("not valid JSON"), std::string::npos) << c.error;
}

TEST_F(Runtime, NoResultIsResumedOnceBySession) {
  auto rt = make();
  ASSERT_TRUE(rt->launch(req("developer", "fake-mode=noresult")).ok());
  auto events = drain(*rt);
  EXPECT_EQ(kinds(events),
            (std::vector<std::string>{"launched", "resuming", "launched", "completed"}));
  EXPECT_EQ(events[2].detail, "sess-nr") << "the resume names the session";
  const Completion& c = *events.back().completion;
  EXPECT_EQ(c.outcome, Outcome::result);
  EXPECT_EQ(c.result["summary"], "resumed");
  EXPECT_TRUE(c.resumed);
  // claude reports the session's cost so far on the resume ($0.30): both
  // calls are paid for, and the first only once.
  EXPECT_EQ(c.session_id, "sess-nr");
  EXPECT_NEAR(c.cost_usd, 0.30, 1e-9) << "both calls are paid for, once";
  EXPECT_NEAR(rt->total_cost(), 0.30, 1e-9);
  // claude's usage covers each call alone: both are added, part by part.
  EXPECT_EQ(c.token_usage, (TokenUsage{2 + 3, 50, 30, 1 + 4, 1}));
  EXPECT_EQ(c.tokens, 83 + 7);
  auto log = read_log(log_path);
  ASSERT_EQ(log.size(), 4u);
  EXPECT_EQ(log[2]["event"], "launched");
  EXPECT_EQ(log[2]["resumed"], true);
  EXPECT_EQ(log[2]["handle"], log[0]["handle"]) << "a resume keeps the handle";
}

TEST_F(Runtime, ResumeThatStillHasNoResultIsBlocked) {
  ::setenv("FAKE_RESUME_MODE", "noresult", 1);
  auto rt = make();
  ::unsetenv("FAKE_RESUME_MODE");
  ASSERT_TRUE(rt->launch(req("developer", "fake-mode=noresult")).ok());
  auto events = drain(*rt);
  EXPECT_EQ(kinds(events),
            (std::vector<std::string>{"launched", "resuming", "launched", "completed"}));
  const Completion& c = *events.back().completion;
  EXPECT_EQ(c.outcome, Outcome::malformed_result);
  EXPECT_EQ(c.result["blockers"], Json::array({"malformed_result"}));
}

TEST_F(Runtime, SchemaViolationCountsAsMalformed) {
  ::setenv("FAKE_RESUME_MODE", "badschema", 1);
  auto rt = make();
  ::unsetenv("FAKE_RESUME_MODE");
  ASSERT_TRUE(rt->launch(req("tester", "fake-mode=badschema")).ok());
  auto events = drain(*rt);
  const Completion& c = *events.back().completion;
  EXPECT_EQ(c.outcome, Outcome::malformed_result);
  EXPECT_NE(c.error.find("result contract"), std::string::npos) << c.error;
}

TEST_F(Runtime, NonZeroExitIsRetriedAfterABackoff) {
  auto rt = make();
  ASSERT_TRUE(
      rt->launch(req("developer", "fake-mode=fail-then-good fake-state=" + scratch / "s")).ok());
  auto events = drain(*rt);
  EXPECT_EQ(kinds(events),
            (std::vector<std::string>{"launched", "backoff", "launched", "completed"}));
  EXPECT_EQ(events[1].delay, 10ms);
  EXPECT_NE(events[1].detail.find("exit 1"), std::string::npos);
  EXPECT_EQ(events[2].attempt, 2);
  const Completion& c = *events.back().completion;
  EXPECT_EQ(c.outcome, Outcome::result);
  EXPECT_EQ(c.result["summary"], "after retry");
  EXPECT_EQ(c.attempts, 2);
  EXPECT_EQ(c.tokens, 25 + 7) << "the failed attempt's tokens count too";
  auto log = read_log(log_path);
  ASSERT_EQ(log.size(), 5u);
  EXPECT_EQ(log[1]["event"], "finished");
  EXPECT_EQ(log[1]["exit"], 1);
  EXPECT_NE(log[1]["error"].get<std::string>().find("overloaded"), std::string::npos);
  EXPECT_EQ(log[2]["event"], "backoff");
  for (const char* key : {"persona", "task", "attempt", "delay_s", "error"})
    EXPECT_TRUE(log[2].contains(key)) << key;
  EXPECT_EQ(log[2]["attempt"], 1);
  EXPECT_DOUBLE_EQ(log[2]["delay_s"].get<double>(), 0.01);
}

TEST_F(Runtime, BackoffDoublesToTheCapWithinTheBudget) {
  cfg.backoff_base = 10ms;
  cfg.backoff_cap = 20ms;
  cfg.retry_budget = 50ms;
  auto rt = make();
  ASSERT_TRUE(rt->launch(req("developer", "fake-mode=fail")).ok());
  auto events = drain(*rt);
  std::vector<std::chrono::milliseconds> delays;
  for (const auto& e : events)
    if (e.kind == RuntimeEvent::Kind::backoff) delays.push_back(e.delay);
  EXPECT_EQ(delays, (std::vector<std::chrono::milliseconds>{10ms, 20ms, 20ms}));
  const Completion& c = *events.back().completion;
  EXPECT_EQ(c.outcome, Outcome::cli_error);
  EXPECT_EQ(c.attempts, 4);
  EXPECT_EQ(c.result["blockers"], Json::array({"cli_error"}));
  EXPECT_EQ(c.error.find('\n'), std::string::npos);
}

TEST_F(Runtime, DeathBySignalIsACliFailure) {
  cfg.retry_budget = 15ms;
  auto rt = make();
  ASSERT_TRUE(rt->launch(req("developer", "fake-mode=signal")).ok());
  auto events = drain(*rt);
  const Completion& c = *events.back().completion;
  EXPECT_EQ(c.outcome, Outcome::cli_error);
  EXPECT_EQ(c.term_signal, SIGKILL);
  EXPECT_EQ(c.attempts, 2);
  auto log = read_log(log_path);
  ASSERT_GE(log.size(), 2u);
  EXPECT_TRUE(log[1]["exit"].is_null());
  EXPECT_EQ(log[1]["signal"], SIGKILL);
}

TEST_F(Runtime, HangEndsInTimeout) {
  cfg.persona_timeout = 200ms;
  cfg.kill_grace = 100ms;
  auto rt = make();
  ASSERT_TRUE(rt->launch(req("tester", "fake-mode=hang")).ok());
  ASSERT_TRUE(rt->launch(req("tester", "fake-mode=hang-ignore-term", "T2")).ok());
  auto start = std::chrono::steady_clock::now();
  auto done = completions(drain(*rt));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  ASSERT_EQ(done.size(), 2u);
  for (const auto& c : done) {
    EXPECT_EQ(c.outcome, Outcome::timeout);
    EXPECT_EQ(c.result["status"], "BLOCKED");
    EXPECT_EQ(c.result["blockers"], Json::array({"timeout"}));
    EXPECT_EQ(c.attempts, 1) << "a timeout is not retried";
  }
  auto log = read_log(log_path);
  ASSERT_EQ(log.size(), 4u);
  EXPECT_EQ(log[3]["timed_out"], true);
}

TEST_F(Runtime, GigabytesOfOutputAreBoundedAndTheResultStillRead) {
  cfg.max_output_bytes = 1 << 20;
  ::setenv("FAKE_BYTES", "536870912", 1);  // per stream: 1 GiB in all
  auto rt = make();
  ::unsetenv("FAKE_BYTES");
  ASSERT_TRUE(rt->launch(req("tester", "fake-mode=flood")).ok());
  auto done = completions(drain(*rt));
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].outcome, Outcome::result) << done[0].error;
  EXPECT_EQ(done[0].result["summary"], "flooded");
  auto log = read_log(log_path);
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[1]["output_truncated"], true);
}

TEST_F(Runtime, EveryAttemptsOutputIsKeptWhereTheRequestSays) {
  auto rt = make();
  LaunchRequest r = req("developer", "fake-mode=fail-then-good fake-state=" + scratch / "s");
  r.output_path = scratch / "developer.output.log";
  ASSERT_TRUE(rt->launch(r).ok());
  auto done = completions(drain(*rt));
  ASSERT_EQ(done.size(), 1u);
  std::string kept = test::slurp(r.output_path);
  const std::string first = "==== " + done[0].handle + " developer attempt 1: exit 1 ====";
  const std::string second = "==== " + done[0].handle + " developer attempt 2: exit 0 ====";
  ASSERT_NE(kept.find(first), std::string::npos) << kept;
  ASSERT_NE(kept.find(second), std::string::npos) << kept;
  EXPECT_LT(kept.find(first), kept.find(second));
  EXPECT_NE(kept.find("fake-claude: overloaded"), std::string::npos) << "stderr is kept";
  EXPECT_NE(kept.find("API Error: 529 overloaded"), std::string::npos) << "stdout is kept";
  EXPECT_NE(kept.find("after retry"), std::string::npos);
}

TEST_F(Runtime, KeptOutputIsBoundedAndAFailedWriteIsOnlyLogged) {
  cfg.max_output_bytes = 4 << 20;
  ::setenv("FAKE_BYTES", "2097152", 1);
  auto rt = make();
  ::unsetenv("FAKE_BYTES");
  LaunchRequest r = req("tester", "fake-mode=flood");
  r.output_path = scratch / "tester.output.log";
  ASSERT_TRUE(rt->launch(r).ok());
  LaunchRequest nowhere = req("developer", "fake-mode=good");
  nowhere.output_path = scratch / "no/such/dir/developer.output.log";
  ASSERT_TRUE(rt->launch(nowhere).ok());
  auto done = completions(drain(*rt));
  ASSERT_EQ(done.size(), 2u);
  for (const auto& c : done) EXPECT_EQ(c.outcome, Outcome::result) << c.error;
  const size_t size = file_size(r.output_path);
  EXPECT_LE(size, 2 * kKeptOutputBytes + 1024);
  EXPECT_GE(size, 2 * kKeptOutputBytes);
  bool noted = false;
  for (const auto& rec : read_log(log_path)) noted |= rec["event"] == "output_not_kept";
  EXPECT_TRUE(noted);
}

TEST_F(Runtime, UsageLimitPausesNewLaunchesUntilTheReset) {
  ManualClock clock;
  const long long reset = 2'000'000'000;
  clock.set_wall(std::chrono::system_clock::time_point(std::chrono::seconds(reset - 3600)));
  ::setenv("FAKE_RESET", std::to_string(reset).c_str(), 1);
  auto rt = make(clock);
  ::unsetenv("FAKE_RESET");
  std::string state = "fake-state=" + scratch / "limit";
  ASSERT_TRUE(rt->launch(req("developer", "fake-mode=limit-then-good " + state)).ok());
  // Run until the limit is seen.
  std::vector<RuntimeEvent> events;
  while (events.empty() || events.back().kind != RuntimeEvent::Kind::paused) {
    auto ev = rt->next_event();
    ASSERT_TRUE(ev.has_value());
    events.push_back(std::move(*ev));
  }
  EXPECT_EQ(events.back().delay, 3600s);
  EXPECT_EQ(events.back().until,
            std::chrono::system_clock::time_point(std::chrono::seconds(reset)));
  EXPECT_NE(events.back().detail.find("usage limit"), std::string::npos);
  ASSERT_TRUE(rt->paused_until().has_value());
  EXPECT_EQ(*rt->paused_until(),
            std::chrono::system_clock::time_point(std::chrono::seconds(reset)));
  // A new launch waits behind the pause: nothing starts.
  ASSERT_TRUE(rt->launch(req("tester", "fake-mode=limit-then-good " + state, "T2")).ok());
  EXPECT_EQ(rt->live(), 0u);
  EXPECT_EQ(rt->outstanding(), 2u);
  clock.advance(3599s);
  EXPECT_FALSE(rt->next_event(clock.steady()).has_value()) << "still paused";
  clock.advance(1s);
  auto ev = rt->next_event(clock.steady());
  ASSERT_TRUE(ev.has_value());
  EXPECT_EQ(ev->kind, RuntimeEvent::Kind::unpaused);
  EXPECT_EQ(ev->delay, 3600s);
  auto rest = drain(*rt);
  auto done = completions(rest);
  ASSERT_EQ(done.size(), 2u);
  for (const auto& c : done) {
    EXPECT_EQ(c.outcome, Outcome::result);
    EXPECT_EQ(c.attempts, 1) << "a provider limit spends no retry";
  }
  bool paused = false, unpaused = false;
  for (const Json& rec : read_log(log_path)) {
    if (rec["event"] == "paused") {
      paused = true;
      EXPECT_EQ(rec["until"], "2033-05-18T03:33:20+00:00");
      EXPECT_EQ(rec["wait_s"], 3600.0);
      EXPECT_EQ(rec["agent"], "claude");
    }
    if (rec["event"] == "unpaused") unpaused = true;
  }
  EXPECT_TRUE(paused);
  EXPECT_TRUE(unpaused);
}

// The failure tables at work (backend.h; the shapes are the real CLIs'):
// a rejected key is not retried, a rate limit without a reset waits the
// rate pause, a persona out of turns is asked for its result.
TEST_F(Runtime, AFatalFailureEndsAtOnceWithoutARetry) {
  auto rt = make();
  ASSERT_TRUE(rt->launch(req("developer", "fake-mode=auth")).ok());
  auto events = drain(*rt);
  auto done = completions(events);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].outcome, Outcome::cli_error);
  EXPECT_EQ(done[0].attempts, 1);
  EXPECT_NE(done[0].error.find("not retried (auth)"), std::string::npos) << done[0].error;
  EXPECT_NE(done[0].error.find("Invalid API key"), std::string::npos) << done[0].error;
  for (const auto& k : kinds(events)) EXPECT_NE(k, "backoff");
}

TEST_F(Runtime, ARateLimitWithoutAResetPausesForTheRatePauseOnly) {
  ManualClock clock;
  cfg.rate_limit_pause = 60s;
  cfg.default_pause = 15min;
  auto rt = make(clock);
  std::string state = "fake-state=" + scratch / "rate";
  ASSERT_TRUE(rt->launch(req("developer", "fake-mode=rate-then-good " + state)).ok());
  std::vector<RuntimeEvent> events;
  while (events.empty() || events.back().kind != RuntimeEvent::Kind::paused) {
    auto ev = rt->next_event();
    ASSERT_TRUE(ev.has_value());
    events.push_back(std::move(*ev));
  }
  EXPECT_EQ(events.back().delay, 60s) << "a per-minute limit is not a 15-minute pause";
  EXPECT_NE(events.back().detail.find("rate limit"), std::string::npos) << events.back().detail;
  clock.advance(60s);
  auto ev = rt->next_event(clock.steady());
  ASSERT_TRUE(ev.has_value());
  EXPECT_EQ(ev->kind, RuntimeEvent::Kind::unpaused);
  auto done = completions(drain(*rt));
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].outcome, Outcome::result);
  EXPECT_EQ(done[0].attempts, 1);
}

TEST_F(Runtime, APersonaOutOfTurnsIsResumedForItsResult) {
  auto rt = make();
  ASSERT_TRUE(rt->launch(req("developer", "fake-mode=max-turns")).ok());
  auto events = drain(*rt);
  auto done = completions(events);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].outcome, Outcome::result) << done[0].error;
  EXPECT_TRUE(done[0].resumed);
  EXPECT_EQ(done[0].attempts, 1);
  EXPECT_EQ(done[0].result["summary"], "resumed");
  EXPECT_NEAR(done[0].cost_usd, 0.75, 1e-9) << "the session's cost, not $0.50 + $0.75";
  auto log = read_log(log_path);
  ASSERT_EQ(log.size(), 4u);
  EXPECT_EQ(log[3]["cost_usd"], 0.75) << "the log keeps what the CLI printed";
  auto k = kinds(events);
  EXPECT_NE(std::find(k.begin(), k.end(), "resuming"), k.end());
  EXPECT_EQ(std::find(k.begin(), k.end(), "backoff"), k.end());
}

// codex waits out a long Retry-After by itself, printing one reconnect
// line and then nothing: stopped after limit_stall, the backend paused,
// the launch queued again without spending a retry.
TEST_F(Runtime, ACodexWaitingOutALimitIsStoppedAndPausedNotTimedOut) {
  cfg.backend.kind = BackendKind::codex;
  cfg.backend.binary = test::test_dir() + "/fixtures/fake-cli/fake-codex";
  cfg.limit_stall = 100ms;
  cfg.rate_limit_pause = 10ms;
  cfg.persona_timeout = 60s;  // a failure condition only
  auto rt = make();
  std::string state = "fake-state=" + scratch / "stall";
  ASSERT_TRUE(rt->launch(req("developer", "fake-mode=stall-then-good " + state)).ok());
  auto events = drain(*rt);
  auto done = completions(events);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].outcome, Outcome::result) << done[0].error;
  EXPECT_EQ(done[0].result["summary"], "after the stall");
  EXPECT_EQ(done[0].attempts, 1) << "a provider limit spends no retry";
  auto k = kinds(events);
  EXPECT_NE(std::find(k.begin(), k.end(), "paused"), k.end());
  bool waited = false;
  for (const Json& rec : read_log(log_path)) {
    if (rec["event"] == "waiting_out_limit") waited = true;
    if (rec["event"] == "finished" && rec["status"].is_null()) {
      EXPECT_NE(rec["error"].get<std::string>().find("waiting out a provider limit"),
                std::string::npos)
          << rec.dump();
      EXPECT_FALSE(rec.contains("timed_out"));
    }
  }
  EXPECT_TRUE(waited);
}

TEST_F(Runtime, ACodexThatRecoversFromAReconnectByItselfIsLeftAlone) {
  cfg.backend.kind = BackendKind::codex;
  cfg.backend.binary = test::test_dir() + "/fixtures/fake-cli/fake-codex";
  cfg.limit_stall = 1h;
  auto rt = make();
  ASSERT_TRUE(rt->launch(req("developer", "fake-mode=reconnect-then-good")).ok());
  auto events = drain(*rt);
  auto done = completions(events);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].outcome, Outcome::result) << done[0].error;
  EXPECT_EQ(done[0].result["summary"], "recovered");
  auto k = kinds(events);
  EXPECT_EQ(std::find(k.begin(), k.end(), "paused"), k.end());
}

// codex reports a resumed thread's usage so far: the resume adds only what
// grew, so the first turn is not counted twice.
TEST_F(Runtime, ACodexResumeCountsItsThreadOnce) {
  cfg.backend.kind = BackendKind::codex;
  cfg.backend.binary = test::test_dir() + "/fixtures/fake-cli/fake-codex";
  auto rt = make();
  ASSERT_TRUE(rt->launch(req("developer", "fake-mode=noresult")).ok());
  auto events = drain(*rt);
  auto done = completions(events);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].outcome, Outcome::result) << done[0].error;
  EXPECT_TRUE(done[0].resumed);
  EXPECT_EQ(done[0].result["summary"], "resumed");
  // The thread's totals: input_tokens 150 (100 cached, 10 written to the
  // cache), output_tokens 30 (8 reasoning).
  EXPECT_EQ(done[0].token_usage, (TokenUsage{40, 100, 10, 30, 8}));
  EXPECT_EQ(done[0].tokens, 180);
}

TEST_F(Runtime, LimitBeyondMaxPauseBlocks) {
  cfg.max_pause = 10min;
  ::setenv("FAKE_RESET", "2000000000", 1);
  auto rt = make();
  ::unsetenv("FAKE_RESET");
  ASSERT_TRUE(rt->launch(req("developer", "fake-mode=limit-then-good")).ok());
  auto done = completions(drain(*rt));
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].outcome, Outcome::provider_limit);
  EXPECT_EQ(done[0].result["blockers"], Json::array({"provider_limit"}));
}

TEST_F(Runtime, ABackoffDoesNotDelayAnotherPersonasResult) {
  cfg.backoff_base = 2000ms;
  cfg.backoff_cap = 2000ms;
  cfg.retry_budget = 10s;
  auto rt = make();
  ASSERT_TRUE(
      rt->launch(req("developer", "fake-mode=fail-then-good fake-state=" + scratch / "a", "TA"))
          .ok());
  auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(rt->launch(req("tester", "fake-mode=slow-good", "TB")).ok());
  auto events = drain(*rt);
  int b_done = -1, a_relaunch = -1;
  for (int i = 0; i < static_cast<int>(events.size()); ++i) {
    const auto& e = events[static_cast<size_t>(i)];
    if (e.kind == RuntimeEvent::Kind::completed && e.task == "TB") b_done = i;
    if (e.kind == RuntimeEvent::Kind::launched && e.task == "TA" && e.attempt == 2) a_relaunch = i;
  }
  ASSERT_GE(b_done, 0);
  ASSERT_GE(a_relaunch, 0);
  EXPECT_LT(b_done, a_relaunch) << "TB's result arrived while TA waited out its back-off";
  const Completion& b = *events[static_cast<size_t>(b_done)].completion;
  EXPECT_EQ(b.outcome, Outcome::result);
  EXPECT_LT(b.elapsed, 1900ms) << "TB was not held up by TA's 2 s back-off";
  EXPECT_GE(std::chrono::steady_clock::now() - start, 2000ms);
}

TEST_F(Runtime, ManyConcurrentPersonas) {
  auto rt = make();
  const int n = 24;
  for (int i = 0; i < n; ++i)
    ASSERT_TRUE(rt->launch(req("tester", "fake-mode=slow-good", "T" + std::to_string(i))).ok());
  EXPECT_EQ(rt->live(), static_cast<size_t>(n));
  auto start = std::chrono::steady_clock::now();
  auto done = completions(drain(*rt));
  ASSERT_EQ(done.size(), static_cast<size_t>(n));
  std::set<std::string> tasks, handles;
  for (const auto& c : done) {
    EXPECT_EQ(c.outcome, Outcome::result);
    tasks.insert(*c.task);
    handles.insert(c.handle);
  }
  EXPECT_EQ(tasks.size(), static_cast<size_t>(n));
  EXPECT_EQ(handles.size(), static_cast<size_t>(n));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(n * 200 / 2));
  EXPECT_EQ(read_log(log_path).size(), static_cast<size_t>(2 * n));
}

TEST_F(Runtime, TheCliRunsInTheWorktreeWithTheReferenceArgvAndNoSecrets) {
  cfg.backend.allowed_tools = {"Read", "Bash(make *)"};
  cfg.backend.disallowed_tools = {"Bash(git push *)"};
  ::setenv("GH_TOKEN", "ghp_secret", 1);
  ::setenv("ANTHROPIC_API_KEY", "sk-test", 1);
  ::setenv("FAKE_ARGV", (scratch / "argv").c_str(), 1);
  ::setenv("FAKE_ENV", (scratch / "env").c_str(), 1);
  auto rt = make();
  for (const char* v : {"GH_TOKEN", "ANTHROPIC_API_KEY", "FAKE_ARGV", "FAKE_ENV"}) ::unsetenv(v);
  ASSERT_TRUE(rt->launch(req("developer", "Task T1 of bundle b1.")).ok());
  drain(*rt);
  std::string argv = test::slurp(scratch / "argv");
  EXPECT_EQ(argv.rfind("-p\n", 0), 0u) << argv;
  EXPECT_NE(argv.find("/skill/agents/developer.md"), std::string::npos);
  EXPECT_NE(argv.find("Task T1 of bundle b1."), std::string::npos);
  EXPECT_NE(argv.find("--add-dir\n" + run_dir + "\n"), std::string::npos);
  EXPECT_NE(argv.find("--allowedTools\nRead\nBash(make *)\n--disallowedTools\nBash(git push *)\n"),
            std::string::npos);
  std::string env = test::slurp(scratch / "env");
  EXPECT_EQ(env.find("GH_TOKEN"), std::string::npos);
  EXPECT_NE(env.find("ANTHROPIC_API_KEY=sk-test"), std::string::npos);
  EXPECT_EQ(test::slurp(scratch / "env.pwd"), worktree + "\n");
}

TEST_F(Runtime, BadRequestsStartNothing) {
  auto rt = make();
  auto r = rt->launch(req("no-such-persona", "x"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("no-such-persona"), std::string::npos);
  r = rt->launch(req("../etc/passwd", "x"));
  ASSERT_FALSE(r.ok());
  LaunchRequest bad = req("developer", "x");
  bad.worktree = scratch / "missing";
  r = rt->launch(bad);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("missing"), std::string::npos);
  EXPECT_EQ(rt->outstanding(), 0u);
  EXPECT_FALSE(rt->next_event().has_value());
  EXPECT_TRUE(read_log(log_path).empty());
}

TEST_F(Runtime, BadConfigurationIsAnError) {
  RuntimeConfig c = cfg;
  c.result_schema = scratch / "nope.json";
  EXPECT_FALSE(PersonaRuntime::create(c).ok());
  c = cfg;
  c.backend.kind = BackendKind::command;
  auto r = PersonaRuntime::create(c);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("--agent"), std::string::npos);
}

TEST_F(Runtime, AMissingBinaryCompletesAsLaunchFailed) {
  cfg.backend.binary = scratch / "no-such-claude";
  auto rt = make();
  ASSERT_TRUE(rt->launch(req("developer", "x")).ok());
  auto events = drain(*rt);
  ASSERT_EQ(events.size(), 1u);
  const Completion& c = *events[0].completion;
  EXPECT_EQ(c.outcome, Outcome::launch_failed);
  EXPECT_NE(c.error.find("no-such-claude"), std::string::npos);
}

TEST_F(Runtime, DriverTimersAndDescriptorsShareTheLoop) {
  auto rt = make();
  auto t = rt->add_timer(std::chrono::steady_clock::now() + 50ms);
  ASSERT_TRUE(rt->launch(req("tester", "fake-mode=slow-good")).ok());
  auto events = drain(*rt);
  EXPECT_EQ(kinds(events), (std::vector<std::string>{"launched", "timer", "completed"}));
  EXPECT_EQ(events[1].timer, t);
}

// -- stopping -----------------------------------------------------------------

// A FIFO the fake CLI writes "ready" to once its signal traps are set
// (FAKE_READY), watched on the runtime's own loop: the tests wait for
// that event, never for a time.
class ReadyPipe {
 public:
  explicit ReadyPipe(const std::string& path) : path_(path) {
    if (::mkfifo(path.c_str(), 0600) != 0) ADD_FAILURE() << "mkfifo " << path;
    read_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    // A writer of our own, so the FIFO never reads as hung up between
    // the children's writes.
    write_ = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  }
  ~ReadyPipe() {
    ::close(read_);
    ::close(write_);
  }
  const std::string& path() const { return path_; }

  // Runs the runtime until `n` children said they are ready; returns the
  // events seen meanwhile (fd_ready aside).
  std::vector<RuntimeEvent> wait_for(PersonaRuntime& rt, int n) {
    std::vector<RuntimeEvent> seen;
    auto watch = rt.watch_fd(read_, EPOLLIN);
    if (!watch) ADD_FAILURE() << watch.error().message;
    int lines = 0;
    while (watch && lines < n) {
      auto ev = rt.next_event();
      if (!ev) {
        ADD_FAILURE() << "the runtime went idle before " << n << " children were ready";
        break;
      }
      if (ev->kind != RuntimeEvent::Kind::fd_ready) {
        seen.push_back(std::move(*ev));
        continue;
      }
      char buf[256];
      ssize_t got = ::read(read_, buf, sizeof buf);
      for (ssize_t i = 0; i < got; ++i) lines += buf[i] == '\n';
    }
    if (watch) rt.unwatch_fd(*watch);
    return seen;
  }

 private:
  std::string path_;
  int read_ = -1;
  int write_ = -1;
};

TEST_F(Runtime, AStopSignalIsAnEventAndStopAllEndsEveryPersona) {
  test::StopSignalSandbox sandbox;
  cfg.watch_stop_signals = true;
  cfg.kill_grace = 100ms;  // the TERM-trapping child is KILLed after it
  cfg.children_record = scratch / "children";
  ReadyPipe ready(scratch / "ready");
  ::setenv("FAKE_READY", ready.path().c_str(), 1);
  auto rt = make();
  ::unsetenv("FAKE_READY");
  ASSERT_TRUE(rt);
  auto quits = rt->launch(req("developer", "fake-mode=hang", "T1"));
  auto stays = rt->launch(req("tester", "fake-mode=hang-ignore-term", "T2"));
  ASSERT_TRUE(quits.ok() && stays.ok());
  auto before = ready.wait_for(*rt, 2);
  EXPECT_EQ(kinds(before), (std::vector<std::string>{"launched", "launched"}));
  EXPECT_TRUE(path_exists(cfg.children_record));

  ASSERT_EQ(::raise(SIGINT), 0);
  auto ev = rt->next_event();
  ASSERT_TRUE(ev.has_value());
  EXPECT_EQ(ev->kind, RuntimeEvent::Kind::interrupted);
  EXPECT_EQ(ev->signal, SIGINT);
  EXPECT_EQ(rt->live(), 2u) << "the signal alone stops nothing";
  EXPECT_FALSE(rt->stopping());

  rt->stop_all();
  EXPECT_TRUE(rt->stopping());
  auto events = drain(*rt);
  EXPECT_EQ(kinds(events), (std::vector<std::string>{"completed", "completed"}))
      << "no retry, no resume: one completion per launch";
  std::map<LaunchId, Completion> done;
  for (const auto& c : completions(events)) done[c.id] = c;
  ASSERT_EQ(done.size(), 2u);
  for (const auto& [id, c] : done) {
    EXPECT_EQ(c.outcome, Outcome::interrupted) << c.error;
    EXPECT_EQ(c.result["status"], "BLOCKED");
    EXPECT_EQ(c.result["blockers"], Json::array({"interrupted"}));
    EXPECT_EQ(c.error, "interrupted by SIGINT");
    EXPECT_EQ(c.attempts, 1);
  }
  EXPECT_EQ(done[*quits].term_signal, SIGTERM) << "it ended on the TERM";
  EXPECT_EQ(done[*stays].term_signal, SIGKILL) << "the KILL after the grace ended it";
  EXPECT_EQ(rt->live(), 0u);
  EXPECT_EQ(rt->outstanding(), 0u);
  EXPECT_FALSE(path_exists(cfg.children_record)) << "no stale child is left on record";

  // Nothing new starts now: a launch completes at once, without a child.
  auto late = rt->launch(req("developer", "fake-mode=good", "T3"));
  ASSERT_TRUE(late.ok());
  auto after = drain(*rt);
  ASSERT_EQ(kinds(after), (std::vector<std::string>{"completed"}));
  EXPECT_EQ(after[0].completion->id, *late);
  EXPECT_EQ(after[0].completion->outcome, Outcome::interrupted);
  EXPECT_EQ(rt->persona_runs(), 2);

  int stopping = 0, interrupted = 0;
  for (const Json& rec : read_log(log_path)) {
    if (rec["event"] == "stopping") {
      ++stopping;
      EXPECT_EQ(rec["signal"], "SIGINT");
      EXPECT_EQ(rec["running"], 2);
      EXPECT_EQ(rec["waiting"], 0);
    }
    if (rec["event"] == "finished" && rec.value("interrupted", false)) ++interrupted;
  }
  EXPECT_EQ(stopping, 1);
  EXPECT_EQ(interrupted, 2);
}

TEST_F(Runtime, StopAllEndsBackoffsAndPausedLaunchesAtOnce) {
  cfg.backoff_base = 10min;
  cfg.backoff_cap = 10min;
  cfg.retry_budget = 1h;
  ::setenv("FAKE_RESET", std::to_string(std::time(nullptr) + 3600).c_str(), 1);
  auto rt = make();
  ::unsetenv("FAKE_RESET");
  ASSERT_TRUE(rt);
  auto run_until = [&](RuntimeEvent::Kind kind) {
    while (auto ev = rt->next_event())
      if (ev->kind == kind) return;
    ADD_FAILURE() << "no " << event_kind_name(kind) << " event";
  };
  auto backing_off = rt->launch(req("developer", "fake-mode=fail", "T1"));
  ASSERT_TRUE(backing_off.ok());
  run_until(RuntimeEvent::Kind::backoff);
  auto limited =
      rt->launch(req("tester", "fake-mode=limit-then-good fake-state=" + scratch / "l", "T2"));
  ASSERT_TRUE(limited.ok());
  run_until(RuntimeEvent::Kind::paused);
  auto queued = rt->launch(req("developer", "fake-mode=good", "T3"));
  ASSERT_TRUE(queued.ok());
  EXPECT_EQ(rt->live(), 0u);
  EXPECT_EQ(rt->outstanding(), 3u);

  rt->stop_all();
  auto events = drain(*rt);
  ASSERT_EQ(kinds(events), (std::vector<std::string>{"completed", "completed", "completed"}));
  std::vector<LaunchId> order;
  for (const auto& c : completions(events)) {
    order.push_back(c.id);
    EXPECT_EQ(c.outcome, Outcome::interrupted);
    EXPECT_EQ(c.error, "stopped before it finished");
    EXPECT_EQ(c.result["blockers"], Json::array({"interrupted"}));
  }
  EXPECT_EQ(order, (std::vector<LaunchId>{*backing_off, *limited, *queued}));
  EXPECT_FALSE(rt->paused_until().has_value());
  EXPECT_EQ(rt->persona_runs(), 2) << "neither the retry nor the queued launch started";
}

TEST_F(Runtime, AResultGivenWhileStoppingIsKept) {
  cfg.kill_grace = 1h;  // never waited out: the child answers the TERM
  ReadyPipe ready(scratch / "ready");
  ::setenv("FAKE_READY", ready.path().c_str(), 1);
  auto rt = make();
  ::unsetenv("FAKE_READY");
  ASSERT_TRUE(rt);
  ASSERT_TRUE(rt->launch(req("developer", "fake-mode=answer-on-term")).ok());
  ready.wait_for(*rt, 1);
  rt->stop_all();
  auto done = completions(drain(*rt));
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].outcome, Outcome::result) << done[0].error;
  EXPECT_EQ(done[0].result["summary"], "answered on TERM");
  EXPECT_EQ(done[0].exit_code, 0);
}

TEST_F(Runtime, WithoutTheOptInStopSignalsAreNotWatched) {
  test::StopSignalSandbox sandbox;  // holds the raised signal, then drops it
  auto rt = make();
  ASSERT_TRUE(rt);
  ASSERT_EQ(::raise(SIGTERM), 0);
  ASSERT_TRUE(rt->launch(req("tester", "fake-mode=good")).ok());
  EXPECT_EQ(kinds(drain(*rt)), (std::vector<std::string>{"launched", "completed"}));
}

}  // namespace
}  // namespace devgraph::agents
