#include "orchestrator/merge_audit.h"

#include "git/git.h"

#include <dirent.h>

#include <chrono>
#include <climits>
#include <cstdlib>
#include <utility>

#include "agents/backend.h"
#include "agents/headless.h"
#include "bundle/launcher.h"
#include "bundle/limits_client.h"
#include "bundle/run.h"
#include "bundle/slot_gate.h"
#include "contracts/schema.h"
#include "graph/graph.h"
#include "lane/lane.h"
#include "proc/leftovers.h"
#include "proc/stop_signals.h"
#include "project/commands.h"
#include "skill/skill.h"
#include "templates/render.h"
#include "util/fs.h"
#include "util/text.h"
#include "util/untrusted.h"

namespace devgraph::orchestrator {
namespace {

// The node whose persona audits a merge.
constexpr std::string_view kAuditNode = "audit_merged";
constexpr size_t kReasonChars = 400;

Error usage(std::string message) {
  return fail(ErrorKind::usage, std::move(message), kAuditExitUsage);
}

bool is_lower_hex(std::string_view s) {
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

// Characters a revision may use in A..B without being read as anything
// else: names, hashes, ^, ~, @{...} aside.
bool revision_chars(std::string_view s) {
  if (s.empty() || s.front() == '-') return false;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '/' || c == '.' || c == '^' || c == '~';
    if (!ok) return false;
  }
  return true;
}

bool valid_git_range(std::string_view range) {
  size_t dots = range.find("..");
  if (dots == std::string_view::npos || range.find("..", dots + 2) != std::string_view::npos)
    return false;
  std::string_view a = range.substr(0, dots), b = range.substr(dots + 2);
  if (!b.empty() && b.front() == '.') return false;  // A...B
  return revision_chars(a) && revision_chars(b);
}

// One line, clipped.
std::string reason_line(const std::string& text) {
  return one_line(text, kReasonChars);
}

std::string first_parent_range(const std::string& merge) {
  return merge + "^1.." + merge;
}

}  // namespace

bool valid_audit_key(std::string_view key) {
  if (key.empty() || key == "." || key == "..") return false;
  for (char c : key) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

std::string audit_key_dir(const std::string& run_dir, const std::string& key) {
  return join_path(join_path(run_dir, "audit"), key);
}

Expected<MergeAuditRequest> parse_merge_audit_request(const Json& doc, std::string_view key) {
  const std::string where = "request.json";
  if (!doc.is_object()) return usage(where + ": not a JSON object");
  auto str = [&](const char* name) -> Expected<std::string> {
    auto it = doc.find(name);
    if (it == doc.end()) return usage(where + ": no field " + name);
    if (!it->is_string()) return usage(where + ": " + name + " is not a string");
    return it->get<std::string>();
  };
  MergeAuditRequest r;
  DG_TRY(r.key, str("key"));
  if (r.key != key)
    return usage(where + ": key is '" + r.key + "', not '" + std::string(key) + "'");
  auto pr = doc.find("pr");
  if (pr == doc.end()) return usage(where + ": no field pr");
  if (!pr->is_number_integer() || pr->get<long long>() < 0)
    return usage(where + ": pr is not a number 0 or above");
  r.pr = pr->get<long long>();
  DG_TRY(r.title, str("title"));
  DG_TRY(r.merge_commit, str("merge_commit"));
  DG_TRY(r.merged_at, str("merged_at"));
  DG_TRY(r.default_branch, str("default_branch"));
  DG_TRY(r.repo, str("repo"));
  DG_TRY(r.worktree, str("worktree"));
  DG_TRY(r.diff_file, str("diff_file"));
  DG_TRY(r.git_range, str("git_range"));
  if ((r.merge_commit.size() != 40 && r.merge_commit.size() != 64) || !is_lower_hex(r.merge_commit))
    return usage(where + ": merge_commit '" + reason_line(r.merge_commit) +
                 "' is not a full commit hash");
  if (r.repo.empty() || r.repo.front() != '/')
    return usage(where + ": repo is not an absolute path");
  if (r.worktree.empty() || r.worktree.front() != '/')
    return usage(where + ": worktree is not an absolute path");
  if (absolute_path(r.worktree) == absolute_path(r.repo))
    return usage(where + ": worktree is the repository itself");
  if (!r.diff_file.empty()) {
    if (r.diff_file.front() != '/') return usage(where + ": diff_file is not an absolute path");
    if (!path_exists(r.diff_file) || is_directory(r.diff_file))
      return usage(where + ": diff_file " + r.diff_file + " is not a file");
  }
  if (!r.git_range.empty() && !valid_git_range(r.git_range))
    return usage(where + ": git_range '" + reason_line(r.git_range) + "' is not a range A..B");
  if (r.default_branch.empty()) return usage(where + ": default_branch is empty");
  return r;
}

Expected<AuditRange> first_audit_range(const MergeAuditRequest& req, int parents) {
  if (!req.git_range.empty()) return AuditRange{false, req.git_range};
  AuditRange r = audit_range(req.merge_commit, parents);
  if (!r.pr_diff) return r;
  if (!req.diff_file.empty()) return r;
  if (parents >= 1) return AuditRange{false, first_parent_range(req.merge_commit)};
  return fail("nothing to audit: " + req.merge_commit +
              " has no parent and the request gives no diff_file");
}

std::optional<AuditRange> other_audit_range(const MergeAuditRequest& req, const AuditRange& before,
                                            int parents) {
  if (before.pr_diff) {
    if (parents >= 1) return AuditRange{false, first_parent_range(req.merge_commit)};
    return std::nullopt;
  }
  if (!req.diff_file.empty()) return AuditRange{true, ""};
  std::string fp = first_parent_range(req.merge_commit);
  if (parents >= 1 && fp != before.git_range) return AuditRange{false, fp};
  return std::nullopt;
}

AuditRange recomputed_audit_range(const MergeAuditRequest& req, const AuditRange& before,
                                  int parents) {
  auto fresh = first_audit_range(req, parents);
  if (fresh && fresh->pr_diff != before.pr_diff) return *fresh;
  if (auto other = other_audit_range(req, before, parents)) return *other;
  return fresh ? *fresh : before;
}

std::string diff_range_text(const MergeAuditRequest& req, const AuditRange& range) {
  return range.pr_diff ? "the pull request's diff in " + req.diff_file : range.git_range;
}

AuditJudgement judge_audit(const agents::Completion& c, int dispatch) {
  AuditJudgement j;
  if (c.outcome != agents::Outcome::result) {
    std::string why = c.error.empty() ? json_str(c.result, "summary") : c.error;
    j.reason = reason_line(c.outcome == agents::Outcome::malformed_result
                               ? "the auditor's result is not a valid agent result: " + why
                               : "the auditor's run ended as " +
                                     std::string(agents::outcome_name(c.outcome)) + ": " + why);
    return j;
  }
  auto findings = parse_findings(c.result);
  if (!findings) {
    j.reason = reason_line(findings.error().message);
    return j;
  }
  std::string status = json_str(c.result, "status");
  std::string summary = json_str(c.result, "summary");
  auto listed = [&](const char* field) {
    auto items = json_str_list(c.result, field);
    return items.empty() ? summary : join(items, "; ");
  };
  if (status == "DONE" || status == "DONE_WITH_CONCERNS") {
    j.step = AuditStep::audited;
    j.findings = std::move(*findings);
  } else if (status == "NEEDS_CONTEXT") {
    if (dispatch < kMaxAuditDispatches) {
      j.step = AuditStep::dispatch_again;
    } else {
      j.reason = reason_line("the auditor still needs context after the range was recomputed: " +
                             listed("missing_context"));
    }
  } else if (status == "BLOCKED") {
    j.reason = reason_line("the auditor is blocked: " + listed("blockers"));
  } else {
    j.reason = reason_line("the auditor answered " + status + ", which an audit cannot take");
  }
  return j;
}

std::vector<std::string> audit_gaps(const Json& result, bool audited, size_t findings) {
  std::vector<std::string> gaps;
  for (const auto& c : json_str_list(result, "concerns")) {
    std::string head = c.substr(0, 8);
    for (char& ch : head) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (head == "coverage") gaps.push_back(c);
  }
  if (audited && findings == 0 && json_str_list(result, "evidence").empty())
    gaps.emplace_back(kNothingSubstantiated);
  return gaps;
}

Json finding_json(const Finding& f) {
  Json j = {{"severity", std::string(severity_name(f.severity))}, {"file", f.file}};
  if (f.line) j["line"] = *f.line;
  j["description"] = f.description;
  if (!f.rule.empty()) j["rule"] = f.rule;
  if (!f.evidence.empty()) j["evidence"] = f.evidence;
  return j;
}

Json merge_audit_result_json(const MergeAuditRequest& req, const MergeAuditOutcome& o) {
  Json findings = Json::array();
  for (const auto& f : o.findings) findings.push_back(finding_json(f));
  Json r = {{"key", req.key},
            {"pr", req.pr},
            {"status", o.audited ? "audited" : "blocked"},
            {"range", o.range},
            {"dispatches", o.dispatches},
            {"findings", findings},
            {"gaps", o.gaps},
            {"summary", o.summary}};
  if (!o.audited) r["reason"] = o.reason;
  r["cost_usd"] = o.cost_usd;
  r["persona_runs"] = o.persona_runs;
  return r;
}

// ---------------------------------------------------------------------------
// The effects.

namespace {

// git in `dir` as argv; a stop signal while it runs is an interrupted
// error whose exit code is 128+N.
Expected<CommandResult> git_in(CommandRunner& runner, const std::string& dir,
                               std::vector<std::string> args,
                               std::chrono::milliseconds timeout = std::chrono::minutes(2)) {
  DG_TRY(CommandResult r, git::run_git(runner, dir, args, timeout, true));
  if (r.interrupted())
    return fail(ErrorKind::interrupted, "stopped by " + stop_signal_name(r.interrupted_by),
                128 + r.interrupted_by);
  return r;
}

Error git_failed(const std::string& what, const CommandResult& r) {
  std::string why = last_line(r.err.empty() ? r.out : r.err);
  if (r.timed_out) why = "timed out";
  return fail("git " + what + " failed: " + why);
}

Expected<int> count_parents(CommandRunner& runner, const MergeAuditRequest& req) {
  DG_TRY(CommandResult r,
         git_in(runner, req.repo, {"rev-list", "--parents", "-n", "1", req.merge_commit}));
  if (!r.ok()) return git_failed("rev-list --parents", r);
  int words = 0;
  bool in_word = false;
  for (char c : r.out) {
    bool space = c == ' ' || c == '\n' || c == '\t';
    if (!space && !in_word) ++words;
    in_word = !space;
  }
  if (words < 1) return fail("git rev-list --parents printed nothing for " + req.merge_commit);
  return words - 1;
}

struct WorktreeRecord {
  std::string path;
  std::string head;
  std::string branch;  // "" when detached
  bool locked = false;
  std::string lock_reason;
  bool prunable = false;
};

Expected<std::vector<WorktreeRecord>> list_worktrees(CommandRunner& runner,
                                                     const std::string& repo) {
  DG_TRY(CommandResult r, git_in(runner, repo, {"worktree", "list", "--porcelain", "-z"}));
  if (!r.ok()) return git_failed("worktree list", r);
  std::vector<WorktreeRecord> out;
  WorktreeRecord cur;
  size_t start = 0;
  while (start < r.out.size()) {
    size_t end = r.out.find('\0', start);
    if (end == std::string::npos) end = r.out.size();
    std::string field = r.out.substr(start, end - start);
    start = end + 1;
    auto value = [&](std::string_view name) {
      return field.size() > name.size() ? field.substr(name.size() + 1) : std::string();
    };
    if (field.empty()) {
      if (!cur.path.empty()) out.push_back(cur);
      cur = {};
    } else if (field.rfind("worktree ", 0) == 0) {
      cur.path = value("worktree");
    } else if (field.rfind("HEAD ", 0) == 0) {
      cur.head = value("HEAD");
    } else if (field.rfind("branch ", 0) == 0) {
      cur.branch = value("branch");
    } else if (field == "locked" || field.rfind("locked ", 0) == 0) {
      cur.locked = true;
      cur.lock_reason = value("locked");
    } else if (field == "prunable" || field.rfind("prunable ", 0) == 0) {
      cur.prunable = true;
    }
  }
  if (!cur.path.empty()) out.push_back(cur);
  return out;
}

std::string real_or_absolute(const std::string& path) {
  char buf[PATH_MAX];
  if (::realpath(path.c_str(), buf)) return buf;
  return absolute_path(path);
}

bool same_path(const std::string& a, const std::string& b) {
  return absolute_path(a) == absolute_path(b) || real_or_absolute(a) == real_or_absolute(b);
}

bool empty_directory(const std::string& path) {
  DIR* d = ::opendir(path.c_str());
  if (!d) return false;
  bool empty = true;
  while (dirent* e = ::readdir(d)) {
    std::string_view name = e->d_name;
    if (name != "." && name != "..") {
      empty = false;
      break;
    }
  }
  ::closedir(d);
  return empty;
}

// The worktree registered at the request's path, other than the primary
// checkout (the first record).
Expected<std::optional<WorktreeRecord>> registered_at(CommandRunner& runner,
                                                      const MergeAuditRequest& req) {
  DG_TRY(auto list, list_worktrees(runner, req.repo));
  for (size_t i = 0; i < list.size(); ++i) {
    if (!same_path(list[i].path, req.worktree)) continue;
    if (i == 0) return fail("worktree " + req.worktree + " is the repository's own checkout");
    return std::optional<WorktreeRecord>(list[i]);
  }
  return std::optional<WorktreeRecord>();
}

// Removes the detached audit worktree registered at the request's path,
// if there is one; a branch checked out there is someone else's and an
// error. Force: a detached checkout devgraph made for reading holds
// nothing to keep.
Status remove_audit_worktree(CommandRunner& runner, const MergeAuditRequest& req,
                             const std::optional<WorktreeRecord>& at) {
  if (!at) return {};
  if (!at->branch.empty())
    return fail("worktree " + req.worktree + " has branch " + at->branch +
                " checked out; not an audit worktree, left alone");
  std::vector<std::string> args = {"worktree", "remove", "--force"};
  // git's own lock of an add that was killed half-way.
  if (at->locked && at->lock_reason == "initializing") args.push_back("--force");
  args.push_back(at->path);
  DG_TRY(CommandResult r, git_in(runner, req.repo, args));
  if (!r.ok()) return git_failed("worktree remove", r);
  return {};
}

Status remove_audit_worktree(CommandRunner& runner, const MergeAuditRequest& req) {
  DG_TRY(auto at, registered_at(runner, req));
  return remove_audit_worktree(runner, req, at);
}

Status prepare_worktree(CommandRunner& runner, const MergeAuditRequest& req) {
  DG_TRY(auto at, registered_at(runner, req));
  if (at && at->branch.empty() && at->head == req.merge_commit && !at->locked && !at->prunable &&
      is_directory(req.worktree))
    return {};  // left by a killed earlier attempt: reused
  DG_CHECK(remove_audit_worktree(runner, req, at));
  if (path_exists(req.worktree) && !empty_directory(req.worktree))
    return fail("worktree path " + req.worktree + " exists and is no worktree of " + req.repo +
                "; left alone");
  DG_TRY(CommandResult r,
         git_in(runner, req.repo, {"worktree", "add", "--detach", req.worktree, req.merge_commit},
                std::chrono::minutes(10)));
  if (!r.ok()) return git_failed("worktree add", r);
  return {};
}

// A result.json that parses and is this key's.
std::optional<Json> saved_result(const std::string& path, const std::string& key) {
  if (!path_exists(path)) return std::nullopt;
  auto doc = load_json_file(path);
  if (!doc || !doc->is_object() || json_str(*doc, "key") != key) return std::nullopt;
  std::string status = json_str(*doc, "status");
  if (status != "audited" && status != "blocked") return std::nullopt;
  return *doc;
}

Expected<MergeAuditRequest> load_request(const std::string& dir, const std::string& key) {
  std::string path = join_path(dir, "request.json");
  if (!path_exists(path)) return usage("no request: " + path + " does not exist");
  auto doc = load_json_file(path);
  if (!doc) return usage(reason_line(doc.error().message));
  return parse_merge_audit_request(*doc, key);
}

// The project's test and build commands, for the auditor's allow list:
// the run's recorded ones (state.json `commands`, as the bundle driver
// has them), else those found in the merged tree.
std::pair<std::string, std::string> project_commands(const std::string& run_dir,
                                                     const std::string& worktree) {
  if (auto state = load_json_file(join_path(run_dir, "state.json"));
      state && state->is_object() && state->contains("commands") &&
      (*state)["commands"].is_object())
    return {json_str((*state)["commands"], "test"), json_str((*state)["commands"], "build")};
  if (auto found = project::detect_commands(worktree)) return {found->test, found->build};
  return {};
}

struct Setup {
  std::string skill;
  std::string persona;
  agents::RuntimeConfig config;
};

Expected<Setup> set_up(const MergeAuditOptions& opt, const std::string& dir) {
  auto kind = agents::parse_backend(opt.agent);
  if (!kind)
    return usage("--agent " + opt.agent + ": expected one of " + agents::backend_choices());
  Setup s;
  auto skill = locate_skill(opt.skill);
  if (!skill) return usage(skill.error().message);
  s.skill = *skill;
  auto graph = Graph::load(s.skill);
  if (!graph) return usage(graph.error().message);
  auto personas = lane::Walker(*graph).personas(kAuditNode);
  if (!personas) return usage(personas.error().message);
  if (personas->size() != 1)
    return usage("GRAPH.yaml: " + std::string(kAuditNode) + " must run exactly one persona");
  s.persona = personas->front();

  agents::RuntimeConfig& cfg = s.config;
  const HeadlessSettings& h = graph->headless;
  cfg.backend = agents::headless_backend(
      h,
      agents::BackendFlags{*kind, opt.agent_bin, opt.model, opt.sim_scenario, opt.agent_command});
  cfg.backend.sim_state_dir = join_path(dir, "sim");
  cfg.backend.config_dir = join_path(dir, "cli");
  cfg.backend.bundle = opt.key;
  // The backend is checked now, so that a bad flag writes nothing; the
  // runtime fills in the simulated agent's program the same way.
  agents::BackendOptions check = cfg.backend;
  if (check.kind == agents::BackendKind::sim && check.binary.empty())
    check.binary = self_executable();
  if (auto backend = agents::make_backend(check); !backend) return usage(backend.error().message);
  cfg.bundle = opt.key;
  cfg.log_path = join_path(dir, "audit.log");
  cfg.children_record = join_path(dir, "live-children");
  cfg.prompt_dir = join_path(dir, "prompts");
  cfg.on_log = opt.on_log;
  cfg.result_schema = result_schema_path(s.skill);
  cfg.watch_stop_signals = true;
  agents::apply_headless_minutes(cfg, h.persona_timeout_minutes, h.api_retry_minutes);
  if (opt.persona_timeout_seconds)
    cfg.persona_timeout =
        std::chrono::milliseconds(static_cast<long long>(*opt.persona_timeout_seconds * 1000.0));
  cfg.backoff_base =
      std::chrono::milliseconds(static_cast<long long>(opt.api_backoff_seconds * 1000.0));
  return s;
}

// Waits for the one launch in flight. A stop signal stops it; the
// signal is then returned in `stopped_by` with the completion.
// The launcher's completion as the runtime reported it. A launch the run's
// limits withdrew before it started is a launch that failed, with why.
agents::Completion completion_of(const bundle::LaunchEvent& e) {
  agents::Completion c;
  c.handle = e.handle;
  c.persona = e.persona;
  c.result = e.result;
  c.session_id = e.session_id;
  c.cost_usd = e.cost_usd;
  c.tokens = e.tokens;
  c.tool_calls = e.tool_calls;
  c.duration_ms = e.duration_ms;
  c.resumed = e.resumed;
  c.error = e.detail;
  c.outcome = agents::Outcome::launch_failed;
  for (auto o :
       {agents::Outcome::result, agents::Outcome::malformed_result, agents::Outcome::timeout,
        agents::Outcome::cli_error, agents::Outcome::provider_limit, agents::Outcome::launch_failed,
        agents::Outcome::interrupted})
    if (agents::outcome_name(o) == e.outcome) c.outcome = o;
  if (e.outcome == bundle::kOutcomeWithdrawn && c.error.empty())
    c.error = "withdrawn by the run's limits: " + json_str(e.result, "summary");
  return c;
}

agents::Completion await_completion(bundle::Launcher& launcher, int& stopped_by) {
  using K = bundle::LaunchEvent::Kind;
  std::optional<agents::Completion> done;
  while (auto ev = launcher.next()) {
    if (ev->kind == K::interrupted && stopped_by == 0) {
      stopped_by = ev->signal;
      launcher.stop_all();
    } else if (ev->kind == K::completed) {
      done = completion_of(*ev);
      if (stopped_by == 0) break;
    }
  }
  if (done) return *done;
  agents::Completion none;
  none.outcome = agents::Outcome::interrupted;
  none.error = "the launch ended without a completion";
  return none;
}

// What a dispatch needs to know.
struct Dispatching {
  const MergeAuditOptions& opt;
  const Setup& setup;
  const MergeAuditRequest& req;
  const std::string& dir;
};

// Dispatches the auditor until judge_audit() settles the PR: the outcome
// so far and the auditor's last result. A stop signal ends it with
// `stopped_by` set.
Expected<std::pair<MergeAuditOutcome, Json>> dispatch_auditor(bundle::Launcher& launcher,
                                                              CommandRunner& runner,
                                                              const Dispatching& d,
                                                              AuditRange range, int& stopped_by) {
  MergeAuditOutcome o;
  for (int n = 1;; ++n) {
    std::string diff_range = diff_range_text(d.req, range);
    templates::Values values = {
        {"pr_number", std::to_string(d.req.pr)},
        {"pr_title", fence_untrusted("pull request title", d.req.title)},
        {"diff_range", diff_range},
        {"default_branch", d.req.default_branch},
        {"merged_at", d.req.merged_at},
    };
    DG_TRY(std::string text,
           templates::render_skill_template(d.setup.skill, "merge-audit-dispatch", values));
    DG_CHECK(write_file_atomic(join_path(d.dir, "dispatch-" + std::to_string(n) + ".md"), text));
    o.dispatches = n;
    o.range = diff_range;
    agents::LaunchRequest launch;
    launch.persona = d.setup.persona;
    launch.dispatch = text;
    launch.worktree = d.req.worktree;
    launch.run_dir = d.opt.run_dir;
    launch.skill_dir = d.setup.skill;
    launch.output_path = join_path(d.dir, d.setup.persona + ".output.log");
    DG_TRY(auto id, launcher.launch(launch));
    (void)id;  // one launch at a time: its completion is the next one
    agents::Completion c = await_completion(launcher, stopped_by);
    o.cost_usd += c.cost_usd;
    if (stopped_by) return fail(ErrorKind::interrupted, "stopped", 128 + stopped_by);
    AuditJudgement j = judge_audit(c, n);
    if (j.step == AuditStep::dispatch_again) {
      DG_TRY(int parents, count_parents(runner, d.req));
      range = recomputed_audit_range(d.req, range, parents);
      continue;
    }
    o.audited = j.step == AuditStep::audited;
    o.findings = std::move(j.findings);
    o.reason = j.reason;
    return std::make_pair(std::move(o), c.result);
  }
}

MergeAuditReport error_report(int code, const std::string& message) {
  return MergeAuditReport{code, std::nullopt, reason_line(message)};
}

MergeAuditReport error_report(const Error& e) {
  return error_report(e.exit_code == 0 ? kAuditExitError : e.exit_code, e.message);
}

}  // namespace

MergeAuditReport run_merge_audit(const MergeAuditOptions& opt, CommandRunner& runner) {
  if (!valid_audit_key(opt.key))
    return error_report(kAuditExitUsage,
                        "--key '" + reason_line(opt.key) + "': a key is [a-z0-9._-]+ (e.g. pr-12)");
  const std::string dir = audit_key_dir(opt.run_dir, opt.key);
  const std::string result_path = join_path(dir, "result.json");
  const std::string lock_path = join_path(dir, ".lock");

  // Done before: the answer again, and the worktree a kill may have left.
  if (auto saved = saved_result(result_path, opt.key)) {
    if (auto req = load_request(dir, opt.key))
      if (auto lock = FileLock::try_acquire(lock_path); lock && *lock)
        (void)remove_audit_worktree(runner, *req);  // best effort: the answer stands
    return MergeAuditReport{kAuditExitDone, *saved, ""};
  }

  // Everything a usage error can be, before anything is written.
  auto req = load_request(dir, opt.key);
  if (!req) return error_report(req.error());
  auto setup = set_up(opt, dir);
  if (!setup) return error_report(setup.error());
  if (!is_directory(req->repo))
    return error_report(kAuditExitUsage, "request.json: repo " + req->repo + " is not a directory");
  auto commit = git_in(runner, req->repo, {"cat-file", "-e", req->merge_commit + "^{commit}"});
  if (!commit) return error_report(commit.error());
  if (!commit->ok())
    return error_report(kAuditExitUsage, "request.json: merge_commit " + req->merge_commit +
                                             " is not a commit of " + req->repo);

  auto lock = FileLock::try_acquire(lock_path);
  if (!lock) return error_report(lock.error());
  if (!*lock)
    return error_report(kAuditExitError, "another devgraph audit-merge is auditing " + opt.key +
                                             " (" + lock_path + ")");
  if (auto saved = saved_result(result_path, opt.key))
    return MergeAuditReport{kAuditExitDone, *saved, ""};
  auto signals = StopSignals::watch();
  if (!signals) return error_report(signals.error());
  // A killed predecessor's persona must not share the worktree with ours.
  if (auto ended = end_leftover_children(setup->config.children_record); !ended)
    return error_report(ended.error());

  AuditRange range;
  if (req->git_range.empty()) {
    auto parents = count_parents(runner, *req);
    if (!parents) return error_report(parents.error());
    auto first = first_audit_range(*req, *parents);
    if (!first) return error_report(first.error());
    range = *first;
  } else {
    range = AuditRange{false, req->git_range};
  }
  if (auto ok = prepare_worktree(runner, *req); !ok) return error_report(ok.error());

  agents::RuntimeConfig cfg = setup->config;
  auto [test_cmd, build_cmd] = project_commands(opt.run_dir, req->worktree);
  for (auto& t : agents::persona_extra_tools(test_cmd, build_cmd))
    cfg.backend.allowed_tools.push_back(std::move(t));
  auto runtime = agents::PersonaRuntime::create(cfg);
  if (!runtime) return error_report(runtime.error());
  auto launcher = bundle::runtime_launcher(std::move(*runtime));
  if (!opt.limits_socket.empty()) {
    auto gate = bundle::connect_limits(opt.limits_socket, "audit-" + opt.key);
    if (!gate) return error_report(gate.error());
    launcher = bundle::gated_launcher(std::move(launcher), std::move(*gate));
  }
  auto stopped = [&](int sig) {
    (void)remove_audit_worktree(runner, *req);  // made again by the next attempt
    return error_report(128 + sig, "stopped by " + stop_signal_name(sig) + "; no result written");
  };
  if (int sig = signals->take()) return stopped(sig);

  int sig = 0;
  auto answered =
      dispatch_auditor(*launcher, runner, Dispatching{opt, *setup, *req, dir}, range, sig);
  if (sig) return stopped(sig);
  if (!answered) return error_report(answered.error());
  MergeAuditOutcome& o = answered->first;
  const Json& last = answered->second;
  o.gaps = audit_gaps(last, o.audited, o.findings.size());
  o.summary = json_str(last, "summary");
  o.persona_runs = launcher->persona_runs();
  Json result = merge_audit_result_json(*req, o);
  if (auto ok = write_file_atomic(result_path, dump_py(result, 2) + "\n"); !ok)
    return error_report(ok.error());
  MergeAuditReport report{kAuditExitDone, result, ""};
  if (auto ok = remove_audit_worktree(runner, *req); !ok)
    report.error = "the audit worktree stays: " + reason_line(ok.error().message);
  return report;
}

}  // namespace devgraph::orchestrator
