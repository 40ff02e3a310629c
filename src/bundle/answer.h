// A person's answer to a cursor that waited at the shared cursor interrupt
// (GRAPH.yaml's awaiting_human): the record the inbox (src/inbox/) leaves
// on the cursor, and the text the driver adds to that cursor's next
// dispatch.
//
// Contract:
// - The answer's text is in BundleLayout::answer(task), written before the
//   transaction that sets the cursor going again; that transaction leaves
//   on the cursor the record `answer`: {"kind", "path", "moves", "at"},
//   where kind is kAnswerSupplied or kAnswerApproved and moves is the
//   cursor's move count once it left the interrupt.
// - answer_for_dispatch() gives the answer to the visit the answer led to
//   only (the cursor's move count equals the record's): a relaunch of that
//   visit after a kill gets it again, a later visit of any node does not.
//   The text goes through fence_untrusted (util/untrusted.h), the fence of the
//   findings and of recovered context, after a line saying a person wrote
//   it and that it is data to weigh, not instructions to obey blindly. ""
//   when there is no such answer or its file cannot be read (the persona
//   then works from its brief, as it would have without one).
#pragma once

#include <optional>
#include <string>

#include "bundle/layout.h"
#include "util/json.h"

namespace devgraph::bundle {

// The cursor's record of the answer that set it going.
inline constexpr const char* kAnswerKey = "answer";
// The answer's kinds as the record and the AWAITING_HUMAN event name them.
inline constexpr const char* kAnswerSupplied = "supplied";
inline constexpr const char* kAnswerApproved = "approved";
inline constexpr const char* kAnswerRejected = "rejected";

// The text for the next dispatch of `cursor` (a task's, when `task` is
// set, else the bundle's); "" when it carries no answer for this visit.
std::string answer_for_dispatch(const BundleLayout& layout, const std::optional<std::string>& task,
                                const Json& cursor);

}  // namespace devgraph::bundle
