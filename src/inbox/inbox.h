// A person's inbox: every bundle and task of a repository's live runs that
// waits for a person, and the answer that sets one going again, so that
// nobody edits JSON to unblock a run. `devgraph inbox` lists the items,
// `devgraph answer` answers one; the orchestrator (`devgraph run`)
// relaunches the drivers of the bundles an answer set going.
//
// Contract:
// - items_of_run() reads the state and looks for files in the run (which
//   evidence exists); it writes nothing. An item is a bundle or task cursor
//   whose status is "waiting_human", or a state.bundles entry whose status
//   is "parked" none of whose cursors waits (a bundle whose driver kept
//   dying, say). A bundle whose entry is "rejected", "delivered" or
//   "stopped" has no items, nor does a cursor whose ids are not ids.
//   Items come sorted by key.
// - reason: a waiting cursor's `recovery_why` (bundle/recovery.h), which
//   the driver writes on the cursor at every park with the AWAITING_HUMAN
//   event's blocker; a parked entry's `parked_reason`. The event log is
//   not read: the cursor is the one record every park updates.
// - evidence: the newest existing file of those a person opens first (a
//   task's findings.md and its personas' result files; for the bundle,
//   repair-findings.md and the bundle-level personas' result files), else
//   the bundle's run_bundle.log, else "". question: what the persona of
//   that result file asked for (its missing_context, else its blockers),
//   else a plain question naming the item.
// - since: the cursor's updated_at (the park); for a parked entry its
//   parked_at, else the bundle cursor's updated_at.
// - list_items() reads develop_home/runs/*/state.json: the items of every
//   run whose status is running, handoff or human_required, newest run
//   first (started_at, then run id). A missing runs directory is an empty
//   inbox; a run whose state cannot be read is left out.
// - answer() decides under the run's lock, in one store transaction, that
//   the item still waits (it is among items_of_run() of the state read
//   there); if not, ErrorKind::refused, one line, and nothing is written.
//   Then the answer's text is written to BundleLayout::answer(task)
//   (atomically), before anything is recorded. What is recorded:
//   * text / approve, a waiting cursor: it leaves the cursor interrupt by
//     the interrupt's `supplied` route, walked with lane::Walker, where
//     retry_previous is the node of the cursor's own lane it stood on
//     before its detour (previous_node; when that is a shared node, the
//     last node of its own lane the event log moved it to: the replay's
//     return point). One AWAITING_HUMAN event carries the move (the
//     store's move fields "bundle", "task", "cursor", "lane_from",
//     "lane_to") and "answer" ("supplied" | "approved"), "answer_path".
//     The cursor's status is "active" again and it carries the `answer`
//     record its next dispatch reads (bundle/answer.h). Its recovery
//     budgets stay as they were: an answer buys one more attempt, and a
//     persona that stops again comes back to the inbox.
//   * text / approve, a parked entry: no cursor moves; the event has no
//     lane_to; the bundle cursor, when there is one, gets the answer
//     record for its current visit.
//   * both: the bundle entry's status becomes "running" (so the
//     orchestrator relaunches its driver); a bundle parked for its
//     lifetime budget (bundle/budget.h) may spend one more budget's worth
//     (budget_rounds + 1, also in the event's detail). A run at a terminal interrupt
//     (human_required) is reopened: status "running", its node back to
//     state.previous_node when that is a node of the orchestrator's lane,
//     else that lane's scheduler, recorded as RUN_RESUMED with "from",
//     "to", "from_status" and "answered" (the key).
//   * reject: no cursor moves; the bundle entry's status becomes
//     "rejected" (an entry is added when the bundle had none), with
//     "rejected_reason" (the text) when one is given; one AWAITING_HUMAN
//     event without lane_to says "answer": "rejected"; the run is reopened
//     (as above) only when nothing else in it waits any more, so that the
//     next `devgraph run` finishes it rather than starting a new run that
//     takes the bundle's issues again.
//   Errors: refused (the item no longer waits), usage (an id that is not
//   an id), internal (the graph has no cursor interrupt or supplied
//   route, or the cursor's return point cannot be found), and the store's
//   own errors (a state the schema refuses: nothing written but the
//   answer file, which the next answer replaces).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "store/run_store.h"
#include "util/expected.h"
#include "util/json.h"

namespace devgraph::inbox {

struct Item {
  std::string run_id, run_dir, bundle;
  std::optional<std::string> task;
  std::string key;  // "B" or "B/T"
  std::string reason;
  // A path a person can open: the bundle's run_bundle.log or the task's
  // findings / result file, whichever is most telling and exists.
  std::string evidence;
  std::string question;
  std::string since;  // when it was parked, from the cursor's updated_at

  Json to_json() const;
};

std::vector<Item> items_of_run(const Json& state, const std::string& run_dir);

Expected<std::vector<Item>> list_items(const std::string& develop_home);

// The runs of the repository containing `repo_dir` (`~` and a relative
// path taken as a shell would): the placement guard's develop_home. Not a
// git repository: ErrorKind::usage, exit code 3 (the verbs' usage code).
Expected<std::string> develop_home_of(const std::string& repo_dir);

// "B" or "B/T" as bundle and task; ErrorKind::usage (exit code 3) when
// either part is not an id.
struct Key {
  std::string bundle;
  std::optional<std::string> task;
};
Expected<Key> parse_key(const std::string& key);

enum class AnswerKind { text, approve, reject };

struct Answered {
  std::string answer_path;
  // The node the cursor continues at; nullopt when no cursor moved (a
  // parked entry, a rejection).
  std::optional<std::string> continues_at;
  bool reopened = false;  // the run left its terminal interrupt
  Committed committed;
};

// `text` is the answer (text), unused (approve), or the reason (reject,
// may be empty).
Expected<Answered> answer(RunStore& store, const Graph& graph, const Item& item, AnswerKind kind,
                          const std::string& text);

}  // namespace devgraph::inbox
