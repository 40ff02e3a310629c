// The debugger's structured return: the `debug` object of its RESULT_JSON,
// checked against skill/contracts/debug-return.schema.json and then read
// into a DebugReturn. Six types, each with its own fields:
//   ROOT_CAUSE_FOUND            root_cause, fix_direction, specialist_hint
//   TDD_CHECKPOINT              test: {command (argv words), file, name}
//   DEBUG_COMPLETE              resolution: {root_cause, fix, verification,
//                               prevention, files_changed}
//   CHECKPOINT_REACHED          checkpoint: {type, details, awaiting, options}
//   INVESTIGATION_INCONCLUSIVE  checked, remaining
//   FIX_REJECTED_BY_GUARDRAIL   guardrail: {signal, evidence}
// and, with any type, what the debug file records: hypothesis,
// next_action, evidence entries ({checked, found, implication}) and
// eliminated hypotheses ({hypothesis, evidence}).
//
// Contract:
// - parse_return() fails (one line naming the field) when the object is
//   missing, breaks the schema or lacks its type's fields; nothing of a
//   failed return is used. Every text is clean_text()ed; files_changed
//   keeps only relative paths without `..` (a path is never taken from
//   untrusted text unfiltered); a test command is argv, never a shell line.
// - fence_untrusted() (util/untrusted.h) is the one way a person's or a persona's words reach a
//   prompt: between DATA_START and DATA_END lines, under a line saying it
//   is data, with any marker inside the text defused so the text cannot end
//   the block.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "contracts/schema.h"
#include "util/expected.h"
#include "util/json.h"

namespace devgraph::debug {

enum class ReturnType {
  root_cause_found,
  tdd_checkpoint,
  debug_complete,
  checkpoint_reached,
  investigation_inconclusive,
  fix_rejected_by_guardrail,
};
std::string_view return_name(ReturnType type);

struct EvidenceIn {
  std::string checked, found, implication;
};

struct DebugReturn {
  ReturnType type = ReturnType::investigation_inconclusive;
  std::string hypothesis, next_action;
  std::vector<EvidenceIn> evidence;
  std::vector<std::pair<std::string, std::string>> eliminated;  // hypothesis, evidence
  // ROOT_CAUSE_FOUND (root_cause also for DEBUG_COMPLETE's resolution)
  std::string root_cause, fix_direction, specialist_hint;
  // TDD_CHECKPOINT
  std::vector<std::string> test_command;
  std::string test_file, test_name;
  // DEBUG_COMPLETE
  std::string fix, verification, prevention;
  std::vector<std::string> files_changed;
  // CHECKPOINT_REACHED
  std::string checkpoint_type, details, awaiting;
  std::vector<std::string> options;
  // INVESTIGATION_INCONCLUSIVE
  std::vector<std::string> checked, remaining;
  // FIX_REJECTED_BY_GUARDRAIL
  std::string signal, signal_evidence;
};

// `result` is the persona's whole RESULT_JSON object; its `debug` member
// is the return.
Expected<DebugReturn> parse_return(const Json& result, const Schema& schema);

// <skill>/contracts/debug-return.schema.json
std::string return_schema_path(const std::string& skill_dir);

// A path the debugger names, as a pathspec: relative, normalized, no `..`
// and no `.git` component; "" when it is not one.
std::string safe_relative_path(std::string_view path);


}  // namespace devgraph::debug
