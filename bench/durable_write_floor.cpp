// The least a durable checkpoint can cost on a given disk: a static
// program that does the file work of `devgraph checkpoint RUN move` and
// nothing else. It copies state.json (unchanged), appends one line to events.jsonl and
// flushes it, the copy going to a temporary file that it flushes,
// renames it over state.json and flushes the directory. With --no-log it
// skips the event line, leaving only what "durable and crash-consistent"
// asks for in so many words (temp file fsynced, renamed, directory
// fsynced).
//
// bench/checkpoint_move.sh times it beside devgraph: whatever devgraph's
// median is above this program's is devgraph's own cost; what this program
// takes is the machine's (process start-up and the disk's flushes).
//
// usage: durable_write_floor RUN_DIR [--no-log]
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

namespace {

int fail(const std::string& what) {
  std::fprintf(stderr, "durable_write_floor: %s: %s\n", what.c_str(), std::strerror(errno));
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3 || (argc == 3 && std::strcmp(argv[2], "--no-log") != 0)) {
    std::fprintf(stderr, "usage: durable_write_floor RUN_DIR [--no-log]\n");
    return 2;
  }
  const std::string dir = argv[1];
  const bool log = argc == 2;
  const std::string state = dir + "/state.json";

  // The state is copied inside the kernel: reading it into fresh memory
  // would cost a page fault per 4 KiB, which devgraph avoids and a floor
  // must not include.
  const int in = ::open(state.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) return fail(state);
  struct stat st {};
  if (::fstat(in, &st) != 0) return fail(state);

  if (log) {
    const std::string events = dir + "/events.jsonl";
    const int fd = ::open(events.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return fail(events);
    static const char kLine[] =
        "{\"ts\": \"2026-01-01T00:00:00+00:00\", \"seq\": 0, \"event\": \"FLOOR\"}\n";
    // One short append to a regular file: written whole or not at all.
    const auto size = static_cast<ssize_t>(sizeof kLine - 1);
    if (::write(fd, kLine, sizeof kLine - 1) != size || ::fdatasync(fd) != 0) return fail(events);
    ::close(fd);
  }

  const std::string tmp = state + ".floor." + std::to_string(::getpid());
  const int out = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (out < 0) return fail(tmp);
  for (off_t left = st.st_size; left > 0;) {
    const ssize_t n = ::copy_file_range(in, nullptr, out, nullptr, static_cast<size_t>(left), 0);
    if (n <= 0) return fail(tmp);
    left -= n;
  }
  if (::fsync(out) != 0) return fail(tmp);
  ::close(out);
  ::close(in);
  if (::rename(tmp.c_str(), state.c_str()) != 0) return fail(state);
  const int d = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (d < 0 || ::fsync(d) != 0) return fail(dir);
  ::close(d);
  return 0;
}
