#include "util/console.h"

#include <cstdio>
#include <cstdlib>
#include <streambuf>

namespace devgraph {
namespace {

// A stream buffer that hands every byte to a C stdio stream at once; the
// buffering is stdio's.
class StdioBuf : public std::streambuf {
 public:
  explicit StdioBuf(std::FILE* f) : f_(f) {}

 protected:
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    return std::fputc(c, f_) == EOF ? traits_type::eof() : c;
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    return static_cast<std::streamsize>(std::fwrite(s, 1, static_cast<size_t>(n), f_));
  }
  int sync() override { return std::fflush(f_) == 0 ? 0 : -1; }

 private:
  std::FILE* f_;
};

}  // namespace

std::ostream& out() {
  static StdioBuf buf(stdout);
  static std::ostream stream(&buf);
  return stream;
}

std::ostream& err() {
  static StdioBuf buf(stderr);
  static std::ostream stream(&buf);
  return stream;
}

void write_out(std::string_view text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
}

std::optional<std::string> read_stdin_line() {
  char* line = nullptr;
  size_t capacity = 0;
  ssize_t n = ::getline(&line, &capacity, stdin);
  if (n < 0) {
    std::free(line);
    return std::nullopt;
  }
  std::string text(line, static_cast<size_t>(n));
  std::free(line);
  if (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

}  // namespace devgraph
