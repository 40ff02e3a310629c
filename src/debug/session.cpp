#include "debug/session.h"

#include <unistd.h>

#include <set>

#include "contracts/schema.h"
#include "debug/dispatch.h"
#include "proc/leftovers.h"
#include "util/fs.h"
#include "util/text.h"

namespace devgraph::debug {
namespace {

constexpr size_t kTestOutputTail = 4000;

void say(const SessionConfig& cfg, const std::string& line) {
  if (cfg.on_line) cfg.on_line(line);
}

std::string place_of(const SessionConfig& cfg, const DebugFile& f) {
  return f.m.phase == "done" && f.m.end == "resolved" ? cfg.paths.resolved : cfg.paths.file;
}

using fix::keep_answer;
using fix::kept_answer;

// Ends what a killed predecessor left running: each call's recorded
// children. Returns how many process groups were ended.
int end_leftovers(const SessionConfig& cfg, int last_step) {
  int ended = 0;
  for (int step = 1; step <= last_step; ++step) {
    const std::string record = join_path(cfg.paths.call(step), "live-children");
    if (!path_exists(record)) continue;
    auto n = end_leftover_children(record, std::chrono::seconds(10), std::chrono::seconds(2));
    if (n) ended += *n;
  }
  return ended;
}

// One persona call, its answer read back when it was kept.
Expected<fix::PersonaAnswer> call_persona(SessionParts& parts, fix::PersonaCall call,
                                          bool* reused) {
  if (auto kept = kept_answer(call.dir)) {
    *reused = true;
    return *kept;
  }
  *reused = false;
  return parts.personas.run(call);
}

std::string backend_for_specialist(const SessionConfig& cfg, const DebugSpecialist& s) {
  // The simulated and the command backends play every persona of a session.
  return cfg.backend == "sim" || cfg.backend == "command" ? cfg.backend : s.backend;
}

Expected<std::optional<Outcome>> step_launch(DebugFile& f, const SessionConfig& cfg,
                                             SessionParts& parts, const Schema& schema) {
  fix::PersonaCall call;
  call.role = "debug";
  call.persona = cfg.rules.debugger;
  call.backend = cfg.backend;
  call.model = cfg.model;
  call.dir = cfg.paths.call(f.m.step);
  DG_TRY(call.dispatch, render_debug_dispatch(cfg.skill_dir, cfg.paths, f));
  bool reused = false;
  say(cfg, "step " + std::to_string(f.m.step) + ": the debugger (" + f.m.mode + ")");
  DG_TRY(auto answer, call_persona(parts, call, &reused));
  if (answer.outcome != "result") {
    std::string why = "the debugger's run ended " + answer.outcome + ": " +
                      one_line(json_str(answer.result, "summary"), 300);
    DG_CHECK(record(cfg, f, "debugger_unfinished",
                    Json{{"step", f.m.step}, {"outcome", answer.outcome}}));
    return std::optional<Outcome>(Outcome{f, "CONTINUE_REQUIRED", why, 1});
  }
  if (!reused) DG_CHECK(keep_answer(call.dir, answer));
  const DecideRules rules = decide_rules(cfg.rules);
  const int step = f.m.step;
  auto ret = parse_return(answer.result, schema);
  if (!ret) {
    say(cfg, "step " + std::to_string(step) + ": unreadable return: " + ret.error().message);
    f = decide_malformed(std::move(f), ret.error().message, rules);
    DG_CHECK(record(cfg, f, "malformed_return",
                    Json{{"step", step}, {"why", one_line(ret.error().message, 300)}}));
    return std::optional<Outcome>();
  }
  say(cfg, "step " + std::to_string(step) + ": " + std::string(return_name(ret->type)));
  f = decide_return(std::move(f), *ret, cfg.now(), rules);
  DG_CHECK(record(cfg, f, "returned",
                  Json{{"step", step}, {"type", std::string(return_name(ret->type))}}));
  return std::optional<Outcome>();
}

Status step_specialist(DebugFile& f, const SessionConfig& cfg, SessionParts& parts) {
  const std::string hint = f.m.specialist_hint;
  auto it = cfg.rules.specialists.find(hint);
  Review review{cfg.now(), hint, "", "NONE", ""};
  if (it == cfg.rules.specialists.end()) {
    review.detail = "GRAPH.yaml maps no specialist to this hint";
  } else {
    fix::PersonaCall call;
    call.role = "specialist";
    call.persona = it->second.persona;
    call.backend = backend_for_specialist(cfg, it->second);
    call.dir = cfg.paths.call(f.m.step);
    DG_TRY(call.dispatch, render_specialist_dispatch(cfg.skill_dir, cfg.paths, f));
    say(cfg, "step " + std::to_string(f.m.step) + ": the " + hint + " specialist (" + call.persona +
                 " on " + call.backend + ")");
    bool reused = false;
    DG_TRY(auto answer, call_persona(parts, call, &reused));
    if (!reused) DG_CHECK(keep_answer(call.dir, answer));
    review.persona = call.persona;
    const Json r = answer.result.value("review", Json());
    const std::string verdict = json_str(r, "verdict");
    if (answer.outcome == "result" && (verdict == "LOOKS_GOOD" || verdict == "SUGGEST_CHANGE")) {
      review.verdict = verdict;
      review.detail = clean_text(json_str(r, "detail"));
    } else {
      review.detail = "no usable review: " + answer.outcome + ", " +
                      one_line(json_str(answer.result, "summary"), 200);
    }
  }
  review.detail = clean_text(review.detail);
  f.reviews.push_back(review);
  const int step = f.m.step;
  f = decide_reviewed(std::move(f), decide_rules(cfg.rules));
  return record(cfg, f, "reviewed", Json{{"step", step}, {"verdict", review.verdict}});
}

Status step_tdd(DebugFile& f, const SessionConfig& cfg, SessionParts& parts) {
  const bool green = f.m.phase == "tdd_green";
  TestRun run;
  CommandSpec spec;
  spec.argv = f.m.test_command;
  spec.cwd = f.m.worktree;
  spec.timeout = cfg.test_timeout;
  spec.max_output_bytes = 1024 * 1024;
  spec.stop_on_signal = true;
  say(cfg, std::string("the TDD gate runs ") + describe_argv(spec.argv) +
               (green ? " (it must pass)" : " (it must fail)"));
  if (spec.argv.empty()) {
    run.output = "no test command was given";
  } else {
    auto r = parts.runner.run(spec);
    if (!r) {
      run.output = r.error().message;
    } else if (r->interrupted()) {
      return fail(ErrorKind::interrupted, "stopped by signal " + std::to_string(r->interrupted_by),
                  128 + r->interrupted_by);
    } else if (r->timed_out) {
      run.output = "it did not finish within its timeout";
    } else {
      run.ran = true;
      run.exit_code = r->exit_code;
      run.output = clip_tail(r->out + r->err, kTestOutputTail);
    }
  }
  const std::string log = join_path(join_path(cfg.paths.session, "tdd"),
                                    std::to_string(f.m.step) + (green ? "-green.log" : "-red.log"));
  DG_CHECK(make_directories(dirname_of(log)));
  DG_CHECK(write_file_atomic(log, "$ " + describe_argv(spec.argv) + "\nexit " +
                                      std::to_string(run.exit_code) + "\n" + run.output + "\n"));
  f = decide_tdd(std::move(f), green, run, decide_rules(cfg.rules));
  return record(cfg, f, green ? "tdd_green" : "tdd_red",
                Json{{"ran", run.ran}, {"exit", run.exit_code}, {"log", log}});
}

Status step_commit(DebugFile& f, const SessionConfig& cfg, SessionParts& parts) {
  const std::string trailer = "Devgraph-Debug";
  DG_TRY(auto hits, parts.git.find_trailer(trailer, f.m.base));
  for (const auto& h : hits)
    if (h.value == f.slug) {
      f.m.commit = h.commit;
      break;
    }
  if (f.m.commit.empty()) {
    DG_TRY(auto status, parts.git.status());
    std::set<std::string> changed;
    for (const auto& e : status) {
      changed.insert(e.path);
      if (!e.orig_path.empty()) changed.insert(e.orig_path);
    }
    std::vector<std::string> wanted = f.m.fix_files;
    if (std::string t = safe_relative_path(f.m.test_file); !t.empty()) wanted.push_back(t);
    std::vector<std::string> paths;
    for (const auto& p : wanted)
      if (changed.count(p) && std::find(paths.begin(), paths.end(), p) == paths.end())
        paths.push_back(p);
    if (!paths.empty()) {
      git::CommitRequest req;
      req.subject = "fix: " + one_line(f.resolution.fix.empty() ? f.slug : f.resolution.fix, 64);
      req.body = "Root cause: " + one_line(f.resolution.root_cause, 400);
      req.trailers = {{trailer, f.slug}};
      auto c = git::commit_paths(parts.git, paths, req);
      if (!c && c.error().kind == ErrorKind::hook) {
        // Not a failure of the session: the debugger changes the fix.
        say(cfg, c.error().message);
        f = decide_commit_refused(std::move(f), c.error().message, c.error().output,
                                  decide_rules(cfg.rules));
        return record(cfg, f, "commit_refused",
                      Json{{"hook", c.error().message}, {"files", paths}});
      }
      DG_TRY(f.m.commit, c);
      say(cfg, "committed " + join(paths, ", ") + " as " + f.m.commit.substr(0, 12));
    } else {
      say(cfg, "the fix's files show no change: nothing to commit");
    }
  }
  f.m.phase = f.m.commit.empty() ? "archive" : "deliver";
  f.next_action = f.m.commit.empty() ? "devgraph archives the resolved session"
                                     : "devgraph delivers the branch " + f.m.branch;
  f.status = status_for(f);
  return record(cfg, f, "committed", Json{{"commit", f.m.commit}});
}

Status step_deliver(DebugFile& f, const SessionConfig& cfg, SessionParts& parts) {
  DG_TRY(auto head, parts.git.rev_parse("HEAD"));
  Json delivered = {{"branch", f.m.branch}, {"head", head}};
  if (f.m.delivery == "github") {
    if (!parts.gh) return fail(ErrorKind::internal, "github delivery without a GitHub CLI");
    DG_TRY(auto remote, parts.git.remote_head("origin", f.m.branch));
    if (!remote || *remote != head) {
      say(cfg, "pushing " + f.m.branch);
      DG_CHECK(parts.git.push("origin", f.m.branch));
    }
    DG_TRY(auto found, parts.gh->find_pr(f.m.branch));
    if (!found) {
      const std::string body = join_path(cfg.paths.session, "pr-body.md");
      DG_CHECK(write_file_atomic(body, "## Debug session " + f.slug + "\n\n### Root cause\n" +
                                           f.resolution.root_cause + "\n\n### Fix\n" +
                                           f.resolution.fix + "\n\n### Verification\n" +
                                           f.resolution.verification + "\n\n### Prevention\n" +
                                           f.resolution.prevention + "\n"));
      DG_CHECK(parts.gh->create_pr(gh::CreateRequest{f.m.default_branch, f.m.branch,
                                                     one_line("fix(debug): " + f.slug, 72), body}));
      DG_TRY(found, parts.gh->find_pr(f.m.branch));
      if (!found) return fail("gh pr view cannot find the pull request just created");
    }
    delivered["pr"] = Json{{"number", found->number}, {"url", found->url}};
    say(cfg, "pull request " + found->url);
  } else {
    say(cfg, "branch " + f.m.branch + " is ready at " + head.substr(0, 12));
  }
  f.m.delivered = delivered;
  f.m.phase = "archive";
  f.next_action = "devgraph archives the resolved session";
  f.status = status_for(f);
  return record(cfg, f, "delivered", delivered);
}

Status step_archive(DebugFile& f, const SessionConfig& cfg) {
  f.m.phase = "done";
  f.m.end = "resolved";
  f.m.pending.reset();
  f.next_action = "none: resolved";
  DG_CHECK(record(cfg, f, "archived", Json{{"resolved", cfg.paths.resolved}}));
  if (path_exists(cfg.paths.file) && ::unlink(cfg.paths.file.c_str()) != 0)
    return fail("cannot remove " + cfg.paths.file + " after archiving it");
  return fsync_directory(cfg.paths.home);
}

}  // namespace

DecideRules decide_rules(const DebugRules& rules) {
  DecideRules d;
  d.max_cycles = rules.max_cycles;
  d.malformed_resumes = rules.malformed_resumes;
  for (const auto& [hint, s] : rules.specialists) d.specialist_hints.insert(hint);
  return d;
}

Status record(const SessionConfig& cfg, DebugFile& file, const std::string& event,
              const Json& detail) {
  file.updated = cfg.now();
  file.status = status_for(file);
  DG_CHECK(save(place_of(cfg, file), file));
  DG_CHECK(make_directories(cfg.paths.session));
  Json line = {{"at", file.updated},
               {"event", event},
               {"phase", file.m.phase},
               {"status", file.status},
               {"detail", detail}};
  return append_durable(cfg.paths.events, dump_py(line) + "\n");
}

Outcome outcome_of(DebugFile file) {
  Outcome o;
  const std::string phase = file.m.phase;
  if (phase == "done" && file.m.end == "resolved") {
    o.status = "DEBUG_COMPLETE";
    o.exit_code = 0;
  } else if (phase == "done") {
    o.status = "STOPPED";
    o.exit_code = 2;
  } else if (phase == "ask") {
    o.status = "WAITING";
    o.exit_code = 2;
  } else {
    o.status = "CONTINUE_REQUIRED";
    o.why =
        "the session stopped at " + phase + ": `devgraph debug continue " + file.slug + "` goes on";
    o.exit_code = 1;
  }
  o.file = std::move(file);
  return o;
}

Expected<Outcome> run_session(DebugFile f, const SessionConfig& cfg, SessionParts& parts) {
  DG_TRY(auto schema, Schema::load(return_schema_path(cfg.skill_dir)));
  if (int n = end_leftovers(cfg, f.m.step); n > 0) {
    say(cfg, "ended " + std::to_string(n) + " process group(s) a stopped session left running");
    DG_CHECK(record(cfg, f, "leftovers_ended", Json{{"groups", n}}));
  }
  while (true) {
    const std::string phase = f.m.phase;
    if (phase == "done") return outcome_of(std::move(f));
    if (phase == "launch") {
      DG_TRY(auto stopped, step_launch(f, cfg, parts, schema));
      if (stopped) return std::move(*stopped);
    } else if (phase == "ask") {
      if (!cfg.ask || !f.m.pending) return outcome_of(std::move(f));
      auto answer = cfg.ask(*f.m.pending);
      if (!answer) return outcome_of(std::move(f));
      auto next = decide_answer(f, *answer, cfg.now());
      if (!next) {
        say(cfg, next.error().message);
        continue;
      }
      const std::string id = f.m.pending->id;
      f = std::move(*next);
      DG_CHECK(record(cfg, f, "answered", Json{{"question", id}}));
    } else if (phase == "tdd_red" || phase == "tdd_green") {
      DG_CHECK(step_tdd(f, cfg, parts));
    } else if (phase == "specialist") {
      DG_CHECK(step_specialist(f, cfg, parts));
    } else if (phase == "commit") {
      DG_CHECK(step_commit(f, cfg, parts));
    } else if (phase == "deliver") {
      DG_CHECK(step_deliver(f, cfg, parts));
    } else if (phase == "archive") {
      DG_CHECK(step_archive(f, cfg));
    } else {
      return fail(ErrorKind::internal, cfg.paths.file + ": unknown phase " + py_repr(phase));
    }
  }
}

}  // namespace devgraph::debug
