// The debugger's structured returns (src/debug/returns.h): each type read
// with its fields, anything else refused with one line, paths and data
// kept in their place.
#include "debug/returns.h"

#include <gtest/gtest.h>

#include "support/run_scenario.h"
#include "support/test_util.h"

namespace devgraph::debug {
namespace {

const Schema& schema() {
  static Schema s = [] {
    auto loaded = Schema::load(return_schema_path(test::source_dir() + "/skill"));
    EXPECT_TRUE(loaded) << loaded.error().message;
    return std::move(*loaded);
  }();
  return s;
}

Json result(Json debug) {
  return Json{{"status", "DONE"}, {"summary", "s"}, {"evidence", Json::array()}, {"debug", debug}};
}

TEST(DebugReturns, EachTypeIsReadWithItsFields) {
  auto root = parse_return(result({{"type", "ROOT_CAUSE_FOUND"},
                                   {"root_cause", "the key ignores the locale"},
                                   {"fix_direction", "add it"},
                                   {"specialist_hint", "Python"},
                                   {"hypothesis", "h"},
                                   {"evidence", {{{"checked", "a"}, {"found", "b"}}}},
                                   {"eliminated", {{{"hypothesis", "c"}, {"evidence", "d"}}}}}),
                           schema());
  ASSERT_TRUE(root) << root.error().message;
  EXPECT_EQ(root->type, ReturnType::root_cause_found);
  EXPECT_EQ(root->specialist_hint, "python");
  EXPECT_EQ(root->evidence.size(), 1u);
  EXPECT_EQ(root->eliminated.size(), 1u);

  auto tdd = parse_return(result({{"type", "TDD_CHECKPOINT"},
                                  {"test", {{"command", {"sh", "t.sh"}}, {"file", "t.sh"}}}}),
                          schema());
  ASSERT_TRUE(tdd) << tdd.error().message;
  EXPECT_EQ(tdd->test_command, (std::vector<std::string>{"sh", "t.sh"}));

  auto done = parse_return(
      result({{"type", "DEBUG_COMPLETE"},
              {"resolution",
               {{"root_cause", "r"}, {"fix", "f"}, {"files_changed", {"./src/a.txt", "b//c"}}}}}),
      schema());
  ASSERT_TRUE(done) << done.error().message;
  EXPECT_EQ(done->files_changed, (std::vector<std::string>{"src/a.txt", "b/c"}));

  auto cp = parse_return(result({{"type", "CHECKPOINT_REACHED"},
                                 {"checkpoint",
                                  {{"type", "human-verify"},
                                   {"details", "d"},
                                   {"awaiting", "does it fail?"},
                                   {"options", {"yes", "no"}}}}}),
                         schema());
  ASSERT_TRUE(cp) << cp.error().message;
  EXPECT_EQ(cp->options.size(), 2u);

  auto inc = parse_return(
      result({{"type", "INVESTIGATION_INCONCLUSIVE"}, {"checked", {"a"}}, {"remaining", {"b"}}}),
      schema());
  ASSERT_TRUE(inc);
  auto guard = parse_return(result({{"type", "FIX_REJECTED_BY_GUARDRAIL"},
                                    {"guardrail", {{"signal", "lint"}, {"evidence", "2 errors"}}}}),
                            schema());
  ASSERT_TRUE(guard);
  EXPECT_EQ(guard->signal, "lint");
}

TEST(DebugReturns, AMissingOrMalformedReturnIsRefusedInOneLine) {
  for (const Json& bad :
       {Json{{"status", "DONE"}, {"summary", "s"}, {"evidence", Json::array()}},
        result({{"type", "FIXED_IT"}}), result({{"type", "ROOT_CAUSE_FOUND"}}),
        result({{"type", "TDD_CHECKPOINT"}, {"test", {{"command", Json::array()}}}}),
        result({{"type", "DEBUG_COMPLETE"}}),
        result({{"type", "CHECKPOINT_REACHED"}, {"checkpoint", {{"type", "x"}}}}),
        result("not an object")}) {
    auto r = parse_return(bad, schema());
    ASSERT_FALSE(r) << bad.dump();
    EXPECT_EQ(r.error().message.find('\n'), std::string::npos) << r.error().message;
  }
}

TEST(DebugReturns, FilesChangedNeverLeaveTheWorktree) {
  for (const char* p : {"../x", "/etc/passwd", "a/../../b", ".git/config", "a/.git/x"}) {
    EXPECT_EQ(safe_relative_path(p), "") << p;
    auto r = parse_return(
        result({{"type", "DEBUG_COMPLETE"},
                {"resolution", {{"root_cause", "r"}, {"fix", "f"}, {"files_changed", {p}}}}}),
        schema());
    EXPECT_FALSE(r) << p;
  }
  EXPECT_EQ(safe_relative_path("./a/./b.txt"), "a/b.txt");
}

}  // namespace
}  // namespace devgraph::debug
