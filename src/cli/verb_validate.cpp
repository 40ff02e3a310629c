// devgraph validate graph: GRAPH.yaml is structurally sound.
#include <iostream>

#include "cli/verbs.h"
#include "graph/graph.h"
#include "skill/skill.h"
#include "util/args.h"

namespace devgraph {

int verb_validate(const VerbArgs& args) {
  ArgParser parser("devgraph validate");
  parser.positional("what", "graph")
      .option("skill", "skill directory (default: found automatically)");
  auto parsed = parser.parse(args);
  if (!parsed) return report_error("validate", parsed.error());
  const std::string what = parsed->positionals()[0];
  auto skill = locate_skill(parsed->get("skill"));
  if (!skill) return report_error("validate", skill.error());

  if (what == "graph") {
    auto graph = Graph::load(*skill);
    if (!graph) {
      std::cout << "ERROR: " << graph.error().message << "\n";
      return 1;
    }
    auto errors = check_graph(*graph);
    for (const auto& e : errors) std::cout << "ERROR: " << e << "\n";
    if (!errors.empty()) return 1;
    std::cout << "OK: graph structure, lanes, events, and capacity thresholds are valid\n";
    return 0;
  }
  return report_error("validate",
                      parser.usage_error("unknown check '" + what + "' (choose graph)"));
}

}  // namespace devgraph
