#include "agents/backend.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <regex>
#include <set>

#include "agents/cli_setup.h"
#include "agents/result.h"
#include "agents/sim.h"

extern char** environ;

namespace devgraph::agents {
namespace {

// `flag value` appended to an argv when the value is given.
void add_option(std::vector<std::string>& argv, const char* flag, const std::string& value) {
  if (value.empty()) return;
  argv.push_back(flag);
  argv.push_back(value);
}
void add_option(std::vector<std::string>& argv, const char* flag,
                const std::optional<std::string>& value) {
  if (value) add_option(argv, flag, *value);
}
// `flag v1 v2 ...` appended when the list is not empty.
void add_list(std::vector<std::string>& argv, const char* flag,
              const std::vector<std::string>& values) {
  if (values.empty()) return;
  argv.push_back(flag);
  argv.insert(argv.end(), values.begin(), values.end());
}

using SysTime = std::chrono::system_clock::time_point;

std::string one_line(std::string_view text, size_t max = 300) {
  std::string s(text);
  for (char& c : s)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  size_t b = s.find_first_not_of(' ');
  if (b == std::string::npos) return {};
  s = s.substr(b, s.find_last_not_of(' ') - b + 1);
  if (s.size() > max) s = s.substr(s.size() - max);  // the end says why
  return s;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

Json parse_object(std::string_view text) {
  Json v = Json::parse(text, nullptr, false);
  return v.is_object() ? v : Json::object();
}

std::string str_field(const Json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

double num_field(const Json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_number() ? it->get<double>() : 0.0;
}

std::string describe_failure(int exit_code, int term_signal, std::string_view extra,
                             std::string_view text, std::string_view err) {
  std::string s = term_signal ? "killed by signal " + std::to_string(term_signal)
                              : "exit " + std::to_string(exit_code);
  if (!extra.empty()) s += "; " + std::string(extra);
  std::string t = one_line(text), e = one_line(err);
  if (!t.empty()) s += "; output: " + t;
  if (!e.empty()) s += "; stderr: " + e;
  return s;
}

// Sets o.failure, o.shape and o.limit for a failed run from the backend's
// table (`status` the API status the CLI reports, 0 when none; `text` every
// word the CLI gave about the failure).
void classify(AgentOutput& o, BackendKind kind, int status, const std::string& text, SysTime now) {
  const FailureRow* row = match_failure(kind, status, text);
  auto limit = detect_provider_limit(kind, text, now);
  if (!row && limit) {  // limit wording no row names: a usage limit
    o.failure = FailureKind::limit;
    o.shape = "limit";
    o.limit = limit;
    return;
  }
  o.failure = row ? row->kind : FailureKind::transient;
  o.shape = row ? row->shape : "unrecognised";
  if (o.failure != FailureKind::limit) return;
  o.limit = limit.value_or(ProviderLimit{one_line(text, 200), std::nullopt, false});
  o.limit->rate = row->rate && !o.limit->resets_at;
}

// The API status a CLI's message names ("last status: 429", "unexpected
// status 401 Unauthorized", "API Error: 500"); 0 when none.
int status_in(const std::string& text) {
  static const std::regex status(R"((?:status:?|api error:|request rejected \()\s*(\d{3})\b)",
                                 std::regex::icase);
  std::smatch m;
  return std::regex_search(text, m, status) ? std::stoi(m[1].str()) : 0;
}

// The last JSON object of `text` that starts a line ("{" alone on its
// line, as gemini prints its error document after a stack trace); an
// empty object when there is none.
Json last_json_object(const std::string& text) {
  size_t at = text.size();
  while (at > 0) {
    size_t open = text.rfind("\n{\n", at - 1);
    size_t start =
        open == std::string::npos ? (text.rfind("{\n", 0) == 0 ? 0 : std::string::npos) : open + 1;
    if (start == std::string::npos) break;
    // Its end: the first line that is "}" alone.
    size_t close = text.find("\n}", start);
    while (close != std::string::npos) {
      Json v = Json::parse(text.substr(start, close + 2 - start), nullptr, false);
      if (v.is_object()) return v;
      close = text.find("\n}", close + 2);
    }
    if (start == 0) break;
    at = start - 1;
  }
  return Json::object();
}

// claude -p --output-format json: one JSON object with result, session_id,
// total_cost_usd, duration_api_ms, usage, is_error, subtype. The sim agent
// prints the same document.
AgentOutput parse_claude_like(BackendKind kind, int exit_code, int term_signal,
                              const std::string& out, const std::string& err, SysTime now) {
  AgentOutput o;
  Json data = parse_object(out);
  o.session_id = str_field(data, "session_id");
  o.cost_usd = num_field(data, "total_cost_usd");
  o.duration_ms = static_cast<long long>(num_field(data, "duration_api_ms"));
  if (data.contains("usage")) o.usage = data["usage"];
  if (data.contains("structured_output") && data["structured_output"].is_object())
    o.structured = data["structured_output"];
  auto r = data.find("result");
  o.final_text = r != data.end() && r->is_string() ? r->get<std::string>() : out;
  // One turn is the answer alone; each tool call adds one.
  if (auto t = data.find("num_turns"); t != data.end() && t->is_number_integer())
    o.tool_calls = std::max(0, t->get<int>() - 1);
  bool is_error = data.value("is_error", false) == true;
  std::string subtype = str_field(data, "subtype");
  o.failed = exit_code != 0 || term_signal != 0 || is_error || subtype.rfind("error", 0) == 0;
  if (o.failed) {
    std::string extra = subtype.empty() ? "" : "subtype " + subtype;
    // claude names the HTTP status of an API failure (api_error_status)
    // and why the run ended (terminal_reason); max-turns has its words in
    // `errors`, not `result`.
    int status = 0;
    if (auto a = data.find("api_error_status"); a != data.end() && a->is_number_integer())
      status = a->get<int>();
    std::string why = o.final_text;
    if (auto e = data.find("errors"); e != data.end() && e->is_array())
      for (const auto& line : *e)
        if (line.is_string()) why += "\n" + line.get<std::string>();
    if (r == data.end() || !r->is_string()) {
      if (auto e = data.find("errors"); e != data.end() && e->is_array() && !e->empty())
        o.final_text.clear();  // the document itself is no answer text
    }
    std::string reason = str_field(data, "terminal_reason");
    if (!reason.empty()) extra += (extra.empty() ? "" : ", ") + ("terminal_reason " + reason);
    o.error = describe_failure(exit_code, term_signal, extra, why, err);
    classify(o, kind, status, why + "\n" + subtype + "\n" + reason + "\n" + err, now);
  }
  return o;
}

class ClaudeBackend : public Backend {
 public:
  explicit ClaudeBackend(BackendOptions opt) : opt_(std::move(opt)) {
    if (opt_.binary.empty()) {
      const char* env = std::getenv("DEVELOP_CLAUDE_BIN");
      opt_.binary = env && *env ? env : "claude";
    }
  }
  BackendKind kind() const override { return BackendKind::claude; }
  std::vector<std::string> launch_argv(const LaunchRequest& r, const PromptRef& p) const override {
    std::vector<std::string> argv = {
        opt_.binary,          "-p",          p.text,
        "--output-format",    "json",        "--permission-mode",
        opt_.permission_mode, "--max-turns", std::to_string(opt_.max_turns),
        "--add-dir",          r.run_dir};
    add_list(argv, "--allowedTools", opt_.allowed_tools);
    add_list(argv, "--disallowedTools", opt_.disallowed_tools);
    add_option(argv, "--model", r.model ? r.model : opt_.model);
    return argv;
  }
  bool can_resume() const override { return true; }
  std::vector<std::string> resume_argv(const LaunchRequest&, const std::string& session,
                                       const PromptRef& p) const override {
    return {opt_.binary,       "-p",   p.text,        "--resume", session,
            "--output-format", "json", "--max-turns", "2"};
  }
  AgentOutput parse(int code, int sig, const std::string& out, const std::string& err,
                    SysTime now) const override {
    return parse_claude_like(BackendKind::claude, code, sig, out, err, now);
  }

 private:
  BackendOptions opt_;
};

// Codex CLI, non-interactive. Flags checked against the documentation:
//   https://developers.openai.com/codex/noninteractive.md (codex exec, --json
//     JSONL on stdout, `codex exec resume SESSION_ID [PROMPT]`)
//   https://developers.openai.com/codex/cli/reference#codex-exec (--sandbox
//     workspace-write, -C/--cd, --add-dir, -m/--model, --skip-git-repo-check;
//     exec options go between `exec` and `resume`)
//   https://raw.githubusercontent.com/openai/codex/main/codex-rs/exec/src/exec_events.rs
//     (event types: thread.started{thread_id}, item.completed{item{type
//     agent_message, text}}, turn.completed{usage}, turn.failed{error
//     {message}}, error{message})
class CodexBackend : public Backend {
 public:
  explicit CodexBackend(BackendOptions opt) : opt_(std::move(opt)) {
    if (opt_.binary.empty()) opt_.binary = "codex";
  }
  BackendKind kind() const override { return BackendKind::codex; }
  std::vector<std::string> launch_argv(const LaunchRequest& r, const PromptRef& p) const override {
    std::vector<std::string> argv = {
        opt_.binary, "exec",    "--json", "--sandbox", "workspace-write", "--skip-git-repo-check",
        "--cd",      r.worktree};
    for (auto& w : codex_config_overrides(opt_.cli_telemetry)) argv.push_back(std::move(w));
    add_option(argv, "--add-dir", r.run_dir);
    add_option(argv, "--model", r.model ? r.model : opt_.model);
    if (auto effort = r.effort ? r.effort : opt_.effort) {
      argv.push_back("-c");
      argv.push_back("model_reasoning_effort=\"" + *effort + "\"");
    }
    argv.push_back(p.text);
    return argv;
  }
  bool can_resume() const override { return true; }
  std::vector<std::string> resume_argv(const LaunchRequest&, const std::string& session,
                                       const PromptRef& p) const override {
    std::vector<std::string> argv = {opt_.binary, "exec", "--json", "--skip-git-repo-check"};
    for (auto& w : codex_config_overrides(opt_.cli_telemetry)) argv.push_back(std::move(w));
    argv.insert(argv.end(), {"resume", session, p.text});
    return argv;
  }
  AgentOutput parse(int code, int sig, const std::string& out, const std::string& err,
                    SysTime now) const override {
    AgentOutput o;
    // The failure is what the last turn ended with: turn.failed, or an
    // error event no completed turn followed. "Reconnecting..." errors are
    // codex retrying by itself, not a failure (it often recovers).
    std::string failure;
    size_t pos = 0;
    while (pos < out.size()) {
      size_t nl = out.find('\n', pos);
      if (nl == std::string::npos) nl = out.size();
      Json ev = parse_object(std::string_view(out).substr(pos, nl - pos));
      pos = nl + 1;
      std::string type = str_field(ev, "type");
      if (type == "thread.started") {
        o.session_id = str_field(ev, "thread_id");
        o.tool_calls = o.tool_calls.value_or(0);  // codex reports every tool item
      } else if (type == "item.completed" && ev.contains("item") && ev["item"].is_object()) {
        const std::string item = str_field(ev["item"], "type");
        if (item == "agent_message") o.final_text = str_field(ev["item"], "text");
        if (item == "command_execution" || item == "file_change" || item == "mcp_tool_call" ||
            item == "web_search")
          o.tool_calls = o.tool_calls.value_or(0) + 1;
      } else if (type == "turn.completed") {
        if (ev.contains("usage")) o.usage = ev["usage"];
        failure.clear();
      } else if (type == "turn.failed" && ev.contains("error") && ev["error"].is_object()) {
        failure = str_field(ev["error"], "message");
      } else if (type == "error") {
        std::string message = str_field(ev, "message");
        if (message.rfind("Reconnecting...", 0) != 0) failure = message;
      }
    }
    o.failed = code != 0 || sig != 0 || !failure.empty();
    if (o.failed) {
      o.error = describe_failure(code, sig, failure.empty() ? "" : "error " + one_line(failure),
                                 o.final_text, err);
      classify(o, BackendKind::codex, status_in(failure), failure + "\n" + err, now);
    }
    return o;
  }
  // Every JSONL event: a reconnect for a limit arms the stall timer, any
  // other event shows codex working again.
  std::vector<std::string> live_marks() const override { return {"\"type\":"}; }
  std::optional<ProviderLimit> live_limit(std::string_view line, SysTime now) const override {
    Json ev = parse_object(line);
    if (str_field(ev, "type") != "error") return std::nullopt;
    std::string message = str_field(ev, "message");
    if (message.rfind("Reconnecting...", 0) != 0) return std::nullopt;
    const FailureRow* row = match_failure(BackendKind::codex, status_in(message), message);
    if (!row || row->kind != FailureKind::limit) return std::nullopt;
    ProviderLimit limit = detect_provider_limit(BackendKind::codex, message, now)
                              .value_or(ProviderLimit{one_line(message, 200), std::nullopt});
    limit.rate = row->rate && !limit.resets_at;
    return limit;
  }

 private:
  BackendOptions opt_;
};

// Gemini CLI, headless. Flags checked against the documentation:
//   https://geminicli.com/docs/cli/headless.md (-p/--prompt forces headless
//     mode; --output-format json prints {response, stats, error}; exit 1 API
//     failure, 42 input error, 53 turn limit)
//   https://geminicli.com/docs/cli/cli-reference (-m/--model,
//     --approval-mode auto_edit, --include-directories, -r/--resume SESSION)
class GeminiBackend : public Backend {
 public:
  explicit GeminiBackend(BackendOptions opt) : opt_(std::move(opt)) {
    if (opt_.binary.empty()) opt_.binary = "gemini";
  }
  BackendKind kind() const override { return BackendKind::gemini; }
  std::vector<std::string> launch_argv(const LaunchRequest& r, const PromptRef& p) const override {
    std::vector<std::string> argv = {
        opt_.binary, "-p", p.text, "--output-format", "json", "--approval-mode", "auto_edit"};
    add_policies(argv);
    // The persona file lives in the skill directory; the plan, the spec
    // and the other personas' results in the run directory.
    add_option(argv, "--include-directories", r.skill_dir);
    add_option(argv, "--include-directories", r.run_dir);
    add_option(argv, "--model", r.model ? r.model : opt_.model);
    return argv;
  }
  bool can_resume() const override { return true; }
  std::vector<std::string> resume_argv(const LaunchRequest&, const std::string& session,
                                       const PromptRef& p) const override {
    std::vector<std::string> argv = {opt_.binary, "--resume",        session, "-p",
                                     p.text,      "--output-format", "json"};
    add_policies(argv);
    return argv;
  }
  AgentOutput parse(int code, int sig, const std::string& out, const std::string& err,
                    SysTime now) const override {
    AgentOutput o;
    Json data = parse_object(out);
    // A failed run prints nothing on stdout and its JSON document (with
    // `error`) at the end of stderr, after the stack trace.
    if (data.empty()) data = last_json_object(err);
    o.final_text = data.contains("response") && data["response"].is_string()
                       ? data["response"].get<std::string>()
                       : out;
    o.session_id = str_field(data, "session_id");
    if (data.contains("stats")) o.usage = data["stats"];
    if (data.contains("stats") && data["stats"].is_object() && data["stats"].contains("tools") &&
        data["stats"]["tools"].is_object()) {
      const Json& calls = data["stats"]["tools"]["totalCalls"];
      if (calls.is_number_integer()) o.tool_calls = std::max(0, calls.get<int>());
    }
    std::string failure;
    int status = 0;
    if (data.contains("error") && !data["error"].is_null()) {
      const Json& e = data["error"];
      failure = e.is_object() ? str_field(e, "message") : e.dump();
      if (failure.empty()) failure = e.dump();
      // The message is sometimes the API's own error document.
      Json inner = parse_object(failure);
      if (inner.contains("error") && inner["error"].is_object()) {
        std::string m = str_field(inner["error"], "message");
        std::string st = str_field(inner["error"], "status");
        if (!m.empty()) failure = m + (st.empty() ? "" : " (" + st + ")") + "\n" + failure;
      }
      if (e.is_object()) {
        if (auto c = e.find("code"); c != e.end() && c->is_number_integer()) status = c->get<int>();
        failure += "\n" + str_field(e, "type");
      }
    }
    o.failed = code != 0 || sig != 0 || !failure.empty();
    if (o.failed) {
      std::string first = failure.substr(0, failure.find('\n'));
      o.error = describe_failure(code, sig, first.empty() ? "" : "error " + one_line(first),
                                 failure.empty() ? o.final_text : "", failure.empty() ? err : "");
      classify(o, BackendKind::gemini, status, failure + "\n" + (failure.empty() ? err : ""), now);
    }
    return o;
  }

 private:
  // devgraph's denials at the admin tier (agents/cli_setup.h); the user
  // tier's policies are in the run's GEMINI_CLI_HOME.
  void add_policies(std::vector<std::string>& argv) const {
    if (opt_.config_dir.empty()) return;
    add_option(argv, "--admin-policy", gemini_admin_policy_dir(opt_));
  }
  BackendOptions opt_;
};

std::string fill_template(std::string word, const LaunchRequest& r, const PromptRef& p,
                          const BackendOptions& opt) {
  const std::pair<std::string, std::string> subs[] = {
      {"{prompt_file}", p.file},       {"{worktree}", r.worktree},
      {"{persona}", r.persona},        {"{model}", r.model.value_or(opt.model.value_or(""))},
      {"{task}", r.task.value_or("")}, {"{run_dir}", r.run_dir}};
  for (const auto& [key, value] : subs) {
    size_t at = 0;
    while ((at = word.find(key, at)) != std::string::npos) {
      word.replace(at, key.size(), value);
      at += value.size();
    }
  }
  return word;
}

// Any CLI: the user's argv template; the answer is the last RESULT_JSON:
// line of stdout; no session, so no resume.
class CommandBackend : public Backend {
 public:
  explicit CommandBackend(BackendOptions opt) : opt_(std::move(opt)) {}
  BackendKind kind() const override { return BackendKind::command; }
  bool wants_prompt_file() const override { return true; }
  std::vector<std::string> launch_argv(const LaunchRequest& r, const PromptRef& p) const override {
    std::vector<std::string> argv;
    for (const auto& w : opt_.command_template) argv.push_back(fill_template(w, r, p, opt_));
    return argv;
  }
  bool can_resume() const override { return false; }
  std::vector<std::string> resume_argv(const LaunchRequest& r, const std::string&,
                                       const PromptRef& p) const override {
    return launch_argv(r, p);
  }
  AgentOutput parse(int code, int sig, const std::string& out, const std::string& err,
                    SysTime now) const override {
    AgentOutput o;
    o.final_text = out;
    o.failed = code != 0 || sig != 0;
    if (o.failed) {
      o.error = describe_failure(code, sig, "", out, err);
      classify(o, BackendKind::command, 0, out + "\n" + err, now);
    }
    return o;
  }

 private:
  BackendOptions opt_;
};

class SimBackend : public Backend {
 public:
  SimBackend(BackendOptions opt, bool reads_prompt)
      : opt_(std::move(opt)), reads_prompt_(reads_prompt) {}
  BackendKind kind() const override { return BackendKind::sim; }
  bool wants_prompt_file() const override { return reads_prompt_; }
  std::vector<std::string> launch_argv(const LaunchRequest& r, const PromptRef& p) const override {
    std::vector<std::string> argv = {opt_.binary,       "sim-agent", "--scenario",
                                     opt_.sim_scenario, "--persona", r.persona};
    add_option(argv, "--task", r.task);
    add_option(argv, "--bundle", opt_.bundle);
    add_option(argv, "--state", opt_.sim_state_dir);
    add_option(argv, "--prompt-file", p.file);
    add_option(argv, "--model", r.model ? r.model : opt_.model);
    add_option(argv, "--effort", r.effort ? r.effort : opt_.effort);
    // The argv is built just before the spawn: the simulated latency then
    // counts from the launch, start-up included, as a real CLI's does.
    argv.push_back("--launched-at");
    argv.push_back(std::to_string(monotonic_ns()));
    return argv;
  }
  bool can_resume() const override { return true; }
  std::vector<std::string> resume_argv(const LaunchRequest& r, const std::string& session,
                                       const PromptRef& p) const override {
    std::vector<std::string> argv = launch_argv(r, p);
    argv.push_back("--resume");
    argv.push_back(session);
    return argv;
  }
  AgentOutput parse(int code, int sig, const std::string& out, const std::string& err,
                    SysTime now) const override {
    return parse_claude_like(BackendKind::sim, code, sig, out, err, now);
  }

 private:
  BackendOptions opt_;
  bool reads_prompt_;
};

bool starts_with_any(const std::string& name, std::initializer_list<const char*> prefixes) {
  for (const char* p : prefixes)
    if (name.rfind(p, 0) == 0) return true;
  return false;
}

// Which provider a credential variable belongs to, or nullopt.
std::optional<BackendKind> credential_owner(const std::string& name) {
  if (starts_with_any(name, {"ANTHROPIC_", "CLAUDE_CODE_OAUTH"})) return BackendKind::claude;
  if (starts_with_any(name, {"OPENAI_", "CODEX_API_KEY"})) return BackendKind::codex;
  if (starts_with_any(name, {"GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_APPLICATION_CREDENTIALS",
                             "GOOGLE_GENAI_"}))
    return BackendKind::gemini;
  return std::nullopt;
}

SysTime next_clock_time(SysTime now, int hour, int minute) {
  std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm local{};
  ::localtime_r(&t, &local);
  local.tm_hour = hour;
  local.tm_min = minute;
  local.tm_sec = 0;
  local.tm_isdst = -1;
  std::time_t target = std::mktime(&local);
  if (target <= t) target += 24 * 3600;
  return std::chrono::system_clock::from_time_t(target);
}

// The local time `year`-`month` (1-12)-`day` `hour`:`minute`, or nullopt
// for a date that does not exist.
std::optional<SysTime> local_date_time(int year, int month, int day, int hour, int minute) {
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59)
    return std::nullopt;
  std::tm local{};
  local.tm_year = year - 1900;
  local.tm_mon = month - 1;
  local.tm_mday = day;
  local.tm_hour = hour;
  local.tm_min = minute;
  local.tm_isdst = -1;
  std::time_t target = std::mktime(&local);
  if (target == static_cast<std::time_t>(-1) || local.tm_mday != day) return std::nullopt;
  return std::chrono::system_clock::from_time_t(target);
}

// "2 days 3 hours 5 minutes", "37.5s", "1h30m", "20 seconds".
std::optional<std::chrono::milliseconds> parse_duration(const std::string& text) {
  static const std::regex part(
      R"((\d+(?:\.\d+)?)\s*(days?|d|hours?|hrs?|h|minutes?|mins?|m|seconds?|secs?|s)\b)");
  double total_s = 0;
  bool any = false;
  auto begin = std::sregex_iterator(text.begin(), text.end(), part);
  size_t expect = 0;
  for (auto it = begin; it != std::sregex_iterator(); ++it) {
    // Only a run of adjacent parts ("1h 30m", "2 days, 3 hours") counts.
    std::string gap = text.substr(expect, static_cast<size_t>(it->position()) - expect);
    if (any && gap.find_first_not_of(" ,and") != std::string::npos) break;
    double n = std::stod((*it)[1].str());
    char unit = (*it)[2].str()[0];
    total_s += n * (unit == 'd' ? 86400 : unit == 'h' ? 3600 : unit == 'm' ? 60 : 1);
    any = true;
    expect = static_cast<size_t>(it->position() + it->length());
  }
  if (!any) return std::nullopt;
  return std::chrono::milliseconds(static_cast<long long>(std::ceil(total_s * 1000)));
}

}  // namespace

std::optional<BackendKind> parse_backend(std::string_view name) {
  for (auto k : {BackendKind::claude, BackendKind::codex, BackendKind::gemini, BackendKind::command,
                 BackendKind::sim})
    if (backend_name(k) == name) return k;
  return std::nullopt;
}

std::string_view backend_name(BackendKind kind) {
  switch (kind) {
    case BackendKind::claude:
      return "claude";
    case BackendKind::codex:
      return "codex";
    case BackendKind::gemini:
      return "gemini";
    case BackendKind::command:
      return "command";
    case BackendKind::sim:
      return "sim";
  }
  return "claude";
}

std::string backend_choices() {
  return "claude, codex, gemini, command, sim";
}

Expected<std::unique_ptr<Backend>> make_backend(const BackendOptions& options) {
  switch (options.kind) {
    case BackendKind::claude:
      return std::unique_ptr<Backend>(new ClaudeBackend(options));
    case BackendKind::codex:
      return std::unique_ptr<Backend>(new CodexBackend(options));
    case BackendKind::gemini:
      return std::unique_ptr<Backend>(new GeminiBackend(options));
    case BackendKind::command: {
      if (options.command_template.empty())
        return fail("--agent command needs an argv template (--agent-command)");
      bool has_prompt = std::any_of(
          options.command_template.begin(), options.command_template.end(),
          [](const std::string& w) { return w.find("{prompt_file}") != std::string::npos; });
      if (!has_prompt)
        return fail("--agent-command template must pass the prompt: use {prompt_file}");
      return std::unique_ptr<Backend>(new CommandBackend(options));
    }
    case BackendKind::sim: {
      if (options.sim_scenario.empty())
        return fail("--agent sim needs a scenario file (--scenario)");
      if (options.binary.empty()) return fail("--agent sim needs the devgraph executable");
      // A scenario that cannot be read here is the agent's to report, on
      // every launch; the prompt file is written then, in case it can later.
      auto scenario = SimScenario::load(options.sim_scenario);
      bool reads_prompt = !scenario || scenario->reads_prompt();
      return std::unique_ptr<Backend>(new SimBackend(options, reads_prompt));
    }
  }
  return fail("unknown agent backend");
}

std::string build_prompt(const LaunchRequest& r) {
  std::string p = "Your persona is defined in " + r.skill_dir + "/agents/" + r.persona +
                  ".md: read that file before anything else and follow it; it is the whole of "
                  "your instructions.\n";
  p += r.dispatch;
  if (!p.empty() && p.back() != '\n') p += '\n';
  p += "When you are done, make the last line of your final message a single line that starts "
       "with RESULT_JSON: followed by the result object your persona file describes.";
  return p;
}

std::string resume_prompt() {
  return "Reply with nothing but the RESULT_JSON: line (as your persona file defines it) for the "
         "work you just finished.";
}

std::vector<std::string> persona_extra_tools(const std::string& test_command,
                                             const std::string& build_command) {
  std::vector<std::string> tools;
  for (const std::string* cmd : {&test_command, &build_command}) {
    size_t b = cmd->find_first_not_of(" \t");
    if (b == std::string::npos) continue;
    size_t e = cmd->find_first_of(" \t", b);
    tools.push_back("Bash(" + cmd->substr(b, e == std::string::npos ? e : e - b) + " *)");
  }
  for (const char* verb : {"Bash(devgraph schedule *)", "Bash(devgraph guard *)"})
    tools.push_back(verb);
  return tools;
}

std::vector<std::string> current_environment() {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) env.emplace_back(*e);
  return env;
}

std::vector<std::string> child_environment(BackendKind kind,
                                           const std::vector<std::string>& parent) {
  // DEVGRAPH_LIMITS_SOCKET is the driver's line to the run's limits
  // (bundle/limits_client.h): a persona must not ask for slots or report
  // costs.
  std::set<std::string> drop = {"DEVGRAPH_SECRET_ENV",
                                "GH_TOKEN",
                                "GITHUB_TOKEN",
                                "GH_ENTERPRISE_TOKEN",
                                "GITHUB_ENTERPRISE_TOKEN",
                                "DEVGRAPH_LIMITS_SOCKET"};
  for (const auto& entry : parent) {
    if (entry.rfind("DEVGRAPH_SECRET_ENV=", 0) != 0) continue;
    std::string list = entry.substr(entry.find('=') + 1);
    for (char& c : list)
      if (c == ',') c = ' ';
    size_t pos = 0;
    while ((pos = list.find_first_not_of(' ', pos)) != std::string::npos) {
      size_t end = list.find(' ', pos);
      drop.insert(list.substr(pos, end == std::string::npos ? end : end - pos));
      pos = end;
    }
  }
  std::vector<std::string> out;
  for (const auto& entry : parent) {
    std::string name = entry.substr(0, entry.find('='));
    if (drop.count(name)) continue;
    if (kind != BackendKind::command) {
      auto owner = credential_owner(name);
      if (owner && (kind == BackendKind::sim || *owner != kind)) continue;
    }
    out.push_back(entry);
  }
  return out;
}

std::optional<ProviderLimit> detect_provider_limit(BackendKind, std::string_view text,
                                                   SysTime now) {
  // The phrases the CLIs use: claude ("usage limit reached|<epoch>",
  // "You've hit your limit · resets 3pm", rate_limit_error), codex ("You've
  // hit your usage limit ... try again at 5:53 AM" or "... at Dec 5th,
  // 2026 4:42 AM", "try again in 2 days 3 hours", "Rate limit
  // reached ... try again in 20s", 429 Too Many Requests), gemini ("Quota
  // exceeded", RESOURCE_EXHAUSTED, "Please retry in 37.5s").
  static const char* kMarkers[] = {
      "usage limit",        "rate limit",        "rate_limit",
      "hit your limit",     "limit reached",     "quota exceeded",
      "resource_exhausted", "too many requests", "exceeded your current quota",
      "limit will reset"};
  std::string low = lower(text);
  bool hit = false;
  for (const char* m : kMarkers)
    if (low.find(m) != std::string::npos) hit = true;
  if (!hit) return std::nullopt;

  ProviderLimit limit;
  // The line that names the limit is the message worth showing.
  size_t at = std::string::npos;
  for (const char* m : kMarkers) at = std::min(at, low.find(m));
  size_t ls = low.rfind('\n', at == 0 ? 0 : at - 1);
  ls = ls == std::string::npos || at == 0 ? 0 : ls + 1;
  size_t le = low.find('\n', at);
  limit.message = one_line(text.substr(ls, le == std::string::npos ? le : le - ls), 200);

  static const std::regex epoch(R"(\|\s*(\d{9,11})\b)");
  static const std::regex relative(
      R"((?:try again in|retry in|retry after|reset after|resets in|reset in|again in)\s*:?\s*(.*))");
  static const std::regex retry_delay(R"("?retrydelay"?\s*[:=]\s*"?(\d+(?:\.\d+)?s))");
  static const std::regex clock_at(
      R"((?:resets|reset at|resets at|try again at|available again at)\s*(?:at\s*)?(\d{1,2})(?::(\d{2}))?\s*(am|pm)?)");
  std::smatch m;
  std::string s = low;
  if (std::regex_search(s, m, epoch)) {
    limit.resets_at = SysTime(std::chrono::seconds(std::stoll(m[1].str())));
  } else if (std::regex_search(s, m, relative) || std::regex_search(s, m, retry_delay)) {
    if (auto d = parse_duration(m[1].str()))
      limit.resets_at = std::chrono::time_point_cast<SysTime::duration>(now + *d);
  }
  // codex names the date when the reset is on another day than today
  // (local time): "try again at Dec 5th, 2026 4:42 AM".
  static const std::regex date_at(
      R"((?:resets|reset at|resets at|try again at|available again at)\s*(?:at\s*)?)"
      R"((jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?)"
      R"(\s+(\d{4}),?\s+(?:at\s+)?(\d{1,2}):(\d{2})\s*(am|pm)?)");
  if (!limit.resets_at && std::regex_search(s, m, date_at)) {
    static const std::string months = "janfebmaraprmayjunjulaugsepoctnovdec";
    int month = static_cast<int>(months.find(m[1].str()) / 3) + 1;
    int hour = std::stoi(m[4].str());
    std::string ampm = m[6].matched ? m[6].str() : "";
    if (ampm == "pm" && hour < 12) hour += 12;
    if (ampm == "am" && hour == 12) hour = 0;
    limit.resets_at = local_date_time(std::stoi(m[3].str()), month, std::stoi(m[2].str()), hour,
                                      std::stoi(m[5].str()));
  }
  if (!limit.resets_at && std::regex_search(s, m, clock_at)) {
    int hour = std::stoi(m[1].str());
    int minute = m[2].matched ? std::stoi(m[2].str()) : 0;
    std::string ampm = m[3].matched ? m[3].str() : "";
    if (ampm == "pm" && hour < 12) hour += 12;
    if (ampm == "am" && hour == 12) hour = 0;
    if (hour < 24 && minute < 60 && (m[2].matched || !ampm.empty()))
      limit.resets_at = next_clock_time(now, hour, minute);
  }
  return limit;
}

}  // namespace devgraph::agents

namespace devgraph::agents {

std::string_view failure_kind_name(FailureKind kind) {
  switch (kind) {
    case FailureKind::transient:
      return "transient";
    case FailureKind::limit:
      return "limit";
    case FailureKind::fatal:
      return "fatal";
    case FailureKind::turn_limit:
      return "turn_limit";
  }
  return "transient";
}

// The failure tables, from what each pinned CLI prints
// (tests/fixtures/cli-failures/, one fixture per row; docs/agents.md). A
// failure no row matches is transient: relaunched after a back-off.
const std::vector<FailureRow>& failure_table(BackendKind kind) {
  using K = FailureKind;
  // claude: api_error_status is the HTTP status; the result text is its
  // own words ("API Error: Request rejected (429) · ... rate limit").
  static const std::vector<FailureRow> claude = {
      {"max-turns", K::turn_limit, 0, 0, {"error_max_turns", "max_turns"}},
      {"usage-limit", K::limit, 0, 0, {"usage limit", "hit your limit", "limit will reset"}},
      {"rate-limit", K::limit, 429, 429, {}, true},
      {"auth", K::fatal, 401, 403, {}},
      {"auth", K::fatal, 0, 0, {"invalid api key", "please run /login", "authentication_error"}},
      {"bad-request", K::fatal, 400, 400, {}},
      {"not-found", K::fatal, 404, 404, {}},
      {"overloaded", K::transient, 529, 529, {}},
      {"server-error", K::transient, 500, 599, {}},
  };
  // codex: the status is in the message ("exceeded retry limit, last
  // status: 429 Too Many Requests", "unexpected status 401 Unauthorized");
  // it has no turn limit of its own.
  static const std::vector<FailureRow> codex = {
      {"usage-limit", K::limit, 0, 0, {"usage limit"}},
      {"rate-limit", K::limit, 429, 429, {}, true},
      {"rate-limit", K::limit, 0, 0, {"rate limit", "too many requests"}, true},
      {"auth", K::fatal, 401, 403, {}},
      {"auth", K::fatal, 0, 0, {"incorrect api key", "invalid_api_key", "not logged in"}},
      {"bad-request", K::fatal, 400, 400, {}},
      {"not-found", K::fatal, 404, 404, {}},
      {"server-error", K::transient, 500, 599, {}},
      {"server-error", K::transient, 0, 0, {"high demand"}},
  };
  // gemini: error.code of the document on stderr is the HTTP status (and
  // the exit code is that status modulo 256: 173 for 429) or its own fatal
  // code (53 turn limit, 41 authentication, 42 input, 44 sandbox, 52
  // configuration); error.type names the fatal ones.
  static const std::vector<FailureRow> gemini = {
      {"turn-limit", K::turn_limit, 0, 0, {"fatalturnlimitederror", "max session turns"}},
      {"auth",
       K::fatal,
       0,
       0,
       {"fatalauthenticationerror", "api_key_invalid", "api key not valid"}},
      {"daily-quota", K::limit, 429, 429, {"daily quota", "per day"}},
      {"rate-limit", K::limit, 429, 429, {}, true},
      {"auth", K::fatal, 401, 403, {}},
      {"bad-input", K::fatal, 0, 0, {"fatalinputerror", "fatalsandboxerror", "fatalconfigerror"}},
      {"bad-request", K::fatal, 400, 400, {}},
      {"not-found", K::fatal, 404, 404, {}},
      {"server-error", K::transient, 500, 599, {}},
  };
  static const std::vector<FailureRow> generic = {};
  switch (kind) {
    case BackendKind::claude:
      return claude;
    case BackendKind::codex:
      return codex;
    case BackendKind::gemini:
      return gemini;
    case BackendKind::command:
    case BackendKind::sim:
      break;
  }
  return generic;
}

const FailureRow* match_failure(BackendKind kind, int status, std::string_view text) {
  std::string low = lower(text);
  for (const auto& row : failure_table(kind)) {
    if (row.status_min && (status < row.status_min || status > row.status_max)) continue;
    if (!row.status_min && row.phrases.empty()) continue;
    bool said = row.phrases.empty();
    for (const char* p : row.phrases) said = said || low.find(p) != std::string::npos;
    if (said) return &row;
  }
  return nullptr;
}

}  // namespace devgraph::agents
