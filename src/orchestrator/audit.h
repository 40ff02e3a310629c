// The post-merge audit's decisions (GRAPH.yaml `audit_merged`,
// `audit_triage`), as pure functions over data: the diff range an auditor
// gets, the findings it reports, which of them become issues and which a
// remediation bundle, how a finding is recognised when it is reported
// again, and how far the audit marker may move. The lane's effects
// (after_delivery.h: dispatch, gh, files) call these.
//
// Contract:
// - parse_findings() rejects a result whose findings are not the persona
//   contract's shape (an object with severity Critical|High|Medium|Low,
//   file and description strings) with one line naming the entry.
// - finding_fingerprint() is stable across runs and machines and ignores
//   what moves without the finding changing: the line number, case,
//   punctuation and spacing of the description.
// - triage() never files a finding whose fingerprint is already known, nor
//   the same one twice in one window; nor puts in a remediation bundle a
//   Critical or High finding whose fingerprint an earlier bundle took (the
//   same window audited again).
// - advance_marker() never moves past a PR that is not audited.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "util/expected.h"
#include "util/json.h"

namespace devgraph::orchestrator {

// What an auditor diffs for one merged PR: the merge commit against its
// first parent, or (a squash merge: one parent) the PR's own diff.
struct AuditRange {
  bool pr_diff = false;   // `gh pr diff <number>`
  std::string git_range;  // "<merge>^1..<merge>" when !pr_diff
  std::string describe() const;
};
AuditRange audit_range(const std::string& merge_commit, int parents);

enum class Severity { critical, high, medium, low };
std::string_view severity_name(Severity s);

struct Finding {
  Severity severity = Severity::low;
  std::string file;
  std::optional<long long> line;
  std::string description;
  std::string rule;  // optional: the rule or check it breaks
  std::string evidence;
};

// The `findings` of a merge-auditor's result (absent: none).
Expected<std::vector<Finding>> parse_findings(const Json& result);

// 16 hex digits over file, rule and the normalised description.
std::string finding_fingerprint(const Finding& finding);
// The line an issue body carries so a later audit recognises the finding.
std::string fingerprint_line(const std::string& fingerprint);
// Every fingerprint line in an issue body.
std::set<std::string> fingerprints_in(std::string_view body);

struct Triage {
  std::vector<Finding> remediation;  // Critical and High not remediated before
  std::vector<Finding> issues;       // Medium and Low not filed before
  size_t already_filed = 0;          // Medium and Low known by fingerprint
  size_t already_remediated = 0;     // Critical and High known by fingerprint
};
// `filed`: the fingerprints of the issues filed; `remediated`: those an
// earlier remediation bundle took.
Triage triage(const std::vector<Finding>& findings, const std::set<std::string>& filed,
              const std::set<std::string>& remediated = {});

// The audit marker file's commit: 40 (or 64) hex digits and a newline.
Expected<std::string> parse_marker(std::string_view text);
std::string marker_text(const std::string& commit);

// One PR of a window, in merge order (oldest first).
struct WindowEntry {
  std::string merge_commit;
  bool audited = false;
};
// The merge commit the marker may move to: the last one before the first
// PR that is not audited; nullopt when the first is not (or none given).
std::optional<std::string> advance_marker(const std::vector<WindowEntry>& window);

}  // namespace devgraph::orchestrator
