// Concern triage: what a writer's or verifier's DONE_WITH_CONCERNS is worth.
// A correctness or scope concern (and any structured finding that is not
// marked minor) is actionable: the task goes to its repair node by the
// node's concerns_actionable route. Anything else is observational: the
// task goes on by concerns_observational (implement to verify, verify to the
// commit) with the concern recorded in the bundle's result.
//
// Contract:
// - classify_concern() and classify_finding() are pure and total: every
//   text gets a kind. A concern that says the problem is not this task's
//   (pre-existing, unrelated, for a follow-up) is observational whatever
//   else it says; one that names a defect (fails, wrong, crash, off by
//   one, does not handle, ...) is correctness; one that names work outside
//   the brief or footprint is scope; the rest (suggestions, "consider",
//   design notes) is observational.
// - triage() reads only DONE_WITH_CONCERNS results' concerns, and every
//   result's findings; each item keeps the persona that raised it, so an
//   event names who raised a concern, never who happened to answer last.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "bundle/dispatch.h"
#include "util/json.h"

namespace devgraph::bundle {

enum class ConcernKind { observational, correctness, scope };

std::string_view kind_name(ConcernKind kind);
ConcernKind classify_concern(std::string_view text);
// A finding object: observational only when its severity says so (minor,
// nit, suggestion, info, observation); a finding without one is a defect.
ConcernKind classify_finding(const Json& finding);

struct RaisedConcern {
  std::string persona;  // who raised it
  std::string text;     // the concern, or the finding as JSON text
  ConcernKind kind = ConcernKind::observational;
  bool finding = false;  // a structured finding (text is its JSON)
  std::string file;      // the finding's "file" (or "path")
};

struct Triage {
  std::vector<RaisedConcern> items;  // in the order the results were given

  bool actionable() const;
  // The texts of the actionable items, or of the observational ones.
  std::vector<std::string> texts(bool actionable) const;
  // The personas that raised the actionable items (else all items), each
  // once, in order.
  std::vector<std::string> raised_by() const;
  // {"kind": actionable|observational, "raised_by": [...], "concerns":
  // [{"persona", "kind", "text"}]}: the triage on the event that records it.
  Json to_json() const;
};

Triage triage(const std::vector<const PersonaResult*>& results);

}  // namespace devgraph::bundle
