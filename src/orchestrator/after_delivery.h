// The orchestrator lane after delivery (GRAPH.yaml `monitor_prs`,
// `cleanup_merged`, `audit_merged`, `audit_triage`): delivered pull
// requests are inspected and reacted to, merged work is cleaned away, and
// merged pull requests are audited by merge-auditor personas whose
// findings come back as issues and a remediation bundle. Each step is one
// visit of its node and ends by moving the orchestrator on (or, when a
// stop signal came, with ErrorKind::interrupted).
//
// Contracts:
// - Every effect is recorded, and every step can be taken again after a
//   kill at any instant without doing an effect twice:
//   * monitor_prs asks auto-merge at most once per pull request (the answer
//     is recorded in state.prs and final; one the bundle's create_pr already
//     got is recorded, not asked again), reports a failing check once per
//     head commit and set of failing checks, and starts a repair cycle in
//     one transaction (the bundle cursor back at repair_bundle, the entry
//     running, the cycle counted), so a kill never spends a cycle twice.
//     A pull request of an earlier, complete run's bundle that is due a
//     repair or a park parks that bundle in that run, under its lock, in
//     one transaction (entry parked, the run human_required, its review
//     counts unchanged), so its inbox item lists it and an answer reopens
//     that run, whose own watch then reacts.
//   * cleanup_merged removes only what cleanup.h allows (canonical, clean,
//     merged, pushed; never --force, never -D), never a worktree of a bundle
//     of this run that is not delivered, nor a branch of another run's
//     bundle that waits for a person (held_branches).
//   * audit_merged gives each pull request of the window one auditor child
//     (`devgraph audit-merge`, orchestrator/merge_audit.h) whose result file
//     makes a relaunch free; a child that ends without one is relaunched
//     within the node's retry budget, then that pull request is blocked.
//   * audit_triage looks up the findings already filed (by fingerprint in
//     the issue bodies) before filing, so a kill after `gh issue create`
//     files nothing twice; the remediation bundle carries its window's key
//     and is added once per window, and its findings' fingerprints go to
//     <develop_home>/audit/remediated (after the bundle is in state), so
//     the same window audited again (its marker restored) bundles none of
//     them twice. Each auditor launch is a PERSONA_DISPATCHED event (handle
//     and cursor "audit-<key>", ended by that key's AUDIT_DONE).
//   * The audit marker (<develop_home>/last-audit, the reference's format:
//     a commit and a newline) moves only past audited pull requests, with
//     the ones audited beyond it listed in last-audit.audited, both written
//     atomically, so no pull request is audited twice and none is skipped.
// - Untrusted text (check logs, review comments, finding descriptions, PR
//   titles) reaches a persona only inside fence_untrusted (util/untrusted.h), and a
//   GitHub issue only as a quoted body, never a title unclipped, an argv
//   flag, a path or a branch name.
// - gh and git failures that may clear are retried by the caller's retry
//   (OrchestratorConfig::source_backoff); an answer gh never gives, or a
//   pull request whose head branch is not devgraph's, is one line and that
//   pull request is left alone.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "bundle/crash_points.h"
#include "gh/gh.h"
#include "git/repo.h"
#include "graph/graph.h"
#include "orchestrator/drivers.h"
#include "proc/command.h"
#include "store/run_store.h"
#include "util/expected.h"
#include "util/json.h"

namespace devgraph::orchestrator {

// What the orchestrator lends the steps: its moves, records and waits.
struct LaneOps {
  std::function<Expected<Json>()> state;
  // Follow `route` from the current node, recording `event`.
  std::function<Status(const std::string& route, const std::string& event, Json detail,
                       std::function<Status(Json&)> mutate)>
      go;
  std::function<Status(const std::string& event, Json detail, std::function<Status(Json&)> mutate)>
      record;
  std::function<void(const std::string& line)> line;
  // Runs `call` again with back-off while it fails in a way that may clear.
  std::function<Status(const std::string& what, const std::function<Status()>& call)> retry;
  // The stop signal seen while a step waited (0: none).
  std::function<void(int signal)> stopped;
};

struct AfterDeliveryConfig {
  std::string delivery = "local";  // "github" | "local"
  std::string default_branch = "main";
  std::string merge_policy = "never";  // "never" | "auto_when_checks_pass"
  std::string develop_home;            // where last-audit and audit/issues live
  std::string repo_top;                // the primary clone
  std::string audit_label = "devgraph-audit";
  // The canonical worktree of a branch (the placement guard's answer).
  std::function<std::string(const std::string& branch)> worktree_for;
  // The auditor child of one window entry (`devgraph audit-merge RUN --key K`).
  std::function<DriverSpec(const std::string& key)> audit_driver_for;
  int max_parallel_audits = 3;
  // Branches of other runs' bundles that wait for a person: cleanup_merged
  // never takes them, merged-looking or not (orchestrator/ownership.h).
  std::set<std::string> held_branches;
  // The bundle's own test and build commands, run to reproduce a failing check.
  std::chrono::milliseconds command_timeout{std::chrono::minutes(30)};
  // Local delivery: the head each delivered branch had when it was
  // delivered (the local issues record it). A branch that moved on after
  // that head was merged is still a merged branch whose worktree holds
  // work: preserved and reported, not passed over.
  std::function<std::map<std::string, std::string>()> delivered_heads;
  // The next free bundle number (ids and branches never repeat).
  std::function<int(const Json& state)> next_bundle_index;
  // Called once a bundle is in state, so its number stays taken.
  std::function<Status(const Json& state)> remember_bundle_index;
};

struct AfterDeliveryParts {
  RunStore& store;
  const Graph& graph;
  gh::Gh* gh;  // null for local delivery
  git::RepoQueries& repo;
  CommandRunner& runner;
  DriverPool& drivers;
  bundle::CrashPoints& crash;
};

// The audit marker's files.
std::string marker_path(const std::string& develop_home);
std::string audited_path(const std::string& develop_home);
// Local delivery: the merged branches of the last window that are not
// audited yet (one JSON object per line: branch, merge_commit), so the next
// window holds them after their branches are cleaned away.
std::string pending_path(const std::string& develop_home);
// Writes the marker at `commit` when there is none yet (a repository's
// first run audits what merges from then on). Does nothing when one exists.
Status init_marker(const std::string& develop_home, const std::string& commit);

// The key of a window entry's auditor: "r<round>-pr-<n>" or
// "r<round>-branch-<slug>", [a-z0-9._-] only.
std::string audit_key(int round, long long pr, const std::string& branch);

// The summary parts of a run's RESULT_JSON: "prs", "cleanup", "audit".
Json after_delivery_result(const Json& state);
std::string after_delivery_summary(const Json& result);

class AfterDelivery {
 public:
  AfterDelivery(AfterDeliveryConfig config, AfterDeliveryParts parts, LaneOps ops);
  Status monitor_prs();
  Status cleanup_merged();
  Status audit_merged();
  Status audit_triage();

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace devgraph::orchestrator
