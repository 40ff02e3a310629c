#include "store/event_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "util/fs.h"

namespace devgraph {
namespace {

// The seq of one complete line, or nullopt when the line is not an event.
std::optional<long long> seq_of(std::string_view line) {
  // Fast path for lines this module and the reference write: the record
  // starts with "ts", then "seq"; anything else falls back to a full parse.
  static constexpr std::string_view kKey = "\"seq\": ";
  auto pos = line.find(kKey);
  if (pos != std::string_view::npos && pos < 64) {
    size_t i = pos + kKey.size();
    long long v = 0;
    size_t digits = 0;
    while (i < line.size() && line[i] >= '0' && line[i] <= '9' && digits < 18) {
      v = v * 10 + (line[i] - '0');
      ++i;
      ++digits;
    }
    if (digits > 0 && i < line.size() && (line[i] == ',' || line[i] == '}')) return v;
  }
  try {
    Json j = Json::parse(line);
    if (j.is_object() && j.contains("seq") && j["seq"].is_number_integer())
      return j["seq"].get<long long>();
  } catch (const Json::exception&) {
  }
  return std::nullopt;
}

Status read_range(int fd, std::uint64_t from, std::uint64_t to, std::string& out,
                  const std::string& path) {
  out.resize(to - from);
  std::uint64_t done = 0;
  while (done < out.size()) {
    ssize_t n = ::pread(fd, out.data() + done, out.size() - done, static_cast<off_t>(from + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return fail(path + ": cannot read: " + std::strerror(errno ? errno : EIO));
    done += static_cast<std::uint64_t>(n);
  }
  return {};
}

}  // namespace

Expected<LogRepair> repair_event_log(const std::string& events_path,
                                     std::optional<long long> state_seq) {
  LogRepair r;
  if (!state_seq) return r;
  int fd = ::open(events_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return r;
    return fail(events_path + ": cannot open: " + std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    return fail(events_path + ": cannot stat: " + std::strerror(errno));
  }
  const auto size = static_cast<std::uint64_t>(st.st_size);
  r.size_before = r.size_after = size;
  if (size == 0) {
    ::close(fd);
    return r;
  }
  std::uint64_t keep = size;  // bytes to keep
  if (*state_seq <= 0) {
    keep = 0;
  } else {
    // Walk complete lines backwards from the end, widening the window until
    // the line with the state's seq (or an older one) is inside it. In the
    // normal case that is the last line, so one small read suffices.
    std::uint64_t window = 4096;
    std::string buf;
    bool settled = false;
    while (!settled) {
      const std::uint64_t from = size > window ? size - window : 0;
      Status rs = read_range(fd, from, size, buf, events_path);
      if (!rs) {
        ::close(fd);
        return rs.error();
      }
      // Everything after the last '\n' is a torn line (or nothing).
      size_t end = buf.rfind('\n');
      if (end == std::string::npos) {
        if (from == 0) {  // not one complete line in the file
          keep = 0;
          settled = true;
        }
        window *= 4;
        continue;
      }
      keep = from + end + 1;  // at least drop the torn tail
      size_t line_end = end;  // exclusive end of the current line (its '\n')
      while (true) {
        size_t start = line_end == 0 ? std::string::npos : buf.rfind('\n', line_end - 1);
        size_t line_begin = start == std::string::npos ? 0 : start + 1;
        if (start == std::string::npos && from != 0) break;  // line may begin before the window
        std::string_view line(buf.data() + line_begin, line_end - line_begin);
        auto seq = seq_of(line);
        if (seq && *seq == *state_seq) {
          keep = from + line_end + 1;
          settled = true;
          break;
        }
        if (seq && *seq < *state_seq) {
          // The log ends below the state: nothing past here is a ghost, so
          // only the torn tail (if any) goes.
          keep = std::max<std::uint64_t>(keep, from + line_end + 1);
          settled = true;
          break;
        }
        if (line_begin == 0) {
          if (from == 0) {
            // No line at or below the state's seq: every line is a ghost.
            keep = 0;
            settled = true;
          }
          break;
        }
        line_end = line_begin - 1;
      }
      if (!settled) window *= 4;
    }
  }
  ::close(fd);
  if (keep < size) {
    DG_CHECK(truncate_durable(events_path, keep));
    r.size_after = keep;
  }
  return r;
}

Expected<long long> count_event_lines(const std::string& events_path) {
  if (!path_exists(events_path)) return 0LL;
  DG_TRY(std::string text, read_file(events_path));
  long long n = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    for (size_t i = pos; i < nl; ++i) {
      char c = text[i];
      if (c != ' ' && c != '\t' && c != '\r' && c != '\f' && c != '\v') {
        ++n;
        break;
      }
    }
    pos = nl + 1;
  }
  return n;
}

Json make_event(const std::string& ts, long long seq, const std::string& type, const Json& node,
                Json detail) {
  Json ev = Json::object();
  ev["ts"] = ts;
  ev["seq"] = seq;
  ev["type"] = type;
  ev["node"] = node;
  ev["detail"] = detail.is_null() ? Json::object() : std::move(detail);
  return ev;
}

std::string event_line(const Json& event) {
  return dump_py(event) + "\n";
}

}  // namespace devgraph
