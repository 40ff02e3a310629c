#include "util/fs.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>

namespace devgraph {
namespace {

std::string errno_text(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + std::strerror(errno);
}

// Opens `path` for reading; the error names it.
Expected<int> open_for_reading(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return fail(errno == ENOENT ? ErrorKind::not_found : ErrorKind::refused,
                errno_text("cannot read", path));
  return fd;
}

// Closes a descriptor when it goes out of scope.
struct CloseOnExit {
  int fd;
  ~CloseOnExit() { ::close(fd); }
};

// One read(2) of up to `n` bytes, again when a signal interrupts it; 0 at
// the end of the file. The error names `path`.
Expected<size_t> read_some(int fd, char* buf, size_t n, const std::string& path) {
  for (;;) {
    ssize_t got = ::read(fd, buf, n);
    if (got >= 0) return static_cast<size_t>(got);
    if (errno != EINTR) return fail(errno_text("cannot read", path));
  }
}

Status write_all(int fd, std::string_view data, const std::string& path) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail(errno_text("cannot write", path));
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return {};
}

Status write_all(int fd, const std::vector<std::string_view>& pieces, const std::string& path) {
  std::vector<iovec> iov;
  iov.reserve(pieces.size());
  for (std::string_view p : pieces)
    if (!p.empty()) iov.push_back({const_cast<char*>(p.data()), p.size()});
  size_t next = 0;
  while (next < iov.size()) {
    int count = static_cast<int>(std::min<size_t>(iov.size() - next, IOV_MAX));
    ssize_t n = ::writev(fd, &iov[next], count);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail(errno_text("cannot write", path));
    }
    // Step past what was written, possibly ending inside a piece.
    size_t done = static_cast<size_t>(n);
    while (next < iov.size() && done >= iov[next].iov_len) done -= iov[next++].iov_len;
    if (done > 0) {
      iov[next].iov_base = static_cast<char*>(iov[next].iov_base) + done;
      iov[next].iov_len -= done;
    }
  }
  return {};
}

FileIdentity identity_of(const struct stat& st) {
  FileIdentity id;
  id.device = static_cast<uint64_t>(st.st_dev);
  id.inode = static_cast<uint64_t>(st.st_ino);
  id.size = static_cast<uint64_t>(st.st_size);
  id.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  id.ctime_ns = static_cast<int64_t>(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec;
  return id;
}

// Reads the file at `path` into `out`, which grows as `grow(out, size)`
// says (keeping what it holds); returns the number of bytes read.
template <typename Buffer, typename Grow>
Expected<size_t> read_whole(const std::string& path, Buffer& out, Grow grow,
                            FileIdentity* identity = nullptr) {
  DG_TRY(const int fd, open_for_reading(path));
  const CloseOnExit closer{fd};
  struct stat st {};
  size_t expected = 0;
  if (::fstat(fd, &st) != 0) {
    if (identity != nullptr) return fail(errno_text("cannot stat", path));
  } else {
    if (st.st_size > 0) expected = static_cast<size_t>(st.st_size);
    if (identity != nullptr) *identity = identity_of(st);
  }
  // Read straight into the result; one byte of room beyond the size seen
  // tells end of file from a file that grew meanwhile.
  grow(out, expected + 1);
  size_t have = 0;
  for (;;) {
    if (have == out.size()) grow(out, out.size() * 2);
    const size_t want = out.size() - have;
    DG_TRY(const size_t n, read_some(fd, out.data() + have, want, path));
    if (n == 0) break;
    have += n;
    // A regular file answers a read short only at its end: once the size
    // stat gave is in, a short read needs no second read to see the end.
    // (Pipes, devices and /proc files, whose stat size is 0, are asked.)
    if (expected > 0 && S_ISREG(st.st_mode) && have >= expected && n < want) break;
  }
  return have;
}

}  // namespace

Expected<std::string> read_file(const std::string& path) {
  std::string out;
  DG_TRY(const size_t size, read_whole(path, out, [](std::string& s, size_t n) { s.resize(n); }));
  out.resize(size);
  return out;
}

Expected<std::string> read_file_at_most(const std::string& path, size_t limit) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; it changes
  // nothing for the regular files that are read.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0)
    return fail(errno == ENOENT || errno == ENOTDIR ? ErrorKind::not_found : ErrorKind::refused,
                errno_text("cannot read", path));
  const CloseOnExit closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) return fail(errno_text("cannot stat", path));
  if (!S_ISREG(st.st_mode)) return fail("cannot read " + path + ": not a regular file");
  const auto too_long = [&] {
    return fail("cannot read " + path + ": longer than " + std::to_string(limit) + " bytes");
  };
  if (static_cast<uint64_t>(st.st_size) > limit) return too_long();
  // One byte of room past the limit tells a file that grew past it.
  std::string out(static_cast<size_t>(st.st_size) + 1, '\0');
  size_t have = 0;
  for (;;) {
    if (have == out.size()) {
      if (have > limit) return too_long();
      out.resize(std::min(out.size() * 2, limit + 1));
    }
    DG_TRY(const size_t n, read_some(fd, out.data() + have, out.size() - have, path));
    if (n == 0) break;
    have += n;
  }
  if (have > limit) return too_long();
  out.resize(have);
  return out;
}

FileBuffer FileBuffer::copy_of(std::string_view bytes) {
  FileBuffer b;
  b.grow(bytes.size());
  if (!bytes.empty()) std::memcpy(b.data(), bytes.data(), bytes.size());
  return b;
}

void FileBuffer::grow(size_t size) {
  // new char[] leaves the bytes as they are: nothing is written before the
  // file's bytes are.
  std::unique_ptr<char[]> bigger(new char[size]);
  if (size_ > 0) std::memcpy(bigger.get(), bytes_.get(), std::min(size, size_));
  bytes_ = std::move(bigger);
  size_ = size;
}

Expected<FileIdentity> file_identity(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return fail(errno_text("cannot stat", path));
  return identity_of(st);
}

Expected<FileBuffer> read_file_buffer(const std::string& path, FileIdentity* identity) {
  FileBuffer out;
  DG_TRY(const size_t size, read_whole(
                                path, out, [](FileBuffer& b, size_t n) { b.grow(n); }, identity));
  out.truncate(size);
  return out;
}

Expected<bool> file_has_bytes(const std::string& path, std::string_view bytes) {
  DG_TRY(const int fd, open_for_reading(path));
  const CloseOnExit closer{fd};
  struct stat st {};
  // A size of 0 may be a /proc file's; only a positive size is trusted.
  const bool regular = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0;
  if (regular && static_cast<uint64_t>(st.st_size) != bytes.size()) return false;
  // One page: each further page of a fresh stack is a page fault, which
  // costs more here than the extra reads of a small block.
  char block[4 << 10];
  size_t at = 0;
  for (;;) {
    DG_TRY(const size_t n, read_some(fd, block, sizeof block, path));
    if (n == 0) break;
    if (n > bytes.size() - at || std::memcmp(block, bytes.data() + at, n) != 0) return false;
    at += n;
    // The size fstat gave has been read: as with read_file, a regular
    // file's end needs no further read.
    if (regular && at == bytes.size()) break;
  }
  return at == bytes.size();
}

size_t file_size(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || st.st_size < 0) return 0;
  return static_cast<size_t>(st.st_size);
}

bool path_exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

bool is_directory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string dirname_of(const std::string& path) {
  auto p = std::filesystem::path(path).parent_path().string();
  return p.empty() ? "." : p;
}

std::string basename_of(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

std::string join_path(const std::string& a, const std::string& b) {
  if (a.empty() || (!b.empty() && b[0] == '/')) return b;
  if (a.back() == '/') return a + b;
  return a + "/" + b;
}

std::string absolute_path(const std::string& path) {
  std::error_code ec;
  auto abs = std::filesystem::absolute(path, ec);
  if (ec) return path;
  std::string s = abs.lexically_normal().string();
  if (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

Status fsync_directory(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return fail(errno_text("cannot open directory", dir));
  int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) return fail(errno_text("cannot fsync directory", dir));
  return {};
}

Status make_directories(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec && !is_directory(path))
    return fail("cannot create directory " + path + ": " + ec.message());
  return {};
}

Status write_file_atomic(const std::string& path, std::string_view content, int mode) {
  return write_file_atomic(path, std::vector<std::string_view>{content}, mode);
}

Status write_file_atomic(const std::string& path, const std::vector<std::string_view>& pieces,
                         int mode) {
  static std::atomic<unsigned> counter{0};
  const std::string dir = dirname_of(path);
  const std::string tmp =
      path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter.fetch_add(1));
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) return fail(errno_text("cannot create", tmp));
  Status st = write_all(fd, pieces, tmp);
  if (st && ::fsync(fd) != 0) st = fail(errno_text("cannot fsync", tmp));
  ::close(fd);
  if (st && ::rename(tmp.c_str(), path.c_str()) != 0) st = fail(errno_text("cannot replace", path));
  if (!st) {
    ::unlink(tmp.c_str());
    return st;
  }
  return fsync_directory(dir);
}

Status append_durable(const std::string& path, std::string_view content) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return fail(errno_text("cannot open", path));
  Status st = write_all(fd, content, path);
  if (st && ::fdatasync(fd) != 0) st = fail(errno_text("cannot fsync", path));
  ::close(fd);
  return st;
}

Status truncate_durable(const std::string& path, std::uint64_t size) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return fail(errno_text("cannot open", path));
  Status st;
  if (::ftruncate(fd, static_cast<off_t>(size)) != 0)
    st = fail(errno_text("cannot truncate", path));
  if (st && ::fsync(fd) != 0) st = fail(errno_text("cannot fsync", path));
  ::close(fd);
  return st;
}

Expected<FileLock> FileLock::acquire(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return fail(errno_text("cannot open lock file", path));
  while (::flock(fd, LOCK_EX) != 0) {
    if (errno == EINTR) continue;
    Error e = fail(errno_text("cannot lock", path));
    ::close(fd);
    return e;
  }
  return FileLock(fd, path);
}

Expected<std::optional<FileLock>> FileLock::try_acquire(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return fail(errno_text("cannot open lock file", path));
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    const int err = errno;
    ::close(fd);
    if (err == EWOULDBLOCK) return std::optional<FileLock>();
    errno = err;
    return fail(errno_text("cannot lock", path));
  }
  return std::optional<FileLock>(FileLock(fd, path));
}

FileLock::FileLock(FileLock&& other) noexcept : fd_(other.fd_), path_(std::move(other.path_)) {
  other.fd_ = -1;
}

FileLock& FileLock::operator=(FileLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    path_ = std::move(other.path_);
    other.fd_ = -1;
  }
  return *this;
}

FileLock::~FileLock() {
  // Closing the descriptor releases the flock.
  if (fd_ >= 0) ::close(fd_);
}

Expected<std::string> FileLock::read_note(size_t limit) const {
  std::string text(limit, '\0');
  for (;;) {
    const ssize_t n = ::pread(fd_, text.data(), limit, 0);
    if (n >= 0) {
      text.resize(static_cast<size_t>(n));
      return text;
    }
    if (errno != EINTR) return fail(errno_text("cannot read", path_));
  }
}

Status FileLock::write_note(std::string_view text) const {
  if (::ftruncate(fd_, 0) != 0 || ::lseek(fd_, 0, SEEK_SET) != 0)
    return fail(errno_text("cannot write", path_));
  return write_all(fd_, {text}, path_);
}

Expected<TempDir> TempDir::create(const std::string& prefix) {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = std::string(base && *base ? base : "/tmp") + "/" + prefix + "-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) return fail(errno_text("cannot create", pattern));
  return TempDir(pattern);
}

TempDir::TempDir(TempDir&& other) noexcept : path_(std::move(other.path_)), keep_(other.keep_) {
  other.keep_ = true;
  other.path_.clear();
}

TempDir::~TempDir() {
  if (!keep_ && !path_.empty()) (void)remove_tree(path_);
}

Status remove_tree(const std::string& path) {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
  if (ec) return fail("cannot remove " + path + ": " + ec.message());
  return {};
}

Expected<std::string> make_temp_directory(const std::string& prefix) {
  std::string pattern = prefix + "XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr)
    return fail("cannot make a directory " + pattern + ": " + std::strerror(errno));
  return pattern;
}

bool is_readable_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), R_OK) == 0;
}

}  // namespace devgraph
