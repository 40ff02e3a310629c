// The orchestrator's decisions about issues, as pure functions over data:
// which open issues are work (a safety rule: issue text on a public
// repository is written by strangers), how they are grouped into bundles
// (GRAPH.yaml `bundling`), the branch a bundle gets, and the spec its
// personas read.
//
// Contracts:
// - eligible() excludes, with a reason each: closed issues; local issues
//   already delivered on a ready branch (waiting to be merged); GitHub issues
//   without the intake label (unless every open issue is work: local
//   issues, or --all-issues); an epic itself (the epic label, or the
//   parent of another open issue); an issue an open pull request already
//   closes; an issue already in one of this run's bundles; an issue `held`
//   by a bundle of another run that waits for a person (the reason is the
//   map's text; orchestrator/ownership.h). The rest, in number order, is
//   work.
// - form_bundles() is deterministic: one issue per bundle, except that
//   issues with the same parent share bundles of at most
//   max_issues_per_bundle (in number order); a P0 issue ships alone.
//   Bundle ids continue the run's numbering (b<next>, b<next+1>, ...).
// - branch_slug() keeps ASCII letters and digits (lower-cased), turns every
//   other run of bytes into one '-', trims '-' at both ends and bounds the
//   length; a title with nothing usable gives "work". Untrusted bytes never
//   reach a branch name any other way.
// - spec_text() fences every title and body as untrusted data; nothing an
//   issue says can close the fence (a fence line inside the text is
//   neutralised).
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "issues/issue.h"
#include "util/json.h"

namespace devgraph::orchestrator {

struct IntakePolicy {
  // Every open issue is work (local issues, or --all-issues); else only
  // those carrying `label`.
  bool every_open_issue = false;
  std::string label = "devgraph";
  std::string epic_label = "epic";
};

struct Exclusion {
  long long number = 0;
  std::string why;
};

struct Eligibility {
  std::vector<issues::Issue> work;  // in number order
  std::vector<Exclusion> excluded;  // in number order
};

Eligibility eligible(const std::vector<issues::Issue>& open, const IntakePolicy& policy,
                     const std::set<long long>& closed_by_open_prs,
                     const std::set<long long>& already_bundled,
                     const std::map<long long, std::string>& held = {});

struct FormedBundle {
  std::string id;  // "b3"
  std::string title;
  std::string branch;  // develop/<id>-<slug of the first title>
  std::vector<long long> issues;
};

std::vector<FormedBundle> form_bundles(const std::vector<issues::Issue>& work,
                                       const IntakeRules& rules, int next_index);

std::string branch_slug(const std::string& title, size_t max_length = 40);

// The bundle's spec.md: its issues (titles, bodies, labels), fenced as
// data, then the repository's test and build commands (`commands` is
// state.commands).
std::string spec_text(const FormedBundle& bundle, const std::vector<issues::Issue>& issues,
                      const Json& commands);

// Whether the issue carries `label` (ASCII case ignored, as on GitHub).
bool has_label(const issues::Issue& issue, const std::string& label);

// A digest of what a person may edit (title, body, labels): the
// orchestrator notices an issue edited after it was bundled.
std::string issue_digest(const issues::Issue& issue);

}  // namespace devgraph::orchestrator
