// Fuzzes the one fence for untrusted text (src/util/untrusted.h). Whatever
// an issue, a person or a persona writes, the fenced block must open and
// close exactly once: of the lines a reader sees (split at "\n", "\r\n" or
// "\r"), exactly one is DATA_START and one is DATA_END, the last; and every
// byte of the text is still there. A broken contract aborts (a finding).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "util/untrusted.h"

namespace {

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "contract broken: %s\n", what);
    std::abort();
  }
}

std::vector<std::string> reader_lines(const std::string& text) {
  std::vector<std::string> out(1);
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\r' || c == '\n') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::string fenced = devgraph::fence_untrusted("fuzzed text", text);
  auto lines = reader_lines(fenced);
  size_t starts = 0, ends = 0;
  for (const auto& l : lines) {
    starts += l == "DATA_START";
    ends += l == "DATA_END";
  }
  check(starts == 1, "DATA_START is not exactly one line");
  check(ends == 1, "DATA_END is not exactly one line");
  check(lines.back() == "DATA_END", "the block does not end with DATA_END");
  // Every byte of the text is in the block, in order (the only bytes added
  // are "[data] " prefixes and a closing newline).
  size_t at = fenced.find("\nDATA_START\n");
  check(at != std::string::npos, "no opening line");
  std::string_view body(fenced);
  body.remove_prefix(at + 12);
  size_t i = 0;
  for (char c : body) {
    if (i < text.size() && c == text[i]) ++i;
  }
  check(i == text.size(), "the text lost a byte");
  return 0;
}
