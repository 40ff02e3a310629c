// A reader's view of state.json that follows the file by what changed.
//
// The orchestrator reads the run's state at every decision while its
// drivers rewrite state.json many times a second, and the file grows with
// every bundle: parsing it whole each time makes a run's cost grow with the
// square of its bundles. StateCache keeps the last text it read and the
// state parsed from it. A read of a file whose identity (device, inode,
// size, times) is unchanged costs a stat; a changed file is read and split
// into its top-level values, and the children of the objects and lists
// among them (the cursor records, the bundle entries). Every value whose
// bytes equal the previous text's value at the same key (or the same list
// position) is taken over from the previous state; only the rest is parsed.
//
// Contracts:
// - The state returned equals parse_json() of the file's text, always: a
//   text the splitter does not follow (not an object, a repeated key at a
//   split level, broken structure) is parsed whole, and a parse error is
//   worded by the ordinary parser.
// - A returned snapshot is never changed afterwards; holding one across a
//   refresh only costs the refresh copies instead of moves.
// - Writers replace state.json atomically (rename), so a file seen with the
//   same identity holds the same bytes.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "util/expected.h"
#include "util/fs.h"
#include "util/json.h"

namespace devgraph {

// The state of `new_text`, taking over from `old_state` (parsed from
// `old_text`) each top-level value, or child of one, whose text is
// unchanged. Values are moved out of `old_state` when `may_move`, copied
// otherwise. `parsed_bytes`, when given, receives how many bytes were
// handed to the parser. Equal to parse_json(new_text, what) in value.
Expected<Json> reparse_state(std::string_view old_text, Json& old_state, bool may_move,
                             std::string_view new_text, std::string_view what,
                             size_t* parsed_bytes = nullptr);

class StateCache {
 public:
  explicit StateCache(std::string path) : path_(std::move(path)) {}

  // The state as the file stands now (see the contracts).
  Expected<std::shared_ptr<const Json>> get();
  // Forgets what was read: the next get() reads and parses the file whole.
  void reset();

  // For tests and benchmarks: files read, and bytes parsed, since made.
  size_t file_reads() const { return file_reads_; }
  size_t parsed_bytes() const { return parsed_bytes_; }
  // Reads parsed whole: the first, and those of a text the splitter did
  // not follow.
  size_t whole_parses() const { return whole_parses_; }

 private:
  std::string path_;
  std::string text_;
  std::shared_ptr<Json> state_;
  FileIdentity identity_;
  // Whether identity_ alone tells the next version apart (the file was
  // older than a tick or two when read).
  bool trusted_ = false;
  size_t file_reads_ = 0;
  size_t parsed_bytes_ = 0;
  size_t whole_parses_ = 0;
};

}  // namespace devgraph
