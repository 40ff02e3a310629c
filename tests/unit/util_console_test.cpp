// out(), err() and write_out(): stdio underneath, so what each writes
// keeps its order with the others and with printf.
#include "util/console.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace devgraph {
namespace {

TEST(Console, WriteOutKeepsItsPlaceAmongStreamAndPrintfOutput) {
  testing::internal::CaptureStdout();
  out() << "a" << 1;
  write_out("b");
  std::printf("c");
  write_out(std::string("d\0e", 3));
  out() << "f\n";
  std::fflush(stdout);
  EXPECT_EQ(testing::internal::GetCapturedStdout(), std::string("a1bcd\0ef\n", 9));
}

TEST(Console, ErrWritesToStandardError) {
  testing::internal::CaptureStderr();
  err() << "oops " << 2 << "\n";
  std::fflush(stderr);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "oops 2\n");
}

}  // namespace
}  // namespace devgraph
