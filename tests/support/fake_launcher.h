// A scripted, in-process Launcher for driver tests: no child process. Each
// launch asks the script for the persona's answer (and lets it write files
// in the worktree, as a persona would); the launch then completes, in
// launch order, the next time the driver waits.
#pragma once

#include <deque>
#include <functional>
#include <string>
#include <vector>

#include "bundle/launcher.h"
#include "util/json.h"

namespace devgraph::test {

class FakeLauncher final : public bundle::Launcher {
 public:
  // (request, this persona+task's call number from 1) -> RESULT_JSON; a
  // "tool_calls" field in it is taken out and reported as the CLI's count,
  // a "usage" field (TokenUsage's JSON form) as the CLI's tokens.
  using Script = std::function<Json(const agents::LaunchRequest&, int call)>;
  explicit FakeLauncher(Script script) : script_(std::move(script)) {}

  Expected<std::uint64_t> launch(const agents::LaunchRequest& request) override;
  std::optional<bundle::LaunchEvent> next() override;
  std::optional<bundle::LaunchEvent> poll() override { return next(); }
  size_t outstanding() const override { return pending_; }
  int persona_runs() const override { return static_cast<int>(launches.size()); }

  // Every launch, in order: "persona task" ("-" for no task).
  std::vector<std::string> launches;
  // The most launches outstanding at once.
  size_t peak_outstanding = 0;
  // How many launches of "persona task" so far.
  int calls(const std::string& persona_task) const;

 private:
  Script script_;
  std::deque<bundle::LaunchEvent> queue_;
  size_t pending_ = 0;
  std::uint64_t next_id_ = 1;
};

}  // namespace devgraph::test
