// The live view of a whole run, for `devgraph run` on a terminal: one line
// per bundle (its issues, status, node, tasks committed of planned, the
// tasks in flight and where they stand, its PR or ready branch), then the
// orchestrator's last lines, with the run's elapsed time.
//
// - render_run_frame() is pure: state.json and the last lines in, one
//   screen of text out; no line exceeds the width, the frame never exceeds
//   the height.
// - RunLiveView redraws in place (bundle::FramePainter) when something
//   changed, at most a few times a second, and on tick() once a second.
//   It never sleeps and starts no thread.
// Plain lines instead, by the same rules as run-bundle's view
// (bundle::live_view_wanted: a terminal, TERM set and not dumb, NO_COLOR
// unset, no --no-live).
#pragma once

#include <chrono>
#include <deque>
#include <functional>
#include <ostream>
#include <string>

#include "bundle/view.h"
#include "util/clock.h"
#include "util/json.h"

namespace devgraph::orchestrator {

std::string render_run_frame(const Json& state, const std::deque<std::string>& lines,
                             std::chrono::milliseconds elapsed, bundle::FrameSize size);

class RunLiveView {
 public:
  RunLiveView(std::ostream& out, const Clock& clock, bundle::FrameSize size);
  void on_state(const Json& state);
  void on_line(const std::string& line);
  void tick();
  void finish();
  void measure_with(std::function<bundle::FrameSize()> measure) { measure_ = std::move(measure); }

 private:
  void draw(bool force);

  std::ostream& out_;
  const Clock& clock_;
  bundle::FrameSize size_;
  bundle::FramePainter painter_;
  std::function<bundle::FrameSize()> measure_;
  Json state_ = Json::object();
  std::deque<std::string> lines_;
  std::chrono::steady_clock::time_point started_;
  std::optional<std::chrono::steady_clock::time_point> last_draw_;
  bool dirty_ = true;
  bool finished_ = false;
};

}  // namespace devgraph::orchestrator
