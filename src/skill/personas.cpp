#include "skill/personas.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <set>

#include "contracts/schema.h"
#include "util/fs.h"
#include "util/json.h"

namespace devgraph {
namespace {

constexpr std::string_view kResultPrefix = "RESULT_JSON:";

// The value of `key:` inside a leading `---` front-matter block.
std::optional<std::string> front_matter_value(std::string_view text, std::string_view key) {
  if (text.substr(0, 4) != "---\n") return std::nullopt;
  size_t end = text.find("\n---", 3);
  if (end == std::string_view::npos) return std::nullopt;
  std::string_view block = text.substr(4, end - 3);
  size_t pos = 0;
  while (pos < block.size()) {
    size_t eol = block.find('\n', pos);
    std::string_view line = block.substr(pos, eol == std::string_view::npos ? eol : eol - pos);
    if (line.size() > key.size() && line.substr(0, key.size()) == key && line[key.size()] == ':') {
      std::string value(line.substr(key.size() + 1));
      value.erase(0, value.find_first_not_of(" \t"));
      value.erase(value.find_last_not_of(" \t\r") + 1);
      return value;
    }
    if (eol == std::string_view::npos) break;
    pos = eol + 1;
  }
  return std::nullopt;
}

// Example result lines: a line (possibly inside backticks) that starts with
// the prefix and carries a JSON object.
std::vector<std::string> example_lines(std::string_view text) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    std::string line(text.substr(pos, eol == std::string_view::npos ? eol : eol - pos));
    pos = eol == std::string_view::npos ? text.size() : eol + 1;
    std::string trimmed = line;
    while (!trimmed.empty() && (trimmed.front() == '`' || trimmed.front() == ' '))
      trimmed.erase(0, 1);
    while (!trimmed.empty() &&
           (trimmed.back() == '`' || trimmed.back() == ' ' || trimmed.back() == '\r'))
      trimmed.pop_back();
    if (trimmed.rfind(kResultPrefix, 0) != 0) continue;
    std::string body = trimmed.substr(kResultPrefix.size());
    body.erase(0, body.find_first_not_of(' '));
    if (!body.empty() && body.front() == '{') out.push_back(body);
  }
  return out;
}

}  // namespace

std::string persona_file(const std::string& skill_dir, std::string_view persona) {
  return join_path(join_path(skill_dir, "agents"), std::string(persona) + ".md");
}

std::vector<std::string> check_persona_text(std::string_view persona, std::string_view text,
                                            const Schema* schema) {
  std::vector<std::string> problems;
  const std::string where = "agents/" + std::string(persona) + ".md";
  auto name = front_matter_value(text, "name");
  if (!name)
    problems.push_back(where + ": no front matter with a name: field");
  else if (*name != persona)
    problems.push_back(where + ": front matter names '" + *name + "', not '" +
                       std::string(persona) + "'");
  if (text.find("## The result line") == std::string_view::npos &&
      text.find("## Result") == std::string_view::npos)
    problems.push_back(where + ": no section stating the RESULT_JSON contract");
  auto examples = example_lines(text);
  if (examples.empty()) {
    problems.push_back(where + ": no example 'RESULT_JSON: {...}' line");
    return problems;
  }
  if (schema == nullptr) return problems;
  for (const auto& body : examples) {
    auto value = parse_json(body, where + " RESULT_JSON example");
    if (!value) {
      problems.push_back(value.error().message);
      continue;
    }
    auto violations = schema->validate(*value);
    if (!violations.empty())
      problems.push_back(where +
                         ": RESULT_JSON example breaks the result schema: " + violations.front());
  }
  return problems;
}

std::vector<std::string> check_persona_files(const std::string& skill_dir, const Graph& graph) {
  namespace fs = std::filesystem;
  std::vector<std::string> problems;
  const std::string agents = join_path(skill_dir, "agents");

  std::optional<Schema> schema;
  if (auto loaded = Schema::load(result_schema_path(skill_dir))) schema = std::move(*loaded);

  const std::set<std::string> personas(graph.personas.begin(), graph.personas.end());
  for (const auto& p : graph.personas) {
    std::string path = persona_file(skill_dir, p);
    auto text = read_file(path);
    if (!text) {
      problems.push_back("persona " + p + " has no file agents/" + p + ".md");
      continue;
    }
    for (auto& problem : check_persona_text(p, *text, schema ? &*schema : nullptr))
      problems.push_back(std::move(problem));
  }

  std::error_code ec;
  std::vector<std::string> extra;
  for (fs::directory_iterator it(agents, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path& path = it->path();
    if (path.extension() != ".md") continue;
    std::string stem = path.stem().string();
    if (!personas.count(stem)) extra.push_back(stem);
  }
  std::sort(extra.begin(), extra.end());
  for (const auto& stem : extra)
    problems.push_back("agents/" + stem + ".md is not a persona of the graph (personas: " + [&] {
      std::string all;
      for (const auto& p : graph.personas) all += (all.empty() ? "" : ", ") + p;
      return all;
    }() + ")");
  return problems;
}

}  // namespace devgraph
