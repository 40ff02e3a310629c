#include "store/deferred_state.h"

#include <algorithm>
#include <cstring>

#include "store/json_scan.h"

namespace devgraph {
namespace {

constexpr size_t kBad = std::string::npos;

bool is_ws(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

// A structural scanner: it finds where values end without building them.
// It checks what splicing depends on (strings end, brackets balance); the
// parser checks the rest of every byte it is given.
class Scanner {
 public:
  explicit Scanner(std::string_view t) : t_(t) {}

  size_t skip_ws(size_t i) const {
    while (i < t_.size() && is_ws(t_[i])) ++i;
    return i;
  }
  // i at an opening quote; returns the index after the closing one.
  size_t skip_string(size_t i) const {
    ++i;
    // Keys are short: look at their bytes directly before calling memchr.
    for (const size_t stop = std::min(t_.size(), i + 24); i < stop; ++i) {
      if (t_[i] == '"') return i + 1;
      if (t_[i] == '\\') {
        i += 2;
        break;
      }
    }
    while (i < t_.size()) {
      // Most of a state file is string bodies; find the next quote or
      // backslash a block at a time.
      const void* q = std::memchr(t_.data() + i, '"', t_.size() - i);
      if (q == nullptr) return kBad;
      size_t quote = static_cast<const char*>(q) - t_.data();
      const void* b = std::memchr(t_.data() + i, '\\', quote - i);
      if (b == nullptr) return quote + 1;
      i = static_cast<size_t>(static_cast<const char*>(b) - t_.data()) + 2;
    }
    return kBad;
  }
  size_t skip_value(size_t i) const {
    if (i >= t_.size()) return kBad;
    char c = t_[i];
    if (c == '"') return skip_string(i);
    if (c == '{' || c == '[') return skip_json_container(t_, i);
    size_t start = i;
    while (i < t_.size() && !is_ws(t_[i]) && t_[i] != ',' && t_[i] != '}' && t_[i] != ']') ++i;
    return i == start ? kBad : i;
  }
  bool at(size_t i, char c) const { return i < t_.size() && t_[i] == c; }
  bool ws_at(size_t i) const { return i < t_.size() && is_ws(t_[i]); }
  // Whether the text in [begin, end) is `lit` (a literal, so the compare
  // is a few instructions rather than a call).
  template <size_t N>
  bool is(size_t begin, size_t end, const char (&lit)[N]) const {
    if (end - begin != N - 1 || end > t_.size()) return false;
    // Byte by byte: with N known the loop unrolls into a few compares,
    // where memcmp of a size that is not a power of two is a call.
    for (size_t k = 0; k + 1 < N; ++k)
      if (t_[begin + k] != lit[k]) return false;
    return true;
  }
  template <size_t N>
  bool preceded_by(size_t i, const char (&lit)[N]) const {
    return i >= N - 1 && is(i - (N - 1), i, lit);
  }

 private:
  std::string_view t_;
};

std::optional<std::string> decode_key(std::string_view quoted) {
  std::string_view body = quoted.substr(1, quoted.size() - 2);
  if (body.find('\\') == std::string_view::npos) return std::string(body);
  auto decoded = parse_json(quoted, "key");
  if (!decoded || !decoded->is_string()) return std::nullopt;
  return decoded->get<std::string>();
}

}  // namespace

std::optional<DeferredState::Opened> DeferredState::open(
    std::string_view text, const std::vector<std::string>& deferred_maps) {
  return open(FileBuffer::copy_of(text), deferred_maps);
}

std::optional<DeferredState::Opened> DeferredState::open(
    FileBuffer text, const std::vector<std::string>& deferred_maps) {
  Opened opened;
  DeferredState& ds = opened.index;
  ds.text_ = std::move(text);
  const std::string_view t = ds.text_.view();
  // Spans are 32-bit offsets.
  if (t.size() >= UINT32_MAX) return std::nullopt;
  // The canonical layout begins like this; anything else takes the parser.
  if (t.substr(0, 5) != "{\n  \"") return std::nullopt;
  Scanner sc(t);
  std::string skeleton;  // the text with each deferred map's value as {}
  size_t copied = 0;
  size_t i = 1;
  while (true) {
    i = sc.skip_ws(i);
    if (!sc.at(i, '"')) return std::nullopt;
    size_t key_end = sc.skip_string(i);
    if (key_end == kBad) return std::nullopt;
    auto key = decode_key(t.substr(i, key_end - i));
    if (!key) return std::nullopt;
    i = sc.skip_ws(key_end);
    if (!sc.at(i, ':')) return std::nullopt;
    i = sc.skip_ws(i + 1);
    const bool deferred =
        std::find(deferred_maps.begin(), deferred_maps.end(), *key) != deferred_maps.end();
    if (deferred && sc.at(i, '{')) {
      Map map;
      map.name = *key;
      const size_t value_begin = i;
      // One pass over the whole map finds where every record's value
      // begins and ends; the loop below then reads only keys and
      // separators. (A record of the canonical layout takes a few hundred
      // bytes: room for all of them at once.)
      std::vector<JsonSpan> values;
      values.reserve(t.size() / 256);
      const size_t map_end = scan_json_children(t, value_begin, values);
      if (map_end == kBad) return std::nullopt;
      map.records.reserve(values.size());
      size_t next_value = 0;
      i = sc.skip_ws(i + 1);
      if (!sc.at(i, '}')) {
        while (true) {
          // Records sit four spaces deep in the canonical layout; the
          // splice keeps their text, so insist on it.
          if (!sc.preceded_by(i, "\n    ") || !sc.at(i, '"')) return std::nullopt;
          const size_t rkey_end = sc.skip_string(i);
          if (rkey_end == kBad) return std::nullopt;
          Raw raw;
          raw.key_text = {static_cast<uint32_t>(i), static_cast<uint32_t>(rkey_end)};
          const std::string_view quoted = t.substr(i, rkey_end - i);
          if (quoted.find('\\') != std::string_view::npos) {
            auto rkey = decode_key(quoted);
            if (!rkey) return std::nullopt;
            raw.decoded = static_cast<uint32_t>(map.decoded_keys.size());
            map.decoded_keys.push_back(std::move(*rkey));
          }
          // ": " is the canonical separator; anything else is read the
          // long way and makes the map not plain.
          if (sc.is(rkey_end, rkey_end + 2, ": ") && !sc.ws_at(rkey_end + 2)) {
            i = rkey_end + 2;
          } else {
            map.plain = false;
            i = sc.skip_ws(rkey_end);
            if (!sc.at(i, ':')) return std::nullopt;
            i = sc.skip_ws(i + 1);
          }
          size_t value_end = kBad;
          if (sc.at(i, '{') || sc.at(i, '[')) {
            if (next_value == values.size() || values[next_value].begin != i) return std::nullopt;
            value_end = values[next_value++].end;
          } else {
            value_end = sc.skip_value(i);
          }
          if (value_end == kBad) return std::nullopt;
          raw.value = {static_cast<uint32_t>(i), static_cast<uint32_t>(value_end)};
          map.records.push_back(raw);
          if (sc.is(value_end, value_end + 6, ",\n    ") && !sc.ws_at(value_end + 6)) {
            i = value_end + 6;
            continue;
          }
          i = sc.skip_ws(value_end);
          if (sc.at(i, ',')) {
            map.plain = false;
            i = sc.skip_ws(i + 1);
            continue;
          }
          if (sc.at(i, '}')) break;
          return std::nullopt;
        }
      }
      if (i + 1 != map_end || next_value != values.size()) return std::nullopt;
      ++i;  // past the map's closing brace
      if (!map.index_records(t)) map.plain = false;
      skeleton.append(t.substr(copied, value_begin - copied));
      skeleton.append("{}");
      copied = i;
      // A repeated top-level key: the last value wins.
      auto old = std::find_if(ds.maps_.begin(), ds.maps_.end(),
                              [&](const Map& m) { return m.name == map.name; });
      if (old != ds.maps_.end()) {
        *old = std::move(map);
      } else {
        ds.maps_.push_back(std::move(map));
      }
    } else {
      i = sc.skip_value(i);
      if (i == kBad) return std::nullopt;
      if (deferred) {
        // The last value wins: a non-object value after a deferred map
        // leaves nothing to splice.
        ds.maps_.erase(std::remove_if(ds.maps_.begin(), ds.maps_.end(),
                                      [&](const Map& m) { return m.name == *key; }),
                       ds.maps_.end());
      }
    }
    i = sc.skip_ws(i);
    if (sc.at(i, ',')) {
      ++i;
      continue;
    }
    if (sc.at(i, '}')) break;
    return std::nullopt;
  }
  if (sc.skip_ws(i + 1) != t.size()) return std::nullopt;
  skeleton.append(t.substr(copied));
  auto parsed = parse_json(skeleton, "state.json");
  if (!parsed || !parsed->is_object()) return std::nullopt;
  opened.state = std::move(*parsed);
  return opened;
}

namespace {

// FNV-1a: keys are a few bytes long, where it beats std::hash's
// block-wise hash, whose set-up costs more than the bytes.
size_t key_hash(std::string_view key) {
  uint64_t h = 14695981039346656037ull;
  for (const char c : key) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  // The table's index is the low bits; fold the better-mixed high ones in.
  return static_cast<size_t>(h ^ (h >> 29));
}

}  // namespace

std::string_view DeferredState::Map::key(std::string_view text, const Raw& raw) const {
  if (raw.decoded != kAsWritten) return decoded_keys[raw.decoded];
  return text.substr(raw.key_text.begin + 1, raw.key_text.end - raw.key_text.begin - 2);
}

size_t DeferredState::Map::find(std::string_view text, std::string_view k) const {
  if (slots.empty()) return std::string::npos;
  const size_t mask = slots.size() - 1;
  for (size_t at = key_hash(k) & mask;; at = (at + 1) & mask) {
    const uint32_t slot = slots[at];
    if (slot == 0) return std::string::npos;
    if (key(text, records[slot - 1]) == k) return slot - 1;
  }
}

bool DeferredState::Map::index_records(std::string_view text) {
  // Kept at most half full, so a probe ends at an empty slot soon; a power
  // of two, so the probe wraps with a mask.
  size_t size = 64;
  while (size < 2 * records.size()) size *= 2;
  slots.assign(size, 0);
  const size_t mask = size - 1;
  size_t kept = 0;
  for (size_t r = 0; r < records.size(); ++r) {
    const std::string_view k = key(text, records[r]);
    size_t at = key_hash(k) & mask;
    bool repeated = false;
    for (; slots[at] != 0; at = (at + 1) & mask) {
      Raw& earlier = records[slots[at] - 1];
      if (key(text, earlier) == k) {
        earlier.value = records[r].value;
        repeated = true;
        break;
      }
    }
    if (repeated) continue;
    // Records move down over the dropped ones; slots count the kept.
    if (kept != r) records[kept] = records[r];
    slots[at] = static_cast<uint32_t>(++kept);
  }
  const bool unique = kept == records.size();
  records.resize(kept);
  return unique;
}

const DeferredState::Map* DeferredState::find_map(const std::string& name) const {
  for (const auto& m : maps_)
    if (m.name == name) return &m;
  return nullptr;
}

DeferredState::Map* DeferredState::find_map(const std::string& name) {
  for (auto& m : maps_)
    if (m.name == name) return &m;
  return nullptr;
}

bool DeferredState::defers(const std::string& map) const {
  return find_map(map) != nullptr;
}

Expected<Json*> DeferredState::record(Json& state, const std::string& map_name,
                                      const std::string& key) const {
  const Map* map = find_map(map_name);
  if (map == nullptr) return static_cast<Json*>(nullptr);
  if (!state.contains(map_name)) return static_cast<Json*>(nullptr);
  Json& holder = state[map_name];
  if (!holder.is_object()) return static_cast<Json*>(nullptr);
  if (holder.contains(key)) return &holder[key];
  const size_t raw = map->find(text_.view(), key);
  if (raw == std::string::npos) return static_cast<Json*>(nullptr);
  DG_TRY(Json value,
         parse_json(text(map->records[raw].value), "state.json " + map_name + "[" + key + "]"));
  Json& slot = holder[key];
  slot = std::move(value);
  return &slot;
}

// The output of a dump as a list of pieces, each a span of the input text
// or of the generated text; adjacent spans of the same kind merge.
class DeferredState::Pieces {
 public:
  Pieces(std::string_view text, std::string& gen) : text_(text), gen_(gen) {}

  void gen(std::string_view s) {
    size_t b = gen_.size();
    gen_.append(s);
    add(false, b, gen_.size());
  }
  void gen_json(const Json& value, int indent, int level) {
    size_t b = gen_.size();
    append_py(gen_, value, indent, level);
    add(false, b, gen_.size());
  }
  void text(Span s) { add(true, s.begin, s.end); }
  // Emits `s`, from the input when the input holds exactly `s` at
  // [begin, end): then untouched records and their separators stay one
  // span.
  void same(std::string_view s, size_t begin, size_t end) {
    if (begin <= end && end <= text_.size() && text_.substr(begin, end - begin) == s) {
      add(true, begin, end);
    } else {
      gen(s);
    }
  }

  std::vector<std::string_view> views() const {
    std::vector<std::string_view> out;
    out.reserve(parts_.size());
    for (const Part& p : parts_)
      out.push_back(
          (p.from_text ? text_ : std::string_view(gen_)).substr(p.begin, p.end - p.begin));
    return out;
  }

 private:
  struct Part {
    bool from_text;
    size_t begin, end;
  };
  void add(bool from_text, size_t begin, size_t end) {
    if (begin == end) return;
    if (!parts_.empty() && parts_.back().from_text == from_text && parts_.back().end == begin) {
      parts_.back().end = end;
    } else {
      parts_.push_back({from_text, begin, end});
    }
  }
  std::string_view text_;
  std::string& gen_;
  std::vector<Part> parts_;
};

void DeferredState::dump_map(Pieces& out, const Map& map, const Json& parsed) const {
  if (map.plain && !map.records.empty()) {
    // The records the command read or changed, in file order; the text
    // between them goes out as it stands (its separators are canonical).
    std::vector<std::pair<size_t, const Json*>> changed;
    for (auto it = parsed.begin(); it != parsed.end(); ++it) {
      size_t at = map.find(text_.view(), it.key());
      if (at != std::string::npos) changed.emplace_back(at, &it.value());
    }
    std::sort(changed.begin(), changed.end());
    out.gen("{\n    ");
    uint32_t cursor = map.records.front().key_text.begin;
    for (const auto& [at, value] : changed) {
      out.text({cursor, map.records[at].value.begin});
      out.gen_json(*value, 2, 2);
      cursor = map.records[at].value.end;
    }
    out.text({cursor, map.records.back().value.end});
    dump_added(out, map, parsed, false);
    out.gen("\n  }");
    return;
  }
  bool first = true;
  // Where the previous record's value ended in the text, when it was
  // copied from there; the separator after it can then come from the text.
  std::optional<size_t> copied_until;
  for (const Raw& raw : map.records) {
    if (first) {
      out.gen("{\n    ");
    } else if (copied_until) {
      out.same(",\n    ", *copied_until, raw.key_text.begin);
    } else {
      out.gen(",\n    ");
    }
    first = false;
    out.text(raw.key_text);
    auto it = parsed.find(map.key(text_.view(), raw));
    if (it != parsed.end()) {
      out.gen(": ");
      out.gen_json(*it, 2, 2);
      copied_until.reset();
    } else {
      out.same(": ", raw.key_text.end, raw.value.begin);
      out.text(raw.value);
      copied_until = raw.value.end;
    }
  }
  first = dump_added(out, map, parsed, first);
  out.gen(first ? "{}" : "\n  }");
}

bool DeferredState::dump_added(Pieces& out, const Map& map, const Json& parsed, bool first) const {
  for (auto it = parsed.begin(); it != parsed.end(); ++it) {
    if (map.find(text_.view(), it.key()) != std::string::npos) continue;
    out.gen(first ? "{\n    " : ",\n    ");
    first = false;
    out.gen_json(Json(it.key()), 2, 2);
    out.gen(": ");
    out.gen_json(it.value(), 2, 2);
  }
  return first;
}

std::vector<std::string_view> DeferredState::dump_pieces(const Json& state,
                                                         std::string& storage) const {
  storage.clear();
  if (!state.is_object() || state.empty()) {
    storage = dump_py(state, 2) + "\n";
    return {storage};
  }
  Pieces out(text_.view(), storage);
  bool first = true;
  for (auto it = state.begin(); it != state.end(); ++it) {
    out.gen(first ? "{\n  " : ",\n  ");
    first = false;
    out.gen_json(Json(it.key()), 2, 1);
    out.gen(": ");
    const Map* map = find_map(it.key());
    if (map != nullptr && it.value().is_object()) {
      dump_map(out, *map, it.value());
    } else {
      out.gen_json(it.value(), 2, 1);
    }
  }
  out.gen("\n}\n");
  return out.views();
}

std::string DeferredState::dump(const Json& state) const {
  std::string storage;
  std::string out;
  out.reserve(text_.size() + 1024);
  for (std::string_view piece : dump_pieces(state, storage)) out.append(piece);
  return out;
}

}  // namespace devgraph
