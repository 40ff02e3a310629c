#include "store/run_store.h"

#include "util/fs.h"

namespace devgraph {

RunStore::RunStore(std::string run_dir, const Graph& graph, const Schema& state_schema,
                   const Clock& clock)
    : run_dir_(absolute_path(run_dir)), graph_(&graph), schema_(&state_schema), clock_(&clock) {}

std::string RunStore::run_id() const {
  return basename_of(run_dir_);
}

Expected<Json> RunStore::read() const {
  return fail("run store: not implemented yet");
}
Expected<Committed> RunStore::init(const InitRequest&) {
  return fail("run store: not implemented yet");
}
Expected<Committed> RunStore::go(const GoRequest&) {
  return fail("run store: not implemented yet");
}
Expected<Committed> RunStore::move(const MoveRequest&) {
  return fail("run store: not implemented yet");
}
Expected<Committed> RunStore::event(const EventRequest&) {
  return fail("run store: not implemented yet");
}
Expected<SignalOutcome> RunStore::signal(const SignalRequest&) {
  return fail("run store: not implemented yet");
}
Expected<HandoffOutcome> RunStore::handoff(const std::string&) {
  return fail("run store: not implemented yet");
}
Expected<ResumeOutcome> RunStore::resume() {
  return fail("run store: not implemented yet");
}
Expected<Committed> RunStore::transact(const std::function<Status(Transaction&)>&) {
  return fail("run store: not implemented yet");
}
Expected<Json> parse_json_object(const std::string&, const std::string& flag) {
  return fail("--" + flag + ": not implemented yet");
}
Status deep_merge(Json&, const Json&) {
  return fail("not implemented yet");
}
bool is_valid_id(const std::string&) {
  return false;
}

}  // namespace devgraph
