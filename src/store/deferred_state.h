// state.json with its cursor maps left unparsed until a record is needed.
//
// A run of 1,000 tasks has a state.json of about 370 KB, nearly all of it
// the records of tasks_runtime and bundles_runtime. A `move` reads and
// writes one of them. DeferredState parses everything else, indexes the
// records of the deferred maps by key (one structural scan, no values
// built), parses a record only when asked for it, and writes the file back
// with every untouched record copied byte for byte. A move then costs the
// same at 10 or 1,000 tasks.
//
// Contracts:
// - open() takes the layout the store and the reference runtime write
//   (Python's json.dumps(indent=2)). Any other layout between the records,
//   or text the scan cannot follow, returns nullopt and the caller parses
//   the whole file instead, so errors are worded by the ordinary parser.
//   Inside a record only the structure is followed (strings, brackets): an
//   untouched record is copied as it is, whatever its layout and even if it
//   is not valid JSON. So this is for files whose records are known to be
//   valid and canonical: the store opens only a state.json it wrote itself
//   (RunStore::defer_cursor_maps).
// - Python's rule for repeated keys holds (first position, last value),
//   for top-level keys and for records.
// - The opened state is the whole state except that each deferred map
//   holds only the records asked for through record() or added by the
//   caller. Records
//   may be added and changed, never removed.
// - dump() is dump_py(full state, 2) + "\n" for the full state the changes
//   describe, byte for byte, when the input was in the canonical layout.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/expected.h"
#include "util/fs.h"
#include "util/json.h"

namespace devgraph {

class DeferredState {
 public:
  struct Opened;
  // `text` is kept: the unparsed records are spans of it. The state comes
  // back beside the index so callers hold it like any parsed state.
  static std::optional<Opened> open(FileBuffer text, const std::vector<std::string>& deferred_maps);
  static std::optional<Opened> open(std::string_view text,
                                    const std::vector<std::string>& deferred_maps);

  // True when `map` is one of the deferred maps and the file had it.
  bool defers(const std::string& map) const;
  // The record `key` of the deferred map `map`, parsed into state[map] on
  // first use; nullptr when neither the file nor state has such a record
  // (or the map is not deferred). An unparsable record is an error.
  Expected<Json*> record(Json& state, const std::string& map, const std::string& key) const;

  // The file for `state` (what open() returned, since changed).
  std::string dump(const Json& state) const;
  // The same file as consecutive pieces: spans of the text open() took
  // (untouched records and the separators between them, coalesced) and of
  // `storage`, which holds everything generated. The views are valid while
  // this index and `storage` live and neither changes.
  std::vector<std::string_view> dump_pieces(const Json& state, std::string& storage) const;

 private:
  // Offsets into the text: a state file of 4 GiB or more is left to the
  // parser.
  struct Span {
    uint32_t begin = 0;
    uint32_t end = 0;
  };
  // A record in 20 bytes, its key read in place: indexing 1,000 records
  // builds no string.
  struct Raw {
    Span key_text;  // as written, quotes and escapes included
    Span value;     // as written
    // The decoded key when it is not the text between the quotes (it was
    // written with escapes): its position in Map::decoded_keys.
    uint32_t decoded = kAsWritten;
  };
  static constexpr uint32_t kAsWritten = UINT32_MAX;
  struct Map {
    std::string name;
    std::vector<Raw> records;               // file order, one per key
    std::vector<std::string> decoded_keys;  // of keys written with escapes
    // An open-addressing table over `records` by decoded key: each slot
    // holds a record's position + 1, or 0. Cheaper to build than a node
    // per key, and built once per command for every record.
    std::vector<uint32_t> slots;
    // Every separator as the canonical layout writes it and no key twice:
    // the text between changed records can then be copied as it stands.
    bool plain = true;
    // The decoded key of `raw`, a record of this map in `text`.
    std::string_view key(std::string_view text, const Raw& raw) const;
    // The position of the record `key` in `records`, or npos.
    size_t find(std::string_view text, std::string_view key) const;
    // Builds `slots` over `records` as open() collected them, in one pass
    // at the final size. A key seen before gives the earlier record its
    // value (Python's rule: first position, last value) and is dropped;
    // returns whether there was none.
    bool index_records(std::string_view text);
  };
  DeferredState() = default;
  const Map* find_map(const std::string& name) const;
  Map* find_map(const std::string& name);
  class Pieces;
  void dump_map(Pieces& out, const Map& map, const Json& parsed) const;
  // The records of `parsed` the file did not have, after the others;
  // returns whether nothing has been written into the map yet.
  bool dump_added(Pieces& out, const Map& map, const Json& parsed, bool first) const;
  std::string_view text(Span s) const { return text_.view().substr(s.begin, s.end - s.begin); }

  FileBuffer text_;
  std::vector<Map> maps_;
};

struct DeferredState::Opened {
  DeferredState index;
  Json state;
};

}  // namespace devgraph
