#include "store/state_cache.h"

#include <time.h>

#include <cstring>
#include <optional>
#include <unordered_map>
#include <vector>

#include "store/json_scan.h"

namespace devgraph {
namespace {

constexpr size_t kBad = std::string_view::npos;
using Object = Json::object_t;
using Pairs = Object::Container;

bool is_ws(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

size_t skip_ws(std::string_view t, size_t i) {
  while (i < t.size() && is_ws(t[i])) ++i;
  return i;
}

// i at an opening quote: the index after the closing one.
size_t skip_string(std::string_view t, size_t i) {
  for (++i; i < t.size(); ++i) {
    const void* q = std::memchr(t.data() + i, '"', t.size() - i);
    if (q == nullptr) return kBad;
    size_t quote = static_cast<const char*>(q) - t.data();
    const void* b = std::memchr(t.data() + i, '\\', quote - i);
    if (b == nullptr) return quote + 1;
    i = static_cast<size_t>(static_cast<const char*>(b) - t.data()) + 1;  // the loop skips the escaped byte
  }
  return kBad;
}

size_t skip_value(std::string_view t, size_t i) {
  if (i >= t.size()) return kBad;
  char c = t[i];
  if (c == '"') return skip_string(t, i);
  if (c == '{' || c == '[') return skip_json_container(t, i);
  size_t start = i;
  while (i < t.size() && !is_ws(t[i]) && t[i] != ',' && t[i] != '}' && t[i] != ']') ++i;
  return i == start ? kBad : i;
}

// One member of an object (with its key) or item of a list.
struct Part {
  std::string key;
  size_t begin = 0;
  size_t end = 0;
};

// The members or items of the container at t[i], which must end at `end`;
// nullopt when the text is not followed (or an object repeats a key, which
// the parser resolves by Python's rule).
std::optional<std::vector<Part>> split(std::string_view t, size_t i, size_t end) {
  const bool object = t[i] == '{';
  const char close = object ? '}' : ']';
  std::vector<Part> parts;
  std::unordered_map<std::string, size_t> seen;
  i = skip_ws(t, i + 1);
  if (i < end && t[i] == close) return i + 1 == end ? std::optional(parts) : std::nullopt;
  while (true) {
    Part p;
    if (object) {
      if (i >= end || t[i] != '"') return std::nullopt;
      size_t key_end = skip_string(t, i);
      if (key_end == kBad || key_end > end) return std::nullopt;
      std::string_view quoted = t.substr(i, key_end - i);
      if (quoted.find('\\') == std::string_view::npos) {
        p.key = std::string(quoted.substr(1, quoted.size() - 2));
      } else {
        auto k = parse_json(quoted, "key");
        if (!k || !k->is_string()) return std::nullopt;
        p.key = k->get<std::string>();
      }
      if (!seen.emplace(p.key, parts.size()).second) return std::nullopt;
      i = skip_ws(t, key_end);
      if (i >= end || t[i] != ':') return std::nullopt;
      i = skip_ws(t, i + 1);
    }
    size_t value_end = skip_value(t, i);
    if (value_end == kBad || value_end > end) return std::nullopt;
    p.begin = i;
    p.end = value_end;
    parts.push_back(std::move(p));
    i = skip_ws(t, value_end);
    if (i < end && t[i] == ',') {
      i = skip_ws(t, i + 1);
      continue;
    }
    if (i < end && t[i] == close && i + 1 == end) return parts;
    return std::nullopt;
  }
}

bool is_container(std::string_view t, const Part& p) {
  return t[p.begin] == '{' || t[p.begin] == '[';
}

std::string_view text_of(std::string_view t, const Part& p) {
  return t.substr(p.begin, p.end - p.begin);
}

class Reparser {
 public:
  Reparser(std::string_view old_text, bool may_move, std::string_view new_text,
           std::string_view what)
      : old_(old_text), new_(new_text), move_(may_move), what_(what) {}

  size_t parsed = 0;

  // The value `old_value` (parsed from old_[op]) when its text equals
  // new_[np], else the parse of new_[np], going one level down into
  // containers while `depth` > 0.
  std::optional<Json> value(Json* old_value, const Part* op, const Part& np, int depth) {
    std::string_view now = text_of(new_, np);
    if (old_value != nullptr && op != nullptr && text_of(old_, *op) == now) return take(*old_value);
    if (depth > 0 && old_value != nullptr && op != nullptr && is_container(new_, np) &&
        new_[np.begin] == old_[op->begin] &&
        (old_value->is_object() || old_value->is_array()) &&
        (new_[np.begin] == '{') == old_value->is_object())
      return container(*old_value, *op, np, depth - 1);
    return parse(now);
  }

  // The container new_[np], reusing the children of `old_value` (old_[op]).
  std::optional<Json> container(Json& old_value, const Part& op, const Part& np, int depth) {
    auto old_parts = split(old_, op.begin, op.end);
    auto new_parts = split(new_, np.begin, np.end);
    if (!new_parts) return parse(text_of(new_, np));
    if (!old_parts || old_parts->size() != old_value.size()) old_parts.emplace();
    if (new_[np.begin] == '{') {
      Pairs& old_pairs = old_value.get_ref<Object&>();
      // The old children by key; a position is used only if the parsed
      // object agrees with the text about the key there.
      std::unordered_map<std::string_view, size_t> at;
      for (size_t k = 0; k < old_parts->size(); ++k)
        if (old_pairs[k].first == (*old_parts)[k].key) at.emplace((*old_parts)[k].key, k);
      Json out(Json::value_t::object);
      Pairs& pairs = out.get_ref<Object&>();
      pairs.reserve(new_parts->size());
      for (const Part& p : *new_parts) {
        auto it = at.find(p.key);
        Json* ov = it == at.end() ? nullptr : &old_pairs[it->second].second;
        const Part* opp = it == at.end() ? nullptr : &(*old_parts)[it->second];
        auto v = value(ov, opp, p, depth);
        if (!v) return std::nullopt;
        pairs.emplace_back(p.key, std::move(*v));
      }
      return out;
    }
    Json out = Json::array();
    out.get_ref<Json::array_t&>().reserve(new_parts->size());
    for (size_t k = 0; k < new_parts->size(); ++k) {
      bool have = k < old_parts->size();
      auto v = value(have ? &old_value[k] : nullptr, have ? &(*old_parts)[k] : nullptr,
                     (*new_parts)[k], depth);
      if (!v) return std::nullopt;
      out.push_back(std::move(*v));
    }
    return out;
  }

 private:
  Json take(Json& v) { return move_ ? std::move(v) : v; }

  std::optional<Json> parse(std::string_view text) {
    parsed += text.size();
    auto j = parse_json(text, what_);
    if (!j) return std::nullopt;
    return std::move(*j);
  }

  std::string_view old_, new_;
  bool move_;
  std::string_view what_;
};

// The root object's span in `t`: [first '{', after its '}'], with only
// whitespace around it; nullopt otherwise.
std::optional<Part> root_of(std::string_view t) {
  size_t i = skip_ws(t, 0);
  if (i >= t.size() || t[i] != '{') return std::nullopt;
  size_t end = skip_json_container(t, i);
  if (end == kBad || skip_ws(t, end) != t.size()) return std::nullopt;
  Part p;
  p.begin = i;
  p.end = end;
  return p;
}

int64_t wall_ns() {
  struct timespec ts {};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// A file changed within this long before it was read may change again
// without its identity showing it (timestamps move by the kernel's tick,
// and a freed inode number is soon given to the next file).
constexpr int64_t kRacyNs = 100 * 1000 * 1000;

}  // namespace

Expected<Json> reparse_state(std::string_view old_text, Json& old_state, bool may_move,
                             std::string_view new_text, std::string_view what,
                             size_t* parsed_bytes) {
  auto whole = [&]() -> Expected<Json> {
    if (parsed_bytes) *parsed_bytes = new_text.size();
    return parse_json(new_text, what);
  };
  auto old_root = root_of(old_text);
  auto new_root = root_of(new_text);
  if (!old_root || !new_root || !old_state.is_object()) return whole();
  // Two levels: the top-level values and their members or items.
  Reparser r(old_text, may_move, new_text, what);
  auto out = r.container(old_state, *old_root, *new_root, 1);
  if (!out) return whole();
  if (parsed_bytes) *parsed_bytes = r.parsed;
  return std::move(*out);
}

void StateCache::reset() {
  text_.clear();
  state_.reset();
}

Expected<std::shared_ptr<const Json>> StateCache::get() {
  if (!path_exists(path_)) return fail(path_ + ": no such run state");
  if (state_ && trusted_) {
    if (auto id = file_identity(path_); id && *id == identity_) return std::shared_ptr<const Json>(state_);
  }
  const int64_t started = wall_ns();
  FileIdentity id;
  DG_TRY(FileBuffer buffer, read_file_buffer(path_, &id));
  ++file_reads_;
  std::string_view text = buffer.view();
  identity_ = id;
  trusted_ = started - id.ctime_ns > kRacyNs;
  if (state_ && text == text_) return std::shared_ptr<const Json>(state_);
  Json next;
  if (state_) {
    size_t parsed = 0;
    auto r = reparse_state(text_, *state_, state_.use_count() == 1, text, path_, &parsed);
    parsed_bytes_ += parsed;
    if (parsed == text.size()) ++whole_parses_;
    if (!r) {
      reset();  // values may have been moved out of the kept state
      return r.error();
    }
    next = std::move(*r);
  } else {
    ++whole_parses_;
    DG_TRY(next, parse_json(text, path_));
    parsed_bytes_ += text.size();
  }
  text_.assign(text);
  state_ = std::make_shared<Json>(std::move(next));
  return std::shared_ptr<const Json>(state_);
}

}  // namespace devgraph
