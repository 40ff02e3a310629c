#include "bundle/view.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <string_view>

namespace devgraph::bundle {
namespace {

using ms = std::chrono::milliseconds;

std::string str(const Json& j, const char* key) {
  if (j.is_object() && j.contains(key) && j[key].is_string()) return j[key].get<std::string>();
  return "";
}

int num(const Json& j, const char* key, int fallback) {
  if (j.is_object() && j.contains(key) && j[key].is_number()) return j[key].get<int>();
  return fallback;
}

std::string group_of(const ViewTask& t) {
  if (t.status == "complete") return "committed";
  if (t.status == "waiting_human") return "awaiting_human";
  return t.node.empty() ? "(no node)" : t.node;
}

// Groups in the order a task passes the lane's nodes (the model's node
// order, from GRAPH.yaml); nodes it does not list follow, then the
// committed tasks.
size_t group_rank(const std::vector<std::string>& order, const std::string& g) {
  if (g == "committed") return order.size() + 1;
  auto it = std::find(order.begin(), order.end(), g);
  if (it == order.end()) return order.size();
  return static_cast<size_t>(it - order.begin());
}

std::string pad(std::string s, size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

// Clipped to `width` columns; the frame is ASCII apart from what records
// carry, so bytes stand in for columns.
std::string fit(const std::string& line, int width) {
  size_t w = static_cast<size_t>(std::max(width, 1));
  if (line.size() <= w) return line;
  return line.substr(0, w > 3 ? w - 3 : w) + (w > 3 ? "..." : "");
}

}  // namespace

std::string format_elapsed(std::chrono::milliseconds d) {
  long long s = std::max<long long>(0, d.count() / 1000);
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", s / 3600, (s / 60) % 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%lld:%02lld", s / 60, s % 60);
  return buf;
}

std::string summarize_record(const Json& rec) {
  std::string ts = str(rec, "ts");
  std::string line = ts.size() >= 19 ? ts.substr(11, 8) : "--:--:--";
  line += " " + str(rec, "event");
  for (const char* key : {"persona", "task", "node", "status", "topic", "command"}) {
    std::string v = str(rec, key);
    if (!v.empty()) line += " " + v;
  }
  if (rec.is_object() && rec.contains("exit") && rec["exit"].is_number())
    line += " exit " + std::to_string(rec["exit"].get<long long>());
  if (rec.is_object() && rec.contains("seconds") && rec["seconds"].is_number()) {
    char buf[32];
    std::snprintf(buf, sizeof buf, " after %.1f s", rec["seconds"].get<double>());
    line += buf;
  }
  if (rec.is_object() && rec.contains("attempt") && rec["attempt"].is_number() &&
      rec["attempt"].get<int>() > 1)
    line += " attempt " + std::to_string(rec["attempt"].get<int>());
  std::string err = str(rec, "error");
  if (err.empty()) err = str(rec, "reason");
  if (!err.empty()) line += ": " + err;
  for (char& c : line)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  return line;
}

// ---------------------------------------------------------------------------

ViewModel::ViewModel(std::string bundle, ViewTime start)
    : bundle_(std::move(bundle)), start_(start) {}

bool ViewModel::on_log(const Json& rec, ViewTime now) {
  std::string event = str(rec, "event");
  std::string handle = str(rec, "handle");
  if (event == "launched") {
    backoffs_.erase(handle);
    live_[handle] =
        ViewPersona{handle, str(rec, "persona"), str(rec, "task"), num(rec, "attempt", 1), now};
  } else if (event == "finished") {
    live_.erase(handle);
  } else if (event == "backoff") {
    live_.erase(handle);
    double delay = rec.value("delay_s", 0.0);
    backoffs_[handle] =
        ViewBackoff{handle, str(rec, "persona"), str(rec, "task"), num(rec, "attempt", 1),
                    now + ms(static_cast<long long>(std::llround(delay * 1000.0)))};
  } else if (event == "paused") {
    live_.erase(handle);
    double wait = rec.value("wait_s", 0.0);
    paused_until_ = now + ms(static_cast<long long>(std::llround(wait * 1000.0)));
    pause_reason_ = str(rec, "reason");
  } else if (event == "unpaused") {
    paused_until_.reset();
    pause_reason_.clear();
  } else if (event == "start") {
    node_ = str(rec, "node");
  } else if (event == "result") {
    outcome_ = str(rec, "status");
    live_.clear();
    backoffs_.clear();
    command_.reset();
  } else if (event == "command_started") {
    command_ = ViewCommand{str(rec, "command"), str(rec, "argv"), now};
  } else if (event == "command_finished") {
    command_.reset();
  }
  recent_.push_back(summarize_record(rec));
  while (recent_.size() > kRecentLines) recent_.pop_front();
  return true;
}

bool ViewModel::on_state(const Json& state) {
  bool changed = false;
  if (state.contains("bundles_runtime") && state["bundles_runtime"].contains(bundle_)) {
    const Json& c = state["bundles_runtime"][bundle_];
    std::string node = str(c, "node");
    int count = num(c, "task_count", task_count_);
    changed |= node != node_ || count != task_count_;
    node_ = node;
    task_count_ = count;
  }
  if (state.contains("tasks_runtime") && state["tasks_runtime"].is_object()) {
    std::string prefix = bundle_ + "/";
    for (const auto& [key, c] : state["tasks_runtime"].items()) {
      if (key.rfind(prefix, 0) != 0) continue;
      ViewTask t{str(c, "node"), str(c, "status")};
      auto& slot = tasks_[key.substr(prefix.size())];
      changed |= slot.node != t.node || slot.status != t.status;
      slot = t;
    }
  }
  return changed;
}

// ---------------------------------------------------------------------------

std::string render_frame(const ViewModel& m, ViewTime now, FrameSize size) {
  std::vector<std::string> head, body, tail;
  std::string title = "devgraph bundle " + m.bundle() + "  node " +
                      (m.node().empty() ? "-" : m.node()) + "  elapsed " +
                      format_elapsed(std::chrono::duration_cast<ms>(now - m.start()));
  if (!m.outcome().empty()) title += "  " + m.outcome();
  head.push_back(title);

  // Tasks by node.
  std::map<std::string, std::vector<std::string>> groups;
  int committed = 0;
  for (const auto& [id, t] : m.tasks()) {
    groups[group_of(t)].push_back(id);
    committed += t.status == "complete";
  }
  int total = std::max<int>(m.task_count(), static_cast<int>(m.tasks().size()));
  std::string summary =
      "tasks: " + std::to_string(committed) + "/" + std::to_string(total) + " committed";
  int not_started = total - static_cast<int>(m.tasks().size());
  if (not_started > 0) summary += ", " + std::to_string(not_started) + " not started";
  if (total == 0) summary = "tasks: none planned yet";
  body.push_back(summary);
  std::vector<std::string> order;
  for (const auto& [g, ids] : groups) order.push_back(g);
  std::stable_sort(order.begin(), order.end(), [&](const std::string& a, const std::string& b) {
    return group_rank(m.node_order(), a) < group_rank(m.node_order(), b);
  });
  for (const auto& g : order) {
    std::string line = "  " + pad(g, 16);
    for (const auto& id : groups[g]) line += " " + id;
    body.push_back(line);
  }

  // Live personas, oldest first.
  std::vector<const ViewPersona*> live;
  for (const auto& [h, p] : m.live()) live.push_back(&p);
  std::sort(live.begin(), live.end(),
            [](const ViewPersona* a, const ViewPersona* b) { return a->since < b->since; });
  body.push_back("personas: " + std::to_string(live.size()) + " running");
  for (const auto* p : live) {
    std::string line = "  " + pad(p->persona, 20) + " " + pad(p->task.empty() ? "-" : p->task, 8) +
                       " " + format_elapsed(std::chrono::duration_cast<ms>(now - p->since));
    if (p->attempt > 1) line += "  attempt " + std::to_string(p->attempt);
    body.push_back(line);
  }
  if (!m.backoffs().empty()) {
    body.push_back("back-offs:");
    for (const auto& [h, b] : m.backoffs())
      body.push_back("  " + pad(b.persona, 20) + " " + pad(b.task.empty() ? "-" : b.task, 8) +
                     " retry " + std::to_string(b.attempt + 1) + " in " +
                     format_elapsed(std::chrono::duration_cast<ms>(b.until - now)));
  }
  if (m.command())
    body.push_back(m.command()->name + " command running " +
                   format_elapsed(std::chrono::duration_cast<ms>(now - m.command()->since)) + ": " +
                   m.command()->argv);
  if (m.paused_until())
    body.push_back("provider limit: new launches wait " +
                   format_elapsed(std::chrono::duration_cast<ms>(*m.paused_until() - now)) +
                   (m.pause_reason().empty() ? "" : " (" + m.pause_reason() + ")"));

  tail.push_back("recent:");
  for (const auto& r : m.recent()) tail.push_back("  " + r);

  // Fit the height: drop recent lines first, then cut the body.
  size_t rows = static_cast<size_t>(std::max(size.rows, 3));
  while (head.size() + body.size() + tail.size() > rows && tail.size() > 1)
    tail.erase(tail.begin() + 1);
  if (head.size() + body.size() + tail.size() > rows) tail.clear();
  if (head.size() + body.size() > rows) {
    size_t keep = rows - head.size() - 1;
    size_t cut = body.size() - keep;
    body.resize(keep);
    body.push_back("  ... " + std::to_string(cut) + " more lines");
  }
  std::string out;
  for (const auto* part : {&head, &body, &tail})
    for (const auto& l : *part) out += (out.empty() ? "" : "\n") + fit(l, size.columns);
  return out;
}

// ---------------------------------------------------------------------------

LiveView::LiveView(std::ostream& out, std::string bundle, const Clock& clock, FrameSize size,
                   int max_per_second)
    : out_(out),
      clock_(clock),
      size_(size),
      min_gap_(1000 / std::max(1, max_per_second)),
      model_(std::move(bundle), clock.steady()),
      painter_(out) {}

void LiveView::on_log(const Json& record) {
  if (finished_) return;
  fed_ = true;
  dirty_ |= model_.on_log(record, clock_.steady());
  maybe_draw(false);
}

void LiveView::on_state(const Json& state) {
  if (finished_) return;
  fed_ = true;
  dirty_ |= model_.on_state(state);
  maybe_draw(false);
}

void LiveView::tick() {
  if (finished_) return;
  if (measure_) resize(measure_());
  if (!fed_) return;
  // Elapsed times are shown in whole seconds: a frame a second keeps them
  // current.
  if (last_draw_ && clock_.steady() - *last_draw_ >= std::chrono::seconds(1)) dirty_ = true;
  maybe_draw(false);
}

void LiveView::resize(FrameSize size) {
  if (finished_ || (size.columns == size_.columns && size.rows == size_.rows)) return;
  size_ = size;
  painter_.resized();
  if (fed_) maybe_draw(true);
}

void LiveView::finish() {
  if (finished_) return;
  finished_ = true;
  if (!fed_) return;  // refused before any work: no frame, only the caller's lines
  maybe_draw(true);
  out_ << "\n" << std::flush;  // what the caller prints next goes below the frame
}

void LiveView::maybe_draw(bool force) {
  ViewTime now = clock_.steady();
  if (!force) {
    if (!dirty_) return;
    if (last_draw_ && now - *last_draw_ < min_gap_) return;  // tick() draws it later
  }
  draw(now);
}

void LiveView::draw(ViewTime now) {
  // The frame is one line shorter than the screen so the cursor never
  // scrolls it.
  FrameSize fs{size_.columns, std::max(3, size_.rows - 1)};
  painter_.paint(render_frame(model_, now, fs));
  last_draw_ = now;
  dirty_ = false;
  ++redraws_;
}

void FramePainter::paint(const std::string& frame) {
  std::string buf;
  if (clear_screen_) {
    buf += "\x1b[H\x1b[J";  // home, erase the screen
    clear_screen_ = false;
  } else if (drawn_lines_ > 1) {
    buf += "\x1b[" + std::to_string(drawn_lines_ - 1) + "A";
  }
  buf += "\r";
  int lines = 1;
  for (char c : frame) {
    if (c == '\n') {
      buf += "\x1b[K\n";
      ++lines;
    } else {
      buf += c;
    }
  }
  buf += "\x1b[K\x1b[J";
  out_ << buf << std::flush;
  drawn_lines_ = lines;
}

bool live_view_wanted(int fd, bool no_live_flag) {
  if (no_live_flag || !::isatty(fd)) return false;
  const char* term = std::getenv("TERM");
  if (!term || !*term || std::string(term) == "dumb") return false;
  const char* no_color = std::getenv("NO_COLOR");
  return !(no_color && *no_color);
}

FrameSize terminal_size(int fd) {
  winsize ws{};
  FrameSize s;
  if (::ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 && ws.ws_row > 0) {
    s.columns = ws.ws_col;
    s.rows = ws.ws_row;
  }
  return s;
}

}  // namespace devgraph::bundle
