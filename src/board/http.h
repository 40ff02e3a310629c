// HTTP/1.1 as the run board speaks it: GET requests read from the bytes a
// connection has sent so far, and responses and Server-Sent Events written
// as bytes. Pure functions; the sockets are the server's.
//
// Contract:
// - parse_request(bytes) is nullopt until the header block is complete
//   (an empty line ends it), then the request: its method, its path (the
//   target's query cut off and kept apart, nothing percent-decoded: routes
//   are fixed strings, and no path from a request ever names a file) and
//   its headers, names lower-cased, values trimmed.
// - Bad input is an error of kind usage, answered 400 and closed: a header
//   block longer than kMaxRequestBytes, a request line that is not
//   `METHOD SP /TARGET SP HTTP/1.x`, a header line without a colon, control
//   bytes in the target, or a request that announces a body (the board
//   takes none).
// - response() carries Content-Type, Content-Length, `Cache-Control:
//   no-store`, `X-Content-Type-Options: nosniff`, a Content-Security-Policy
//   that lets the page load nothing from anywhere but itself, and
//   `Connection: close`.
// - sse_event() frames one event: `id:`, `event:` and one `data:` line per
//   line of the data (carriage returns dropped, so no data can end the
//   event early or forge a field).
// - last_event_id() is the Last-Event-ID header a reconnecting EventSource
//   sends, else the `last_event_id` query parameter, else nullopt; anything
//   but decimal digits is nullopt (a page that sends junk catches up from
//   the start).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "util/expected.h"

namespace devgraph::board {

inline constexpr size_t kMaxRequestBytes = 16 * 1024;

struct HttpRequest {
  std::string method;
  std::string path;   // "/", "/data.json", ...
  std::string query;  // after '?', without it; "" when none
  std::map<std::string, std::string> headers;
  size_t consumed = 0;  // bytes of the header block, its empty line included
};

Expected<std::optional<HttpRequest>> parse_request(std::string_view bytes);

// The value of `name` in a query string ("a=1&b=2"), nothing decoded.
std::optional<std::string> query_param(std::string_view query, std::string_view name);

std::string status_text(int status);

std::string response(int status, std::string_view content_type, std::string_view body);
// response()'s status line and headers alone, for a body of `body_size`
// bytes sent after them.
std::string response_head(int status, std::string_view content_type, size_t body_size);

// The head of an event stream (text/event-stream, no length, kept open).
std::string sse_head();

std::string sse_event(std::uint64_t id, std::string_view type, std::string_view data);

// A comment line, which keeps a quiet stream alive through proxies.
std::string sse_comment(std::string_view text);

std::optional<std::uint64_t> last_event_id(const HttpRequest& request);

}  // namespace devgraph::board
