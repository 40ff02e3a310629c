// Agent backends: how one persona launch becomes an argv for a headless
// agent CLI, and how that CLI's output becomes (final text, session id,
// cost, usage, error, provider limit).
//
// Backends (chosen per run, `--agent`):
//   claude   the reference runtime's argv exactly; the binary comes from
//            BackendOptions::binary (--claude-bin), else $DEVELOP_CLAUDE_BIN,
//            else `claude`, so a fake CLI written for the reference works.
//   codex    `codex exec --json`, JSONL events, workspace-write sandbox,
//            resumed with `codex exec resume SESSION`; CODEX_HOME is the
//            run's own (agents/cli_setup.h).
//   gemini   `gemini -p PROMPT --output-format json`, with devgraph's
//            policy files and the skill and run directories in its
//            workspace.
//   command  any CLI, from a user-written argv template; the result is the
//            last RESULT_JSON: line of stdout.
//   sim      devgraph's own simulated agent (`devgraph sim-agent`), driven
//            by a scenario file (see agents/sim.h); a real child process so
//            it takes the same supervision path as a real CLI.
//
// Contract: building an argv never touches the filesystem; parse() never
// fails (an unreadable output is a failed AgentOutput with the reason).
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/expected.h"
#include "util/json.h"

namespace devgraph::agents {

enum class BackendKind { claude, codex, gemini, command, sim };

std::optional<BackendKind> parse_backend(std::string_view name);
std::string_view backend_name(BackendKind kind);
// "claude, codex, gemini, command, sim": for usage messages.
std::string backend_choices();

// The backend settings of one bundle's persona runtime (GRAPH.yaml
// `headless` plus flags).
struct BackendOptions {
  BackendKind kind = BackendKind::claude;
  // The program to run. Empty: the backend's default (see above); for sim,
  // the running devgraph executable.
  std::string binary;
  std::optional<std::string> model;
  // The reasoning effort (codex: model_reasoning_effort; the sim agent:
  // --effort); other CLIs have none to set and ignore it.
  std::optional<std::string> effort;
  std::string permission_mode = "acceptEdits";
  int max_turns = 80;
  std::vector<std::string> allowed_tools;     // claude --allowedTools
  std::vector<std::string> disallowed_tools;  // claude --disallowedTools
  // command: argv template. Placeholders, replaced inside any word:
  // {prompt_file} {worktree} {persona} {model} {task} {run_dir}.
  std::vector<std::string> command_template;
  // sim: the scenario file, and where the simulated agent keeps its
  // per-bundle counters (empty: next to the prompt files).
  std::string sim_scenario;
  std::string sim_state_dir;
  // Where the CLI's per-run configuration is written (agents/cli_setup.h:
  // codex's CODEX_HOME, gemini's policy files); empty: PersonaRuntime::
  // create takes <log dir>/cli.
  std::string config_dir;
  // Leave each CLI's telemetry and non-essential traffic as the user has
  // it; off (the default) turns them off for persona runs.
  bool cli_telemetry = false;
  // The bundle the launches belong to; sim passes it as --bundle, for the
  // scenario's "bundle" rules and {bundle}. Empty: PersonaRuntime::create
  // takes RuntimeConfig::bundle.
  std::string bundle;
};

// One persona launch, as the bundle driver describes it.
struct LaunchRequest {
  std::string persona;              // a persona name: <skill>/agents/<persona>.md
  std::optional<std::string> task;  // task id, or none for bundle-level personas
  std::string dispatch;             // the dispatch text (already rendered)
  std::string worktree;             // the CLI's working directory
  std::string run_dir;              // granted with --add-dir
  std::string skill_dir;            // where agents/<persona>.md lives
  // This launch's own model and reasoning effort, over the backend's (a
  // fix loop's escalation raises one launch, not the whole runtime).
  std::optional<std::string> model;
  std::optional<std::string> effort;
  // Where the CLI's stdout and stderr of every attempt are appended
  // (bounded tails, for diagnosis); empty: not kept.
  std::string output_path;
};

// A usage or rate limit reported by the provider.
struct ProviderLimit {
  std::string message;  // the provider's words, one line, trimmed
  std::optional<std::chrono::system_clock::time_point> resets_at;
  // A rate limit (requests or tokens per minute) rather than a usage quota:
  // without a reset time it is waited out for RuntimeConfig::rate_limit_pause,
  // not default_pause.
  bool rate = false;
};

// How a failed CLI run is handled: the kind of the row of the backend's
// failure table it matched (docs/agents.md, "Failure tables").
enum class FailureKind {
  transient,   // relaunched after a back-off, within the retry budget
  limit,       // a provider limit (AgentOutput::limit): the backend pauses
  fatal,       // retrying cannot help (a rejected key, a bad request):
               // ends at once as cli_error, for a person to fix
  turn_limit,  // the persona ran out of turns: resumed once for its result
};
std::string_view failure_kind_name(FailureKind kind);

// One row of a backend's failure table: a failure whose API status lies in
// [status_min, status_max] (0, 0: any) and whose text holds one of
// `phrases` (lower case; none: the status alone decides).
struct FailureRow {
  const char* shape;  // the row's name, as docs/agents.md lists it
  FailureKind kind;
  int status_min = 0;
  int status_max = 0;
  std::vector<const char*> phrases;
  bool rate = false;  // for a limit: a rate limit, not a usage quota
};
// The rows of `kind`'s table, first match wins; a failure no row matches is
// transient. command and sim have the generic table (limits by wording).
const std::vector<FailureRow>& failure_table(BackendKind kind);
// The row a failure with API status `status` (0: none known) and text
// `text` matches, or nullptr.
const FailureRow* match_failure(BackendKind kind, int status, std::string_view text);

// What a CLI run amounted to, before RESULT_JSON is looked for.
struct AgentOutput {
  std::string final_text;          // the text that should end with RESULT_JSON:
  std::optional<Json> structured;  // a structured-output result, when given
  std::string session_id;
  double cost_usd = 0.0;
  long long duration_ms = 0;
  // Token counts as the CLI reported them (claude's `usage`, codex's
  // turn.completed `usage`, gemini's `stats`); agents/usage.h reads them.
  Json usage;
  bool failed = false;  // the CLI itself failed (exit, is_error, subtype)
  std::string error;    // one line: why it failed
  // For a failed run: which way it is handled, and the row that said so.
  FailureKind failure = FailureKind::transient;
  std::string shape;
  std::optional<ProviderLimit> limit;  // set exactly when failure is limit
  // The tool calls the CLI reports the model made (claude: num_turns - 1;
  // codex: tool items; gemini: stats.tools.totalCalls); nullopt when it
  // reports none (the sim, any command).
  std::optional<int> tool_calls;
};

// What a launch needs besides the request: the rendered prompt and a file
// that holds it (for backends that take the prompt from a file).
struct PromptRef {
  std::string text;
  std::string file;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual BackendKind kind() const = 0;
  virtual std::vector<std::string> launch_argv(const LaunchRequest& request,
                                               const PromptRef& prompt) const = 0;
  // Whether a clean run with no result can be resumed by session id.
  virtual bool can_resume() const = 0;
  // The resume call: asks only for the RESULT_JSON line of the work done.
  virtual std::vector<std::string> resume_argv(const LaunchRequest& request,
                                               const std::string& session_id,
                                               const PromptRef& prompt) const = 0;
  virtual AgentOutput parse(int exit_code, int term_signal, const std::string& out,
                            const std::string& err,
                            std::chrono::system_clock::time_point now) const = 0;
  // Whether this backend needs the prompt written to a file.
  virtual bool wants_prompt_file() const { return false; }
  // Stdout lines the runtime shows live_limit() while the CLI runs
  // (ChildSpec::stdout_line_marks); none by default.
  virtual std::vector<std::string> live_marks() const { return {}; }
  // Whether a marked line says the CLI is waiting out a provider limit by
  // itself (codex's "Reconnecting... (... 429 ...)"): the runtime then
  // stops it when no other line follows within RuntimeConfig::limit_stall,
  // and pauses the backend as for `limit`. nullopt for any other line: the
  // CLI is working again.
  virtual std::optional<ProviderLimit> live_limit(std::string_view,
                                                  std::chrono::system_clock::time_point) const {
    return std::nullopt;
  }
};

// Fails with a one-line message naming the option that is wrong (an empty
// command template, a template without {prompt_file}, sim without a
// scenario).
Expected<std::unique_ptr<Backend>> make_backend(const BackendOptions& options);

// The prompt every backend sends: names the persona file first, then the
// dispatch text, then asks for the single RESULT_JSON: line.
std::string build_prompt(const LaunchRequest& request);
// What personas may run beyond GRAPH.yaml's allow list (claude's
// --allowedTools form): "Bash(<first word> *)" for the test and build
// commands (empty ones add nothing), and the read-only devgraph verbs the
// persona files tell them to run (`devgraph schedule ...`, `devgraph guard
// ...`); never a verb that changes a run (checkpoint, answer, run).
std::vector<std::string> persona_extra_tools(const std::string& test_command,
                                             const std::string& build_command);
// The resume prompt: only the RESULT_JSON: line, please.
std::string resume_prompt();

// The environment a persona child gets, from this process's environment
// `parent` ("NAME=value" entries). Rule (see docs/agents.md):
// - removed for every backend: the names listed in $DEVGRAPH_SECRET_ENV
//   (comma or space separated) and that variable itself; GitHub tokens
//   (GH_TOKEN, GITHUB_TOKEN, GH_ENTERPRISE_TOKEN, GITHUB_ENTERPRISE_TOKEN),
//   because delivery is devgraph's job and no persona pushes or opens PRs;
//   DEVGRAPH_LIMITS_SOCKET, the driver's line to the run's limits;
// - removed for claude, codex, gemini and sim: the other providers' API
//   credentials (ANTHROPIC_*, OPENAI_*/CODEX_*, GEMINI_*/GOOGLE_API_KEY/
//   GOOGLE_APPLICATION_CREDENTIALS), so a persona sees only the key of the
//   CLI it runs in (sim sees none); `command` keeps them, since devgraph
//   cannot know which one the command uses.
std::vector<std::string> child_environment(BackendKind kind,
                                           const std::vector<std::string>& parent);
std::vector<std::string> current_environment();

// Recognises a provider usage/rate-limit message in `text` and its reset
// time when the message gives one (epoch seconds after '|', "resets 3pm",
// "try again in 5m", "reset after 30s", ...). `now` anchors relative times.
std::optional<ProviderLimit> detect_provider_limit(BackendKind kind, std::string_view text,
                                                   std::chrono::system_clock::time_point now);

}  // namespace devgraph::agents
