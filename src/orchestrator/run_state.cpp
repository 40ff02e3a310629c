#include "orchestrator/run_state.h"

namespace devgraph::orchestrator {
namespace {

bool has_array(const Json& state, const char* key) {
  return state.is_object() && state.contains(key) && state.at(key).is_array();
}

bool has_object(const Json& state, const char* key) {
  return state.is_object() && state.contains(key) && state.at(key).is_object();
}

}  // namespace

const Json& bundles_of(const Json& state) {
  static const Json empty = Json::array();
  return has_array(state, "bundles") ? state.at("bundles") : empty;
}

Json* entry_in(Json& state, const std::string& bundle) {
  if (!has_array(state, "bundles")) return nullptr;
  for (auto& b : state.at("bundles"))
    if (b.is_object() && json_str(b, "id") == bundle) return &b;
  return nullptr;
}

const Json* entry_of(const Json& state, const std::string& bundle) {
  for (const auto& b : bundles_of(state))
    if (b.is_object() && json_str(b, "id") == bundle) return &b;
  return nullptr;
}

const Json* cursor_of(const Json& state, const std::string& bundle) {
  if (!has_object(state, "bundles_runtime")) return nullptr;
  const Json& rt = state.at("bundles_runtime");
  return rt.contains(bundle) ? &rt.at(bundle) : nullptr;
}

Json* cursor_in(Json& state, const std::string& bundle) {
  if (!has_object(state, "bundles_runtime")) return nullptr;
  Json& rt = state.at("bundles_runtime");
  return rt.contains(bundle) ? &rt.at(bundle) : nullptr;
}

const Json* pr_of(const Json& state, long long number) {
  if (!has_array(state, "prs")) return nullptr;
  for (const auto& p : state.at("prs"))
    if (p.is_object() && p.value("number", 0LL) == number) return &p;
  return nullptr;
}

Json& pr_in(Json& state, long long number) {
  if (!has_array(state, "prs")) state["prs"] = Json::array();
  for (auto& p : state.at("prs"))
    if (p.is_object() && p.value("number", 0LL) == number) return p;
  state.at("prs").push_back(Json{{"number", number}});
  return state.at("prs").back();
}

}  // namespace devgraph::orchestrator
