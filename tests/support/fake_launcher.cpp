#include "support/fake_launcher.h"

#include <algorithm>

namespace devgraph::test {

Expected<std::uint64_t> FakeLauncher::launch(const agents::LaunchRequest& request) {
  std::string key = request.persona + " " + (request.task ? *request.task : "-");
  launches.push_back(key);
  int call = calls(key);
  std::uint64_t id = next_id_++;
  bundle::LaunchEvent launched;
  launched.kind = bundle::LaunchEvent::Kind::launched;
  launched.id = id;
  launched.handle = "hl-fake" + std::to_string(id);
  launched.persona = request.persona;
  launched.task = request.task;
  bundle::LaunchEvent done = launched;
  done.kind = bundle::LaunchEvent::Kind::completed;
  done.result = script_(request, call);
  // "tool_calls" in a scripted answer is what its CLI would have reported.
  if (auto t = done.result.find("tool_calls"); t != done.result.end() && t->is_number_integer()) {
    done.tool_calls = t->get<int>();
    done.result.erase("tool_calls");
  }
  // So is "usage" (util/token_usage.h's JSON form).
  if (auto u = done.result.find("usage"); u != done.result.end()) {
    done.usage = TokenUsage::from_json(*u);
    done.tokens = done.usage.total();
    done.result.erase("usage");
  }
  done.outcome = "result";
  done.cost_usd = 0.01;
  queue_.push_back(std::move(launched));
  queue_.push_back(std::move(done));
  ++pending_;
  peak_outstanding = std::max(peak_outstanding, pending_);
  return id;
}

std::optional<bundle::LaunchEvent> FakeLauncher::next() {
  if (queue_.empty()) return std::nullopt;
  bundle::LaunchEvent ev = std::move(queue_.front());
  queue_.pop_front();
  if (ev.kind == bundle::LaunchEvent::Kind::completed) --pending_;
  return ev;
}

int FakeLauncher::calls(const std::string& persona_task) const {
  return static_cast<int>(std::count(launches.begin(), launches.end(), persona_task));
}

}  // namespace devgraph::test
