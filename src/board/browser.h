// `--open`: the board's URL in the user's browser.
//
// Contract:
// - browser_argv() is the program and its one argument: the program BROWSER
//   names when it is set and not empty (one program, looked up in PATH),
//   else xdg-open; the URL is the only argument. Never a shell: the URL and
//   BROWSER are words, never parsed.
// - open_in_browser() starts it with this process's environment, stdin,
//   stdout and stderr on /dev/null, in a process group of its own, and
//   never waits for it: its exit is reaped when it comes, through a pidfd
//   watched on `host` (a host that goes first leaves it to init). A program
//   that cannot be started is an error in one line naming it (not_found);
//   nothing is left running then.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "board/server.h"
#include "util/expected.h"

namespace devgraph::board {

std::vector<std::string> browser_argv(std::string_view browser, const std::string& url);
Status open_in_browser(FdHost& host, const std::string& url);

}  // namespace devgraph::board
