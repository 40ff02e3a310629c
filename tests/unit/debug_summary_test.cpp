// A debug session's terminal summary and RESULT_JSON (src/debug/session.h).
#include <gtest/gtest.h>

#include "debug/decide.h"
#include "debug/session.h"
#include "support/test_util.h"

namespace devgraph::debug {
namespace {

TEST(DebugSummary, ATddSessionSaysTddFromItsFirstSummaryOn) {
  test::Scratch s;
  DebugFile f;
  f.slug = "t";
  f.tdd = true;
  Outcome o = outcome_of(begin(f));  // started, no gate run yet
  const Paths paths = paths_of(s.path(), "t");
  EXPECT_NE(summary_text(o, paths).find("\nTDD: yes\n"), std::string::npos)
      << summary_text(o, paths);
  EXPECT_EQ(summary_json(o, paths)["tdd"], true);

  f.tdd = false;
  o = outcome_of(begin(f));
  EXPECT_NE(summary_text(o, paths).find("\nTDD: no\n"), std::string::npos);
  EXPECT_EQ(summary_json(o, paths)["tdd"], false);
  o.file.m.tdd_used = true;  // the debugger brought a failing test of its own
  EXPECT_NE(summary_text(o, paths).find("\nTDD: yes\n"), std::string::npos);
}

}  // namespace
}  // namespace devgraph::debug
