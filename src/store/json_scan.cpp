#include "store/json_scan.h"

#include <cstdint>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace devgraph {
namespace {

constexpr size_t kBad = std::string_view::npos;

// Where a scan reports the containers directly inside the scanned one.
struct NoChildren {
  void add(size_t, size_t) {}
};
struct ChildList {
  std::vector<JsonSpan>* out;
  void add(size_t begin, size_t end) { out->push_back({begin, end}); }
};

// The scanning state shared by both versions: one byte at a time, called
// only for the bytes that can change it.
template <typename Children>
class Nesting {
 public:
  explicit Nesting(Children children) : children_(children) {}
  // Returns true when `c` at `pos` closed the outermost bracket; sets
  // `bad` on a mismatch.
  bool step(char c, size_t pos) {
    if (in_string_) {
      if (c == '\\') {
        escaped_until_ = pos + 2;
      } else if (c == '"') {
        in_string_ = false;
      }
      return false;
    }
    if (c == '"') {
      in_string_ = true;
      return false;
    }
    return bracket(c, pos);
  }
  // A bracket known to stand outside any string.
  [[gnu::always_inline]] bool bracket(char c, size_t pos) {
    switch (c) {
      case '{':
      case '[':
        push(c == '{');
        if (depth_ == 2) child_begin_ = pos;
        return false;
      case '}':
      case ']':
        if (depth_ == 0 || top_is_brace() != (c == '}')) {
          bad_ = true;
          return true;
        }
        pop();
        if (depth_ == 1) children_.add(child_begin_, pos + 1);
        return depth_ == 0;
      default:
        return false;
    }
  }
  bool in_string() const { return in_string_; }
  void set_in_string(bool on) { in_string_ = on; }
  // Bytes before this index are escaped or already seen.
  size_t escaped_until() const { return escaped_until_; }
  bool bad() const { return bad_; }

 private:
  // The open brackets as a stack of bits (1 for '{', 0 for '['), the top
  // in bit 0 of `bits_`; words below the top 64 levels wait in `spilled_`.
  // A record opens a handful, so this stays in registers.
  void push(bool brace) {
    if (depth_ % 64 == 0 && depth_ != 0) [[unlikely]]
      spill();
    bits_ = (bits_ << 1) | uint64_t{brace};
    ++depth_;
  }
  void pop() {
    --depth_;
    bits_ >>= 1;
    if (depth_ % 64 == 0 && depth_ != 0) [[unlikely]]
      unspill();
  }
  [[gnu::noinline]] void spill() {
    spilled_.push_back(bits_);
    bits_ = 0;
  }
  [[gnu::noinline]] void unspill() {
    bits_ = spilled_.back();
    spilled_.pop_back();
  }
  bool top_is_brace() const { return (bits_ & 1) != 0; }

  Children children_;
  size_t child_begin_ = 0;
  bool in_string_ = false;
  bool bad_ = false;
  size_t escaped_until_ = 0;
  size_t depth_ = 0;
  uint64_t bits_ = 0;
  std::vector<uint64_t> spilled_;
};

bool is_interesting(char c) {
  return c == '"' || c == '\\' || c == '{' || c == '}' || c == '[' || c == ']';
}

template <typename Children>
size_t scan_scalar(std::string_view t, size_t i, Children children) {
  if (i >= t.size() || (t[i] != '{' && t[i] != '[')) return kBad;
  Nesting<Children> n(children);
  for (size_t pos = i; pos < t.size(); ++pos) {
    if (pos < n.escaped_until() || !is_interesting(t[pos])) continue;
    if (n.step(t[pos], pos)) return n.bad() ? kBad : pos + 1;
  }
  return kBad;
}

}  // namespace

size_t skip_json_container_scalar(std::string_view t, size_t i) {
  return scan_scalar(t, i, NoChildren{});
}

size_t scan_json_children_scalar(std::string_view t, size_t i, std::vector<JsonSpan>& children) {
  return scan_scalar(t, i, ChildList{&children});
}

#if defined(__SSE2__)

namespace {

// Bit k set where byte k of the 64 at `p` equals one of the targets.
struct ChunkMasks {
  uint64_t quotes, backslashes, brackets;
};

[[gnu::always_inline]] inline ChunkMasks classify(const char* p) {
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  // '[' and ']' are '{' and '}' without bit 5 (0x5b/0x7b, 0x5d/0x7d), and
  // no other byte turns into '{' or '}' when bit 5 is set.
  const __m128i bit5 = _mm_set1_epi8(0x20);
  const __m128i open = _mm_set1_epi8('{');
  const __m128i close = _mm_set1_epi8('}');
  ChunkMasks m{0, 0, 0};
  // Backslashes are rare: whether the 64 bytes hold one is all the fast
  // path needs, so their compares are gathered into one mask at the end.
  __m128i any_backslash = _mm_setzero_si128();
  auto bits = [](__m128i v) {
    return static_cast<uint64_t>(static_cast<unsigned>(_mm_movemask_epi8(v)));
  };
  for (int k = 0; k < 4; ++k) {
    __m128i block = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * k));
    __m128i folded = _mm_or_si128(block, bit5);
    m.quotes |= bits(_mm_cmpeq_epi8(block, quote)) << (16 * k);
    m.brackets |= bits(_mm_or_si128(_mm_cmpeq_epi8(folded, open), _mm_cmpeq_epi8(folded, close)))
                  << (16 * k);
    any_backslash = _mm_or_si128(any_backslash, _mm_cmpeq_epi8(block, backslash));
  }
  if (bits(any_backslash) != 0) {
    for (int k = 0; k < 4; ++k) {
      __m128i block = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * k));
      m.backslashes |= bits(_mm_cmpeq_epi8(block, backslash)) << (16 * k);
    }
  }
  return m;
}

// Bit k set when an odd number of bits at or below k are set in `x`: with
// x the quotes, the bytes from an opening quote up to its closing one.
uint64_t prefix_xor(uint64_t x) {
  x ^= x << 1;
  x ^= x << 2;
  x ^= x << 4;
  x ^= x << 8;
  x ^= x << 16;
  x ^= x << 32;
  return x;
}

template <typename Children>
size_t scan_simd(std::string_view t, size_t i, Children children) {
  if (i >= t.size() || (t[i] != '{' && t[i] != '[')) return kBad;
  Nesting<Children> n(children);
  const char* p = t.data();
  const size_t size = t.size();
  size_t pos = i;
  while (pos + 64 <= size) {
    const ChunkMasks m = classify(p + pos);
    if (m.backslashes != 0 || n.escaped_until() > pos) {
      // Escapes are rare in a state file: take such a chunk a byte at a
      // time.
      uint64_t hits = m.quotes | m.backslashes | m.brackets;
      while (hits != 0) {
        const size_t at = pos + static_cast<size_t>(__builtin_ctzll(hits));
        hits &= hits - 1;
        if (at < n.escaped_until()) continue;
        if (n.step(p[at], at)) return n.bad() ? kBad : at + 1;
      }
    } else {
      // Without escapes every quote opens or closes a string, so the
      // bytes inside strings are a prefix XOR away, and only the brackets
      // outside them need a look.
      uint64_t in_string = prefix_xor(m.quotes);
      if (n.in_string()) in_string = ~in_string;
      uint64_t live = m.brackets & ~in_string;
      while (live != 0) {
        const size_t at = pos + static_cast<size_t>(__builtin_ctzll(live));
        live &= live - 1;
        if (n.bracket(p[at], at)) return n.bad() ? kBad : at + 1;
      }
      n.set_in_string((in_string >> 63) != 0);
    }
    pos += 64;
  }
  for (; pos < size; ++pos) {
    if (pos < n.escaped_until() || !is_interesting(p[pos])) continue;
    if (n.step(p[pos], pos)) return n.bad() ? kBad : pos + 1;
  }
  return kBad;
}

}  // namespace

size_t skip_json_container(std::string_view t, size_t i) {
  return scan_simd(t, i, NoChildren{});
}

size_t scan_json_children(std::string_view t, size_t i, std::vector<JsonSpan>& children) {
  return scan_simd(t, i, ChildList{&children});
}

#else

size_t skip_json_container(std::string_view t, size_t i) {
  return skip_json_container_scalar(t, i);
}

size_t scan_json_children(std::string_view t, size_t i, std::vector<JsonSpan>& children) {
  return scan_json_children_scalar(t, i, children);
}

#endif

}  // namespace devgraph
