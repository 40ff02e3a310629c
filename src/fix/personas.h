// FixPersonas over the real persona runtime: each call is one launch on a
// runtime of its own (a new process, a new session), on the backend the
// call names, at its model and effort when set. Only the writing roles
// ("fix", and a debug session's "debug") get the write tools; every other
// role reads.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "fix/loop.h"
#include "graph/graph.h"

namespace devgraph::fix {

struct RuntimeFlags {
  std::string agent_bin;  // --claude-bin, for the claude backend
  std::string sim_scenario;
  std::vector<std::string> agent_command;
  std::optional<std::chrono::milliseconds> persona_timeout;
  // The simulated agent's launch counters for every call ("call" rules
  // count across them); empty: each call's own directory.
  std::string sim_state_dir;
};

class RuntimePersonas final : public FixPersonas {
 public:
  RuntimePersonas(const Graph& graph, std::string skill_dir, std::string worktree,
                  RuntimeFlags flags)
      : graph_(graph),
        skill_dir_(std::move(skill_dir)),
        worktree_(std::move(worktree)),
        flags_(std::move(flags)) {}
  Expected<PersonaAnswer> run(const PersonaCall& call) override;

 private:
  const Graph& graph_;
  std::string skill_dir_, worktree_;
  RuntimeFlags flags_;
};

}  // namespace devgraph::fix
