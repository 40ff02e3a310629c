#include "bundle/limits_protocol.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace devgraph::bundle {
namespace {

constexpr std::string_view kAbstractPrefix = "devgraph-limits-";

// The sockaddr for `address`, and its length.
Expected<std::pair<sockaddr_un, socklen_t>> to_sockaddr(const std::string& address) {
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  if (!address.empty() && address[0] == '@') {
    std::string name = address.substr(1);
    if (name.size() + 1 > sizeof sa.sun_path)
      return fail(ErrorKind::usage, "limits socket name too long: " + address);
    sa.sun_path[0] = '\0';
    std::memcpy(sa.sun_path + 1, name.data(), name.size());
    return std::pair{sa, static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size())};
  }
  if (address.empty() || address.size() + 1 > sizeof sa.sun_path)
    return fail(ErrorKind::usage, "limits socket path does not fit a socket address: " + address);
  std::memcpy(sa.sun_path, address.c_str(), address.size() + 1);
  return std::pair{sa, static_cast<socklen_t>(sizeof sa)};
}

std::string errno_text() {
  return std::strerror(errno);
}

}  // namespace

std::string limits_address(const std::string& run_dir) {
  std::string path = run_dir + "/limits.sock";
  if (path.size() + 1 <= sizeof(sockaddr_un{}.sun_path)) return path;
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : run_dir) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  static const char* hex = "0123456789abcdef";
  std::string digits(16, '0');
  for (int i = 15; i >= 0; --i, h >>= 4) digits[static_cast<size_t>(i)] = hex[h & 15];
  return "@" + std::string(kAbstractPrefix) + digits;
}

void limits_unlink(const std::string& address) {
  if (address.empty() || address[0] == '@') return;
  struct stat st {};
  if (::lstat(address.c_str(), &st) == 0 && S_ISSOCK(st.st_mode)) ::unlink(address.c_str());
}

Expected<int> limits_listen(const std::string& address) {
  DG_TRY(auto sa, to_sockaddr(address));
  if (address[0] != '@') {
    struct stat st {};
    if (::lstat(address.c_str(), &st) == 0) {
      if (!S_ISSOCK(st.st_mode))
        return fail(ErrorKind::refused, address + " exists and is not a socket");
      ::unlink(address.c_str());
    }
  }
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return fail("socket: " + errno_text());
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&sa.first), sa.second) != 0 ||
      ::listen(fd, 64) != 0) {
    std::string why = errno_text();
    ::close(fd);
    return fail("cannot listen at " + address + ": " + why);
  }
  return fd;
}

Expected<int> limits_connect(const std::string& address) {
  DG_TRY(auto sa, to_sockaddr(address));
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return fail("socket: " + errno_text());
  int r;
  do {
    r = ::connect(fd, reinterpret_cast<const sockaddr*>(&sa.first), sa.second);
  } while (r != 0 && errno == EINTR);
  if (r != 0) {
    int e = errno;
    ::close(fd);
    ErrorKind kind = e == ENOENT || e == ECONNREFUSED ? ErrorKind::not_found : ErrorKind::transient;
    return fail(kind, "cannot reach the run's limits at " + address + ": " + std::strerror(e));
  }
  return fd;
}

std::string limits_line(const Json& message) {
  return message.dump() + "\n";
}

Status limits_send(int fd, std::string_view line) {
  while (!line.empty()) {
    ssize_t n = ::send(fd, line.data(), line.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return fail(ErrorKind::transient, "limits socket: " + errno_text());
    line.remove_prefix(static_cast<size_t>(n));
  }
  return {};
}

bool LineBuffer::fill(int fd, std::string& why) {
  char buf[4096];
  while (true) {
    ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n > 0) {
      data_.append(buf, static_cast<size_t>(n));
      if (data_.size() > 4 * kLimitsMaxLine) {
        why = "more than " + std::to_string(4 * kLimitsMaxLine) + " bytes without a line end";
        return false;
      }
      continue;
    }
    if (n == 0) {
      why = "the other end closed the connection";
      return false;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return true;
    why = errno_text();
    return false;
  }
}

Expected<std::optional<std::string>> LineBuffer::next() {
  size_t nl = data_.find('\n');
  if (nl == std::string::npos) {
    if (data_.size() > kLimitsMaxLine) return fail("a limits line longer than 64 KiB");
    return std::optional<std::string>();
  }
  if (nl > kLimitsMaxLine) return fail("a limits line longer than 64 KiB");
  std::string line = data_.substr(0, nl);
  data_.erase(0, nl + 1);
  return std::optional<std::string>(std::move(line));
}

}  // namespace devgraph::bundle
