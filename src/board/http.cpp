#include "board/http.h"

#include <cctype>

namespace devgraph::board {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool is_token(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.')
      return false;
  return true;
}

std::optional<std::uint64_t> digits(std::string_view s) {
  if (s.empty() || s.size() > 19) return std::nullopt;
  std::uint64_t n = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return n;
}

Error bad(const std::string& why) {
  return fail(ErrorKind::usage, "bad request: " + why);
}

}  // namespace

Expected<std::optional<HttpRequest>> parse_request(std::string_view bytes) {
  // The header block ends at the first empty line (CRLF CRLF, or bare LFs
  // from a lenient client).
  size_t end = std::string_view::npos, sep = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (bytes[i] != '\n') continue;
    if (i + 1 < bytes.size() && bytes[i + 1] == '\n') {
      end = i, sep = 2;
      break;
    }
    if (i + 2 < bytes.size() && bytes[i + 1] == '\r' && bytes[i + 2] == '\n') {
      end = i, sep = 3;
      break;
    }
  }
  if (end == std::string_view::npos) {
    if (bytes.size() > kMaxRequestBytes) return bad("the header block is too long");
    return std::optional<HttpRequest>();
  }
  if (end + sep > kMaxRequestBytes) return bad("the header block is too long");
  HttpRequest r;
  r.consumed = end + sep;
  std::string_view head = bytes.substr(0, end);
  bool first = true;
  while (!head.empty() || first) {
    size_t nl = head.find('\n');
    std::string_view line = head.substr(0, nl);
    head = nl == std::string_view::npos ? std::string_view() : head.substr(nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (first) {
      first = false;
      size_t a = line.find(' ');
      size_t b = a == std::string_view::npos ? a : line.find(' ', a + 1);
      if (b == std::string_view::npos || line.find(' ', b + 1) != std::string_view::npos)
        return bad("the request line is not METHOD TARGET VERSION");
      std::string_view method = line.substr(0, a), target = line.substr(a + 1, b - a - 1),
                       version = line.substr(b + 1);
      if (!is_token(method)) return bad("the method is not a token");
      if (version != "HTTP/1.1" && version != "HTTP/1.0") return bad("not HTTP/1.x");
      if (target.empty() || target.front() != '/') return bad("the target is not a path");
      for (char c : target)
        if (static_cast<unsigned char>(c) < 0x21 || c == 0x7f)
          return bad("control bytes in the target");
      size_t q = target.find_first_of("?#");
      r.method = std::string(method);
      r.path = std::string(target.substr(0, q));
      if (q != std::string_view::npos && target[q] == '?') {
        std::string_view query = target.substr(q + 1);
        r.query = std::string(query.substr(0, query.find('#')));
      }
      continue;
    }
    size_t colon = line.find(':');
    if (colon == std::string_view::npos || !is_token(line.substr(0, colon)))
      return bad("a header line is not NAME: VALUE");
    std::string name = lower(line.substr(0, colon));
    r.headers[name] = std::string(trim(line.substr(colon + 1)));
  }
  auto length = r.headers.find("content-length");
  if ((length != r.headers.end() && length->second != "0") || r.headers.count("transfer-encoding"))
    return bad("the board takes no request body");
  return std::optional<HttpRequest>(std::move(r));
}

std::optional<std::string> query_param(std::string_view query, std::string_view name) {
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    size_t eq = pair.find('=');
    if (pair.substr(0, eq) == name)
      return std::string(eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1));
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return std::nullopt;
}

std::string status_text(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 204:
      return "No Content";
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
    default:
      return "Status";
  }
}

namespace {

std::string common_headers() {
  return "Cache-Control: no-store\r\n"
         "X-Content-Type-Options: nosniff\r\n"
         "Content-Security-Policy: default-src 'none'; script-src 'self' 'unsafe-inline'; "
         "style-src 'self' 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; "
         "base-uri 'none'; form-action 'none'; frame-ancestors 'none'\r\n"
         "Referrer-Policy: no-referrer\r\n";
}

}  // namespace

std::string response_head(int status, std::string_view content_type, size_t body_size) {
  std::string out = "HTTP/1.1 " + std::to_string(status) + " " + status_text(status) + "\r\n";
  out += "Content-Type: " + std::string(content_type) + "\r\n";
  out += "Content-Length: " + std::to_string(body_size) + "\r\n";
  out += common_headers();
  out += "Connection: close\r\n\r\n";
  return out;
}

std::string response(int status, std::string_view content_type, std::string_view body) {
  std::string out = response_head(status, content_type, body.size());
  out.append(body);
  return out;
}

std::string sse_head() {
  return "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\n" +
         common_headers() + "Connection: keep-alive\r\n\r\n";
}

std::string sse_event(std::uint64_t id, std::string_view type, std::string_view data) {
  std::string out = "id: " + std::to_string(id) + "\n";
  std::string t;
  for (char c : type)
    if (c != '\r' && c != '\n') t.push_back(c);
  if (!t.empty()) out += "event: " + t + "\n";
  size_t at = 0;
  while (true) {
    size_t nl = data.find('\n', at);
    std::string line(data.substr(at, nl == std::string_view::npos ? nl : nl - at));
    std::string clean;
    for (char c : line)
      if (c != '\r') clean.push_back(c);
    out += "data: " + clean + "\n";
    if (nl == std::string_view::npos) break;
    at = nl + 1;
  }
  return out + "\n";
}

std::string sse_comment(std::string_view text) {
  std::string out = ":";
  for (char c : text)
    if (c != '\r' && c != '\n') out.push_back(c);
  return out + "\n\n";
}

std::optional<std::uint64_t> last_event_id(const HttpRequest& request) {
  auto h = request.headers.find("last-event-id");
  if (h != request.headers.end()) return digits(h->second);
  if (auto q = query_param(request.query, "last_event_id")) return digits(*q);
  return std::nullopt;
}

}  // namespace devgraph::board
