// JSON-Schema validation of devgraph's contracts (contracts/*.schema.json):
// run state and persona results.
//
// Contract: Schema::load() parses a schema file once; validate() returns
// every violation as "<json path>: <what is wrong>", empty when the value
// conforms. The validator is valijson (draft 7 semantics, which cover every
// keyword the contracts use: type, enum, required, properties,
// additionalProperties, items, minimum, local $ref).
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

 private:
  struct Impl;
  explicit Schema(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The schemas of a skill directory: <skill>/contracts/<name>.schema.json.
std::string state_schema_path(const std::string& skill_dir);
std::string result_schema_path(const std::string& skill_dir);

}  // namespace devgraph
