// The bundle's record of what happened: cursor moves and events through the
// RunStore (state.json and events.jsonl), and the diagnostic log
// (run_bundle.log). The driver's parts write only through a Journal, so
// every one of them sees the same state and a refused change is never lost.
//
// Contract:
// - move() and event() are one store transaction each. A change the store
//   refuses comes back as an Error and changes nothing; the Journal's state
//   is then what it was. Callers never ignore it: a refused move means the
//   engine and the run disagree, and the bundle stops there.
// - move() passes the crash points `move:<cursor>/<EVENT>` before the
//   transaction and `moved:<cursor>/<EVENT>` after it (<cursor> is b1 or
//   b1/T2).
// - log() appends one JSON line (ts, bundle, event, fields) to
//   run_bundle.log with no fsync (the log is diagnostic) and hands it to
//   on_log.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bundle/crash_points.h"
#include "bundle/layout.h"
#include "store/run_store.h"
#include "util/expected.h"
#include "util/json.h"

namespace devgraph::bundle {

struct JournalHooks {
  std::function<void(const Json&)> on_log;    // each log record; may be empty
  std::function<void(const Json&)> on_state;  // state.json after each change; may be empty
};

class Journal {
 public:
  Journal(RunStore& store, const BundleLayout& layout, CrashPoints& crash, JournalHooks hooks,
          Json state)
      : store_(store),
        layout_(layout),
        crash_(crash),
        hooks_(std::move(hooks)),
        state_(std::move(state)) {}

  const Json& state() const { return state_; }
  const std::string& bundle() const { return layout_.bundle; }
  // The bundle cursor, and a task's ({} when the task has none yet).
  Json cursor() const;
  Json task_cursor(const std::string& task) const;
  // The ids of this bundle's tasks that have a cursor, sorted.
  std::vector<std::string> task_ids() const;
  // A cursor's move count: what a result file names its visit by.
  long long moves(const std::optional<std::string>& task) const;
  // The cursor's node and previous node.
  std::string node(const std::optional<std::string>& task) const;
  std::string previous_node(const std::optional<std::string>& task) const;

  Status move(const std::optional<std::string>& task, const std::string& node,
              std::string_view event, Json merge = Json(), Json detail = Json(),
              std::optional<std::string> plan_path = {});
  Status event(std::string_view type, Json detail);
  // Re-reads state.json (another writer may have changed it).
  Status reload();

  void log(std::string_view event, Json fields = Json::object());

 private:
  Status adopt(Expected<Committed> c);

  RunStore& store_;
  const BundleLayout& layout_;
  CrashPoints& crash_;
  JournalHooks hooks_;
  Json state_;
};

}  // namespace devgraph::bundle
