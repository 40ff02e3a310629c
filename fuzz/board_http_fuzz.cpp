// Fuzzes the board's HTTP request parser and its event framing. The board
// answers whatever connects to its socket, so any byte string must give a
// request or an error, never a crash, a sanitizer report or a hang; and
// what it writes back must hold its contract whatever the data.
//
// The first byte picks what the rest is: a request's bytes, or the data of
// a Server-Sent Event. A broken contract aborts (a finding, like a crash).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "board/http.h"

namespace {

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "contract broken: %s\n", what);
    std::abort();
  }
}

void request(std::string_view bytes) {
  auto parsed = devgraph::board::parse_request(bytes);
  if (!parsed.ok() || !parsed.value()) return;
  const auto& req = *parsed.value();
  check(req.consumed <= bytes.size(), "consumed beyond the input");
  check(bytes.size() <= devgraph::board::kMaxRequestBytes || req.consumed <= devgraph::board::kMaxRequestBytes,
        "a header block over the limit was accepted");
  check(!req.path.empty() && req.path[0] == '/', "a path that does not start with /");
  for (unsigned char c : req.path) check(c > 0x20 && c != 0x7f, "a control byte in the path");
  for (const auto& [name, value] : req.headers) {
    for (unsigned char c : name) check(!(c >= 'A' && c <= 'Z'), "a header name not lower-cased");
    (void)value;
  }
  (void)devgraph::board::query_param(req.query, "last_event_id");
  (void)devgraph::board::last_event_id(req);
}

void event(std::string_view data) {
  std::string framed = devgraph::board::sse_event(7, "update", data);
  // One event: the only blank line is the one that ends it.
  auto end = framed.find("\n\n");
  check(end != std::string::npos && end + 2 == framed.size(), "data ended the event early");
  check(framed.find('\r') == std::string::npos, "a carriage return in an event");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  if (data[0] % 2 == 0)
    request(rest);
  else
    event(rest);
  return 0;
}
