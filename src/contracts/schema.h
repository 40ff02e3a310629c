// JSON-Schema validation of devgraph's contracts (contracts/*.schema.json):
// run state and persona results.
//
// Contract: Schema::load() parses a schema file once; validate() returns
// every violation as "<json path>: <what is wrong>", empty when the value
// conforms. Two validators stand behind it, with the same verdicts:
// - valijson, a general JSON-Schema validator (draft 7 semantics), which
//   `devgraph validate` always uses;
// - the compiled form (contracts/compiled_schema.h), built a hundred times
//   faster, for the keywords devgraph's contracts use. The default engine
//   takes it whenever the schema stays within those keywords and valijson
//   otherwise, so a skill's own schema with other keywords still works.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "util/expected.h"
#include "util/json.h"

namespace devgraph {

class Schema {
 public:
  enum class Engine {
    kFastest,   // the compiled form when the schema allows it, else valijson
    kValijson,  // always valijson
  };
  static Expected<Schema> load(const std::string& path, Engine engine = Engine::kFastest);
  static Expected<Schema> parse(const Json& schema, const std::string& origin,
                                Engine engine = Engine::kFastest);
  Schema(Schema&&) noexcept;
  Schema& operator=(Schema&&) noexcept;
  ~Schema();

  std::vector<std::string> validate(const Json& value) const;
  // Which validator this schema ended up with.
  bool compiled() const;
  // Whether it is the schema compiled into this build (load() found a file
  // with exactly the shipped bytes), so that the build's version names it.
  bool shipped() const;

 private:
  struct Impl;
  explicit Schema(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The schemas of a skill directory: <skill>/contracts/<name>.schema.json.
std::string state_schema_path(const std::string& skill_dir);
std::string result_schema_path(const std::string& skill_dir);

}  // namespace devgraph
