// A CommandRunner that starts nothing: it records every command and answers
// with what the test scripts (exit 0 and no output by default).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "proc/command.h"

namespace devgraph::test {

class FakeRunner final : public CommandRunner {
 public:
  Expected<CommandResult> run(const CommandSpec& spec) override {
    calls.push_back(spec.argv);
    if (answer) return answer(spec);
    CommandResult r;
    r.exit_code = 0;
    return r;
  }
  std::vector<std::vector<std::string>> calls;
  std::function<Expected<CommandResult>(const CommandSpec&)> answer;
};

}  // namespace devgraph::test
