// The persona files under <skill>/agents/: one Markdown file per persona the
// graph names, each the whole instruction set of that persona.
//
// Contracts:
// - The set of files and the graph's `personas` list agree exactly: a
//   persona with no file cannot be launched, and a file that is no persona
//   (a leftover `developer-repair.md`) would be a variant name that the run
//   state refuses. Both are reported by check_persona_files().
// - Each file states its result contract: a front-matter `name:` equal to
//   its file name, a section on the `RESULT_JSON:` line, and at least one
//   example line `RESULT_JSON: {...}` that satisfies
//   contracts/agent-result.schema.json (so the example a model imitates is
//   itself valid).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "graph/graph.h"

namespace devgraph {

class Schema;

// "<skill>/agents/<persona>.md".
std::string persona_file(const std::string& skill_dir, std::string_view persona);

// Problems with one persona file's text, one line each; empty when sound.
// `schema` may be null, which skips validating the example lines.
std::vector<std::string> check_persona_text(std::string_view persona, std::string_view text,
                                            const Schema* schema);

// Every problem with <skill>/agents/ against the graph's persona list: a
// persona without a file, a file that is not a persona, and each file's
// result-contract problems. Empty when sound.
std::vector<std::string> check_persona_files(const std::string& skill_dir, const Graph& graph);

}  // namespace devgraph
