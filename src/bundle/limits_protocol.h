// The line protocol between a run's limits broker (orchestrator/limits.h,
// inside `devgraph run`) and the bundle drivers it starts
// (bundle/limits_client.h), and where its socket lives.
//
// Contract:
// - A stream socket in the Unix domain, one JSON object per line, its
//   "op" naming the message. Driver to broker:
//     {"op": "hello", "bundle": B, "pid": N}   first, once
//     {"op": "ask"}                            one persona slot, please
//     {"op": "finished", "cost_usd": C, "tokens": T or null}
//                                              a persona holding a slot
//                                              completed: the slot back
//     {"op": "release"}                        a slot granted and not used
//     {"op": "limit", "until_ms": MS, "reason": R}
//                                              a provider limit met; it
//                                              resets at MS (Unix epoch ms)
//   Broker to driver:
//     {"op": "grant"}                          one slot, for the oldest ask
//     {"op": "pause", "until_ms": MS, "reason": R}
//                                              no new persona until MS
//     {"op": "closed", "reason": R}            no new persona from now on
//   A line that is not such an object ends the connection; fields not
//   named here are ignored.
// - A connection that ends gives back every slot its driver held: the
//   broker reads EOF, the driver reads EOF and launches nothing more.
// - The address of a run's socket is <run dir>/limits.sock when that path
//   fits a sockaddr_un (at most 107 bytes), else the abstract socket
//   "\0devgraph-limits-<16 hex digits>", the digits the 64-bit FNV-1a hash
//   of the run directory's path. It is written, and handed to drivers in
//   kLimitsSocketEnv, as the path, or as "@devgraph-limits-<hex>" for the
//   abstract name (a run directory is absolute, so never starts with @).
// - Sockets are close-on-exec: a persona never inherits one.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "util/expected.h"
#include "util/json.h"

namespace devgraph::bundle {

inline constexpr const char* kLimitsSocketEnv = "DEVGRAPH_LIMITS_SOCKET";
inline constexpr size_t kLimitsMaxLine = 64 * 1024;

std::string limits_address(const std::string& run_dir);

// A listening socket at `address`, non-blocking; a socket file left by an
// earlier run is replaced (anything else at the path is an error).
Expected<int> limits_listen(const std::string& address);
// A connected socket to `address` (ErrorKind::not_found when nobody
// listens there).
Expected<int> limits_connect(const std::string& address);
// Removes the socket file of a path address (nothing for an abstract one).
void limits_unlink(const std::string& address);

std::string limits_line(const Json& message);

// Sends all of `line`, never raising SIGPIPE; a peer that is gone, or a
// non-blocking socket that is full, is an error (ErrorKind::transient).
Status limits_send(int fd, std::string_view line);

// Bytes in, lines out.
class LineBuffer {
 public:
  // Reads what the socket holds now, without waiting. False once the peer
  // closed or the socket failed (`why` says which).
  bool fill(int fd, std::string& why);
  // The next complete line, without its newline; nullopt when none is
  // complete. A line longer than kLimitsMaxLine is an error.
  Expected<std::optional<std::string>> next();

 private:
  std::string data_;
};

}  // namespace devgraph::bundle
