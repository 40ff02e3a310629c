#include "agents/runtime.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <deque>
#include <fstream>
#include <random>
#include <unordered_map>
#include <unordered_set>

#include "agents/cli_setup.h"
#include "agents/result.h"
#include "agents/sim.h"
#include "agents/usage.h"
#include "contracts/schema.h"
#include "proc/stop_signals.h"
#include "skill/skill.h"
#include "util/console.h"
#include "util/fs.h"
#include "util/unsynced_files.h"

namespace devgraph::agents {
namespace {

using ms = std::chrono::milliseconds;
using SysTime = std::chrono::system_clock::time_point;

double seconds(ms d) {
  return static_cast<double>(d.count()) / 1000.0;
}

Json task_json(const std::optional<std::string>& task) {
  return task ? Json(*task) : Json(nullptr);
}

}  // namespace

std::string_view outcome_name(Outcome outcome) {
  switch (outcome) {
    case Outcome::result:
      return "result";
    case Outcome::malformed_result:
      return "malformed_result";
    case Outcome::timeout:
      return "timeout";
    case Outcome::cli_error:
      return "cli_error";
    case Outcome::provider_limit:
      return "provider_limit";
    case Outcome::launch_failed:
      return "launch_failed";
    case Outcome::interrupted:
      return "interrupted";
  }
  return "result";
}

std::string_view event_kind_name(RuntimeEvent::Kind kind) {
  using K = RuntimeEvent::Kind;
  switch (kind) {
    case K::launched:
      return "launched";
    case K::completed:
      return "completed";
    case K::backoff:
      return "backoff";
    case K::resuming:
      return "resuming";
    case K::paused:
      return "paused";
    case K::unpaused:
      return "unpaused";
    case K::timer:
      return "timer";
    case K::fd_ready:
      return "fd_ready";
    case K::interrupted:
      return "interrupted";
  }
  return "launched";
}

void apply_headless_minutes(RuntimeConfig& config, int persona_timeout_minutes,
                            int api_retry_minutes) {
  if (persona_timeout_minutes > 0)
    config.persona_timeout = std::chrono::minutes(persona_timeout_minutes);
  if (api_retry_minutes > 0) config.retry_budget = std::chrono::minutes(api_retry_minutes);
}

struct PersonaRuntime::Impl {
  enum class State { running, backoff, queued };
  struct Launch {
    LaunchId id = 0;
    std::string handle;
    LaunchRequest request;
    PromptRef prompt;
    State state = State::running;
    int attempt = 1;
    bool resuming = false;  // the child running now is the resume call
    bool resumed = false;
    ms waited{0};
    SteadyTime began;
    ChildId child = 0;
    TimerId timer = 0;
    double cost = 0.0;
    TokenUsage tokens;              // summed where the CLI reports them
    std::optional<int> tool_calls;  // likewise
    // The last usage and cost a call reported and its session: a resume
    // of that session adds only what grew, for a CLI whose report covers
    // the session so far (usage_covers_session, cost_covers_session).
    std::string reported_session;
    TokenUsage session_reported;
    double session_cost_reported = 0.0;
    long long duration_ms = 0;
    std::string session_id;
    Json usage;
    int exit_code = -1;
    int term_signal = 0;
    // The CLI is waiting out this limit by itself (Backend::live_limit);
    // stall_timer stops it at limit_stall, `stalled` once it did.
    std::optional<ProviderLimit> live_limit;
    TimerId stall_timer = 0;
    bool stalled = false;
  };

  RuntimeConfig cfg;
  const Clock* clock = nullptr;
  std::unique_ptr<Backend> backend;
  Schema schema;
  ChildLoop loop;
  int log_fd = -1;
  std::mt19937_64 rng;
  LaunchId next_id = 1;
  std::unordered_map<LaunchId, Launch> launches;
  std::unordered_map<ChildId, LaunchId> by_child;
  std::unordered_map<TimerId, LaunchId> by_timer;
  std::unordered_map<TimerId, LaunchId> by_stall_timer;
  std::deque<LaunchId> queued;
  std::optional<SysTime> pause_until;
  SteadyTime pause_began;
  TimerId pause_timer = 0;
  std::unordered_set<TimerId> driver_timers;
  std::unordered_set<WatchId> driver_watches;
  std::deque<RuntimeEvent> events;
  std::vector<std::string> env;
  double total_cost = 0.0;
  int runs = 0;
  bool stopping = false;  // stop_all() was called
  int stop_signal = 0;    // the latest stop signal reported

  Impl(RuntimeConfig c, const Clock& clk, std::unique_ptr<Backend> b, Schema s, ChildLoop l)
      : cfg(std::move(c)),
        clock(&clk),
        backend(std::move(b)),
        schema(std::move(s)),
        loop(std::move(l)),
        rng(std::random_device{}()) {}
  ~Impl() {
    if (log_fd >= 0) ::close(log_fd);
  }

  // One record per line, written with a single write(2) on an O_APPEND
  // descriptor, so concurrent writers never interleave inside a line.
  void log(const std::string& event, Json fields) {
    if (log_fd < 0 && !cfg.echo_log_to_stderr && !cfg.on_log) return;
    Json rec = Json::object();
    rec["ts"] = iso_utc(clock->wall());
    rec["bundle"] = cfg.bundle;
    rec["event"] = event;
    for (auto& [k, v] : fields.items()) rec[k] = v;
    // Seconds are too coarse to order two bundles' launches and finishes:
    // the steady clock (CLOCK_MONOTONIC, one for every process of the
    // machine) orders the records of different logs.
    if (event == "launched" || event == "finished")
      rec["mono_us"] =
          std::chrono::duration_cast<std::chrono::microseconds>(clock->steady().time_since_epoch())
              .count();
    std::string line = dump_py(rec) + "\n";
    if (log_fd >= 0) {
      const char* p = line.data();
      size_t left = line.size();
      while (left > 0) {
        ssize_t w = ::write(log_fd, p, left);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) break;
        p += w;
        left -= static_cast<size_t>(w);
      }
    }
    if (cfg.echo_log_to_stderr) err() << line;
    if (cfg.on_log) cfg.on_log(rec);
  }

  std::string new_handle() {
    static const char* hex = "0123456789abcdef";
    std::uint64_t r = rng();
    std::string h = "hl-";
    for (int i = 0; i < 12; ++i) h += hex[(r >> (i * 4)) & 15];
    return h;
  }

  RuntimeEvent base_event(RuntimeEvent::Kind kind, const Launch& l) {
    RuntimeEvent ev;
    ev.kind = kind;
    ev.id = l.id;
    ev.handle = l.handle;
    ev.persona = l.request.persona;
    ev.task = l.request.task;
    ev.attempt = l.attempt;
    return ev;
  }

  Status write_prompt_file(Launch& l, const std::string& text, const std::string& suffix) {
    l.prompt.text = text;
    if (!backend->wants_prompt_file()) return {};
    std::string dir = cfg.prompt_dir;
    DG_CHECK(make_directories(dir));
    l.prompt.file = join_path(dir, l.handle + suffix + ".prompt.md");
    // A prompt file only has to outlive the child that reads it, so it is
    // written plainly: an fsync per launch would dominate the launch cost.
    std::ofstream out(l.prompt.file, std::ios::trunc | std::ios::binary);
    out << text;
    out.close();
    if (!out) return fail("cannot write prompt file " + l.prompt.file);
    return {};
  }

  std::string stop_reason() const {
    return stop_signal ? "interrupted by " + stop_signal_name(stop_signal)
                       : std::string("stopped before it finished");
  }

  // Starts (or restarts) the child of a launch. A launch that cannot start
  // completes at once as launch_failed; after stop_all(), as interrupted.
  void start_child(Launch& l, bool resume) {
    if (stopping) {
      complete(l, Outcome::interrupted, stop_reason());
      return;
    }
    std::vector<std::string> argv;
    if (resume) {
      if (auto ok = write_prompt_file(l, resume_prompt(), "-resume"); !ok) {
        complete(l, Outcome::launch_failed, ok.error().message);
        return;
      }
      argv = backend->resume_argv(l.request, l.session_id, l.prompt);
    } else {
      if (auto ok = write_prompt_file(l, build_prompt(l.request), ""); !ok) {
        complete(l, Outcome::launch_failed, ok.error().message);
        return;
      }
      argv = backend->launch_argv(l.request, l.prompt);
    }
    ChildSpec spec;
    spec.argv = std::move(argv);
    spec.cwd = l.request.worktree;
    spec.env = env;
    spec.timeout = cfg.persona_timeout;
    spec.kill_grace = cfg.kill_grace;
    spec.max_output_bytes = cfg.max_output_bytes;
    spec.stdout_line_marks = backend->live_marks();
    auto child = loop.spawn(spec);
    ++runs;
    log("launched", Json{{"persona", l.request.persona},
                         {"task", task_json(l.request.task)},
                         {"handle", l.handle},
                         {"resumed", resume},
                         {"attempt", l.attempt},
                         {"agent", std::string(backend_name(backend->kind()))}});
    if (!child) {
      log("finished", Json{{"persona", l.request.persona},
                           {"task", task_json(l.request.task)},
                           {"handle", l.handle},
                           {"exit", nullptr},
                           {"status", nullptr},
                           {"cost_usd", 0.0},
                           {"duration_ms", 0},
                           {"session_id", nullptr},
                           {"error", child.error().message}});
      complete(l, Outcome::launch_failed, child.error().message);
      return;
    }
    l.state = State::running;
    l.child = *child;
    l.resuming = resume;
    by_child[*child] = l.id;
    RuntimeEvent ev = base_event(RuntimeEvent::Kind::launched, l);
    if (resume) ev.detail = l.session_id;
    events.push_back(std::move(ev));
  }

  Json blocked_result(const Launch& l, Outcome outcome, const std::string& why) {
    return Json{{"status", "BLOCKED"},
                {"summary", l.request.persona + ": " + why},
                {"evidence", Json::array()},
                {"blockers", Json::array({std::string(outcome_name(outcome))})}};
  }

  // Adds one call's tokens and cost to its launch's (and the cost to the
  // runtime's): all of them, or, when the call resumed a session whose
  // report was counted already and the CLI reports the session so far,
  // what grew since.
  void count_call(Launch& l, const AgentOutput& out) {
    const BackendKind kind = backend->kind();
    TokenUsage call = normalize_usage(kind, out.usage);
    const bool seen = !out.session_id.empty() && out.session_id == l.reported_session;
    l.tokens += seen && usage_covers_session(kind) ? call.since(l.session_reported) : call;
    double cost = out.cost_usd;
    if (seen && cost_covers_session(kind)) cost = std::max(0.0, cost - l.session_cost_reported);
    l.cost += cost;
    total_cost += cost;
    if (out.session_id.empty()) return;
    l.reported_session = out.session_id;
    l.session_reported = std::move(call);
    l.session_cost_reported = out.cost_usd;
  }

  void complete(Launch& l, Outcome outcome, const std::string& error, Json result = nullptr) {
    Completion c;
    c.id = l.id;
    c.handle = l.handle;
    c.persona = l.request.persona;
    c.task = l.request.task;
    c.outcome = outcome;
    c.result = outcome == Outcome::result ? std::move(result) : blocked_result(l, outcome, error);
    c.session_id = l.session_id;
    c.cost_usd = l.cost;
    c.token_usage = l.tokens;
    c.tokens = l.tokens.total();
    c.tool_calls = l.tool_calls;
    c.duration_ms = l.duration_ms;
    c.usage = l.usage;
    c.attempts = l.attempt;
    c.resumed = l.resumed;
    c.exit_code = l.exit_code;
    c.term_signal = l.term_signal;
    c.error = outcome == Outcome::result ? std::string() : error;
    c.elapsed = std::chrono::duration_cast<ms>(clock->steady() - l.began);
    RuntimeEvent ev = base_event(RuntimeEvent::Kind::completed, l);
    ev.detail = c.error;
    ev.completion = std::move(c);
    events.push_back(std::move(ev));
    if (l.timer) by_timer.erase(l.timer);
    launches.erase(l.id);
  }

  // When a pause for `limit` ends: its reset, or the pause of its kind.
  SysTime pause_end(const ProviderLimit& limit, SysTime now) const {
    return limit.resets_at.value_or(now + (limit.rate ? cfg.rate_limit_pause : cfg.default_pause));
  }

  void pause_backend(Launch& l, const ProviderLimit& limit) {
    SysTime now = clock->wall();
    SysTime until = pause_end(limit, now);
    if (until < now) until = now;
    // A later limit extends a pause in force; an earlier one leaves it.
    if (!pause_until || until > *pause_until) {
      if (pause_timer) loop.cancel_timer(pause_timer);
      if (!pause_until) pause_began = clock->steady();
      pause_until = until;
      pause_timer = loop.add_timer(clock->steady() + std::chrono::duration_cast<ms>(until - now));
    }
    ms wait = std::chrono::duration_cast<ms>(*pause_until - now);
    log("paused", Json{{"persona", l.request.persona},
                       {"task", task_json(l.request.task)},
                       {"handle", l.handle},
                       {"agent", std::string(backend_name(backend->kind()))},
                       {"until", iso_utc(*pause_until)},
                       {"wait_s", std::round(seconds(wait))},
                       {"reset_given", limit.resets_at.has_value()},
                       {"reason", limit.message}});
    RuntimeEvent ev = base_event(RuntimeEvent::Kind::paused, l);
    ev.delay = wait;
    ev.until = *pause_until;
    ev.detail = limit.message;
    l.state = State::queued;
    l.child = 0;
    queued.push_back(l.id);
    events.push_back(std::move(ev));
  }

  // A pause another bundle's limit asked for (the run's limits): the same
  // pause, without a launch of this runtime behind it.
  void pause_from_outside(SysTime until, const std::string& reason) {
    if (stopping) return;
    SysTime now = clock->wall();
    if (until <= now) return;
    if (pause_until && until <= *pause_until) return;
    if (pause_timer) loop.cancel_timer(pause_timer);
    if (!pause_until) pause_began = clock->steady();
    pause_until = until;
    pause_timer = loop.add_timer(clock->steady() + std::chrono::duration_cast<ms>(until - now));
    ms wait = std::chrono::duration_cast<ms>(until - now);
    log("paused", Json{{"persona", nullptr},
                       {"task", nullptr},
                       {"handle", nullptr},
                       {"agent", std::string(backend_name(backend->kind()))},
                       {"until", iso_utc(until)},
                       {"wait_s", std::round(seconds(wait))},
                       {"reset_given", true},
                       {"reason", reason},
                       {"run_wide", true}});
  }

  void unpause() {
    ms waited = std::chrono::duration_cast<ms>(clock->steady() - pause_began);
    log("unpaused", Json{{"agent", std::string(backend_name(backend->kind()))},
                         {"waited_s", std::round(seconds(waited))},
                         {"queued", queued.size()}});
    RuntimeEvent ev;
    ev.kind = RuntimeEvent::Kind::unpaused;
    ev.delay = waited;
    events.push_back(std::move(ev));
    pause_until.reset();
    pause_timer = 0;
    std::deque<LaunchId> ready;
    ready.swap(queued);
    for (LaunchId id : ready) {
      auto it = launches.find(id);
      if (it != launches.end()) start_child(it->second, false);
    }
  }

  void keep_output(const Launch& l, const ChildExit& ex) {
    if (l.request.output_path.empty()) return;
    auto tail = [](const std::string& s) {
      return s.size() <= kKeptOutputBytes ? s : s.substr(s.size() - kKeptOutputBytes);
    };
    std::string how = ex.timed_out          ? "timed out"
                      : ex.term_signal != 0 ? "killed by signal " + std::to_string(ex.term_signal)
                                            : "exit " + std::to_string(ex.exit_code);
    std::string text = "==== " + l.handle + " " + l.request.persona + " attempt " +
                       std::to_string(l.attempt) + ": " + how + " ====\n-- stdout --\n" +
                       tail(ex.out) + "\n-- stderr --\n" + tail(ex.err) + "\n";
    if (auto st = append_file(l.request.output_path, text); !st)
      log("output_not_kept", Json{{"handle", l.handle}, {"error", st.error().message}});
  }

  void on_exit(ChildExit& ex) {
    auto owner = by_child.find(ex.id);
    if (owner == by_child.end()) return;
    LaunchId id = owner->second;
    by_child.erase(owner);
    auto it = launches.find(id);
    if (it == launches.end()) return;
    Launch& l = it->second;
    l.child = 0;
    l.exit_code = ex.exit_code;
    l.term_signal = ex.term_signal;
    end_stall_watch(l);
    AgentOutput out = backend->parse(ex.exit_code, ex.term_signal, ex.out, ex.err, clock->wall());
    if (l.stalled && l.live_limit) {
      // devgraph stopped it while it waited out a limit: that limit is
      // why it ended, whatever the stopped CLI printed.
      out.failed = true;
      out.failure = FailureKind::limit;
      out.shape = "waiting-out-limit";
      out.limit = l.live_limit;
      out.error = "stopped after " + std::to_string(cfg.limit_stall.count() / 1000) +
                  " s waiting out a provider limit: " + l.live_limit->message;
    }
    l.live_limit.reset();
    l.stalled = false;
    keep_output(l, ex);
    count_call(l, out);
    if (out.tool_calls) l.tool_calls = l.tool_calls.value_or(0) + *out.tool_calls;
    l.duration_ms += out.duration_ms;
    if (!out.session_id.empty()) l.session_id = out.session_id;
    if (!out.usage.is_null()) l.usage = out.usage;

    Expected<Json> result = out.structured ? check_result(*out.structured, schema)
                                           : extract_result(out.final_text, schema);
    if (ex.timed_out) {
      result = fail("timeout");
      const long long ms = cfg.persona_timeout.count();
      // Whole minutes as minutes, anything else as seconds ("5 s", "90 s").
      const std::string limit = ms % 60000 == 0 ? std::to_string(ms / 60000) + " min"
                                                : std::to_string((ms + 999) / 1000) + " s";
      out.error = "exceeded the " + limit + " persona timeout (" + std::to_string(ms) + " ms)";
    }
    Json finished{{"persona", l.request.persona},
                  {"task", task_json(l.request.task)},
                  {"handle", l.handle},
                  {"exit", ex.term_signal ? Json(nullptr) : Json(ex.exit_code)},
                  {"status", result ? Json((*result)["status"]) : Json(nullptr)},
                  {"cost_usd", out.cost_usd},
                  {"duration_ms", out.duration_ms},
                  {"session_id", l.session_id.empty() ? Json(nullptr) : Json(l.session_id)},
                  {"error", nullptr}};
    if (ex.term_signal) finished["signal"] = ex.term_signal;
    if (ex.timed_out) finished["timed_out"] = true;
    if (stopping && !ex.timed_out && !result) finished["interrupted"] = true;
    if (ex.output_truncated) finished["output_truncated"] = true;
    if (!result)
      finished["error"] = out.failed || ex.timed_out ? out.error : result.error().message;
    log("finished", finished);

    if (ex.timed_out) {
      complete(l, Outcome::timeout, out.error);
      return;
    }
    if (result) {
      complete(l, Outcome::result, "", std::move(*result));
      return;
    }
    if (stopping) {  // no retry, resume or pause: whatever it was, it ends here
      complete(l, Outcome::interrupted, stop_reason());
      return;
    }
    if (l.resuming) {
      // The one resume allowed also came back without a valid result.
      complete(l, Outcome::malformed_result, out.failed ? out.error : result.error().message);
      return;
    }
    if (out.failed && out.limit) {
      SysTime now = clock->wall();
      SysTime until = pause_end(*out.limit, now);
      if (until - now > cfg.max_pause) {
        complete(l, Outcome::provider_limit,
                 "provider limit until " + iso_utc(until) + ": " + out.limit->message);
        return;
      }
      pause_backend(l, *out.limit);
      return;
    }
    if (out.failed && out.failure == FailureKind::fatal) {
      complete(l, Outcome::cli_error, "not retried (" + out.shape + "): " + out.error);
      return;
    }
    if (out.failed && out.failure != FailureKind::turn_limit) {
      double factor = std::pow(2.0, l.attempt - 1);
      ms delay = std::min(
          cfg.backoff_cap,
          ms(static_cast<long long>(static_cast<double>(cfg.backoff_base.count()) * factor)));
      if (l.waited + delay > cfg.retry_budget) {
        complete(l, Outcome::cli_error,
                 "the agent CLI kept failing (" + std::to_string(l.attempt) + " attempts, " +
                     std::to_string(static_cast<long long>(seconds(l.waited))) +
                     " s of back-off): " + out.error);
        return;
      }
      log("backoff", Json{{"persona", l.request.persona},
                          {"task", task_json(l.request.task)},
                          {"handle", l.handle},
                          {"attempt", l.attempt},
                          {"delay_s", seconds(delay)},
                          {"error", out.error}});
      RuntimeEvent ev = base_event(RuntimeEvent::Kind::backoff, l);
      ev.delay = delay;
      ev.detail = out.error;
      events.push_back(std::move(ev));
      l.waited += delay;
      l.attempt += 1;
      l.state = State::backoff;
      l.timer = loop.add_timer(clock->steady() + delay);
      by_timer[l.timer] = l.id;
      return;
    }
    // A clean exit without a valid result, or a persona out of turns:
    // resume once by session id.
    std::string why = out.failed ? out.error : result.error().message;
    if (backend->can_resume() && !l.session_id.empty() && !l.resumed) {
      l.resumed = true;
      RuntimeEvent ev = base_event(RuntimeEvent::Kind::resuming, l);
      ev.detail = why;
      events.push_back(std::move(ev));
      start_child(l, true);
      return;
    }
    complete(l, Outcome::malformed_result, why);
  }

  // A marked stdout line of a running persona: a limit the CLI waits out
  // by itself starts the stall timer; any other line ends the wait.
  void on_line(const OutputLine& line) {
    auto owner = by_child.find(line.id);
    if (owner == by_child.end()) return;
    auto it = launches.find(owner->second);
    if (it == launches.end()) return;
    Launch& l = it->second;
    if (l.stalled) return;
    auto limit = backend->live_limit(line.line, clock->wall());
    if (!limit) {
      end_stall_watch(l);
      l.live_limit.reset();
      return;
    }
    if (!l.stall_timer) {
      l.stall_timer = loop.add_timer(clock->steady() + cfg.limit_stall);
      by_stall_timer[l.stall_timer] = l.id;
      log("waiting_out_limit", Json{{"persona", l.request.persona},
                                    {"task", task_json(l.request.task)},
                                    {"handle", l.handle},
                                    {"stall_s", seconds(cfg.limit_stall)},
                                    {"reason", limit->message}});
    }
    l.live_limit = std::move(limit);
  }

  void end_stall_watch(Launch& l) {
    if (!l.stall_timer) return;
    loop.cancel_timer(l.stall_timer);
    by_stall_timer.erase(l.stall_timer);
    l.stall_timer = 0;
  }

  void stop_all(ms grace) {
    if (!stopping) {
      stopping = true;
      log("stopping",
          Json{{"signal", stop_signal ? Json(stop_signal_name(stop_signal)) : Json(nullptr)},
               {"running", by_child.size()},
               {"waiting", launches.size() - by_child.size()},
               {"grace_s", seconds(grace)}});
      // Nothing that waits starts again: back-offs and the pause end here,
      // in launch order.
      if (pause_timer) loop.cancel_timer(pause_timer);
      pause_timer = 0;
      pause_until.reset();
      queued.clear();
      std::vector<LaunchId> waiting;
      for (const auto& [id, l] : launches)
        if (l.state != State::running) waiting.push_back(id);
      std::sort(waiting.begin(), waiting.end());
      for (LaunchId id : waiting) {
        Launch& l = launches.at(id);
        if (l.timer) loop.cancel_timer(l.timer);
        complete(l, Outcome::interrupted, stop_reason());
      }
    }
    for (const auto& [child, id] : by_child) loop.terminate(child, grace);
  }

  void on_timer(TimerId id) {
    if (id == pause_timer && pause_timer != 0) {
      unpause();
      return;
    }
    if (auto st = by_stall_timer.find(id); st != by_stall_timer.end()) {
      auto it = launches.find(st->second);
      by_stall_timer.erase(st);
      if (it == launches.end() || !it->second.child) return;
      Launch& l = it->second;
      l.stall_timer = 0;
      l.stalled = true;
      loop.terminate(l.child);
      return;
    }
    auto t = by_timer.find(id);
    if (t != by_timer.end()) {
      LaunchId lid = t->second;
      by_timer.erase(t);
      auto it = launches.find(lid);
      if (it == launches.end()) return;
      Launch& l = it->second;
      l.timer = 0;
      if (pause_until) {  // a limit arrived while this one waited
        l.state = State::queued;
        queued.push_back(l.id);
        return;
      }
      start_child(l, false);
      return;
    }
    if (driver_timers.erase(id) == 0) return;
    RuntimeEvent ev;
    ev.kind = RuntimeEvent::Kind::timer;
    ev.timer = id;
    events.push_back(std::move(ev));
  }
};

Expected<std::unique_ptr<PersonaRuntime>> PersonaRuntime::create(RuntimeConfig config,
                                                                 const Clock& clock) {
  if (config.result_schema.empty()) return fail("persona runtime: no result schema given");
  DG_TRY(Schema schema, Schema::load(config.result_schema));
  if (config.backend.kind == BackendKind::sim) {
    if (config.backend.binary.empty()) config.backend.binary = self_executable();
    if (!config.backend.sim_scenario.empty()) {
      config.backend.sim_scenario = absolute_path(config.backend.sim_scenario);
      DG_CHECK(SimScenario::load(config.backend.sim_scenario));
    }
  }
  if (config.prompt_dir.empty()) {
    config.prompt_dir =
        config.log_path.empty() ? std::string() : join_path(dirname_of(config.log_path), "prompts");
  }
  if (config.backend.bundle.empty()) config.backend.bundle = config.bundle;
  if (config.backend.config_dir.empty() && !config.log_path.empty())
    config.backend.config_dir = join_path(dirname_of(absolute_path(config.log_path)), "cli");
  if (config.backend.kind == BackendKind::sim && config.backend.sim_state_dir.empty() &&
      !config.prompt_dir.empty())
    config.backend.sim_state_dir = join_path(config.prompt_dir, "sim-state");
  DG_TRY(auto backend, make_backend(config.backend));
  std::vector<std::string> parent = current_environment();
  DG_TRY(std::vector<std::string> cli_env, prepare_cli(config.backend, parent));
  if (backend->wants_prompt_file() && config.prompt_dir.empty())
    return fail("--agent " + std::string(backend_name(config.backend.kind)) +
                " needs a directory for prompt files (no log path given)");
  DG_TRY(ChildLoop loop, ChildLoop::create(clock));
  if (!config.children_record.empty()) loop.record_children_in(config.children_record);
  if (config.watch_stop_signals) DG_CHECK(loop.watch_stop_signals());
  int log_fd = -1;
  if (!config.log_path.empty()) {
    DG_CHECK(make_directories(dirname_of(absolute_path(config.log_path))));
    log_fd = ::open(config.log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (log_fd < 0) return fail("cannot open " + config.log_path + ": " + std::strerror(errno));
  }
  BackendKind kind = config.backend.kind;
  auto impl = std::make_unique<Impl>(std::move(config), clock, std::move(backend),
                                     std::move(schema), std::move(loop));
  impl->log_fd = log_fd;
  impl->env = child_environment(kind, parent);
  // What prepare_cli() asked for replaces the inherited value of the name.
  for (auto& entry : cli_env) {
    std::string_view name(entry.data(), entry.find('='));
    std::erase_if(impl->env, [&](const std::string& e) {
      return e.size() > name.size() && e.compare(0, name.size(), name) == 0 &&
             e[name.size()] == '=';
    });
    impl->env.push_back(std::move(entry));
  }
  return std::unique_ptr<PersonaRuntime>(new PersonaRuntime(std::move(impl)));
}

PersonaRuntime::PersonaRuntime(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PersonaRuntime::~PersonaRuntime() = default;

Expected<LaunchId> PersonaRuntime::launch(LaunchRequest request) {
  Impl& im = *impl_;
  if (request.persona.empty()) return fail("launch: no persona named");
  if (request.persona.find('/') != std::string::npos ||
      request.persona.find("..") != std::string::npos)
    return fail("launch: '" + request.persona + "' is not a persona name");
  if (im.cfg.check_persona_file) {
    std::string file = join_path(join_path(request.skill_dir, "agents"), request.persona + ".md");
    if (!path_exists(file))
      return fail("launch: " + request.persona + " is not a persona (no " + file + ")");
  }
  if (request.worktree.empty() || !is_directory(request.worktree))
    return fail("launch: worktree '" + request.worktree + "' is not a directory");
  Impl::Launch l;
  l.id = im.next_id++;
  l.handle = im.new_handle();
  l.request = std::move(request);
  l.began = im.clock->steady();
  auto [it, inserted] = im.launches.emplace(l.id, std::move(l));
  (void)inserted;
  LaunchId id = it->first;
  if (im.pause_until) {
    it->second.state = Impl::State::queued;
    im.queued.push_back(id);
  } else {
    im.start_child(it->second, false);
  }
  return id;
}

std::optional<RuntimeEvent> PersonaRuntime::next_event(std::optional<SteadyTime> until) {
  Impl& im = *impl_;
  for (;;) {
    if (!im.events.empty()) {
      RuntimeEvent ev = std::move(im.events.front());
      im.events.pop_front();
      return ev;
    }
    std::optional<SteadyTime> wait_until = until;
    if (!until && im.launches.empty() && im.driver_timers.empty() && im.driver_watches.empty()) {
      // Nothing is outstanding; only a stop signal already pending is
      // still worth a look (it would otherwise wait for the next launch).
      if (!im.cfg.watch_stop_signals) return std::nullopt;
      wait_until = im.clock->steady();
    }
    auto ev = im.loop.wait(wait_until);
    if (!ev) return std::nullopt;
    if (auto* exit = std::get_if<ChildExit>(&*ev)) {
      im.on_exit(*exit);
    } else if (auto* timer = std::get_if<TimerFired>(&*ev)) {
      im.on_timer(timer->id);
    } else if (auto* fd = std::get_if<FdReady>(&*ev)) {
      RuntimeEvent out;
      out.kind = RuntimeEvent::Kind::fd_ready;
      out.watch = fd->id;
      out.fd = fd->fd;
      im.events.push_back(std::move(out));
    } else if (auto* line = std::get_if<OutputLine>(&*ev)) {
      im.on_line(*line);
    } else if (auto* stop = std::get_if<StopRequested>(&*ev)) {
      im.stop_signal = stop->signal;
      RuntimeEvent out;
      out.kind = RuntimeEvent::Kind::interrupted;
      out.signal = stop->signal;
      im.events.push_back(std::move(out));
    }
  }
}

void PersonaRuntime::stop_all(std::optional<std::chrono::milliseconds> grace) {
  impl_->stop_all(grace.value_or(impl_->cfg.kill_grace));
}

void PersonaRuntime::pause(std::chrono::system_clock::time_point until, const std::string& reason) {
  impl_->pause_from_outside(until, reason);
}

bool PersonaRuntime::stopping() const {
  return impl_->stopping;
}

TimerId PersonaRuntime::add_timer(SteadyTime when) {
  TimerId id = impl_->loop.add_timer(when);
  impl_->driver_timers.insert(id);
  return id;
}

void PersonaRuntime::cancel_timer(TimerId id) {
  // Only the driver's own timers: back-off and pause timers are not its.
  if (impl_->driver_timers.erase(id)) impl_->loop.cancel_timer(id);
}

Expected<WatchId> PersonaRuntime::watch_fd(int fd, std::uint32_t events) {
  DG_TRY(WatchId id, impl_->loop.watch_fd(fd, events));
  impl_->driver_watches.insert(id);
  return id;
}

void PersonaRuntime::unwatch_fd(WatchId id) {
  if (impl_->driver_watches.erase(id)) impl_->loop.unwatch_fd(id);
}

size_t PersonaRuntime::outstanding() const {
  return impl_->launches.size();
}
size_t PersonaRuntime::live() const {
  return impl_->loop.running();
}
std::optional<std::chrono::system_clock::time_point> PersonaRuntime::paused_until() const {
  return impl_->pause_until;
}
double PersonaRuntime::total_cost() const {
  return impl_->total_cost;
}
int PersonaRuntime::persona_runs() const {
  return impl_->runs;
}
const RuntimeConfig& PersonaRuntime::config() const {
  return impl_->cfg;
}
const Clock& PersonaRuntime::clock() const {
  return *impl_->clock;
}

Expected<Completion> run_to_completion(RuntimeConfig config, const LaunchRequest& launch) {
  auto runtime = PersonaRuntime::create(std::move(config));
  if (!runtime) return fail(ErrorKind::internal, runtime.error().message);
  auto id = (*runtime)->launch(launch);
  if (!id) return fail(ErrorKind::usage, id.error().message);
  int stopped_by = 0;
  std::optional<Completion> done;
  while (auto ev = (*runtime)->next_event()) {
    if (ev->kind == RuntimeEvent::Kind::interrupted) {
      if (!stopped_by) stopped_by = ev->signal;
      (*runtime)->stop_all();
    } else if (ev->kind == RuntimeEvent::Kind::completed && ev->completion) {
      done = ev->completion;
    }
  }
  if (stopped_by)
    return fail(ErrorKind::interrupted, "stopped by " + stop_signal_name(stopped_by),
                128 + stopped_by);
  if (!done) return fail(ErrorKind::internal, "the " + launch.persona + " never completed");
  return *done;
}

}  // namespace devgraph::agents
