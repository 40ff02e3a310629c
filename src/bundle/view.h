// The live one-screen view of a bundle run, for `run-bundle` and `demo` on
// a terminal. Three parts, each testable on its own:
//
// - ViewModel: what is known about the run. Fed by log records (the
//   driver's and the persona runtime's run_bundle.log records) and by
//   state.json after each transaction; it does no I/O and reads no clock,
//   every update carries the time.
// - render_frame(): the model as one screen of text at a given time and
//   size: tasks grouped by node, live personas with their elapsed time,
//   back-offs with the time left, provider-limit pauses, the total elapsed
//   time, the bundle's test or build command while it runs, and the last
//   few log lines. Pure; lines never exceed the width,
//   the frame never exceeds the height.
// - LiveView: the redraw policy. Redraws when the model changed, at most
//   `max_per_second` times a second, and on tick() (a timer on the persona
//   runtime's event loop) once a second so elapsed times advance while
//   nothing else happens (the driver ticks it while its own test and build
//   commands run too); a tick also notices a resized terminal. It never
//   sleeps and starts no thread. A frame
//   replaces the previous one in place (cursor up, rewrite, clear below),
//   so the last frame stays in the scrollback above whatever the caller
//   prints next.
//
// Plain log lines instead of the view: when stdout is not a terminal, when
// TERM is unset or "dumb", when NO_COLOR is set, or with --no-live.
#pragma once

#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "util/clock.h"
#include "util/json.h"

namespace devgraph::bundle {

using ViewTime = std::chrono::steady_clock::time_point;

struct ViewPersona {
  std::string handle;
  std::string persona;
  std::string task;  // "" for bundle-level personas
  int attempt = 1;
  ViewTime since;
};

struct ViewBackoff {
  std::string handle;
  std::string persona;
  std::string task;
  int attempt = 1;
  ViewTime until;
};

// A command of the driver's own (the bundle's test or build command).
struct ViewCommand {
  std::string name;  // "test", "build"
  std::string argv;  // as recorded in state.json's commands
  ViewTime since;
};

struct ViewTask {
  std::string node;
  std::string status;  // the cursor's status: active, complete, waiting_human, ...
};

class ViewModel {
 public:
  ViewModel(std::string bundle, ViewTime start);

  // Both return true when what the view shows changed.
  bool on_log(const Json& record, ViewTime now);
  bool on_state(const Json& state);

  const std::string& bundle() const { return bundle_; }
  // The order a task passes the lane's nodes (GRAPH.yaml's task lane, then
  // its shared nodes): the frame groups tasks by node in this order.
  void set_node_order(std::vector<std::string> order) { node_order_ = std::move(order); }
  const std::vector<std::string>& node_order() const { return node_order_; }
  ViewTime start() const { return start_; }
  const std::string& node() const { return node_; }
  const std::string& outcome() const { return outcome_; }  // set by the "result" record
  int task_count() const { return task_count_; }
  const std::map<std::string, ViewTask>& tasks() const { return tasks_; }
  const std::map<std::string, ViewPersona>& live() const { return live_; }
  const std::map<std::string, ViewBackoff>& backoffs() const { return backoffs_; }
  const std::optional<ViewTime>& paused_until() const { return paused_until_; }
  const std::string& pause_reason() const { return pause_reason_; }
  const std::deque<std::string>& recent() const { return recent_; }
  const std::optional<ViewCommand>& command() const { return command_; }

  static constexpr size_t kRecentLines = 6;

 private:
  std::string bundle_;
  ViewTime start_;
  std::string node_;
  std::string outcome_;
  int task_count_ = 0;
  std::map<std::string, ViewTask> tasks_;
  std::map<std::string, ViewPersona> live_;  // by handle
  std::map<std::string, ViewBackoff> backoffs_;
  std::optional<ViewTime> paused_until_;
  std::string pause_reason_;
  std::deque<std::string> recent_;
  std::optional<ViewCommand> command_;
  std::vector<std::string> node_order_;
};

struct FrameSize {
  int columns = 80;
  int rows = 24;
};

// One screen of text, lines separated by '\n' (no trailing newline).
std::string render_frame(const ViewModel& model, ViewTime now, FrameSize size);

// "1:05", "12:00", "1:02:03".
std::string format_elapsed(std::chrono::milliseconds d);

// A log record as one short line: "08:40:02 launched developer T2".
std::string summarize_record(const Json& record);

// Draws frames in place on a terminal: each frame replaces the previous
// one (cursor up, rewrite, clear below), or starts from a cleared screen
// after a resize (lines of the old frame may have wrapped). Shared by every
// live view.
class FramePainter {
 public:
  explicit FramePainter(std::ostream& out) : out_(out) {}
  void paint(const std::string& frame);
  // The next frame starts from a cleared screen (when one was drawn).
  void resized() {
    if (drawn_lines_ > 0) clear_screen_ = true;
  }

 private:
  std::ostream& out_;
  int drawn_lines_ = 0;
  bool clear_screen_ = false;
};

class LiveView {
 public:
  LiveView(std::ostream& out, std::string bundle, const Clock& clock, FrameSize size,
           int max_per_second = 8);

  void on_log(const Json& record);
  void on_state(const Json& state);
  // Periodic: redraws when a change is still undrawn or a second passed.
  void tick();
  // The terminal's new size. A changed size redraws the frame at once,
  // from the top of a cleared screen: lines of the old frame may have
  // wrapped, so moving up over them would land in the wrong place.
  void resize(FrameSize size);
  // Where tick() reads the terminal's size from (terminal_size() of the
  // output, in the verbs); without one the size stays as constructed.
  void measure_with(std::function<FrameSize()> measure) { measure_ = std::move(measure); }
  // Draws the final frame whatever the rate (none when nothing ever
  // arrived: a run refused before any work); later updates are ignored.
  void finish();

  int redraws() const { return redraws_; }
  const ViewModel& model() const { return model_; }
  void set_node_order(std::vector<std::string> order) { model_.set_node_order(std::move(order)); }

 private:
  void maybe_draw(bool force);
  void draw(ViewTime now);

  std::ostream& out_;
  const Clock& clock_;
  FrameSize size_;
  std::chrono::milliseconds min_gap_;
  ViewModel model_;
  bool dirty_ = true;
  bool fed_ = false;  // a record or a state arrived
  bool finished_ = false;
  int redraws_ = 0;
  FramePainter painter_;
  std::function<FrameSize()> measure_;
  std::optional<ViewTime> last_draw_;
};

// Should a live view be drawn on `fd`? A terminal, TERM set and not
// "dumb", NO_COLOR unset, and not turned off with --no-live.
bool live_view_wanted(int fd, bool no_live_flag);

// The terminal's size (80x24 when it cannot be read).
FrameSize terminal_size(int fd);

}  // namespace devgraph::bundle
