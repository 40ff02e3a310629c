// JSON-Schema validation of devgraph's contracts (contracts/*.schema.json):
// run state and persona results.
//
// Contract: Schema::load() parses a schema file once (valijson, draft 7
// semantics); validate() returns every violation as "<json path>: <what is
// wrong>", empty when the value conforms. fingerprint() names the text the
// schema was built from, so that a state file one schema checked can be
// recognised as checked by the same schema later (store/run_store.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "util/expected.h"
#include "util/json.h"

namespace devgraph {

class Schema {
 public:
  static Expected<Schema> load(const std::string& path);
  static Expected<Schema> parse(const Json& schema, const std::string& origin);
  Schema(Schema&&) noexcept;
  Schema& operator=(Schema&&) noexcept;
  ~Schema();

  std::vector<std::string> validate(const Json& value) const;
  // "<length>-<64-bit FNV-1a hash in hex>" of the file's bytes (load) or
  // of the document's compact dump (parse): equal for schemas built from
  // the same text, different when a byte differs (short of a deliberately
  // forged collision).
  const std::string& fingerprint() const;

 private:
  struct Impl;
  explicit Schema(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The schemas of a skill directory: <skill>/contracts/<name>.schema.json.
std::string state_schema_path(const std::string& skill_dir);
std::string result_schema_path(const std::string& skill_dir);

}  // namespace devgraph
