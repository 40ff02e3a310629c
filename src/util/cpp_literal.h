// C++ source text for data, for the build tool that compiles the shipped
// graph into the library (tools/embed_graph.cpp).
#pragma once

#include <string>
#include <string_view>

namespace devgraph {

// A string literal ("...", quotes included) holding exactly `s`: printable
// ASCII as itself, with '"', '\\' and '?' escaped (so no "??" reads as a
// trigraph), every other byte as three octal digits, which never run into
// the next character. A NUL byte survives only where the length is given
// too (a "..."s literal, or std::string(literal, size)).
std::string cpp_string_literal(std::string_view s);

// `const unsigned char <name>[] = {...};` holding `data`, sixteen bytes a
// line (one 0 byte for empty data: a zero-length array is not C++; the
// caller states the real size).
std::string cpp_byte_array(std::string_view name, std::string_view data);

}  // namespace devgraph
