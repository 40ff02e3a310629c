#include "util/cpp_literal.h"

#include <gtest/gtest.h>

namespace devgraph {
namespace {

TEST(CppLiteral, EscapesWhatCouldChangeItsMeaning) {
  EXPECT_EQ(cpp_string_literal("plain text"), "\"plain text\"");
  EXPECT_EQ(cpp_string_literal(R"(a"b\c??=d)"), R"("a\"b\\c\?\?=d")");
  EXPECT_EQ(cpp_string_literal(std::string("x\0"
                                           "1\n\xc3\xa9",
                                           6)),
            R"("x\0001\012\303\251")");
}

TEST(CppLiteral, ByteArraysSixteenALine) {
  EXPECT_EQ(cpp_byte_array("kEmpty", ""), "const unsigned char kEmpty[] = {0\n};\n");
  std::string data(17, 'A');
  data[16] = '\xff';
  EXPECT_EQ(
      cpp_byte_array("k", data), "const unsigned char k[] = {\n   " + [] {
        std::string line;
        for (int i = 0; i < 16; ++i) line += " 0x41,";
        return line;
      }() + "\n    0xff,\n};\n");
}

}  // namespace
}  // namespace devgraph
