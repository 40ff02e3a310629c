#include "project/commands.h"

#include <dirent.h>
#include <sys/stat.h>

#include <optional>
#include <string_view>
#include <vector>

#include "util/fs.h"

namespace devgraph::project {
namespace {

constexpr const char* kCompileAll = "python3 -m compileall -q .";
constexpr const char* kCMakeBuild =
    "ctest --build-and-test . build --build-generator \"Unix Makefiles\"";

bool is_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// A project file's text; nullopt when there is no such file.
Expected<std::optional<std::string>> read_if_there(const std::string& path) {
  auto text = read_file_at_most(path, kMaxProjectFileBytes);
  if (!text) {
    if (text.error().kind == ErrorKind::not_found) return std::optional<std::string>();
    return text.error();
  }
  return std::optional<std::string>(std::move(*text));
}

Expected<std::optional<Json>> json_if_there(const std::string& path, const std::string& name) {
  DG_TRY(auto text, read_if_there(path));
  if (!text) return std::optional<Json>();
  auto doc = parse_json(*text, name);
  if (!doc) return fail(ErrorKind::usage, doc.error().message);
  if (!doc->is_object()) return fail(ErrorKind::usage, name + ": expected a JSON object");
  return std::optional<Json>(std::move(*doc));
}

Expected<std::optional<Commands>> from_devgraph_file(const std::string& repo) {
  const std::string name = ".devgraph/commands.json";
  DG_TRY(auto doc, json_if_there(join_path(repo, name), name));
  if (!doc) return std::optional<Commands>();
  Commands c;
  c.source = name;
  for (auto& [key, value] : doc->items()) {
    if (key != "test" && key != "build")
      return fail(ErrorKind::usage, name + ": " + key + ": unknown field (test, build)");
    if (!value.is_string())
      return fail(ErrorKind::usage, name + ": " + key + ": expected a string");
    (key == "test" ? c.test : c.build) = value.get<std::string>();
  }
  return std::optional<Commands>(std::move(c));
}

Expected<std::optional<Commands>> from_package_json(const std::string& repo) {
  const std::string name = "package.json";
  DG_TRY(auto doc, json_if_there(join_path(repo, name), name));
  if (!doc || !doc->contains("scripts")) return std::optional<Commands>();
  const Json& scripts = (*doc)["scripts"];
  if (!scripts.is_object())
    return fail(ErrorKind::usage, name + ": scripts: expected a JSON object");
  auto script = [&](const char* key) {
    return scripts.contains(key) && scripts[key].is_string() &&
           !scripts[key].get<std::string>().empty();
  };
  Commands c;
  // npm init writes a test script that only fails: that is no test.
  if (script("test") &&
      scripts["test"].get<std::string>().find("Error: no test specified") == std::string::npos)
    c.test = "npm test";
  if (script("build")) c.build = "npm run build";
  if (c.test.empty() && c.build.empty()) return std::optional<Commands>();
  c.source = "package.json scripts";
  return std::optional<Commands>(std::move(c));
}

// The targets a makefile's rules name: the words before the ':' of each
// line that starts at column 0 and is not an assignment (`X := a`, `X = a`)
// or a comment.
std::vector<std::string> make_targets(std::string_view text) {
  std::vector<std::string> out;
  while (!text.empty()) {
    size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
    if (line.empty() || line[0] == '\t' || line[0] == ' ' || line[0] == '#') continue;
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    if (line.substr(0, colon).find('=') != std::string_view::npos) continue;
    if (colon + 1 < line.size() && line[colon + 1] == '=') continue;  // X:= a
    if (line.compare(colon, 3, "::=") == 0) continue;                 // X::= a
    std::string_view names = line.substr(0, colon);
    size_t at = 0;
    while (at < names.size()) {
      size_t begin = names.find_first_not_of(" \t", at);
      if (begin == std::string_view::npos) break;
      size_t end = names.find_first_of(" \t", begin);
      if (end == std::string_view::npos) end = names.size();
      out.emplace_back(names.substr(begin, end - begin));
      at = end;
    }
  }
  return out;
}

Expected<std::optional<Commands>> from_makefile(const std::string& repo) {
  for (const char* name : {"GNUmakefile", "makefile", "Makefile"}) {
    DG_TRY(auto text, read_if_there(join_path(repo, name)));
    if (!text) continue;
    auto targets = make_targets(*text);
    auto has = [&](std::string_view t) {
      for (const auto& target : targets)
        if (target == t) return true;
      return false;
    };
    Commands c;
    if (has("test")) c.test = "make test";
    if (has("build"))
      c.build = "make build";
    else if (has("all"))
      c.build = "make";
    // No command is no hit; the other two names are not tried, as make
    // reads only the first of them that is there.
    if (c.test.empty() && c.build.empty()) return std::optional<Commands>();
    c.source = std::string(name) + " targets";
    return std::optional<Commands>(std::move(c));
  }
  return std::optional<Commands>();
}

Expected<std::optional<Commands>> from_pytest_config(const std::string& repo) {
  for (const char* name : {"pyproject.toml", "setup.cfg", "pytest.ini", "tox.ini"}) {
    DG_TRY(auto text, read_if_there(join_path(repo, name)));
    if (!text || text->find("pytest") == std::string::npos) continue;
    return std::optional<Commands>(
        Commands{"python3 -m pytest", kCompileAll, std::string(name) + " (pytest)"});
  }
  return std::optional<Commands>();
}

bool has_unittest_files(const std::string& tests_dir) {
  DIR* dir = ::opendir(tests_dir.c_str());
  if (dir == nullptr) return false;
  bool found = false;
  while (const dirent* e = ::readdir(dir)) {
    std::string_view n = e->d_name;
    if (n.size() > 8 && n.substr(0, 5) == "test_" && n.substr(n.size() - 3) == ".py" &&
        is_file(join_path(tests_dir, std::string(n)))) {
      found = true;
      break;
    }
  }
  ::closedir(dir);
  return found;
}

}  // namespace

Expected<Commands> detect_commands(const std::string& repo_dir) {
  if (!is_directory(repo_dir))
    return fail(ErrorKind::not_found, repo_dir + ": not a directory (the repository)");
  using Finder = Expected<std::optional<Commands>> (*)(const std::string&);
  for (Finder find : {from_devgraph_file, from_package_json}) {
    DG_TRY(auto c, find(repo_dir));
    if (c) return std::move(*c);
  }
  if (is_file(join_path(repo_dir, "Cargo.toml")))
    return Commands{"cargo test", "cargo build", "Cargo.toml"};
  if (is_file(join_path(repo_dir, "go.mod")))
    return Commands{"go test ./...", "go build ./...", "go.mod"};
  if (is_file(join_path(repo_dir, "CMakeLists.txt")))
    return Commands{std::string(kCMakeBuild) + " --test-command ctest --output-on-failure",
                    kCMakeBuild, "CMakeLists.txt"};
  for (Finder find : {from_makefile, from_pytest_config}) {
    DG_TRY(auto c, find(repo_dir));
    if (c) return std::move(*c);
  }
  if (has_unittest_files(join_path(repo_dir, "tests")))
    return Commands{"python3 -m unittest discover -s tests -t .", kCompileAll,
                    "tests/test_*.py (unittest)"};
  return Commands{};
}

Json commands_json(const Commands& c) {
  return Json{{"test", c.test}, {"build", c.build}, {"source", c.source}};
}

}  // namespace devgraph::project
