// The run-state store: state.json + events.jsonl of one run directory.
//
// Every change to a run goes through RunStore. One call is one transaction:
// take the exclusive lock on RUN_DIR/.lock, load state.json (repairing the
// event log's tail, see below), apply the change to a copy, check it against
// the graph and the state schema, append its event(s), replace state.json,
// release the lock. Several processes (the orchestrator and one tech lead per
// bundle) may call it on the same run at once; the lock serializes them and
// interoperates with the reference runtime's flock on the same file.
//
// Contracts:
// - A refused change (unknown event or node, a node outside the cursor's
//   lane, a bad id, invalid --merge/--detail JSON, a state the schema
//   rejects) returns an Error and leaves every file of the run untouched.
// - Crash consistency: the event lines are appended and fdatasync'ed first,
//   then state.json is replaced atomically (temp file, fsync, rename, fsync
//   directory). A state.json therefore never names a seq that is not in
//   events.jsonl. A kill between the two steps leaves event lines past
//   state.event_seq; the next transaction truncates events.jsonl right after
//   the line whose seq equals state.event_seq (which also drops a torn last
//   line). Only the file's tail is read, so this costs O(1) per command.
//   After any crash, the next load sees seqs 1..event_seq, contiguous, each
//   event's change present in state.json.
// - Readers (read(), `show`) take no lock: the atomic replace means they see
//   the previous or the next state, never a torn one.
// - Everything the rules depend on comes from the Graph: the event
//   vocabulary, personas, lane membership, lane completion (complete_at +
//   complete_on), terminal/pause nodes, capacity signals/thresholds/actions,
//   legacy nodes. Vocabulary and persona checks apply to runs recorded under
//   graph version 4 or later only (the reference's rule).
// - Files are byte-compatible with the reference runtime: state.json is
//   Python's json.dumps(indent=2) plus a newline, events.jsonl lines are
//   json.dumps() with keys ts, seq, type, node, detail; key order is kept.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "contracts/schema.h"
#include "graph/graph.h"
#include "store/state_cache.h"
#include "util/clock.h"
#include "util/expected.h"
#include "util/fs.h"
#include "util/json.h"

namespace devgraph {

// The note every transaction leaves in RUN_DIR/.lock once the state.json
// it wrote (identified by `written`) is durable. It names the build and
// the schema that checked the file (its fingerprint), so that neither
// another build nor the same build with another schema trusts the file.
std::string written_state_note(const FileIdentity& written, const Schema& schema);

// File names inside a run directory (shared with the reference runtime).
inline constexpr const char* kStateFile = "state.json";
inline constexpr const char* kEventsFile = "events.jsonl";
inline constexpr const char* kLockFile = ".lock";
inline constexpr const char* kHandoffFile = "HANDOFF.md";
// Written at <home>/current-run when the run lives at <home>/runs/<id>.
inline constexpr const char* kCurrentRunPointer = "current-run";

// --merge / --detail values are JSON objects; an empty Json (null) means
// "not given". JSON text is parsed by parse_json_object() below so that the
// CLI and in-process callers share one error wording.
struct InitRequest {
  std::string repo;
  std::string default_branch;
  Json merge;  // deep-merged into the fresh state (may set any key)
};

struct GoRequest {  // moves the orchestrator cursor, state["node"]
  std::string node;
  std::string event;
  Json merge;   // deep-merged into the state; may not touch the cursor maps
  Json detail;  // event detail; keys override "from"/"to"
  // Optional: changes the loaded state inside the transaction, after the
  // merge (a read-modify-write under the lock, e.g. of state.bundles,
  // which drivers also write). May not touch the cursor maps; an error
  // writes nothing.
  std::function<Status(Json& state)> mutate;
};

struct MoveRequest {  // moves a bundle cursor, or a task cursor when task is set
  std::string bundle;
  std::optional<std::string> task;
  std::string node;
  std::string event;
  Json merge;   // deep-merged into the cursor record itself
  Json detail;  // event detail; keys override the generated ones
  // Path of a tasks.json whose tasks are registered on state.bundles[bundle].
  std::optional<std::string> plan_path;
};

struct EventRequest {  // records evidence without moving anything
  std::string event;
  Json detail;
  Json merge;  // deep-merged into the state; may not touch the cursor maps
  std::function<Status(Json& state)> mutate;  // as GoRequest::mutate
};

struct SignalRequest {  // grows a capacity counter (orchestrator, or a bundle's tech lead)
  std::string type;     // one of the graph's capacity signals
  long long count = 1;  // >= 0
  std::optional<std::string> bundle;
  bool reset = false;  // start a fresh context (generation + 1) before counting
};

// What one committed transaction did.
struct Committed {
  Json state;                // the state as saved
  std::vector<Json> events;  // the event records appended, in order (may be empty)
};

struct SignalOutcome {
  Committed committed;
  // {"cursor", "tier", "counters", "generation", "action"}: the reference's output.
  Json report;
};

struct HandoffOutcome {
  Committed committed;
  std::string handoff_path;  // absolute path of HANDOFF.md
};

struct ResumeOutcome {
  Committed committed;
  // {"node", "generation", "from_status", "in_flight", "blocked", "next_up"}.
  Json summary;
};

// A mutation in progress, for callers that need a change the named
// operations do not cover. The whole state is validated against the schema
// before anything is written.
class Transaction {
 public:
  virtual ~Transaction() = default;
  virtual Json& state() = 0;
  // Appends an event (seq assigned here, node = the orchestrator's node at
  // the time of the call). Refused when the type is outside the vocabulary
  // of a graph-version >= 4 run.
  virtual Status append_event(const std::string& type, Json detail) = 0;
  // The transaction's timestamp ("2026-09-03T20:00:00+00:00").
  virtual const std::string& now() const = 0;
};

class RunStore {
 public:
  // Touches nothing on disk. `run_dir` is made absolute; the graph, schema
  // and clock must outlive the store.
  RunStore(std::string run_dir, const Graph& graph, const Schema& state_schema,
           const Clock& clock = system_clock());

  const std::string& run_dir() const { return run_dir_; }
  const Graph& graph() const { return *graph_; }
  const Schema& schema() const { return *schema_; }

  // Leave the cursor maps unparsed in go, event, move and signal (see
  // store/deferred_state.h), so their cost does not grow with the number
  // of cursors. The Committed::state those calls return then holds only
  // the cursor records the call read or changed; callers that keep the
  // returned state as their view of the run must leave this off.
  // Only a state.json that this build wrote itself, checked by the same
  // schema, is read this way (RUN_DIR/.lock names that file: see
  // written_state_note()); any other is parsed and checked whole.
  void defer_cursor_maps(bool on) { defer_cursors_ = on; }
  std::string run_id() const;  // the run directory's base name

  // The current state.json, parsed; no lock (see contracts).
  Expected<Json> read() const;
  // The same without the copy: a snapshot that is never changed. With
  // cache_reads() on it is the kept one while state.json is unchanged.
  Expected<std::shared_ptr<const Json>> view() const;
  // Keep what read() and view() parsed and follow state.json by what
  // changed in it (store/state_cache.h), for a process that reads the run
  // at every decision while others write it (the orchestrator).
  void cache_reads(bool on);
  // How many times this store parsed a whole state.json: in read() and
  // view(), and in a transaction that could not leave the cursor maps
  // unparsed. A seam for tests that bound a run's reads.
  size_t whole_parses() const { return whole_parses_ + (cache_ ? cache_->whole_parses() : 0); }

  // Creates the run: refuses when state.json exists. Creates RUN_DIR when
  // missing and updates the current-run pointer.
  Expected<Committed> init(const InitRequest& request);
  Expected<Committed> go(const GoRequest& request);
  // The event's detail carries "cursor" ("B" or "B/T"), "lane_from",
  // "lane_to", "cursor_complete" when the lane completed, "plan_tasks".
  Expected<Committed> move(const MoveRequest& request);
  Expected<Committed> event(const EventRequest& request);
  // Appends CAPACITY_TIER_CHANGED only when the tier changed.
  Expected<SignalOutcome> signal(const SignalRequest& request);
  // Parks the orchestrator on the pause node and writes HANDOFF.md.
  Expected<HandoffOutcome> handoff(const std::string& reason);
  // Reopens a paused or crashed run: status running, fresh orchestrator
  // context, cursor back where it left. Updates the current-run pointer.
  Expected<ResumeOutcome> resume();

  // Runs `mutation` as one transaction (lock, load, mutate, validate, append,
  // save). If `mutation` returns an error nothing is written.
  Expected<Committed> transact(const std::function<Status(Transaction&)>& mutation);

 private:
  std::string run_dir_;
  const Graph* graph_;
  const Schema* schema_;
  const Clock* clock_;
  bool defer_cursors_ = false;
  std::shared_ptr<StateCache> cache_;
  mutable size_t whole_parses_ = 0;
};

// Parses a --merge/--detail value: empty text means {}; anything but a JSON
// object is an error naming --<flag>.
Expected<Json> parse_json_object(const std::string& text, const std::string& flag);

// Deep merge as the reference does it: nested objects merge, other values
// replace, and a key "+name" appends to the list at "name" (a non-list
// value is appended as one item). Fails when "name" holds a non-list.
Status deep_merge(Json& dst, const Json& src);

// state.json of `run_dir`, parsed, without the lock: what `show` prints.
// Needs no graph, so readers stay cheap.
Expected<Json> read_run_state(const std::string& run_dir);

// The run directories under <develop_home>/runs holding a state.json,
// newest first (their names are UTC stamps, so name order is age order).
std::vector<std::string> runs_newest_first(const std::string& develop_home);

// Where a new run starting at `now` lives: <develop_home>/runs/<UTC stamp>,
// else the next free "-NN" of that second (names still sort by age); an
// error (usage, exit 3) when the second's 99 names are taken.
Expected<std::string> new_run_dir(const std::string& develop_home,
                                  std::chrono::system_clock::time_point now);

// Bundle and task ids are one word: [A-Za-z0-9][A-Za-z0-9_.-]*.
bool is_valid_id(const std::string& id);

}  // namespace devgraph
