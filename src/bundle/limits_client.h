// A driver's SlotGate over the run's limits socket (the protocol of
// bundle/limits_protocol.h): what `devgraph run-bundle` uses when
// `devgraph run` started it with DEVGRAPH_LIMITS_SOCKET.
//
// Contract:
// - connect_limits() connects and says hello for the bundle; it fails
//   (one line naming the address) when nobody listens there, and then no
//   persona may be launched: the caller stops before any work.
// - ask(), finished(), release() and report_limit() each send one line
//   and never wait for an answer. take() reads what the socket holds now
//   and never blocks: "grant" is `granted`, "pause" `paused`, "closed"
//   `closed` with the broker's reason.
// - The end of the connection (EOF, a failed read or write, a line that
//   is not the protocol's) is one `closed` news saying the run's limits
//   went away: the driver launches nothing more and parks at its next
//   safe point; the next `devgraph run` resumes it. After it, the calls
//   send nothing. The socket stays open (and fd() valid) until the gate
//   is destroyed.
#pragma once

#include <memory>
#include <string>

#include "bundle/slot_gate.h"
#include "util/expected.h"

namespace devgraph::bundle {

Expected<std::unique_ptr<SlotGate>> connect_limits(const std::string& address,
                                                   const std::string& bundle);

}  // namespace devgraph::bundle
