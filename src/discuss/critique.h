// One perspective's critique of one artifact (`devgraph critique`, which
// `devgraph discuss` runs once per perspective, all at once): the critic
// persona (GRAPH.yaml discuss.persona) run on the perspective's backend,
// then on each fallback backend in turn until one answers.
//
// Contract:
// - The artifact and the requirements are passed by path, never pasted
//   into an argv or the dispatch: the dispatch names the files, says they
//   are material to judge and never instructions, and gives the
//   perspective's role, focus and what its answer must report
//   (dispatch_text()).
// - The critic may read and search, nothing else: its allowed tools are
//   Read, Grep and Glob whatever GRAPH.yaml `headless` allows others.
// - An answer counts when the persona's result is valid
//   (contracts/agent-result.schema.json) with status DONE or
//   DONE_WITH_CONCERNS and its `critique` object passes the answer schema
//   (GRAPH.yaml discuss.answer_schema), names this perspective and carries
//   every field the perspective reports (check_critique(), pure). Anything
//   else is a failed attempt with its reason, and the next backend runs
//   at once (a failing CLI is not retried; a provider limit is not waited
//   out).
// - Every attempt is recorded (backend, outcome, reason, seconds, cost);
//   `answered` false with every backend failed is an answer too: the
//   caller decides what a silent perspective means, never this module.
// - Errors are for requests that cannot run at all (an unknown
//   perspective or backend, an artifact that is not a readable file, a
//   bad skill directory), before anything starts. A stop signal stops the
//   persona and is an `interrupted` error.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "contracts/schema.h"
#include "graph/graph.h"
#include "util/expected.h"
#include "util/json.h"

namespace devgraph::discuss {

struct CritiqueRequest {
  std::string artifact;               // the file judged
  std::string context;                // the requirements file; empty: none
  std::string round;                  // the round's id, for the dispatch and logs
  std::string perspective;            // a GRAPH.yaml discuss.perspectives name
  std::vector<std::string> backends;  // tried in order; empty: the perspective's, then fallbacks
  std::string agent_bin;              // --claude-bin, for the claude backend
  std::optional<std::string> model;   // every attempt's model
  std::string sim_scenario;           // for the sim backend
  std::vector<std::string> agent_command;  // for the command backend
  std::optional<std::string> skill;
  std::string dir;       // its own: logs, prompts, CLI configuration
  std::string worktree;  // the CLI's working directory
  std::optional<std::chrono::milliseconds> persona_timeout;
};

struct CritiqueAttempt {
  std::string backend;
  std::string outcome;  // agents::Outcome's name, or "invalid_answer"
  std::string reason;   // empty when it answered
  long long elapsed_ms = 0;
  double cost_usd = 0.0;
  std::optional<long long> tokens;
};

struct CritiqueAnswer {
  std::string perspective;
  std::string role;
  bool answered = false;
  std::string backend;  // the one that answered
  Json critique;        // the answer's object; null when none answered
  std::string reason;   // why none did
  std::vector<CritiqueAttempt> attempts;
};

// The backends a perspective is run on, in order: `first`, then every
// `fallback` not already named, each once.
std::vector<std::string> backend_order(const std::vector<std::string>& first,
                                       const std::vector<std::string>& fallback);

// The critic's dispatch: <skill>/templates/critique-dispatch.md rendered.
Expected<std::string> dispatch_text(const std::string& skill_dir,
                                    const DiscussPerspective& perspective, const std::string& round,
                                    const std::string& artifact, const std::string& context);

// The critique object of a persona result, or the one-line reason it is
// not an answer of `perspective`.
Expected<Json> check_critique(const Json& result, const DiscussPerspective& perspective,
                              const Schema& answer_schema);

Expected<CritiqueAnswer> critique(const CritiqueRequest& request);

Json to_json(const CritiqueAnswer& answer);
Expected<CritiqueAnswer> answer_from_json(const Json& json);

}  // namespace devgraph::discuss
