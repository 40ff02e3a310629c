// What the lanes (and the inbox that answers their waiting cursors) take
// from GRAPH.yaml, declared in one place: every (node, route) pair the
// engine may follow and every event type it may write. Walker::next()
// refuses a pair that is not listed, and a unit test holds both lists to
// the shipped graph (each pair is a route of that node, each event is in
// the vocabulary), so code and graph cannot drift apart without a failing
// test.
#pragma once

#include <string_view>

#include "lane/node_kind.h"

namespace devgraph::lane {

struct RouteUse {
  std::string_view node;
  std::string_view route;
};

// A route the bundle lane takes at every node of a kind (lane/node_kind.h):
// its nodes are known by what GRAPH.yaml declares about them, so a renamed
// or second review node takes a review's routes.
struct KindRouteUse {
  NodeKind kind;
  std::string_view route;
};

// Route names the engine uses.
namespace route {
inline constexpr std::string_view kDone = "done";
inline constexpr std::string_view kNeedsContext = "needs_context";
inline constexpr std::string_view kBlocked = "blocked";
inline constexpr std::string_view kConcernsActionable = "concerns_actionable";
inline constexpr std::string_view kConcernsObservational = "concerns_observational";
inline constexpr std::string_view kFootprintViolation = "footprint_violation";
// A repository hook refused a task's commit (git/git.h ErrorKind::hook).
inline constexpr std::string_view kHookRejected = "hook_rejected";
// A task's own launches left a file outside every footprint, unreported:
// its writer is sent back once to remove it or report it.
inline constexpr std::string_view kStrayWritten = "stray_written";
inline constexpr std::string_view kExhausted = "exhausted";
inline constexpr std::string_view kRecovered = "recovered";
inline constexpr std::string_view kUnresolved = "unresolved";
inline constexpr std::string_view kPassed = "passed";
inline constexpr std::string_view kFailed = "failed";
inline constexpr std::string_view kApproved = "approved";
inline constexpr std::string_view kFindings = "findings";
inline constexpr std::string_view kDoneWithConcerns = "done_with_concerns";
inline constexpr std::string_view kTaskAvailable = "task_available";
inline constexpr std::string_view kDeadlock = "deadlock";
inline constexpr std::string_view kTasksComplete = "bundle_tasks_complete";
inline constexpr std::string_view kSupplied = "supplied";
inline constexpr std::string_view kNext = "next";  // a node's only successor
inline constexpr std::string_view kActionable = "actionable";
inline constexpr std::string_view kEmpty = "empty";
inline constexpr std::string_view kAmbiguous = "ambiguous";
inline constexpr std::string_view kNewWork = "new_work";
inline constexpr std::string_view kAllBundlesComplete = "all_bundles_complete";
inline constexpr std::string_view kNoFindings = "no_findings";
inline constexpr std::string_view kIntegrationCandidates = "integration_candidates";
inline constexpr std::string_view kNoCandidates = "none_or_no_candidates";
// A discuss round as a gate (GRAPH.yaml discuss.rounds; bundle/critique_gate.h).
inline constexpr std::string_view kDiscussRevise = "discuss_revise";
inline constexpr std::string_view kDiscussBlocked = "discuss_blocked";
// The fix loop diagnosed an overdesigned plan (fix/loop.h).
inline constexpr std::string_view kReplan = "replan";
}  // namespace route

// The bundle lane, by node kind.
inline constexpr KindRouteUse kBundleRoutesTaken[] = {
    {NodeKind::plan, route::kDone},
    {NodeKind::plan, route::kNeedsContext},
    {NodeKind::plan, route::kBlocked},
    {NodeKind::plan, route::kDiscussRevise},
    {NodeKind::plan, route::kDiscussBlocked},
    {NodeKind::schedule, route::kTaskAvailable},
    {NodeKind::schedule, route::kDeadlock},
    {NodeKind::schedule, route::kTasksComplete},
    {NodeKind::verify, route::kPassed},
    {NodeKind::verify, route::kFailed},
    {NodeKind::review, route::kApproved},
    {NodeKind::review, route::kFindings},
    {NodeKind::review, route::kBlocked},
    {NodeKind::repair, route::kDone},
    {NodeKind::repair, route::kExhausted},
    {NodeKind::repair, route::kBlocked},
    {NodeKind::repair, route::kReplan},
    {NodeKind::docs, route::kDone},
    {NodeKind::docs, route::kDoneWithConcerns},
    {NodeKind::docs, route::kBlocked},
    {NodeKind::docs, route::kDiscussBlocked},
    {NodeKind::docs, route::kDiscussRevise},
};

// The other lanes, by node name.
inline constexpr RouteUse kRoutesTaken[] = {
    {"write_tdd", route::kDone},
    {"write_tdd", route::kNeedsContext},
    {"write_tdd", route::kBlocked},
    {"implement", route::kDone},
    {"implement", route::kConcernsActionable},
    {"implement", route::kConcernsObservational},
    {"implement", route::kNeedsContext},
    {"implement", route::kBlocked},
    {"verify", route::kDone},
    {"verify", route::kConcernsActionable},
    {"verify", route::kConcernsObservational},
    {"verify", route::kBlocked},
    {"commit_task", route::kFootprintViolation},
    {"commit_task", route::kHookRejected},
    {"commit_task", route::kStrayWritten},
    {"repair_task", route::kDone},
    {"repair_task", route::kExhausted},
    {"repair_task", route::kBlocked},
    {"context_recovery", route::kRecovered},
    {"context_recovery", route::kUnresolved},
    {"blocker_recovery", route::kRecovered},
    {"blocker_recovery", route::kExhausted},
    // A person answered (src/inbox/).
    {"awaiting_human", route::kSupplied},
    // The orchestrator lane.
    {"scan", route::kActionable},
    {"scan", route::kEmpty},
    {"scan", route::kAmbiguous},
    {"bundle", route::kNext},
    {"bundle_scheduler", route::kNewWork},
    {"bundle_scheduler", route::kAllBundlesComplete},
    {"bundle_scheduler", route::kBlocked},
    {"monitor_prs", route::kNext},
    {"cleanup_merged", route::kNext},
    {"audit_merged", route::kNoFindings},
    {"audit_merged", route::kFindings},
    {"audit_merged", route::kBlocked},
    {"audit_triage", route::kNext},
    // The clean lane (src/clean/).
    {"clean_discover", route::kNext},
    {"clean_classify", route::kIntegrationCandidates},
    {"clean_classify", route::kNoCandidates},
    {"clean_integrate", route::kNext},
    {"clean_verify_integration", route::kNext},
    {"clean_cleanup", route::kNext},
    {"clean_report", route::kNext},
};

// Event types the engine writes.
namespace event {
inline constexpr std::string_view kBundleStarted = "BUNDLE_STARTED";
inline constexpr std::string_view kPlanDone = "PLAN_DONE";
inline constexpr std::string_view kTaskStarted = "TASK_STARTED";
inline constexpr std::string_view kTddDone = "TDD_DONE";
inline constexpr std::string_view kImplementDone = "IMPLEMENT_DONE";
inline constexpr std::string_view kVerifyDone = "VERIFY_DONE";
inline constexpr std::string_view kTaskCommitted = "TASK_COMMITTED";
inline constexpr std::string_view kFootprintViolation = "FOOTPRINT_VIOLATION";
inline constexpr std::string_view kTaskRepairDone = "TASK_REPAIR_DONE";
inline constexpr std::string_view kConcernTriaged = "CONCERN_TRIAGED";
inline constexpr std::string_view kCommitHookRejected = "COMMIT_HOOK_REJECTED";
inline constexpr std::string_view kStraySentBack = "STRAY_SENT_BACK";
inline constexpr std::string_view kTasksComplete = "BUNDLE_TASKS_COMPLETE";
inline constexpr std::string_view kVerifyPassed = "BUNDLE_VERIFY_PASSED";
inline constexpr std::string_view kVerifyFailed = "BUNDLE_VERIFY_FAILED";
inline constexpr std::string_view kReviewApproved = "REVIEW_APPROVED";
inline constexpr std::string_view kReviewFindings = "REVIEW_FINDINGS";
inline constexpr std::string_view kRepairCommitted = "BUNDLE_REPAIR_COMMITTED";
inline constexpr std::string_view kDocReviewFindings = "DOC_REVIEW_FINDINGS";
inline constexpr std::string_view kDiscussRoundDone = "DISCUSS_ROUND_DONE";
// A fix loop in repair_bundle stopped short of SHIP (src/fix/).
inline constexpr std::string_view kFixDiagnosed = "FIX_DIAGNOSED";
// ... and sent the bundle back to plan_bundle (route replan).
inline constexpr std::string_view kBundleReplanned = "BUNDLE_REPLANNED";
inline constexpr std::string_view kPrCreated = "PR_CREATED";
inline constexpr std::string_view kBranchReady = "BRANCH_READY";
inline constexpr std::string_view kAutoMergeEnabled = "AUTO_MERGE_ENABLED";
inline constexpr std::string_view kAutoMergeUnavailable = "AUTO_MERGE_UNAVAILABLE";
inline constexpr std::string_view kPersonaDispatched = "PERSONA_DISPATCHED";
inline constexpr std::string_view kMalformedResult = "MALFORMED_RESULT";
inline constexpr std::string_view kNeedsContext = "NEEDS_CONTEXT";
inline constexpr std::string_view kBlocked = "BLOCKED";
inline constexpr std::string_view kRecovered = "RECOVERED";
inline constexpr std::string_view kRecoveryExhausted = "RECOVERY_EXHAUSTED";
inline constexpr std::string_view kAwaitingHuman = "AWAITING_HUMAN";
inline constexpr std::string_view kNote = "NOTE";
// A run at its terminal interrupt reopened by a person's answer (src/inbox/).
inline constexpr std::string_view kRunResumed = "RUN_RESUMED";
// The orchestrator lane.
inline constexpr std::string_view kScanDone = "SCAN_DONE";
inline constexpr std::string_view kBundlesFormed = "BUNDLES_FORMED";
inline constexpr std::string_view kIntakeDone = "INTAKE_DONE";
inline constexpr std::string_view kTechLeadDone = "TECH_LEAD_DONE";
inline constexpr std::string_view kTechLeadBlocked = "TECH_LEAD_BLOCKED";
inline constexpr std::string_view kTechLeadHandoff = "TECH_LEAD_HANDOFF";
inline constexpr std::string_view kAllBundlesComplete = "ALL_BUNDLES_COMPLETE";
inline constexpr std::string_view kRunComplete = "RUN_COMPLETE";
inline constexpr std::string_view kHumanRequired = "HUMAN_REQUIRED";
// After delivery (orchestrator/after_delivery.h).
inline constexpr std::string_view kPrChecksInspected = "PR_CHECKS_INSPECTED";
inline constexpr std::string_view kCiFailureReported = "CI_FAILURE_REPORTED";
inline constexpr std::string_view kMergeWindowInspected = "MERGE_WINDOW_INSPECTED";
inline constexpr std::string_view kCleanupDone = "CLEANUP_DONE";
inline constexpr std::string_view kAuditDone = "AUDIT_DONE";
inline constexpr std::string_view kAuditTriaged = "AUDIT_TRIAGED";
inline constexpr std::string_view kAuditIssuesFiled = "AUDIT_ISSUES_FILED";
inline constexpr std::string_view kAuditMarkerAdvanced = "AUDIT_MARKER_ADVANCED";
inline constexpr std::string_view kRemediationBundled = "REMEDIATION_BUNDLED";
inline constexpr std::string_view kOrchestratorObservation = "ORCHESTRATOR_OBSERVATION";
inline constexpr std::string_view kOrchestratorCorrection = "ORCHESTRATOR_CORRECTION";
// The clean lane.
inline constexpr std::string_view kCleanDiscovered = "CLEAN_DISCOVERED";
inline constexpr std::string_view kStrategyResolved = "STRATEGY_RESOLVED";
inline constexpr std::string_view kCleanClassified = "CLEAN_CLASSIFIED";
inline constexpr std::string_view kBranchIntegrated = "BRANCH_INTEGRATED";
inline constexpr std::string_view kRebaseConflict = "REBASE_CONFLICT";
inline constexpr std::string_view kMergeConflict = "MERGE_CONFLICT";
inline constexpr std::string_view kIntegrationVerified = "INTEGRATION_VERIFIED";
inline constexpr std::string_view kIntegrationUnverified = "INTEGRATION_UNVERIFIED";
inline constexpr std::string_view kCleanCleanupDone = "CLEAN_CLEANUP_DONE";
inline constexpr std::string_view kCleanReportDone = "CLEAN_REPORT_DONE";
}  // namespace event

inline constexpr std::string_view kEventsWritten[] = {
    event::kBundleStarted,
    event::kPlanDone,
    event::kTaskStarted,
    event::kTddDone,
    event::kImplementDone,
    event::kVerifyDone,
    event::kTaskCommitted,
    event::kFootprintViolation,
    event::kTaskRepairDone,
    event::kConcernTriaged,
    event::kCommitHookRejected,
    event::kStraySentBack,
    event::kTasksComplete,
    event::kVerifyPassed,
    event::kVerifyFailed,
    event::kReviewApproved,
    event::kReviewFindings,
    event::kRepairCommitted,
    event::kDocReviewFindings,
    event::kDiscussRoundDone,
    event::kFixDiagnosed,
    event::kBundleReplanned,
    event::kPrCreated,
    event::kBranchReady,
    event::kAutoMergeEnabled,
    event::kAutoMergeUnavailable,
    event::kPersonaDispatched,
    event::kMalformedResult,
    event::kNeedsContext,
    event::kBlocked,
    event::kRecovered,
    event::kRecoveryExhausted,
    event::kAwaitingHuman,
    event::kNote,
    event::kRunResumed,
    event::kScanDone,
    event::kBundlesFormed,
    event::kIntakeDone,
    event::kTechLeadDone,
    event::kTechLeadBlocked,
    event::kTechLeadHandoff,
    event::kAllBundlesComplete,
    event::kRunComplete,
    event::kHumanRequired,
    event::kPrChecksInspected,
    event::kCiFailureReported,
    event::kMergeWindowInspected,
    event::kCleanupDone,
    event::kAuditDone,
    event::kAuditTriaged,
    event::kAuditIssuesFiled,
    event::kAuditMarkerAdvanced,
    event::kRemediationBundled,
    event::kOrchestratorObservation,
    event::kOrchestratorCorrection,
    event::kCleanDiscovered,
    event::kStrategyResolved,
    event::kCleanClassified,
    event::kBranchIntegrated,
    event::kRebaseConflict,
    event::kMergeConflict,
    event::kIntegrationVerified,
    event::kIntegrationUnverified,
    event::kCleanCleanupDone,
    event::kCleanReportDone,
};

// The event a node's own outcome records when its cursor moves on (done,
// or concerns that need no repair); a repair is always CONCERN_TRIAGED.
struct NodeEvent {
  std::string_view node;
  std::string_view event;
};
inline constexpr NodeEvent kNodeDoneEvents[] = {
    {"plan_bundle", event::kPlanDone},       {"write_tdd", event::kTddDone},
    {"implement", event::kImplementDone},    {"verify", event::kVerifyDone},
    {"repair_task", event::kTaskRepairDone}, {"repair_bundle", event::kRepairCommitted},
};

// The event `node` records when it is done ("" when it has none).
constexpr std::string_view done_event(std::string_view node) {
  for (const auto& e : kNodeDoneEvents)
    if (e.node == node) return e.event;
  return {};
}

}  // namespace devgraph::lane
