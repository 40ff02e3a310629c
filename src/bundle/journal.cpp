#include "bundle/journal.h"

#include <algorithm>
#include <fstream>

#include "util/clock.h"

namespace devgraph::bundle {
namespace {

std::string str(const Json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

}  // namespace

Json Journal::cursor() const {
  const Json& br = state_["bundles_runtime"];
  return br.is_object() && br.contains(layout_.bundle) ? br[layout_.bundle] : Json::object();
}

Json Journal::task_cursor(const std::string& task) const {
  const Json& tr = state_["tasks_runtime"];
  auto key = layout_.bundle + "/" + task;
  return tr.is_object() && tr.contains(key) ? tr[key] : Json::object();
}

std::vector<std::string> Journal::task_ids() const {
  std::vector<std::string> out;
  const Json& tr = state_["tasks_runtime"];
  if (!tr.is_object()) return out;
  const std::string prefix = layout_.bundle + "/";
  for (const auto& [key, value] : tr.items())
    if (key.rfind(prefix, 0) == 0) out.push_back(key.substr(prefix.size()));
  std::sort(out.begin(), out.end());
  return out;
}

long long Journal::moves(const std::optional<std::string>& task) const {
  return (task ? task_cursor(*task) : cursor()).value("moves", 0LL);
}

std::string Journal::node(const std::optional<std::string>& task) const {
  return str(task ? task_cursor(*task) : cursor(), "node");
}

std::string Journal::previous_node(const std::optional<std::string>& task) const {
  return str(task ? task_cursor(*task) : cursor(), "previous_node");
}

Status Journal::adopt(Expected<Committed> c) {
  if (!c) return c.error();
  state_ = std::move(c->state);
  if (hooks_.on_state) hooks_.on_state(state_);
  return {};
}

Status Journal::move(const std::optional<std::string>& task, const std::string& node,
                     std::string_view event, Json merge, Json detail,
                     std::optional<std::string> plan_path) {
  MoveRequest req;
  req.bundle = layout_.bundle;
  req.task = task;
  req.node = node;
  req.event = std::string(event);
  req.merge = merge.is_null() ? Json::object() : std::move(merge);
  req.detail = detail.is_null() ? Json::object() : std::move(detail);
  req.plan_path = std::move(plan_path);
  std::string subject = layout_.bundle + (task ? "/" + *task : "") + "/" + req.event;
  crash_.reach("move", subject);
  DG_CHECK(adopt(store_.move(req)));
  crash_.reach("moved", subject);
  return {};
}

Status Journal::event(std::string_view type, Json detail) {
  EventRequest req;
  req.event = std::string(type);
  req.detail = std::move(detail);
  req.merge = Json::object();
  return adopt(store_.event(req));
}

Status Journal::reload() {
  DG_TRY(auto s, store_.read());
  state_ = std::move(s);
  return {};
}

void Journal::log(std::string_view event, Json fields) {
  Json rec = Json::object();
  rec["ts"] = iso_utc(system_clock().wall());
  rec["bundle"] = layout_.bundle;
  rec["event"] = std::string(event);
  for (auto& [k, v] : fields.items()) rec[k] = v;
  // Diagnostic only: a lost line costs nothing the run depends on.
  std::ofstream f(layout_.log(), std::ios::app);
  f << dump_py(rec) << "\n";
  if (hooks_.on_log) hooks_.on_log(rec);
}

}  // namespace devgraph::bundle
