// Read and write helpers over a run's state.json for the orchestrator's
// steps: the bundle entries (state.bundles), their cursors
// (state.bundles_runtime) and the pull requests it watches (state.prs).
// Lookups of a missing or mistyped part give an empty answer, never throw.
#pragma once

#include <string>

#include "util/json.h"

namespace devgraph::orchestrator {

// state.bundles, or an empty array.
const Json& bundles_of(const Json& state);
// The entry of `bundle` in state.bundles, or nullptr.
Json* entry_in(Json& state, const std::string& bundle);
const Json* entry_of(const Json& state, const std::string& bundle);
// state.bundles_runtime[bundle], or nullptr.
const Json* cursor_of(const Json& state, const std::string& bundle);
Json* cursor_in(Json& state, const std::string& bundle);
// The state.prs entry of pull request `number`: found, or (pr_in) added.
const Json* pr_of(const Json& state, long long number);
Json& pr_in(Json& state, long long number);

}  // namespace devgraph::orchestrator
