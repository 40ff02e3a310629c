#include "util/unsynced_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

namespace devgraph {
namespace {

Status write_all(int fd, std::string_view content, const std::string& path) {
  while (!content.empty()) {
    ssize_t w = ::write(fd, content.data(), content.size());
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return fail("cannot write " + path + ": " + std::strerror(errno));
    content.remove_prefix(static_cast<size_t>(w));
  }
  return {};
}

}  // namespace

Status replace_file(const std::string& path, std::string_view content) {
  static std::atomic<unsigned> counter{0};
  std::string tmp =
      path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter.fetch_add(1));
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return fail("cannot create " + tmp + ": " + std::strerror(errno));
  Status st = write_all(fd, content, tmp);
  ::close(fd);
  if (st && ::rename(tmp.c_str(), path.c_str()) != 0)
    st = fail("cannot replace " + path + ": " + std::strerror(errno));
  if (!st) ::unlink(tmp.c_str());
  return st;
}

Status append_file(const std::string& path, std::string_view content) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return fail("cannot open " + path + ": " + std::strerror(errno));
  Status st = write_all(fd, content, path);
  ::close(fd);
  return st;
}

}  // namespace devgraph
