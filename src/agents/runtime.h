// The persona runtime: launches personas through a backend, supervises all
// live ones in one event loop, and hands the driver one event at a time:
// launches, back-offs, resumes, provider pauses, and completions (a
// validated result or a classified failure).
//
// Contract:
// - launch() starts a persona now, or queues it when its backend is paused
//   by a provider limit; it fails only for a bad request (unknown persona
//   file, worktree that is not a directory) and then starts nothing.
// - next_event() blocks until something happens. Every persona keeps
//   running while another waits out a back-off or a pause: back-offs and
//   pauses are timers in the same loop, never sleeps.
// - Every launch ends in exactly one `completed` event whose Completion
//   says how:
//     result            the persona's RESULT_JSON, schema-checked
//     malformed_result  clean exit without a valid result, after one resume
//                       by session id where the backend supports it
//     timeout           the wall-clock limit killed it
//     cli_error         the CLI kept failing (non-zero exit, is_error, an
//                       error subtype) until the retry budget ran out
//     provider_limit    a usage limit whose reset lies beyond max_pause
//     launch_failed     the program could not be started
//     interrupted       stop_all() ended it, or it had not started yet
//   For every outcome but `result`, Completion::result is a BLOCKED result
//   whose blockers name the outcome, so the driver can treat all alike.
// - CLI failures are retried with the same prompt after a delay that
//   starts at backoff_base and doubles up to backoff_cap; the delays of
//   one launch add up to at most retry_budget (headless.api_retry_minutes).
//   The budget is per launch: overlapping waits of parallel personas do not
//   eat each other's budget.
// - How a failed CLI run is handled is the row of the backend's failure
//   table it matches (backend.h, FailureKind): transient failures are
//   retried as below; a fatal one (a rejected key, a bad request) completes
//   at once as cli_error; a persona out of turns is resumed once for its
//   result, like a clean exit without one.
// - A provider limit pauses new launches on the backend until the reset
//   (or rate_limit_pause for a rate limit, default_pause for a usage limit,
//   when the message gives none); the failed launch is queued again
//   without spending a retry; personas already running go on. A CLI seen
//   waiting out a limit by itself (Backend::live_limit) for limit_stall is
//   stopped and handled the same way.
//   pause() does the same for a limit met elsewhere (the run's other
//   bundles).
// - Completion::cost_usd and Completion::token_usage sum what the CLI
//   reported over every attempt and the resume, the tokens normalized
//   (agents/usage.h): all of each call, except that a resume of a session
//   whose earlier report was counted adds only what grew, where the CLI
//   reports the session so far (codex's tokens, claude's and the sim's
//   cost). total_cost() sums the launches' costs the same way.
//   Completion::tokens is token_usage.total(), the one `tokens` number
//   (util/token_usage.h); both say nothing where no call reported
//   anything. The log's "finished" records keep each call's cost as the
//   CLI printed it.
// - Every launch, finish, back-off and pause is appended to log_path
//   (run_bundle.log, JSON lines: ts, bundle, event, then the reference's
//   fields for "launched", "finished", "backoff"; "paused"/"unpaused" are
//   devgraph's; "launched" and "finished" also carry mono_us, the steady
//   clock in microseconds, which orders records of different bundles' logs
//   on one machine). The log is diagnostic: one write(2) per record, no
//   fsync.
// - With LaunchRequest::output_path, each attempt's stdout and stderr are
//   appended there once the child exits: a header naming the handle, the
//   attempt and how it ended, then at most kKeptOutputBytes of the tail of
//   each stream. Diagnostic, like the log: no fsync, and a failure to
//   write is logged, never an error of the launch.
// - The driver may add its own timers and descriptors; they come back
//   through next_event() as `timer` and `fd_ready` events.
// - With watch_stop_signals, SIGINT, SIGTERM and SIGHUP do not end this
//   process: each one is an `interrupted` event (carrying the signal) from
//   next_event(), which wakes up for it. The runtime does nothing else
//   about it; stopping is the driver's call.
// - stop_all() stops everything: each running persona's process group
//   gets SIGTERM, then SIGKILL once the grace has passed, all on the event
//   loop; launches waiting out a back-off or a pause complete at once.
//   Nothing starts after it (no retry, resume, unpause, or new launch: a
//   launch() then completes as interrupted without a child). A persona
//   still running completes as interrupted when its exit is seen, unless
//   that exit already carries a valid result or a timeout ended it; its
//   pid leaves the live-children record then. Logged as "stopping".
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agents/backend.h"
#include "proc/supervisor.h"
#include "util/clock.h"
#include "util/expected.h"
#include "util/json.h"
#include "util/token_usage.h"

namespace devgraph::agents {

struct RuntimeConfig {
  BackendOptions backend;
  std::string bundle;    // written into every log record
  std::string log_path;  // run_bundle.log; empty: no log
  // Where the live children are recorded for a successor (proc/leftovers.h);
  // empty: not recorded.
  std::string children_record;
  bool echo_log_to_stderr = false;
  // Called with every log record as it is written (the live view); may be
  // empty.
  std::function<void(const Json&)> on_log;
  std::string prompt_dir;     // prompt files (command, sim); empty: <log dir>/prompts
  std::string result_schema;  // agent-result.schema.json path (required)
  std::chrono::milliseconds persona_timeout{std::chrono::minutes(30)};
  std::chrono::milliseconds kill_grace{std::chrono::seconds(5)};
  std::chrono::milliseconds backoff_base{std::chrono::seconds(60)};
  std::chrono::milliseconds backoff_cap{std::chrono::seconds(600)};
  std::chrono::milliseconds retry_budget{std::chrono::minutes(60)};
  std::chrono::milliseconds default_pause{std::chrono::minutes(15)};
  // A rate limit (ProviderLimit::rate) without a reset time pauses this
  // long instead.
  std::chrono::milliseconds rate_limit_pause{std::chrono::seconds(60)};
  // How long a CLI may wait out a provider limit by itself (Backend::
  // live_limit: codex reconnecting after a 429) before it is stopped and
  // the backend paused; any other output line in between ends the wait.
  std::chrono::milliseconds limit_stall{std::chrono::minutes(2)};
  std::chrono::milliseconds max_pause{std::chrono::hours(6)};
  size_t max_output_bytes = 8 * 1024 * 1024;
  // Verify <skill>/agents/<persona>.md exists before launching.
  bool check_persona_file = true;
  // Take the stop signals as `interrupted` events (proc/stop_signals.h).
  bool watch_stop_signals = false;
};

// How much of each stream of one attempt output_path keeps.
inline constexpr size_t kKeptOutputBytes = 256 * 1024;

// Fills the limits from GRAPH.yaml-style `headless` values (minutes).
void apply_headless_minutes(RuntimeConfig& config, int persona_timeout_minutes,
                            int api_retry_minutes);

using LaunchId = std::uint64_t;

enum class Outcome {
  result,
  malformed_result,
  timeout,
  cli_error,
  provider_limit,
  launch_failed,
  interrupted,
};
std::string_view outcome_name(Outcome outcome);

struct Completion {
  LaunchId id = 0;
  std::string handle;  // "hl-" + 12 hex digits, as in the reference
  std::string persona;
  std::optional<std::string> task;
  Outcome outcome = Outcome::result;
  Json result;  // always an object with at least status, summary, evidence
  std::string session_id;
  double cost_usd = 0.0;  // summed over attempts and the resume
  // Tokens summed over attempts and the resume (see the contract), part by
  // part; `tokens` is its total(), nullopt when the CLI reported none.
  TokenUsage token_usage;
  std::optional<long long> tokens;
  // Tool calls summed the same way (AgentOutput::tool_calls); nullopt when
  // the CLI reported none.
  std::optional<int> tool_calls;
  long long duration_ms = 0;  // the CLI's own API time, summed
  Json usage;                 // the last attempt's usage, as the CLI printed it
  int attempts = 1;           // launches of the same prompt (retries + 1)
  bool resumed = false;
  int exit_code = -1;
  int term_signal = 0;
  std::string error;                     // one line, empty for outcome result
  std::chrono::milliseconds elapsed{0};  // launch() to completion
};

struct RuntimeEvent {
  enum class Kind {
    launched,     // a child started (first attempt, retry or resume)
    completed,    // `completion` is set; the launch is over
    backoff,      // a CLI failure; relaunch after `delay`
    resuming,     // clean exit without a result; resuming `session_id`
    paused,       // provider limit: `backend` paused for `delay`
    unpaused,     // the pause is over; queued launches start
    timer,        // a timer the driver added
    fd_ready,     // a descriptor the driver watches
    interrupted,  // a stop signal arrived (watch_stop_signals): `signal`
  };
  Kind kind = Kind::launched;
  LaunchId id = 0;
  std::string handle;
  std::string persona;
  std::optional<std::string> task;
  int attempt = 1;
  std::chrono::milliseconds delay{0};
  std::chrono::system_clock::time_point until{};  // paused: when the pause ends
  std::string detail;                             // error text, limit message, session id
  std::optional<Completion> completion;
  TimerId timer = 0;
  WatchId watch = 0;
  int fd = -1;
  int signal = 0;  // interrupted: SIGINT, SIGTERM or SIGHUP
};
std::string_view event_kind_name(RuntimeEvent::Kind kind);

class PersonaRuntime {
 public:
  // Loads the result schema and builds the backend; errors name the field.
  static Expected<std::unique_ptr<PersonaRuntime>> create(RuntimeConfig config,
                                                          const Clock& clock = system_clock());
  ~PersonaRuntime();
  PersonaRuntime(const PersonaRuntime&) = delete;
  PersonaRuntime& operator=(const PersonaRuntime&) = delete;

  Expected<LaunchId> launch(LaunchRequest request);

  // The next event. With `until`, nullopt once that time passes first.
  // Without it, nullopt only when nothing is outstanding (no launch in
  // flight, waiting or queued, and no driver timer or descriptor).
  std::optional<RuntimeEvent> next_event(std::optional<SteadyTime> until = std::nullopt);

  // Stops every launch (see the contract): TERM now to each running
  // persona's group, KILL after `grace` (default: config().kill_grace) to
  // those still alive. Returns at once; the completions come from
  // next_event(), which returns nullopt once the last one is handed out
  // (unless driver timers or descriptors remain). Called again, a grace
  // that ends sooner brings the KILLs forward (zero: KILL now).
  void stop_all(std::optional<std::chrono::milliseconds> grace = std::nullopt);
  // Whether stop_all() has been called.
  bool stopping() const;
  // Pauses new launches until `until`, as a provider limit would, for a
  // limit another bundle of the run met (`reason` says which): launches
  // queue, running personas go on, and a later pause in force is kept.
  // Logged as "paused" with run_wide true and no persona; no event. A
  // time already past, or a call after stop_all(), changes nothing.
  void pause(std::chrono::system_clock::time_point until, const std::string& reason);

  // Driver-owned timers and descriptors on the same loop.
  TimerId add_timer(SteadyTime when);
  void cancel_timer(TimerId id);
  Expected<WatchId> watch_fd(int fd, std::uint32_t events);
  void unwatch_fd(WatchId id);

  // Launches not yet completed: running, waiting out a back-off, or queued
  // behind a pause.
  size_t outstanding() const;
  // Children running right now.
  size_t live() const;
  // When the backend's provider pause ends, if one is in force.
  std::optional<std::chrono::system_clock::time_point> paused_until() const;
  double total_cost() const;
  int persona_runs() const;  // children started, retries and resumes included
  const RuntimeConfig& config() const;
  const Clock& clock() const;

 private:
  struct Impl;
  explicit PersonaRuntime(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// One persona, start to end, on a runtime of its own made from `config`:
// its completion; an error of kind `internal` when the runtime cannot be
// made, `usage` when the launch is refused, and `interrupted` (exit code
// 128 + N) when stop signal N arrived meanwhile (set
// config.watch_stop_signals): the persona was stopped first.
Expected<Completion> run_to_completion(RuntimeConfig config, const LaunchRequest& launch);

}  // namespace devgraph::agents
