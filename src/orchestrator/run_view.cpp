#include "orchestrator/run_view.h"

#include <algorithm>
#include <vector>

#include "orchestrator/orchestrator.h"
#include "util/text.h"

namespace devgraph::orchestrator {
namespace {

constexpr size_t kKeptLines = 6;

// Cuts a line to `width` bytes, never inside a UTF-8 sequence.
std::string fit(const std::string& s, int width) {
  size_t w = static_cast<size_t>(std::max(1, width));
  if (s.size() <= w) return s;
  size_t cut = w;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return s.substr(0, cut);
}

// Control bytes of untrusted text (titles) never reach the terminal.
std::string printable(const std::string& s) {
  std::string out;
  for (unsigned char c : s) out += (c < 0x20 || c == 0x7f) ? '?' : static_cast<char>(c);
  return out;
}

}  // namespace

std::string render_run_frame(const Json& state, const std::deque<std::string>& lines,
                             std::chrono::milliseconds elapsed, bundle::FrameSize size) {
  std::vector<std::string> out;
  out.push_back("devgraph run " + json_str(state, "run_id") + "  " + json_str(state, "node") +
                "  " + bundle::format_elapsed(elapsed));
  const Json empty = Json::object();
  const Json& tasks_rt = state.contains("tasks_runtime") && state["tasks_runtime"].is_object()
                             ? state["tasks_runtime"]
                             : empty;
  if (state.contains("bundles") && state["bundles"].is_array()) {
    for (const auto& b : state["bundles"]) {
      std::string id = json_str(b, "id");
      std::vector<std::string> nums;
      if (b.contains("issues") && b["issues"].is_array())
        for (const auto& n : b["issues"]) nums.push_back("#" + dump_py(n));
      std::string status = bundle_status(state, b);
      std::string node;
      if (state.contains("bundles_runtime") && state["bundles_runtime"].contains(id))
        node = json_str(state["bundles_runtime"][id], "node");
      int planned =
          b.contains("tasks") && b["tasks"].is_array() ? static_cast<int>(b["tasks"].size()) : 0;
      int committed = 0;
      std::vector<std::string> moving;
      for (const auto& [key, c] : tasks_rt.items()) {
        if (key.rfind(id + "/", 0) != 0) continue;
        if (json_str(c, "status") == "complete")
          ++committed;
        else
          moving.push_back(key.substr(id.size() + 1) + " " + json_str(c, "node"));
      }
      std::string line = id + " " + join(nums, " ") + "  " + status;
      if (!node.empty() && status != "delivered") line += " at " + node;
      if (planned > 0)
        line += "  tasks " + std::to_string(committed) + "/" + std::to_string(planned);
      if (!moving.empty() && status == "running") line += "  [" + join(moving, ", ") + "]";
      if (b.contains("pr") && b["pr"].is_object() && b["pr"].contains("url"))
        line += "  " + json_str(b["pr"], "url");
      else if (status == "delivered")
        line += "  " + json_str(b, "branch");
      if (status == "parked") line += "  waits: " + json_str(b, "parked_reason");
      out.push_back("  " + printable(line));
    }
  }
  if (!lines.empty()) out.push_back("");
  for (const auto& l : lines) out.push_back(printable(l));
  int rows = std::max(3, size.rows);
  if (static_cast<int>(out.size()) > rows) {
    // Keep the header and the newest lines.
    std::vector<std::string> kept = {out.front()};
    kept.insert(kept.end(), out.end() - (rows - 1), out.end());
    out = std::move(kept);
  }
  std::string frame;
  for (size_t i = 0; i < out.size(); ++i) {
    if (i) frame += '\n';
    frame += fit(out[i], size.columns);
  }
  return frame;
}

RunLiveView::RunLiveView(std::ostream& out, const Clock& clock, bundle::FrameSize size)
    : out_(out), clock_(clock), size_(size), painter_(out), started_(clock.steady()) {}

void RunLiveView::on_state(const Json& state) {
  if (finished_) return;
  state_ = state;
  dirty_ = true;
  draw(false);
}

void RunLiveView::on_line(const std::string& line) {
  if (finished_) return;
  lines_.push_back(line);
  while (lines_.size() > kKeptLines) lines_.pop_front();
  dirty_ = true;
  draw(false);
}

void RunLiveView::tick() {
  if (finished_) return;
  if (measure_) {
    auto s = measure_();
    if (s.columns != size_.columns || s.rows != size_.rows) {
      size_ = s;
      painter_.resized();
      dirty_ = true;
    }
  }
  if (last_draw_ && clock_.steady() - *last_draw_ >= std::chrono::seconds(1)) dirty_ = true;
  draw(false);
}

void RunLiveView::finish() {
  if (finished_) return;
  draw(true);
  finished_ = true;
  out_ << "\n" << std::flush;
}

void RunLiveView::draw(bool force) {
  auto now = clock_.steady();
  if (!force) {
    if (!dirty_) return;
    if (last_draw_ && now - *last_draw_ < std::chrono::milliseconds(125)) return;
  }
  auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(now - started_);
  painter_.paint(render_run_frame(state_, lines_, elapsed,
                                  bundle::FrameSize{size_.columns, std::max(3, size_.rows - 1)}));
  last_draw_ = now;
  dirty_ = false;
}

}  // namespace devgraph::orchestrator
