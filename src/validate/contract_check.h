// Checks behind `devgraph validate state` and `devgraph validate result`:
// a document against one of the skill's contracts, reported the way the
// develop-v4 validator reports it, so scripts that read its output keep
// working.
//
// Contracts:
// - ContractChecker::load() reads <skill>/contracts/<name>.schema.json once;
//   a missing or broken schema is an error naming the file.
// - check() returns one line per violation, "<path>: <message>", where
//   <path> is the instance location written as a Python list (['tasks_runtime',
//   'B1/T1', 'status'], [] for the document itself) and <message> uses the
//   wording of Python's jsonschema for the keywords the contracts use
//   (required, enum, type, minimum); anything else keeps the validator's own
//   description. Empty when the value conforms. The order is the
//   reference's too: sorted by path for run state, the schema's own order
//   (document-level problems, then properties as the schema lists them) for
//   persona results, which the reference leaves unsorted.
// - result_json_line() extracts the RESULT_JSON object a persona ends its
//   transcript with: the last non-empty line must start with "RESULT_JSON:"
//   and the rest must parse as JSON. Its error messages are the reference's
//   ("empty result file", "result must start with RESULT_JSON:", or the
//   JSON decoder's complaint).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "contracts/schema.h"
#include "util/expected.h"
#include "util/json.h"

namespace devgraph {

class ContractChecker {
 public:
  static Expected<ContractChecker> load(const std::string& schema_path);
  static Expected<ContractChecker> parse(Json schema_doc, const std::string& origin);

  enum class Order { by_path, by_schema };
  std::vector<std::string> check(const Json& value, Order order = Order::by_path) const;

 private:
  ContractChecker(Json doc, Schema schema) : doc_(std::move(doc)), schema_(std::move(schema)) {}
  Json doc_;
  Schema schema_;
};

Expected<Json> result_json_line(std::string_view transcript);

}  // namespace devgraph
