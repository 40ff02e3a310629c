#include "support/fake_driver_pool.h"

#include <sys/epoll.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>

#include "lane/routes.h"

namespace devgraph::test {

using orchestrator::DriverEvent;
using orchestrator::DriverExit;
using orchestrator::DriverSpec;
using orchestrator::Wakeup;

FakeDriverPool::Answer FakeDriverPool::Answer::done(const std::string& head) {
  return result(Json{{"status", "DONE"}, {"summary", "delivered"}, {"head", head}, {"pr", Json()}},
                0);
}

FakeDriverPool::Answer FakeDriverPool::Answer::result(const Json& result, int exit_code) {
  Answer a;
  a.out = "driver log line\nRESULT_JSON: " + dump_py(result) + "\n";
  a.exit_code = exit_code;
  std::string status = json_str(result, "status");
  a.delivers = status == "DONE" || status == "DONE_WITH_CONCERNS";
  return a;
}

FakeDriverPool::Answer FakeDriverPool::Answer::killed(int signal) {
  Answer a;
  a.exit_code = -1;
  a.term_signal = signal;
  return a;
}

FakeDriverPool::Answer FakeDriverPool::Answer::exited(int code, const std::string& err) {
  Answer a;
  a.exit_code = code;
  a.err = err;
  return a;
}

FakeDriverPool::FakeDriverPool(RunStore& store, const Graph& graph, Script s)
    : script(std::move(s)), store_(store), graph_(graph) {}

Status FakeDriverPool::start(const DriverSpec& spec) {
  if (running(spec.bundle))
    return fail(ErrorKind::internal, "bundle " + spec.bundle + " already has a driver");
  started.push_back(spec);
  log.push_back("start " + spec.bundle);
  std::optional<Answer> a;
  if (script) a = script(spec.bundle, launches(spec.bundle));
  running_.push_back(Live{spec.bundle, a ? std::move(*a) : Answer::done(), false});
  max_live = std::max(max_live, running_.size());
  return {};
}

void FakeDriverPool::stop(const std::string& bundle) {
  for (auto& d : running_) {
    if (d.bundle != bundle || d.stopping) continue;
    d.stopping = true;
    stopped.push_back(bundle);
    stop_order_.push_back(bundle);
    log.push_back("stop " + bundle);
  }
}

bool FakeDriverPool::running(const std::string& bundle) const {
  return std::any_of(running_.begin(), running_.end(),
                     [&](const Live& d) { return d.bundle == bundle; });
}

void FakeDriverPool::wake_at(SteadyTime when) {
  wakes.push_back(when);
  if (timer_ && when >= *timer_) return;
  timer_ = when;
}

Status FakeDriverPool::watch_stop_signals() {
  watching = true;
  return {};
}

Expected<WatchId> FakeDriverPool::serve_events(int fd, std::uint32_t events,
                                               std::function<void(std::uint32_t)> on_ready) {
  WatchId id = next_watch_++;
  served[id] = Served{fd, events, std::move(on_ready)};
  return id;
}

void FakeDriverPool::unserve_fd(WatchId id) {
  served.erase(id);
}

int FakeDriverPool::ready(int fd, std::uint32_t bits) {
  std::vector<WatchId> ids;
  for (const auto& [id, s] : served)
    if (s.fd == fd && ((s.events | EPOLLHUP | EPOLLERR) & bits) != 0) ids.push_back(id);
  int called = 0;
  for (WatchId id : ids) {
    auto it = served.find(id);  // an earlier function may have unserved it
    if (it == served.end()) continue;
    auto fn = it->second.on_ready;  // a copy: it may unserve itself
    fn((it->second.events | EPOLLHUP | EPOLLERR) & bits);
    ++called;
  }
  return called;
}

int FakeDriverPool::launches(const std::string& bundle) const {
  return static_cast<int>(std::count_if(started.begin(), started.end(),
                                        [&](const DriverSpec& s) { return s.bundle == bundle; }));
}

std::optional<DriverEvent> FakeDriverPool::wait() {
  ++waits;
  if (on_wait) on_wait(waits);
  if (!signals_.empty()) {
    int sig = signals_.front();
    signals_.pop_front();
    log.push_back("signal " + std::to_string(sig));
    return DriverEvent(StopRequested{sig});
  }
  // Drivers finish at once in the fake's time, so a timer fires only when
  // no driver is left to finish first (the orchestrator re-arms its ticks
  // on every turn of its loop).
  if (timer_ && running_.empty()) {
    timer_.reset();
    log.push_back("wake");
    return DriverEvent(Wakeup{});
  }
  auto pick = running_.end();
  while (!stop_order_.empty() && pick == running_.end()) {
    std::string b = stop_order_.front();
    stop_order_.pop_front();
    pick = std::find_if(running_.begin(), running_.end(),
                        [&](const Live& d) { return d.bundle == b && d.stopping; });
  }
  if (pick == running_.end()) pick = running_.begin();
  if (pick == running_.end()) return std::nullopt;
  std::string bundle = pick->bundle;
  if ((!pick->stopping || pick->answer.finished_before_stop) && pick->answer.during) {
    auto during = std::move(pick->answer.during);
    during();  // may start or stop drivers: look this one up again
  }
  auto it = std::find_if(running_.begin(), running_.end(),
                         [&](const Live& d) { return d.bundle == bundle; });
  DriverExit e = finish(*it);
  running_.erase(std::find_if(running_.begin(), running_.end(),
                              [&](const Live& d) { return d.bundle == bundle; }));
  exits.push_back(e);
  log.push_back("exit " + e.bundle);
  return DriverEvent(std::move(e));
}

DriverExit FakeDriverPool::finish(Live& live) {
  DriverExit e;
  e.bundle = live.bundle;
  if (live.stopping && !live.answer.finished_before_stop) {
    e.exit_code = 128 + SIGTERM;
    e.out = "RESULT_JSON: " +
            dump_py(Json{{"status", "HANDOFF"},
                         {"summary", "stopped by SIGTERM; run-bundle again to resume"},
                         {"stopped_by", "SIGTERM"}}) +
            "\n";
    return e;
  }
  e.exit_code = live.answer.exit_code;
  e.term_signal = live.answer.term_signal;
  e.out = live.answer.out;
  e.err = live.answer.err;
  if (live.answer.delivers) {
    auto at = e.out.rfind("RESULT_JSON: ");
    auto result = parse_json(e.out.substr(at + 13), "RESULT_JSON");
    deliver(live.bundle, result ? *result : Json::object());
  }
  return e;
}

void FakeDriverPool::deliver(const std::string& bundle, const Json& result) {
  auto state = store_.read();
  if (!state) {
    ADD_FAILURE() << "fake driver of " << bundle << ": " << state.error().message;
    return;
  }
  const GraphLane* lane = graph_.lane("bundle");
  auto rt = state->find("bundles_runtime");
  if (!lane || rt == state->end() || !rt->contains(bundle)) {
    ADD_FAILURE() << "fake driver of " << bundle << ": the bundle has no cursor to deliver";
    return;
  }
  const Json& cursor = (*rt)[bundle];
  std::string from = json_str(cursor, "node");
  const std::string& goal = lane->complete_at;
  if (from == goal && json_str(cursor, "status") == "complete") return;
  // The shortest walk along the lane's routes: what a clean run takes.
  std::map<std::string, std::string> came_from{{from, ""}};
  std::deque<std::string> queue{from};
  while (!queue.empty() && !came_from.count(goal)) {
    const GraphNode* n = graph_.node(queue.front());
    queue.pop_front();
    if (!n) continue;
    std::vector<std::string> targets;
    for (const auto& [route, target] : n->routes) targets.push_back(target);
    if (!n->next.empty()) targets.push_back(n->next);
    for (const auto& t : targets) {
      const GraphLane* l = graph_.lane_of(t);
      if (came_from.count(t) || !l || l->name != lane->name) continue;
      came_from[t] = n->name;
      queue.push_back(t);
    }
  }
  if (!came_from.count(goal)) {
    ADD_FAILURE() << "fake driver of " << bundle << ": no route from " << from << " to " << goal;
    return;
  }
  std::vector<std::string> path;
  for (std::string n = goal; n != from; n = came_from[n]) path.push_back(n);
  std::reverse(path.begin(), path.end());
  bool github = json_str(*state, "delivery") == "github";
  for (size_t i = 0; i < path.size(); ++i) {
    MoveRequest mv;
    mv.bundle = bundle;
    mv.node = path[i];
    mv.detail = Json{{"fake_driver", "walking to delivery"}};
    if (i + 1 < path.size()) {
      mv.event = std::string(lane::event::kNote);
    } else {
      mv.event = std::string(github ? lane::event::kPrCreated : lane::event::kBranchReady);
      mv.merge = Json{{"head", json_str(result, "head")}};
      if (github) mv.merge["pr"] = result.value("pr", Json());
    }
    auto moved = store_.move(mv);
    if (!moved) {
      ADD_FAILURE() << "fake driver of " << bundle << ": " << moved.error().message;
      return;
    }
  }
}

}  // namespace devgraph::test
