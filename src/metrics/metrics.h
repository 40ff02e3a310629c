// Session metrics: one run of the graph turned into one self-contained
// session record (timing, counts, the event script for a replay), kept one
// JSON line per run in `<metrics dir>/<name>-<started-at>.jsonl`, and the
// reports `devgraph metrics report` and `sessions` print from it.
//
// Contract:
// - The record is the reference metrics.py's `develop-session/1` record:
//   the same keys in the same order with the same value types, and every
//   number computed and rounded as Python computes it, so either tool
//   reports a record the other wrote, line for line. devgraph adds two
//   keys the reference ignores: `costs` (cost and tokens per persona, per
//   bundle and for the run, from the persona results in the events:
//   results, cost_usd, tokens, and usage, the tokens part by part as
//   util/token_usage.h's JSON form, each part null while no result
//   reported it; a result event without `tokens` or `usage` adds none) and
//   `waiting` (per bundle: seconds of CLI back-off and of cursors waiting
//   for a person; for the run: seconds of provider pause).
// - compute_timing(), compute_costs(), compute_waiting(), build_session()
//   and the format_* functions are pure: no clock, no file, no
//   environment. An event without a readable `ts` or `type` is an error
//   (ErrorKind::usage) naming its line, never skipped.
// - format_report() prints the reference's lines first, then, when the
//   record has them, the cost and waiting tables, and last a table of the
//   tokens part by part per persona and for the run once any persona
//   result reported them; a record without
//   `costs`/`waiting` (the reference's) is printed exactly as the
//   reference prints it. A record missing the reference's own keys is an
//   error naming the key.
// - record() writes only under the metrics directory, by one atomic
//   replace of the run's file; re-recording a run replaces its line (by
//   run_id), so a resumed run's final record replaces its handoff record.
//   A run directory that cannot be read writes nothing.
// - Errors: not_found for a missing run directory, state file or record
//   file; usage for a file that does not parse or is not a record.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "util/expected.h"
#include "util/json.h"

namespace devgraph::metrics {

inline constexpr const char* kSchema = "develop-session/1";

// An ISO 8601 timestamp as Python's datetime.fromisoformat reads it, as
// microseconds since the epoch. A timestamp without an offset is naive:
// differences treat it as UTC, compact_timestamp() as local time.
struct Instant {
  std::int64_t micros = 0;
  bool naive = false;
};
std::optional<Instant> parse_timestamp(const std::string& text);
// "20261202T183042Z": the instant in UTC, for file names.
std::optional<std::string> compact_timestamp(const std::string& text);

// Python's round(x, digits) (half to even on the exact binary value).
double py_round(double x, int digits);
// "2h03m", "4m05s", "7s": the reference's short durations.
std::string hms(double seconds);

// The reference's timing summary over a run: wall_seconds, counts,
// node_dwell, personas, tasks, concurrency.
Expected<Json> compute_timing(const Json& state, const std::vector<Json>& events);
// devgraph's additions (see the contract).
Json compute_costs(const std::vector<Json>& events);
Expected<Json> compute_waiting(const std::vector<Json>& events);

// <owner>-<repo> from a run directory `<home>/<owner>/<repo>/runs/<id>`,
// else the name of the state's repository directory, else "unknown".
std::string session_name(const std::string& run_dir, const Json& state);

// The whole session record. `run_dir` is the run's absolute path,
// `recorded_at` the time stamp to write.
Expected<Json> build_session(const std::string& run_dir, const Json& state,
                             const std::vector<Json>& events,
                             const std::optional<std::string>& name,
                             const std::string& recorded_at);
// "<name>-<compacted started_at>.jsonl".
Expected<std::string> session_filename(const Json& session);
// The file's new text: `existing` without `session`'s run_id, plus
// `session`, ordered by started_at, one compact JSON line each.
std::string merged_file(const std::vector<Json>& existing, const Json& session);

Expected<std::string> format_report(const Json& session);
std::string format_sessions(const std::vector<Json>& sessions);

// Effects.
struct Run {
  Json state;
  std::vector<Json> events;
};
Expected<Run> load_run(const std::string& run_dir);
// The records of one .jsonl file; a missing file has none.
Expected<std::vector<Json>> load_sessions(const std::string& path);
// One record of a file: `run_id`'s, else the latest started.
Expected<Json> pick_session(const std::vector<Json>& sessions, const std::string& path,
                            const std::optional<std::string>& run_id);
// A .jsonl file, a directory of them, or an <owner>-<repo> prefix.
Expected<std::vector<Json>> load_sessions_matching(const std::string& spec);
// DEVELOP_METRICS_DIR, else $AI_ROOT/metrics/develop, else
// ~/.ai/metrics/develop.
std::string default_metrics_dir();
// Builds the record of `run_dir` and writes it; returns the file's path
// (`metrics_dir` as given, joined with the file name).
Expected<std::string> record(const std::string& run_dir, const std::optional<std::string>& name,
                             const std::optional<std::string>& metrics_dir);

// Python's pathlib spelling of a path: "~" expanded when asked, repeated
// and trailing slashes and "." parts dropped.
std::string py_path(const std::string& path, bool expand_user);

}  // namespace devgraph::metrics
