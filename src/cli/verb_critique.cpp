// `devgraph critique ARTIFACT --perspective P`: one perspective's critique
// of one artifact by the critic persona, on the perspective's backend and
// then its fallbacks (discuss/critique.h); `devgraph discuss` runs one per
// perspective, all at once. The answer is the RESULT_JSON last line on
// stdout, and the file --out names (written whole or not at all).
//
// Exit codes: 0 a backend answered, 1 every backend failed (the answer
// says how each did), 3 a usage error (nothing run), 128+N stopped by
// signal N.
#include <cstdlib>
#include <limits>

#include "cli/verbs.h"
#include "discuss/critique.h"
#include "util/args.h"
#include "util/console.h"
#include "util/fs.h"
#include "util/text.h"

namespace devgraph {
namespace {

constexpr int kExitUsage = 3;

int usage_exit(Error e) {
  if (e.exit_code == 2 || e.exit_code == 1) e.exit_code = kExitUsage;
  return report_error("critique", e);
}

}  // namespace

ArgParser verb_critique_parser() {
  ArgParser p("devgraph critique");
  p.description(
       "One perspective's critique of one artifact: the critic persona rates it from that "
       "perspective (GRAPH.yaml discuss.perspectives) on the perspective's backend, then on each "
       "fallback backend until one answers.")
      .positional("artifact", "the file to critique")
      .hint(ValueHint::file)
      .option("perspective", "the perspective (GRAPH.yaml discuss.perspectives)", true)
      .option("round", "the round's id")
      .default_value("critique")
      .option("context", "the requirements file the artifact is checked against")
      .default_value("none")
      .hint(ValueHint::file)
      .option("backends", "the backends to try, in order, comma-separated")
      .default_value("the perspective's, then GRAPH.yaml discuss.fallback_backends")
      .option("out", "also write the answer to this file")
      .hint(ValueHint::file)
      .option("dir", "where the critique keeps its logs and prompts")
      .default_value("beside --out, else a new directory under $TMPDIR")
      .hint(ValueHint::directory)
      .option("skill", "asset directory (GRAPH.yaml, agents/, templates/)")
      .default_value(kSkillDefault)
      .hint(ValueHint::directory)
      .option("claude-bin", "the claude CLI binary (tests pass a fake)")
      .default_value(kAgentBinDefault)
      .hint(ValueHint::file)
      .option("model", "pin every attempt to this model")
      .default_value("the critic's own")
      .option("sim-scenario", "scenario file for the sim backend")
      .hint(ValueHint::file)
      .option("agent-command", "argv template for the command backend")
      .option("persona-timeout-seconds", "wall-clock limit of one attempt")
      .default_value("GRAPH.yaml headless.persona_timeout_minutes");
  return p;
}

int verb_critique(const VerbArgs& args) {
  ArgParser p = verb_parser("critique");
  auto a = p.parse(args);
  if (!a) return usage_exit(a.error());
  discuss::CritiqueRequest req;
  req.artifact = a->positionals()[0];
  req.perspective = *a->get("perspective");
  req.round = a->get_or("round", "critique");
  req.context = a->get_or("context", "");
  req.backends = split_list(a->get_or("backends", ""));
  req.skill = a->get("skill");
  req.agent_bin = a->get_or("claude-bin", "");
  req.model = a->get("model");
  req.sim_scenario = a->get_or("sim-scenario", "");
  if (a->get("agent-command")) {
    auto tmpl = agent_command_template(a->get("agent-command"), "command");
    if (!tmpl) return usage_exit(p.usage_error(tmpl.error().message));
    req.agent_command = std::move(*tmpl);
  }
  if (auto t = a->get("persona-timeout-seconds")) {
    auto v = parse_seconds(*t);
    if (!v || *v <= 0)
      return usage_exit(p.usage_error(
          "argument --persona-timeout-seconds: invalid positive float value: '" + *t + "'"));
    req.persona_timeout = std::chrono::milliseconds(static_cast<long long>(*v * 1000.0));
  }
  auto out_file = a->get("out");
  if (auto d = a->get("dir")) {
    req.dir = *d;
  } else if (out_file) {
    req.dir = *out_file + ".d";
  } else {
    const char* tmp = std::getenv("TMPDIR");
    auto made = make_temp_directory(join_path(tmp && *tmp ? tmp : "/tmp", "devgraph-critique-"));
    if (!made) return report_error("critique", made.error());
    req.dir = *made;
  }
  auto answer = discuss::critique(req);
  if (!answer) {
    if (answer.error().exit_code == kExitUsage) return report_error("critique", answer.error());
    err() << "devgraph critique: " << answer.error().message << "\n";
    out() << "RESULT_JSON: "
          << dump_py(Json{{"status", "ERROR"}, {"summary", answer.error().message}}) << std::endl;
    return answer.error().exit_code;
  }
  Json j = discuss::to_json(*answer);
  if (out_file)
    if (auto w = write_file_atomic(*out_file, dump_py(j, 2) + "\n"); !w)
      return report_error("critique", w.error());
  out() << "RESULT_JSON: " << dump_py(j) << std::endl;
  return answer->answered ? 0 : 1;
}

}  // namespace devgraph
