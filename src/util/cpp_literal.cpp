#include "util/cpp_literal.h"

#include <cstdio>

namespace devgraph {

std::string cpp_string_literal(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\' || c == '?') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\%03o", c);
      out += buf;
    }
  }
  return out + '"';
}

std::string cpp_byte_array(std::string_view name, std::string_view data) {
  std::string out = "const unsigned char " + std::string(name) + "[] = {";
  for (size_t i = 0; i < data.size(); ++i) {
    if (i % 16 == 0) out += "\n   ";
    char buf[8];
    std::snprintf(buf, sizeof buf, " 0x%02x,", static_cast<unsigned char>(data[i]));
    out += buf;
  }
  if (data.empty()) out += "0";
  return out + "\n};\n";
}

}  // namespace devgraph
