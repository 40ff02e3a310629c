#include "agents/sim.h"

#include <fcntl.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>
#include <string_view>

#include "util/fs.h"
#include "util/unsynced_files.h"

namespace devgraph::agents {
namespace {

// Constant data, not a container built before main: every devgraph command
// would pay for it.
constexpr std::string_view kFailModes[] = {"cli_error",   "malformed", "junk", "hang",
                                           "usage_limit", "signal",    "flood"};

// {persona}, {task} and {bundle} replaced in one pass: a value that holds
// a placeholder itself is not replaced again.
std::string substitute(const std::string& s, const SimInvocation& inv) {
  const std::pair<std::string_view, const std::string*> subs[] = {
      {"{persona}", &inv.persona}, {"{task}", &inv.task}, {"{bundle}", &inv.bundle}};
  std::string out;
  out.reserve(s.size());
  for (size_t at = 0; at < s.size();) {
    bool replaced = false;
    if (s[at] == '{') {
      for (const auto& [key, value] : subs) {
        if (s.compare(at, key.size(), key) != 0) continue;
        out += *value;
        at += key.size();
        replaced = true;
        break;
      }
    }
    if (!replaced) out += s[at++];
  }
  return out;
}

Json substitute_json(const Json& v, const SimInvocation& inv) {
  if (v.is_string()) return substitute(v.get<std::string>(), inv);
  if (v.is_array() || v.is_object()) {
    Json out = v;
    for (auto& [key, child] : v.items()) {
      if (v.is_array())
        out[std::stoul(key)] = substitute_json(child, inv);
      else
        out[key] = substitute_json(child, inv);
    }
    return out;
  }
  return v;
}

// Whether a scenario's file path stays inside the working directory:
// relative and without a ".." component.
bool stays_inside(const std::string& path) {
  return !(path.empty() || path[0] == '/' || path == ".." || path.rfind("../", 0) == 0 ||
           path.find("/../") != std::string::npos ||
           (path.size() >= 3 && path.compare(path.size() - 3, 3, "/..") == 0));
}

Expected<long long> int_field(const Json& rule, const char* key, const std::string& where,
                              long long fallback, long long min) {
  if (!rule.contains(key)) return fallback;
  const Json& v = rule[key];
  if (!v.is_number_integer() || v.get<long long>() < min)
    return fail(where + "." + key + ": expected an integer >= " + std::to_string(min));
  return v.get<long long>();
}

Expected<SimRule> parse_rule(const Json& r, const std::string& where) {
  static const std::set<std::string> known = {
      "bundle",     "task",       "call",          "after_call",    "dispatch_contains",
      "latency_ms", "files",      "result",        "resume_result", "text",
      "fail",       "exit_code",  "reset_after_s", "flood_bytes",   "cost_usd",
      "tokens",     "tool_calls", "comment",       "setting"};
  if (!r.is_object()) return fail(where + ": expected an object");
  for (auto& [key, v] : r.items()) {
    (void)v;
    if (!known.count(key)) return fail(where + "." + key + ": unknown field");
  }
  SimRule rule;
  if (r.contains("bundle")) {
    if (!r["bundle"].is_string()) return fail(where + ".bundle: expected a string");
    rule.bundle = r["bundle"].get<std::string>();
  }
  if (r.contains("setting")) {
    if (!r["setting"].is_string()) return fail(where + ".setting: expected a string");
    rule.setting = r["setting"].get<std::string>();
  }
  if (r.contains("task")) {
    if (!r["task"].is_string()) return fail(where + ".task: expected a string");
    rule.task = r["task"].get<std::string>();
  }
  if (r.contains("call")) {
    DG_TRY(long long c, int_field(r, "call", where, 1, 1));
    rule.call = static_cast<int>(c);
  }
  if (r.contains("after_call")) {
    DG_TRY(long long c, int_field(r, "after_call", where, 0, 0));
    rule.after_call = static_cast<int>(c);
  }
  for (const char* key : {"dispatch_contains", "text", "fail"}) {
    if (!r.contains(key)) continue;
    if (!r[key].is_string()) return fail(where + "." + key + ": expected a string");
  }
  rule.dispatch_contains = r.value("dispatch_contains", "");
  rule.text = r.value("text", "");
  rule.fail = r.value("fail", "");
  if (!rule.fail.empty() &&
      std::find(std::begin(kFailModes), std::end(kFailModes), rule.fail) == std::end(kFailModes))
    return fail(where + ".fail: unknown failure mode '" + rule.fail +
                "' (cli_error, malformed, junk, hang, usage_limit, signal, flood)");
  DG_TRY(rule.latency_ms, int_field(r, "latency_ms", where, 0, 0));
  DG_TRY(long long code, int_field(r, "exit_code", where, 1, 1));
  rule.exit_code = static_cast<int>(code);
  DG_TRY(rule.reset_after_s, int_field(r, "reset_after_s", where, 60, 0));
  DG_TRY(rule.flood_bytes, int_field(r, "flood_bytes", where, rule.flood_bytes, 0));
  DG_TRY(rule.tokens, int_field(r, "tokens", where, 0, 0));
  DG_TRY(rule.tool_calls, int_field(r, "tool_calls", where, -1, 0));
  if (r.contains("cost_usd")) {
    const Json& c = r["cost_usd"];
    if (!c.is_number() || c.get<double>() < 0)
      return fail(where + ".cost_usd: expected a number >= 0");
    rule.cost_usd = c.get<double>();
  }
  if (r.contains("result")) {
    if (!r["result"].is_object()) return fail(where + ".result: expected an object");
    rule.result = r["result"];
  }
  if (r.contains("resume_result")) {
    if (!r["resume_result"].is_object()) return fail(where + ".resume_result: expected an object");
    rule.resume_result = r["resume_result"];
  }
  if (r.contains("files")) {
    if (!r["files"].is_array()) return fail(where + ".files: expected a list");
    size_t i = 0;
    for (const Json& f : r["files"]) {
      std::string fw = where + ".files[" + std::to_string(i++) + "]";
      if (!f.is_object() || !f.contains("path") || !f["path"].is_string() ||
          !f.contains("content") || !f["content"].is_string())
        return fail(fw + ": expected {\"path\": string, \"content\": string}");
      std::string path = f["path"].get<std::string>();
      if (!stays_inside(path))
        return fail(fw + ".path: must stay inside the worktree (relative, no '..')");
      rule.files.push_back({path, f["content"].get<std::string>()});
    }
  }
  return rule;
}

std::string counter_name(const std::string& persona, const std::string& task) {
  std::string name = persona + "--" + (task.empty() ? "-" : task);
  for (char& c : name)
    if (c == '/' || c == '\0') c = '_';
  return name + ".count";
}

// The launch number of this persona for this task: counts up on a fresh
// launch, stays on a resume. Serialized by a lock: personas run at once.
Expected<int> next_call(const std::string& state_dir, const std::string& persona,
                        const std::string& task, bool resume) {
  if (state_dir.empty()) return 1;
  DG_CHECK(make_directories(state_dir));
  DG_TRY(FileLock lock, FileLock::acquire(join_path(state_dir, ".lock")));
  std::string path = join_path(state_dir, counter_name(persona, task));
  int count = 0;
  if (auto text = read_file(path); text.ok()) count = std::atoi(text->c_str());
  if (resume) return count > 0 ? count : 1;
  ++count;
  // Replaced whole, so a reader (or a kill) never sees an empty counter,
  // which would count this call again.
  DG_CHECK(replace_file(path, std::to_string(count) + "\n"));
  return count;
}

void wait_ms(long long ms) {
  if (ms <= 0) return;
  timespec left{static_cast<time_t>(ms / 1000), static_cast<long>((ms % 1000) * 1000000)};
  // One timed wait; an interrupted wait continues with what is left.
  while (::nanosleep(&left, &left) != 0 && errno == EINTR) {
  }
}

// Waits until `ms` after `since_ns` on the monotonic clock: the latency of
// a launch counts from the moment the runtime started it, so this
// process's own start-up is part of it, as a real CLI's is. A start
// instant later than now (a clock from another boot) counts from now.
void wait_from(std::optional<long long> since_ns, long long ms) {
  if (ms <= 0) return;
  const long long now = monotonic_ns();
  if (!since_ns || *since_ns > now) return wait_ms(ms);
  const long long until = *since_ns + ms * 1000000LL;
  if (until <= now) return;
  timespec at{static_cast<time_t>(until / 1000000000LL), static_cast<long>(until % 1000000000LL)};
  while (::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, nullptr) == EINTR) {
  }
}

// Written in place, as an agent CLI's write tool does: a sim killed while
// writing leaves at worst a short file at a path its rule names, which its
// relaunch writes again; never a temporary file beside it, which no task
// reported and which a commit would then have to answer for.
Status write_in_place(const std::string& path, const std::string& content) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return fail("cannot write " + path + ": " + std::strerror(errno));
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int e = errno;
      ::close(fd);
      return fail("cannot write " + path + ": " + std::strerror(e));
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) return fail("cannot write " + path + ": " + std::strerror(errno));
  return {};
}

// claude's result document. A resumed call reports, as claude does, the
// session's cost so far: the call it resumes (played by the same rule) and
// its own.
Json claude_document(const std::string& text, const std::string& session, bool is_error,
                     const SimRule& rule, bool resumed = false) {
  const long long latency_ms = rule.latency_ms;
  Json doc = Json::object();
  doc["type"] = "result";
  doc["subtype"] = is_error ? "error_during_execution" : "success";
  doc["is_error"] = is_error;
  doc["duration_ms"] = latency_ms;
  doc["duration_api_ms"] = latency_ms;
  const long long calls =
      rule.tool_calls >= 0 ? rule.tool_calls : 1 + static_cast<long long>(rule.files.size());
  doc["num_turns"] = 1 + calls;
  doc["result"] = text;
  doc["session_id"] = session;
  doc["total_cost_usd"] = resumed ? 2 * rule.cost_usd : rule.cost_usd;
  doc["usage"] = Json{{"input_tokens", 0}, {"output_tokens", rule.tokens}};
  return doc;
}

}  // namespace

Expected<SimScenario> SimScenario::parse(const Json& doc, const std::string& origin) {
  if (!doc.is_object()) return fail(origin + ": a scenario is a JSON object");
  for (auto& [key, v] : doc.items()) {
    (void)v;
    if (key != "default" && key != "personas" && key != "comment")
      return fail(origin + ": " + key + ": unknown field (default, personas)");
  }
  SimScenario s;
  if (doc.contains("default")) {
    DG_TRY(s.fallback, parse_rule(doc["default"], origin + ": default"));
  }
  if (doc.contains("personas")) {
    if (!doc["personas"].is_object()) return fail(origin + ": personas: expected an object");
    for (auto& [persona, rules] : doc["personas"].items()) {
      std::string where = origin + ": personas." + persona;
      std::vector<SimRule> list;
      if (rules.is_object()) {
        DG_TRY(SimRule r, parse_rule(rules, where));
        list.push_back(std::move(r));
      } else if (rules.is_array()) {
        size_t i = 0;
        for (const Json& r : rules) {
          DG_TRY(SimRule rule, parse_rule(r, where + "[" + std::to_string(i++) + "]"));
          list.push_back(std::move(rule));
        }
      } else {
        return fail(where + ": expected a rule or a list of rules");
      }
      s.personas.emplace(persona, std::move(list));
    }
  }
  return s;
}

Expected<SimScenario> SimScenario::load(const std::string& path) {
  DG_TRY(std::string text, read_file(path));
  DG_TRY(Json doc, parse_json(text, path));
  return parse(doc, path);
}

const SimRule& SimScenario::match(const std::string& bundle, const std::string& persona,
                                  const std::string& task, int call, const std::string& prompt,
                                  const std::vector<std::string>& settings) const {
  auto it = personas.find(persona);
  if (it != personas.end()) {
    for (const SimRule& r : it->second) {
      if (r.bundle && *r.bundle != bundle) continue;
      if (r.setting && std::find(settings.begin(), settings.end(), *r.setting) == settings.end())
        continue;
      if (r.task && *r.task != task) continue;
      if (r.call && *r.call != call) continue;
      if (r.after_call && call <= *r.after_call) continue;
      if (!r.dispatch_contains.empty() && prompt.find(r.dispatch_contains) == std::string::npos)
        continue;
      return r;
    }
  }
  return fallback;
}

namespace {

template <typename Pred>
bool any_rule(const SimScenario& s, Pred pred) {
  if (pred(s.fallback)) return true;
  for (const auto& [persona, rules] : s.personas)
    for (const auto& r : rules)
      if (pred(r)) return true;
  return false;
}

}  // namespace

bool SimScenario::counts_calls() const {
  return any_rule(*this, [](const SimRule& r) { return r.call || r.after_call; });
}

bool SimScenario::reads_prompt() const {
  return any_rule(*this, [](const SimRule& r) { return !r.dispatch_contains.empty(); });
}

long long monotonic_ns() {
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<long long>(now.tv_sec) * 1000000000LL + now.tv_nsec;
}

int run_sim_agent(const SimInvocation& inv, std::ostream& out, std::ostream& err) {
  auto scenario = SimScenario::load(inv.scenario);
  if (!scenario) {
    err << "sim-agent: " << scenario.error().message << "\n";
    return 2;
  }
  auto call = scenario->counts_calls()
                  ? next_call(inv.state_dir, inv.persona, inv.task, !inv.resume.empty())
                  : Expected<int>(1);
  if (!call) {
    err << "sim-agent: " << call.error().message << "\n";
    return 2;
  }
  std::string prompt;
  if (!inv.prompt_file.empty()) {
    auto text = read_file(inv.prompt_file);
    if (!text) {
      err << "sim-agent: " << text.error().message << "\n";
      return 2;
    }
    prompt = std::move(*text);
  }
  const SimRule& rule =
      scenario->match(inv.bundle, inv.persona, inv.task, *call, prompt, {inv.model, inv.effort});
  const std::string session = "sim-" + inv.persona + "-" +
                              (inv.task.empty() ? "bundle" : inv.task) + "-" +
                              std::to_string(*call);
  const bool resuming = !inv.resume.empty();

  if (!resuming) {
    if (rule.fail == "hang") wait_ms(24LL * 3600 * 1000);  // the supervisor's timeout ends it
    if (rule.fail == "signal") ::kill(::getpid(), SIGKILL);
  }
  wait_from(inv.launched_at_ns, rule.latency_ms);
  if (!resuming) {
    if (rule.fail == "cli_error") {
      out << dump_py(claude_document("API Error: 500 (simulated failure)", session, true, rule))
          << "\n";
      err << "sim-agent: simulated CLI failure\n";
      return rule.exit_code;
    }
    if (rule.fail == "usage_limit") {
      auto reset = std::chrono::system_clock::now() + std::chrono::seconds(rule.reset_after_s);
      long long epoch =
          std::chrono::duration_cast<std::chrono::seconds>(reset.time_since_epoch()).count();
      out << dump_py(claude_document("Claude AI usage limit reached|" + std::to_string(epoch),
                                     session, true, rule))
          << "\n";
      return 1;
    }
    if (rule.fail == "junk") {
      out << "%%% not an answer %%%\n";
      return 0;
    }
  }

  std::vector<std::string> written;
  if (!resuming) {
    for (const SimFile& f : rule.files) {
      std::string path = substitute(f.path, inv);
      // Checked again with the ids in: a bundle or task id is not trusted to
      // keep a path inside the worktree.
      if (!stays_inside(path)) {
        err << "sim-agent: " << path << ": must stay inside the worktree (relative, no '..')\n";
        return 1;
      }
      Status dir = make_directories(dirname_of(absolute_path(path)));
      Status ok = dir ? write_in_place(path, substitute(f.content, inv)) : dir;
      if (!ok) {
        err << "sim-agent: " << ok.error().message << "\n";
        return 1;
      }
      written.push_back(path);
    }
  }
  if (!resuming && rule.fail == "flood") {
    std::string chunk(1 << 16, 'x');
    chunk.back() = '\n';
    for (long long left = rule.flood_bytes; left > 0;
         left -= static_cast<long long>(chunk.size())) {
      size_t n =
          static_cast<size_t>(std::min<long long>(left, static_cast<long long>(chunk.size())));
      err.write(chunk.data(), static_cast<std::streamsize>(n));
      if (!err) break;
    }
    err.flush();
  }

  Json result;
  if (resuming && rule.resume_result) {
    result = *rule.resume_result;
  } else if (!rule.result.is_null()) {
    result = rule.result;
  } else {
    result = Json{{"status", "DONE"},
                  {"summary", "{persona} finished (simulated)"},
                  {"evidence", Json::array()},
                  {"artifacts", written}};
  }
  result = substitute_json(result, inv);
  std::string text = rule.text.empty() ? "" : substitute(rule.text, inv) + "\n";
  if (rule.fail == "malformed" && !(resuming && rule.resume_result)) {
    text += "The work is finished; no result line this time.";
  } else {
    text += "RESULT_JSON: " + dump_py(result);
  }
  out << dump_py(claude_document(text, session, false, rule, resuming)) << "\n";
  out.flush();
  return 0;
}

}  // namespace devgraph::agents
