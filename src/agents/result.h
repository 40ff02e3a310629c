// Reading a persona's answer and passing untrusted text on.
//
// Contract: a persona answers with one line `RESULT_JSON: {...}` at the end
// of its final message. The LAST such line counts; surrounding whitespace
// and code-fence backticks on that line are tolerated. The value must be a
// JSON object that conforms to contracts/agent-result.schema.json (status
// enum, string arrays, findings as objects); anything else is malformed and
// the error says why in one line.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "contracts/schema.h"
#include "util/expected.h"
#include "util/json.h"

namespace devgraph::agents {

inline constexpr std::string_view kResultPrefix = "RESULT_JSON:";

// The JSON text after the last RESULT_JSON: prefix, or nullopt when no line
// carries one.
std::optional<std::string> last_result_line(std::string_view text);

// The validated result object, or an error saying why the text holds none
// ("no RESULT_JSON line", "RESULT_JSON is not JSON: ...", "RESULT_JSON
// /status: ...").
Expected<Json> extract_result(std::string_view text, const Schema& schema);
// The same check for a value the CLI returned as structured output.
Expected<Json> check_result(const Json& value, const Schema& schema);


}  // namespace devgraph::agents
