// devgraph metrics record|report|sessions: session metrics with the
// reference metrics.py's flags, output and exit codes (0 done, 1 a run or
// record that cannot be read, 2 a usage error), over src/metrics/.

#include <stdlib.h>

#include "cli/help.h"
#include "cli/verbs.h"
#include "metrics/metrics.h"
#include "util/args.h"
#include "util/console.h"
#include "util/fs.h"

namespace devgraph {
namespace {

constexpr const char* kVerb = "metrics";

Error top_usage_error(const std::string& message) {
  return Error{verb_usage(*find_verb(kVerb)) + "\ndevgraph metrics: error: " + message, 2,
               ErrorKind::usage};
}

// Failures of the data (not of the flags) exit 1, as the reference's do.
int data_error(const Error& e) {
  Error one = e;
  one.exit_code = 1;
  return report_error(kVerb, one);
}

int run_record(const ParsedArgs& args) {
  auto path = metrics::record(args.positionals()[0], args.get("name"), args.get("metrics-dir"));
  if (!path) return data_error(path.error());
  write_out(*path + "\n");
  return 0;
}

int run_report(const ParsedArgs& args) {
  const std::string target = metrics::py_path(args.positionals()[0], true);
  std::string full = absolute_path(target);
  if (char* real = ::realpath(full.c_str(), nullptr)) {
    full = real;
    std::free(real);
  }
  Expected<Json> session = fail("unreachable");
  if (path_exists(full) && !is_directory(full)) {
    auto sessions = metrics::load_sessions(full);
    if (!sessions) return data_error(sessions.error());
    session = metrics::pick_session(*sessions, full, args.get("run-id"));
  } else {
    auto run = metrics::load_run(full);
    if (!run) {
      Error e = run.error();
      if (e.kind == ErrorKind::not_found)
        e.message = full + " is neither a session record nor a run directory (" +
                    (is_directory(full) ? "no state.json" : "no such file or directory") + ")";
      return data_error(e);
    }
    session = metrics::build_session(full, run->state, run->events, std::nullopt, "");
  }
  if (!session) return data_error(session.error());
  auto text = metrics::format_report(*session);
  if (!text) return data_error(Error{full + ": " + text.error().message, 1, ErrorKind::usage});
  write_out(*text + "\n");
  return 0;
}

int run_sessions(const ParsedArgs& args) {
  auto sessions = metrics::load_sessions_matching(args.positionals()[0]);
  if (!sessions) return data_error(sessions.error());
  write_out(metrics::format_sessions(*sessions) + "\n");
  return 0;
}

}  // namespace

ArgParser verb_metrics_parser() {
  ArgParser p("devgraph metrics");
  p.description(
      "Session metrics: one record per run of the graph, in "
      "<metrics dir>/<owner>-<repo>-<started-at>.jsonl (DEVELOP_METRICS_DIR, else "
      "$AI_ROOT/metrics/develop, else ~/.ai/metrics/develop).");
  return p;
}

std::vector<Subcommand> verb_metrics_subcommands() {
  ArgParser record("devgraph metrics record");
  record.positional("run_dir", "the run directory (state.json, events.jsonl)")
      .hint(ValueHint::directory)
      .option("name", "the session's name")
      .default_value("<owner>-<repo> from the run's path")
      .option("metrics-dir", "where to write")
      .default_value("DEVELOP_METRICS_DIR, else $AI_ROOT/metrics/develop, else ~/.ai/...")
      .hint(ValueHint::directory);
  ArgParser report("devgraph metrics report");
  report.positional("target", "a run directory or a metrics .jsonl file")
      .hint(ValueHint::file)
      .option("run-id", "the record to report")
      .default_value("the latest started");
  ArgParser sessions("devgraph metrics sessions");
  sessions
      .positional("metrics_path",
                  "a .jsonl file, a directory of them, or an <owner>-<repo> name prefix")
      .hint(ValueHint::file);
  return {{"record",
           "build the run's session record and write it (replaces the run's earlier record); "
           "prints the file",
           std::move(record)},
          {"report",
           "timing, cost and waiting report of a run directory or of one record of a .jsonl "
           "file",
           std::move(report)},
          {"sessions", "one line per recorded session", std::move(sessions)}};
}

int verb_metrics(const VerbArgs& args) {
  if (args.empty())
    return report_error(kVerb, top_usage_error("the following arguments are required: cmd"));
  const std::string sub = args[0];
  if (sub == "-h" || sub == "--help")
    return report_error(kVerb, Error{verb_help(*find_verb(kVerb)), 0});
  auto subs = verb_metrics_subcommands();
  std::string choices;
  const Subcommand* found = find_subcommand(subs, sub, choices);
  if (found == nullptr)
    return report_error(kVerb, top_usage_error("argument cmd: invalid choice: '" + sub +
                                               "' (choose from " + choices + ")"));
  const ArgParser& parser = found->parser;
  VerbArgs rest(args.begin() + 1, args.end());
  auto parsed = parser.parse(rest);
  if (!parsed) return report_error(kVerb, parsed.error());
  if (sub == "record") return run_record(*parsed);
  if (sub == "report") return run_report(*parsed);
  return run_sessions(*parsed);
}

}  // namespace devgraph
