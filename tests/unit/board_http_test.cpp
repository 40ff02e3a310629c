#include "board/http.h"

#include <gtest/gtest.h>

namespace devgraph::board {
namespace {

HttpRequest parsed(std::string_view bytes) {
  auto r = parse_request(bytes);
  EXPECT_TRUE(r) << (r ? "" : r.error().message);
  EXPECT_TRUE(r && *r) << "incomplete";
  return r && *r ? **r : HttpRequest{};
}

void expect_bad(std::string_view bytes, const std::string& words) {
  auto r = parse_request(bytes);
  ASSERT_FALSE(r) << bytes;
  EXPECT_EQ(r.error().kind, ErrorKind::usage);
  EXPECT_NE(r.error().message.find(words), std::string::npos) << r.error().message;
  EXPECT_EQ(r.error().message.find('\n'), std::string::npos);
}

TEST(BoardHttp, ARequestIsReadOnceItsHeaderBlockIsComplete) {
  const std::string req =
      "GET /events?last_event_id=7&x=1 HTTP/1.1\r\nHost: 127.0.0.1:8000\r\n"
      "Last-Event-ID:  12 \r\nAccept: text/event-stream\r\n\r\nrest";
  for (size_t n = 0; n < req.size() - 4; ++n) {
    auto r = parse_request(std::string_view(req).substr(0, n));
    ASSERT_TRUE(r) << n;
    EXPECT_FALSE(*r) << "complete after " << n << " bytes";
  }
  HttpRequest r = parsed(req);
  EXPECT_EQ(r.method, "GET");
  EXPECT_EQ(r.path, "/events");
  EXPECT_EQ(r.query, "last_event_id=7&x=1");
  EXPECT_EQ(r.headers.at("host"), "127.0.0.1:8000");
  EXPECT_EQ(r.headers.at("last-event-id"), "12");
  EXPECT_EQ(r.consumed, req.size() - 4);
}

TEST(BoardHttp, BareLineFeedsAndHttp10AreRead) {
  HttpRequest r = parsed("GET / HTTP/1.0\nHost: x\n\n");
  EXPECT_EQ(r.path, "/");
  EXPECT_EQ(r.headers.at("host"), "x");
}

TEST(BoardHttp, TheTargetIsAPathNeverAFileNameAndNothingIsDecoded) {
  HttpRequest r = parsed("GET /../../etc/passwd%00?a#frag HTTP/1.1\r\n\r\n");
  EXPECT_EQ(r.path, "/../../etc/passwd%00");
  EXPECT_EQ(r.query, "a");
  EXPECT_EQ(parsed("GET /a#b?c HTTP/1.1\r\n\r\n").query, "");
}

TEST(BoardHttp, BadRequestsAreOneLineErrors) {
  expect_bad("GET\r\n\r\n", "request line");
  expect_bad("GET / HTTP/1.1 extra\r\n\r\n", "request line");
  expect_bad("GET http://evil/ HTTP/1.1\r\n\r\n", "not a path");
  expect_bad("GET / SPDY/3\r\n\r\n", "HTTP/1.x");
  expect_bad("G(T / HTTP/1.1\r\n\r\n", "method");
  expect_bad("GET / HTTP/1.1\r\nno colon here\r\n\r\n", "NAME: VALUE");
  expect_bad("GET /a\x01 HTTP/1.1\r\n\r\n", "control bytes");
  expect_bad("POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello", "no request body");
  expect_bad("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", "no request body");
  expect_bad(std::string(kMaxRequestBytes + 1, 'a'), "too long");
  expect_bad("GET / HTTP/1.1\r\nX: " + std::string(kMaxRequestBytes, 'a') + "\r\n\r\n", "too long");
}

TEST(BoardHttp, QueryParametersAreLookedUpByExactName) {
  EXPECT_EQ(query_param("a=1&bb=2&b=3", "b"), "3");
  EXPECT_EQ(query_param("flag&b=3", "flag"), "");
  EXPECT_EQ(query_param("a=1", "b"), std::nullopt);
  EXPECT_EQ(query_param("", "a"), std::nullopt);
}

TEST(BoardHttp, AResponseSaysItsLengthAndLetsThePageLoadNothingFromElsewhere) {
  std::string r = response(404, "text/plain; charset=utf-8", "no such page\n");
  EXPECT_EQ(r.rfind("HTTP/1.1 404 Not Found\r\n", 0), 0u) << r;
  EXPECT_NE(r.find("\r\nContent-Length: 13\r\n"), std::string::npos) << r;
  EXPECT_NE(r.find("\r\nContent-Type: text/plain; charset=utf-8\r\n"), std::string::npos);
  EXPECT_NE(r.find("\r\nX-Content-Type-Options: nosniff\r\n"), std::string::npos);
  EXPECT_NE(r.find("Content-Security-Policy: default-src 'none';"), std::string::npos);
  EXPECT_NE(r.find("connect-src 'self'"), std::string::npos);
  EXPECT_NE(r.find("\r\nConnection: close\r\n\r\nno such page\n"), std::string::npos) << r;
  EXPECT_EQ(sse_head().find("Content-Length"), std::string::npos);
  EXPECT_NE(sse_head().find("Content-Type: text/event-stream"), std::string::npos);
}

TEST(BoardHttp, AnEventPutsEveryLineOfItsDataOnADataLineAndCannotBeForged) {
  EXPECT_EQ(sse_event(3, "event", "{\"a\": 1}"), "id: 3\nevent: event\ndata: {\"a\": 1}\n\n");
  EXPECT_EQ(sse_event(4, "state", "one\ntwo\r\n\nid: 99"),
            "id: 4\nevent: state\ndata: one\ndata: two\ndata: \ndata: id: 99\n\n");
  EXPECT_EQ(sse_event(5, "x\ndata: evil", ""), "id: 5\nevent: xdata: evil\ndata: \n\n");
  EXPECT_EQ(sse_comment("keep\nalive"), ":keepalive\n\n");
}

TEST(BoardHttp, TheLastEventIdComesFromTheHeaderElseTheQueryAndJunkIsNone) {
  EXPECT_EQ(last_event_id(parsed("GET /events HTTP/1.1\r\nLast-Event-ID: 42\r\n\r\n")), 42u);
  EXPECT_EQ(last_event_id(parsed("GET /events?last_event_id=9 HTTP/1.1\r\n\r\n")), 9u);
  EXPECT_EQ(last_event_id(parsed("GET /events HTTP/1.1\r\n\r\n")), std::nullopt);
  EXPECT_EQ(last_event_id(parsed("GET /events HTTP/1.1\r\nLast-Event-ID: -1\r\n\r\n")),
            std::nullopt);
  EXPECT_EQ(last_event_id(parsed("GET /events?last_event_id=1e3 HTTP/1.1\r\n\r\n")), std::nullopt);
  EXPECT_EQ(
      last_event_id(parsed("GET /events HTTP/1.1\r\nLast-Event-ID: 99999999999999999999\r\n\r\n")),
      std::nullopt);
}

}  // namespace
}  // namespace devgraph::board
