// The run-wide limits as one bundle's driver meets them: a persona slot
// for every launch, and the pauses and budgets the run's limits broker
// (orchestrator/limits.h) announces; and the launcher that holds every
// persona launch of the driver to them. `devgraph run` gives each driver a
// gate (bundle/limits_client.h); a driver without one (plain
// `devgraph run-bundle`) launches as it always did.
//
// Contract of gated_launcher(inner, gate):
// - launch() starts nothing by itself: it queues the request, asks the
//   gate for one slot and returns the launch's id at once. Grants come in
//   ask order and each starts the oldest queued launch on `inner`, which
//   holds its slot until it completes (retries, resumes and provider pauses
//   included); its completion gives the slot back with what it cost
//   (SlotGate::finished). A grant no queued launch is waiting for is given
//   back unused (release). A queued launch that `inner` refuses to start
//   completes as launch_failed, its slot given back.
// - A provider limit `inner` meets (a `paused` event) is reported to the
//   gate with its reset; a pause the gate announces pauses `inner`
//   (Launcher::pause). Neither is handed on as an event.
// - Once the gate is closed (the run's budget or this bundle's is spent,
//   or the gate is gone), refusing() says why, every queued launch
//   completes at once as kOutcomeWithdrawn (a BLOCKED result naming the
//   reason; no child ran, nothing was spent), and launch() is refused.
//   Launches already running go on and complete as usual. A gate never
//   reopens.
// - stop_all() is passed on, and queued launches complete as interrupted.
// - The gate's descriptor is watched on `inner`'s loop (Launcher::watch):
//   news wakes next(), nothing polls. A gate without one (a test's) gives
//   its news in answer to the calls made on it; when launches wait for a
//   slot and nothing in flight could ever bring one, the gate is taken as
//   closed rather than waited on forever.
// - Ids, outstanding() and persona_runs() are the gated launcher's own:
//   queued launches are outstanding.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bundle/launcher.h"

namespace devgraph::bundle {

// Something the gate says, in the order it happened.
struct GateNews {
  enum class Kind {
    granted,  // one slot, for the oldest ask
    paused,   // no launch until `until` (a provider limit met in the run)
    closed,   // no launch from now on; `reason` says why
  };
  Kind kind = Kind::granted;
  std::chrono::system_clock::time_point until{};
  std::string reason;
};

class SlotGate {
 public:
  virtual ~SlotGate() = default;
  // Asks for one slot: answered by one `granted`, in ask order, or by none
  // once the gate is closed.
  virtual void ask() = 0;
  // A persona holding a slot completed: the slot back, and what it cost
  // (tokens where its CLI reported them).
  virtual void finished(double cost_usd, std::optional<long long> tokens) = 0;
  // A slot granted and not used, back.
  virtual void release() = 0;
  // A provider limit met here; it resets at `until`.
  virtual void report_limit(std::chrono::system_clock::time_point until,
                            const std::string& reason) = 0;
  // Readable when news may be waiting; -1 when the gate has none.
  virtual int fd() const = 0;
  // The news since the last call, in order; never blocks. A failure to
  // talk to whoever grants the slots is news too: `closed`.
  virtual std::vector<GateNews> take() = 0;
};

std::unique_ptr<Launcher> gated_launcher(std::unique_ptr<Launcher> inner,
                                         std::unique_ptr<SlotGate> gate);

}  // namespace devgraph::bundle
