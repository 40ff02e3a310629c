// Each backend's failure table against what the pinned real CLIs printed
// (tests/fixtures/cli-failures/, captured by tests/support/
// capture_cli_failures.py): one test case per fixture, each saying which
// row it must match and how the runtime then handles it.
#include <signal.h>

#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <ostream>
#include <string>

#include "agents/backend.h"
#include "support/test_util.h"
#include "util/json.h"

namespace devgraph::agents {
namespace {

using namespace std::chrono_literals;

const auto kNow = std::chrono::system_clock::time_point(std::chrono::seconds(1750000000));

struct Row {
  const char* fixture;
  bool failed;
  FailureKind kind;
  const char* shape;
  // For limits: whether it is a rate limit and the reset it gives (from
  // kNow), if any.
  bool rate = false;
  std::optional<std::chrono::seconds> reset = std::nullopt;
};

void PrintTo(const Row& row, std::ostream* os) {
  *os << row.fixture;
}

using K = FailureKind;
const Row kRows[] = {
    {"claude-recovers-after-429", false, K::transient, ""},
    {"claude-rate-limit-retry-after", true, K::limit, "rate-limit", true},
    {"claude-rate-limit-long-retry-after", true, K::limit, "rate-limit", true},
    {"claude-usage-limit", true, K::limit, "rate-limit", true},
    {"claude-usage-limit-unified-headers", true, K::limit, "rate-limit", true},
    {"claude-server-error", true, K::transient, "server-error"},
    {"claude-server-error-503", true, K::transient, "server-error"},
    {"claude-overloaded", true, K::transient, "overloaded"},
    {"claude-auth", true, K::fatal, "auth"},
    {"claude-max-turns", true, K::turn_limit, "max-turns"},
    {"codex-recovers-after-429", false, K::transient, ""},
    {"codex-rate-limit-retry-after", true, K::limit, "rate-limit", true},
    {"codex-usage-limit", true, K::limit, "usage-limit"},
    {"codex-server-error", true, K::transient, "server-error"},
    {"codex-server-error-503", true, K::transient, "server-error"},
    {"codex-server-error-default-retries", true, K::transient, "server-error"},
    {"codex-auth", true, K::fatal, "auth"},
    {"gemini-recovers-after-429", false, K::transient, ""},
    {"gemini-rate-limit-retry-after", true, K::limit, "rate-limit", false, 3s},
    {"gemini-rate-limit-long-retry-after", true, K::limit, "rate-limit", false, 3600s},
    {"gemini-usage-limit", true, K::limit, "rate-limit", true},
    {"gemini-usage-limit-daily", true, K::limit, "daily-quota"},
    {"gemini-server-error", true, K::transient, "server-error"},
    {"gemini-server-error-503", true, K::transient, "server-error"},
    {"gemini-auth", true, K::fatal, "auth"},
    {"gemini-auth-invalid-key-400", true, K::fatal, "auth"},
    {"gemini-max-turns", true, K::turn_limit, "turn-limit"},
};

Json fixture(const std::string& name) {
  return Json::parse(test::slurp(test::test_dir() + "/fixtures/cli-failures/" + name + ".json"));
}

std::unique_ptr<Backend> backend_for(const std::string& cli) {
  BackendOptions o;
  o.kind = *parse_backend(cli);
  auto b = make_backend(o);
  EXPECT_TRUE(b);
  return std::move(*b);
}

class FailureTable : public ::testing::TestWithParam<Row> {};

TEST_P(FailureTable, TheRealCliOutputMatchesItsRow) {
  const Row& row = GetParam();
  Json f = fixture(row.fixture);
  auto backend = backend_for(f["cli"]);
  int code = f["exit_code"].is_number_integer() ? f["exit_code"].get<int>() : -1;
  AgentOutput o =
      backend->parse(code, 0, f["stdout"].get<std::string>(), f["stderr"].get<std::string>(), kNow);
  EXPECT_EQ(o.failed, row.failed) << o.error;
  if (!row.failed) {
    EXPECT_NE(o.final_text.find("RESULT_JSON: "), std::string::npos) << o.final_text;
    return;
  }
  EXPECT_EQ(failure_kind_name(o.failure), failure_kind_name(row.kind)) << o.error;
  EXPECT_EQ(o.shape, row.shape) << o.error;
  EXPECT_FALSE(o.error.empty());
  EXPECT_EQ(o.error.find('\n'), std::string::npos) << "one line: " << o.error;
  ASSERT_EQ(o.limit.has_value(), row.kind == K::limit) << o.error;
  if (!o.limit) return;
  EXPECT_EQ(o.limit->rate, row.rate) << o.limit->message;
  EXPECT_FALSE(o.limit->message.empty());
  if (row.reset) {
    ASSERT_TRUE(o.limit->resets_at) << o.limit->message;
    EXPECT_EQ(*o.limit->resets_at - kNow, *row.reset);
  } else if (std::string(row.shape) == "usage-limit") {
    // codex prints the reset as a local clock time: "try again at 5:53 AM".
    ASSERT_TRUE(o.limit->resets_at) << o.limit->message;
    EXPECT_GT(*o.limit->resets_at, kNow);
    EXPECT_LE(*o.limit->resets_at - kNow, 24h);
  } else {
    EXPECT_FALSE(o.limit->resets_at) << o.limit->message;
  }
}

std::string row_name(const testing::TestParamInfo<Row>& info) {
  std::string n = info.param.fixture;
  for (char& c : n)
    if (c == '-') c = '_';
  return n;
}
INSTANTIATE_TEST_SUITE_P(Fixtures, FailureTable, testing::ValuesIn(kRows), row_name);

// codex waits out a long Retry-After by itself after one "Reconnecting..."
// line and prints nothing more: that line is what the runtime's stall timer
// starts on. A reconnect for a server error is no limit.
TEST(FailureTable, CodexReconnectingAfterA429IsALimitItWaitsOutByItself) {
  Json f = fixture("codex-rate-limit-long-retry-after");
  EXPECT_EQ(f["signal"], "SIGTERM") << "still waiting when the capture stopped it";
  auto codex = backend_for("codex");
  std::string out = f["stdout"];
  std::string last = out.substr(out.rfind("{\"type\":\"error\""));
  last = last.substr(0, last.find('\n'));
  auto marks = codex->live_marks();
  ASSERT_EQ(marks.size(), 1u);
  EXPECT_NE(last.find(marks[0]), std::string::npos);
  auto limit = codex->live_limit(last, kNow);
  ASSERT_TRUE(limit) << last;
  EXPECT_TRUE(limit->rate);
  EXPECT_NE(limit->message.find("429"), std::string::npos);

  std::string busy = fixture("codex-server-error-default-retries")["stdout"];
  std::string reconnect = busy.substr(busy.find("{\"type\":\"error\",\"message\":\"Reconnecting"));
  EXPECT_FALSE(codex->live_limit(reconnect.substr(0, reconnect.find('\n')), kNow));
  EXPECT_FALSE(codex->live_limit(R"({"type":"turn.started"})", kNow));
  // The other CLIs print nothing to watch.
  EXPECT_TRUE(backend_for("claude")->live_marks().empty());
  EXPECT_TRUE(backend_for("gemini")->live_marks().empty());
}

// The reconnect events of a run that recovered are no failure, and the
// failure of one that did not is its last message, not a reconnect.
TEST(FailureTable, CodexFailsOnItsLastTurnNotOnAReconnect) {
  auto codex = backend_for("codex");
  Json f = fixture("codex-recovers-after-429");
  AgentOutput o = codex->parse(0, 0, f["stdout"], f["stderr"], kNow);
  EXPECT_FALSE(o.failed) << o.error;
  EXPECT_FALSE(o.limit);
  f = fixture("codex-auth");
  o = codex->parse(1, 0, f["stdout"], f["stderr"], kNow);
  EXPECT_EQ(o.error.find("Reconnecting"), std::string::npos) << o.error;
  EXPECT_NE(o.error.find("401 Unauthorized"), std::string::npos) << o.error;
}

// gemini's document is on stderr after a stack trace, and printed twice
// on a turn limit (the second time after "[ERROR] "): the session id and
// the error come from it.
TEST(FailureTable, GeminiReadsItsErrorDocumentFromStderr) {
  auto gemini = backend_for("gemini");
  Json f = fixture("gemini-max-turns");
  AgentOutput o = gemini->parse(53, 0, f["stdout"], f["stderr"], kNow);
  EXPECT_EQ(o.session_id, "b6be0dd0-a20e-46a8-bcaa-329411193c53");
  EXPECT_NE(o.error.find("Reached max session turns"), std::string::npos) << o.error;
  EXPECT_EQ(o.error.find("at async"), std::string::npos) << "no stack trace: " << o.error;
  f = fixture("gemini-server-error");
  o = gemini->parse(244, 0, f["stdout"], f["stderr"], kNow);
  // The API's own document inside the message: its words and status.
  EXPECT_NE(o.error.find("error An internal error has occurred."), std::string::npos) << o.error;
  EXPECT_NE(o.error.find("(INTERNAL)"), std::string::npos) << o.error;
  // Nothing that parses: the stderr tail is the error, transient.
  o = gemini->parse(1, 0, "", "boom\n{ not json\n", kNow);
  EXPECT_TRUE(o.failed);
  EXPECT_EQ(o.failure, K::transient);
  EXPECT_NE(o.error.find("boom"), std::string::npos) << o.error;
}

TEST(FailureTable, RowsMatchInOrderAndNeedTheirStatusAndWords) {
  EXPECT_EQ(
      match_failure(BackendKind::claude, 0, "Claude AI usage limit reached|1750003600")->shape,
      std::string("usage-limit"));
  EXPECT_EQ(match_failure(BackendKind::claude, 429, "x")->shape, std::string("rate-limit"));
  EXPECT_EQ(match_failure(BackendKind::claude, 401, "x")->kind, K::fatal);
  EXPECT_EQ(match_failure(BackendKind::claude, 0, "tests failed"), nullptr);
  EXPECT_EQ(match_failure(BackendKind::codex, 0, "unexpected status 418"), nullptr);
  EXPECT_EQ(match_failure(BackendKind::gemini, 400, "API key not valid")->shape,
            std::string("auth"));
  EXPECT_EQ(match_failure(BackendKind::gemini, 400, "bad field")->shape,
            std::string("bad-request"));
  EXPECT_TRUE(failure_table(BackendKind::command).empty());
  // Every row of a table says when it applies.
  for (auto kind : {BackendKind::claude, BackendKind::codex, BackendKind::gemini})
    for (const auto& row : failure_table(kind))
      EXPECT_TRUE(row.status_min || !row.phrases.empty()) << row.shape;
}

}  // namespace
}  // namespace devgraph::agents
