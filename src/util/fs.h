// Durable file primitives: whole-file reads, atomic replacement, durable
// appends and an exclusive advisory lock.
//
// Contracts:
// - write_file_atomic() leaves either the old or the new content at `path`,
//   never a mix: it writes a temporary file in the same directory, fsyncs
//   it, renames it over `path` and fsyncs the directory.
// - append_durable() returns only after the bytes reached the disk.
// - FileLock holds flock(LOCK_EX) on a file until it is destroyed; it
//   interoperates with Python's fcntl.flock on the same file.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/expected.h"

namespace devgraph {

Expected<std::string> read_file(const std::string& path);
// A regular file's bytes, for files from somewhere untrusted (a repository
// being inspected): anything but a regular file (a FIFO, a device, a
// directory) is refused without blocking on it, and a file longer than
// `limit` bytes is refused after reading at most limit + 1 of them. Errors
// name the path; a missing file (or directory above it) is not_found.
Expected<std::string> read_file_at_most(const std::string& path, size_t limit);

// A file's bytes in a heap buffer that is never zero-filled first: a
// std::string of the size would write every byte once before the read
// writes it again, which for a 370 KB state file is a memset as long as
// the read itself.
class FileBuffer {
 public:
  FileBuffer() = default;
  // A buffer holding `bytes` (for callers that have the text already).
  static FileBuffer copy_of(std::string_view bytes);
  std::string_view view() const { return {bytes_.get(), size_}; }
  char* data() { return bytes_.get(); }
  size_t size() const { return size_; }
  // Room for `size` bytes; the first min(size, size()) are kept.
  void grow(size_t size);
  // Forgets every byte past `size` (no reallocation).
  void truncate(size_t size) { size_ = std::min(size, size_); }

 private:
  std::unique_ptr<char[]> bytes_;
  size_t size_ = 0;
};
// What tells one version of a file from another: replacing it (a new
// inode) or rewriting it in place (a new ctime, which no program can set
// back) changes it.
struct FileIdentity {
  uint64_t device = 0;
  uint64_t inode = 0;
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  int64_t ctime_ns = 0;
  bool operator==(const FileIdentity&) const = default;
};
Expected<FileIdentity> file_identity(const std::string& path);
// read_file() into a FileBuffer; `identity`, when given, receives the
// identity of the file that was read (taken from the open descriptor).
Expected<FileBuffer> read_file_buffer(const std::string& path, FileIdentity* identity = nullptr);
// Whether the file at `path` holds exactly `bytes`. It is compared a block
// at a time through a buffer on the stack, so a match costs no copy of the
// file on the heap (a command compares its skill's GRAPH.yaml with the
// copy compiled in, and takes the compiled graph when they match). A file
// that cannot be read is an error.
Expected<bool> file_has_bytes(const std::string& path, std::string_view bytes);
bool path_exists(const std::string& path);
// The size of the file at `path` (symlinks followed); 0 when it cannot be
// read.
size_t file_size(const std::string& path);
bool is_directory(const std::string& path);

Status write_file_atomic(const std::string& path, std::string_view content, int mode = 0644);
// The same, for content given as consecutive pieces (written with writev,
// so a file assembled from spans of other buffers is never copied whole).
Status write_file_atomic(const std::string& path, const std::vector<std::string_view>& pieces,
                         int mode = 0644);
Status append_durable(const std::string& path, std::string_view content);
Status truncate_durable(const std::string& path, std::uint64_t size);
Status fsync_directory(const std::string& dir);
// mkdir -p; succeeds when the directory already exists.
// A regular file (after symlinks) this process may read.
bool is_readable_file(const std::string& path);
// A new directory `prefix` + six random characters (mkdtemp), mode 0700.
Expected<std::string> make_temp_directory(const std::string& prefix);
Status make_directories(const std::string& path);

std::string dirname_of(const std::string& path);
std::string basename_of(const std::string& path);
std::string join_path(const std::string& a, const std::string& b);
// An absolute, lexically normalized path (no symlink resolution).
std::string absolute_path(const std::string& path);

class FileLock {
 public:
  // Blocks until the lock is held. Creates the lock file when missing.
  static Expected<FileLock> acquire(const std::string& path);
  // Takes the lock only if nobody holds it: nullopt when somebody does.
  static Expected<std::optional<FileLock>> try_acquire(const std::string& path);
  FileLock(FileLock&& other) noexcept;
  FileLock& operator=(FileLock&& other) noexcept;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock();

  // The lock file's content, for a note from one holder to the next (the
  // reference opens the file for appending and never writes to it). At most
  // the first `limit` bytes are read.
  Expected<std::string> read_note(size_t limit = 256) const;
  // Replaces the content with `text`. Not flushed: a note is a hint that
  // a crash may lose or cut short, so readers must check what they read.
  Status write_note(std::string_view text) const;

 private:
  FileLock(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  int fd_ = -1;
  std::string path_;
};

// A directory removed (recursively) when the object dies. For tests, the
// demo and scratch work; `keep()` turns the removal off.
class TempDir {
 public:
  static Expected<TempDir> create(const std::string& prefix = "devgraph");
  TempDir(TempDir&& other) noexcept;
  TempDir& operator=(TempDir&&) = delete;
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir();
  const std::string& path() const { return path_; }
  void keep() { keep_ = true; }

 private:
  explicit TempDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
  bool keep_ = false;
};

Status remove_tree(const std::string& path);

}  // namespace devgraph
