// `--open` (board/browser.h): the program BROWSER names, else xdg-open,
// with the URL as its one argument, started in a process group of its
// own with its output discarded, and reaped on the host's loop when it
// exits; one that cannot be started is one line.
#include "board/browser.h"

#include <sys/stat.h>

#include <gtest/gtest.h>

#include <cstdlib>

#include "support/run_scenario.h"
#include "support/test_util.h"

namespace devgraph::board {
namespace {

TEST(BoardBrowser, TheProgramIsBrowserElseXdgOpenAndTheUrlItsOneArgument) {
  const std::string url = "http://127.0.0.1:8080/";
  EXPECT_EQ(browser_argv("", url), (std::vector<std::string>{"xdg-open", url}));
  EXPECT_EQ(browser_argv("firefox", url), (std::vector<std::string>{"firefox", url}));
  // BROWSER is one program, never split or given to a shell.
  EXPECT_EQ(browser_argv("my browser --new-tab %s; rm -rf x", url),
            (std::vector<std::string>{"my browser --new-tab %s; rm -rf x", url}));
}

TEST(BoardBrowser, TheBrowserRunsInAGroupOfItsOwnWithItsOutputDiscardedAndIsReaped) {
  test::Scratch s;
  const std::string script = s / "browser";
  const std::string said = s / "said";
  test::write_text(script,
                   "#!/bin/sh\n"
                   "echo noise; echo more noise >&2; out=$(readlink /proc/$$/fd/1)\n"
                   "{ printf '%s\\n' \"$#\" \"$1\"; cut -d' ' -f5 /proc/$$/stat; "
                   "echo $$; echo \"$out\"; } > '" +
                       said +
                       ".tmp'\n"
                       "mv '" +
                       said + ".tmp' '" + said + "'\n");
  ASSERT_EQ(::chmod(script.c_str(), 0755), 0);
  ASSERT_EQ(::setenv("BROWSER", script.c_str(), 1), 0);
  auto loop = ChildLoop::create();
  ASSERT_TRUE(loop.ok());
  LoopHost host(*loop);
  auto opened = open_in_browser(host, "http://127.0.0.1:9/?a=1&b=$(x)");
  ASSERT_TRUE(opened.ok()) << opened.error().message;
  // The loop has the browser's pidfd alone: it ends once the browser is
  // reaped.
  while (auto e = loop->wait()) EXPECT_TRUE(host.dispatch(*e));
  auto lines = test::lines_of(test::slurp(said));
  ASSERT_EQ(lines.size(), 5u) << test::slurp(said);
  EXPECT_EQ(lines[0], "1");
  EXPECT_EQ(lines[1], "http://127.0.0.1:9/?a=1&b=$(x)");
  EXPECT_EQ(lines[2], lines[3]) << "its own process group";
  EXPECT_EQ(lines[4], "/dev/null");
}

TEST(BoardBrowser, ABrowserThatCannotBeStartedIsOneLine) {
  ASSERT_EQ(::setenv("BROWSER", "devgraph-test-no-such-browser", 1), 0);
  auto loop = ChildLoop::create();
  ASSERT_TRUE(loop.ok());
  LoopHost host(*loop);
  auto opened = open_in_browser(host, "http://127.0.0.1:9/");
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.error().kind, ErrorKind::not_found);
  EXPECT_EQ(opened.error().message,
            "cannot start the browser devgraph-test-no-such-browser: No such file or directory");
  EXPECT_FALSE(loop->wait().has_value()) << "nothing is left to reap";
}

}  // namespace
}  // namespace devgraph::board
