#include "agents/result.h"

#include <vector>

namespace devgraph::agents {
namespace {

std::string_view trim(std::string_view s) {
  const char* ws = " \t\r\n\v\f";
  size_t b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(ws);
  return s.substr(b, e - b + 1);
}

// A line as it may appear inside or around a code fence: whitespace, then
// backticks, then whitespace again on either side.
std::string_view unfence(std::string_view line) {
  line = trim(line);
  while (!line.empty() && line.front() == '`') line.remove_prefix(1);
  while (!line.empty() && line.back() == '`') line.remove_suffix(1);
  return trim(line);
}

}  // namespace

std::optional<std::string> last_result_line(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t pos = 0;
  while (pos < text.size()) {
    // A carriage return ends a line for some readers too.
    size_t nl = text.find_first_of("\n\r", pos);
    if (nl == std::string_view::npos) nl = text.size();
    lines.push_back(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    std::string_view line = unfence(*it);
    if (line.substr(0, kResultPrefix.size()) == kResultPrefix)
      return std::string(trim(line.substr(kResultPrefix.size())));
  }
  return std::nullopt;
}

Expected<Json> check_result(const Json& value, const Schema& schema) {
  if (!value.is_object()) return fail("RESULT_JSON is not a JSON object");
  std::vector<std::string> problems = schema.validate(value);
  if (!problems.empty()) {
    std::string msg = "RESULT_JSON does not match the result contract: " + problems.front();
    if (problems.size() > 1) msg += " (and " + std::to_string(problems.size() - 1) + " more)";
    return fail(msg);
  }
  return value;
}

Expected<Json> extract_result(std::string_view text, const Schema& schema) {
  std::optional<std::string> line = last_result_line(text);
  if (!line) return fail("no RESULT_JSON line");
  Json value = Json::parse(*line, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) return fail("RESULT_JSON is not valid JSON");
  return check_result(value, schema);
}

}  // namespace devgraph::agents
