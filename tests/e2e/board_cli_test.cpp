// `devgraph board serve` end to end: the real binary serving a run
// directory that `devgraph checkpoint` writes to while pages are connected
// over real sockets. Events reach an open stream without the page asking
// again, a reconnecting stream catches up from the last id it saw, the
// data is what the run holds, and the server never writes into the run.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <map>

#include "support/kill_harness.h"
#include "support/test_util.h"
#include "util/fs.h"
#include "util/json.h"

namespace devgraph {
namespace {

constexpr auto kLimit = std::chrono::seconds(20);  // a failure condition, never a wait

class BoardCli : public ::testing::Test {
 protected:
  test::Scratch s;
  std::string run = s / "runs/r1";
  std::string log = s / "board.log";
  test::Background bg;
  int port = 0;

  test::ProcessResult cp(std::vector<std::string> args) const {
    args.insert(args.begin(), {"checkpoint", run});
    return test::run_devgraph(args);
  }

  void SetUp() override {
    ASSERT_EQ(cp({"init", "--repo", "acme/widgets", "--default-branch", "main"}).exit_code, 0);
    ASSERT_EQ(
        cp({"event", "--event", "NOTE", "--detail", R"({"text": "<script>alert(1)</script>"})"})
            .exit_code,
        0);
  }

  void TearDown() override {
    if (bg.pid > 0) {
      ::kill(bg.pid, SIGTERM);
      int st = bg.wait();
      EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << test::slurp(log);
    }
  }

  // Starts the board and reads its port from the URL it prints.
  void serve(std::vector<std::string> extra = {},
             const std::map<std::string, std::string>& env = {}) {
    std::vector<std::string> args = {"board", "serve", run, "--port", "0"};
    args.insert(args.end(), extra.begin(), extra.end());
    test::start_background(bg, args, env, s.path(), log);
    test::Watch watch;
    auto found = test::wait_until(
        watch, bg.pidfd, [&] { return std::vector<std::string>{s.path()}; },
        [&] {
          auto text = read_file(log);
          return text && text->find("/\n") != std::string::npos;
        },
        std::chrono::steady_clock::now() + kLimit);
    ASSERT_EQ(found, test::Waited::kReached) << test::slurp(log);
    std::string text = test::slurp(log);
    auto at = text.find("http://127.0.0.1:");
    ASSERT_NE(at, std::string::npos) << text;
    port = std::stoi(text.substr(at + 17));
  }

  int connect_to() const {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(static_cast<std::uint16_t>(port));
    ::inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0)
        << std::strerror(errno);
    return fd;
  }

  // Reads until `until` arrives (or the end, when empty).
  static std::string read_until(int fd, const std::string& until, std::string got = "") {
    auto deadline = std::chrono::steady_clock::now() + kLimit;
    while (until.empty() || got.find(until) == std::string::npos) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      pollfd p = {fd, POLLIN, 0};
      if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) {
        ADD_FAILURE() << "nothing more came: " << got;
        break;
      }
      char buf[65536];
      ssize_t n = ::read(fd, buf, sizeof buf);
      if (n <= 0) break;
      got.append(buf, static_cast<size_t>(n));
    }
    return got;
  }

  std::string get(const std::string& request) const {
    int fd = connect_to();
    EXPECT_GT(::send(fd, request.data(), request.size(), MSG_NOSIGNAL), 0);
    std::string got = read_until(fd, "");
    ::close(fd);
    return got;
  }

  // Until `reached()` holds, woken by changes in the scratch directory
  // (the log, the fake browser's file).
  void wait_for(const std::function<bool()>& reached) {
    test::Watch watch;
    auto got = test::wait_until(
        watch, bg.pidfd, [&] { return std::vector<std::string>{s.path()}; }, reached,
        std::chrono::steady_clock::now() + kLimit);
    ASSERT_EQ(got, test::Waited::kReached) << test::slurp(log);
  }

  static Json body_of(const std::string& response) {
    auto j = parse_json(response.substr(response.find("\r\n\r\n") + 4), "body");
    EXPECT_TRUE(j) << response;
    return j ? *j : Json::object();
  }
};

TEST_F(BoardCli, AnOpenStreamGetsEachNewEventAsTheRunRecordsItAndAReconnectCatchesUp) {
  const std::string names = test::entries(run);
  serve();
  Json data = body_of(get("GET /data.json HTTP/1.1\r\n\r\n"));
  EXPECT_EQ(data["event_seq"], 2);
  EXPECT_EQ(data["state"]["repo"], "acme/widgets");
  ASSERT_EQ(data["events"].size(), 2u);
  EXPECT_EQ(data["events"][1]["detail"]["text"], "<script>alert(1)</script>");

  int stream = connect_to();
  std::string req = "GET /events?last_event_id=2 HTTP/1.1\r\n\r\n";
  ASSERT_GT(::send(stream, req.data(), req.size(), MSG_NOSIGNAL), 0);
  std::string got = read_until(stream, ":devgraph board\n\n");
  EXPECT_EQ(got.find("id: "), std::string::npos) << got;
  ASSERT_EQ(cp({"event", "--event", "NOTE", "--detail", R"({"text": "third"})"}).exit_code, 0);
  auto sent = std::chrono::steady_clock::now();
  got = read_until(stream, "\"third\"", got);
  auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - sent);
  EXPECT_NE(got.find("id: 3\nevent: event\ndata: {"), std::string::npos) << got;
  RecordProperty("event_to_page_ms", static_cast<int>(took.count()));
  ::close(stream);

  // Two more while no page listens; a page back with the last id it saw
  // gets both, in order, and nothing it had.
  ASSERT_EQ(cp({"event", "--event", "NOTE", "--detail", R"({"text": "fourth"})"}).exit_code, 0);
  ASSERT_EQ(cp({"event", "--event", "NOTE", "--detail", R"({"text": "fifth"})"}).exit_code, 0);
  stream = connect_to();
  req = "GET /events HTTP/1.1\r\nLast-Event-ID: 3\r\n\r\n";
  ASSERT_GT(::send(stream, req.data(), req.size(), MSG_NOSIGNAL), 0);
  got = read_until(stream, "\"fifth\"");
  EXPECT_EQ(got.find("id: 3\n"), std::string::npos) << got;
  auto four = got.find("id: 4\n"), five = got.find("id: 5\n");
  EXPECT_NE(four, std::string::npos) << got;
  EXPECT_LT(four, five) << got;
  ::close(stream);
  // The board only read: nothing of its own in the run.
  EXPECT_EQ(test::entries(run), names);
}

TEST_F(BoardCli, ThePageIsServedAndNoRequestPathReachesAFile) {
  serve();
  std::string page = get("GET / HTTP/1.1\r\n\r\n");
  EXPECT_EQ(page.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << page.substr(0, 200);
  EXPECT_NE(page.find("new EventSource(\"/events"), std::string::npos);
  EXPECT_EQ(page.find("innerHTML"), std::string::npos) << "run text is only ever set as text";
  for (const std::string path : {"/state.json", "/events.jsonl", "/../runs/r1/state.json",
                                 "/%2e%2e/state.json", "/etc/passwd"}) {
    std::string r = get("GET " + path + " HTTP/1.1\r\n\r\n");
    EXPECT_EQ(r.rfind("HTTP/1.1 404 Not Found\r\n", 0), 0u) << path << ": " << r;
  }
}

// A snapshot: the page with the run's data inside, which opens from a
// file. Markup in the run's text cannot end the data's element: every '<'
// in it is escaped, and the data reads back as the run had it.
TEST_F(BoardCli, ASnapshotHoldsTheRunsDataWhereNoTextCanEndItsElement) {
  const std::string file = s / "board.html";
  auto r = test::run_devgraph({"board", "build", run, "-o", file});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string page = test::slurp(file);
  const std::string open = "<script id=\"board-data\" type=\"application/json\">";
  auto at = page.find(open);
  ASSERT_NE(at, std::string::npos);
  auto end = page.find("</script>", at);
  std::string json = page.substr(at + open.size(), end - at - open.size());
  EXPECT_EQ(json.find('<'), std::string::npos) << json;
  auto data = parse_json(json, "snapshot");
  ASSERT_TRUE(data) << json;
  EXPECT_EQ((*data)["snapshot"], true);
  EXPECT_EQ((*data)["event_seq"], 2);
  EXPECT_EQ((*data)["events"][1]["detail"]["text"], "<script>alert(1)</script>");
  auto to_stdout = test::run_devgraph({"board", "build", run});
  ASSERT_EQ(to_stdout.exit_code, 0) << to_stdout.err;
  EXPECT_EQ(to_stdout.out, page);
}

// A run recorded by `devgraph metrics record` is replayed from its record
// after its directory is gone.
TEST_F(BoardCli, ASnapshotFromASessionRecordReplaysARunWhoseDirectoryIsGone) {
  const std::string records = s / "metrics";
  auto rec = test::run_devgraph({"metrics", "record", run, "--metrics-dir", records});
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  std::string record = rec.out.substr(0, rec.out.find('\n'));
  ASSERT_TRUE(path_exists(record)) << rec.out;
  ASSERT_TRUE(remove_tree(s / "runs"));
  const std::string file = s / "replay.html";
  auto r = test::run_devgraph({"board", "build", record, "-o", file});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string page = test::slurp(file);
  const std::string open = "<script id=\"board-data\" type=\"application/json\">";
  auto at = page.find(open) + open.size();
  auto data = parse_json(page.substr(at, page.find("</script>", at) - at), "snapshot");
  ASSERT_TRUE(data);
  EXPECT_EQ((*data)["source"]["kind"], "session");
  EXPECT_EQ((*data)["state"]["run_id"], "r1");
  EXPECT_EQ((*data)["event_seq"], 2);
  ASSERT_EQ((*data)["events"].size(), 2u);
  EXPECT_EQ((*data)["events"][1]["detail"]["text"], "<script>alert(1)</script>");
  auto bad = test::run_devgraph({"board", "build", record, "--run-id", "nope"});
  EXPECT_EQ(bad.exit_code, 3) << bad.err;
  EXPECT_EQ(bad.err.find('\n'), bad.err.size() - 1) << bad.err;
  EXPECT_EQ(test::run_devgraph({"board", "build", s / "missing.jsonl"}).exit_code, 3);
}

// --open: the fake browser (BROWSER) gets the URL as its one argument.
TEST_F(BoardCli, OpenStartsTheBrowserWithTheUrl) {
  const std::string browser = s / "browser";
  const std::string said = s / "browser-args";
  test::write_text(browser, "#!/bin/sh\nprintf '%s\\n' \"$#\" \"$@\" > '" + said + ".tmp'\nmv '" +
                                said + ".tmp' '" + said + "'\n");
  ASSERT_EQ(::chmod(browser.c_str(), 0755), 0);
  serve({"--open"}, {{"BROWSER", browser}});
  wait_for([&] { return path_exists(said); });
  EXPECT_EQ(test::slurp(said), "1\nhttp://127.0.0.1:" + std::to_string(port) + "/\n");
}

// A browser that cannot be started is one line; the board is still served.
TEST_F(BoardCli, ABrowserThatCannotBeStartedIsOneLineAndServingGoesOn) {
  serve({"--open"}, {{"BROWSER", s / "no-such-browser"}});
  wait_for([&] {
    auto text = read_file(log);
    return text && text->find("the board is still served\n") != std::string::npos;
  });
  EXPECT_NE(test::slurp(log).find("devgraph board: cannot start the browser " +
                                  (s / "no-such-browser") + ": No such file or directory"),
            std::string::npos)
      << test::slurp(log);
  Json data = body_of(get("GET /data.json HTTP/1.1\r\n\r\n"));
  EXPECT_EQ(data["state"]["repo"], "acme/widgets");
}

TEST(BoardCliUsage, NoRunOrABadFlagIsOneLineAndExitThree) {
  test::Scratch s;
  auto r = test::run_devgraph({"board", "serve", s / "nowhere"});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.err.find("no such directory"), std::string::npos) << r.err;
  r = test::run_devgraph({"board", "serve", s.path(), "--port", "99999"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("--port"), std::string::npos) << r.err;
  r = test::run_devgraph({"board", "frobnicate"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  r = test::run_devgraph({"board", "serve", s.path(), "--bind", "localhost"});
  EXPECT_NE(r.exit_code, 0);
}

}  // namespace
}  // namespace devgraph
