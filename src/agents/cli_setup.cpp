#include "agents/cli_setup.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>

#include "util/fs.h"
#include "util/json.h"

namespace devgraph::agents {
namespace {

namespace fs = std::filesystem;

// The value of NAME in a "NAME=value" list; nullopt when it is not set.
std::optional<std::string> env_value(const std::vector<std::string>& env, std::string_view name) {
  for (const auto& entry : env)
    if (entry.size() > name.size() && entry.compare(0, name.size(), name) == 0 &&
        entry[name.size()] == '=')
      return entry.substr(name.size() + 1);
  return std::nullopt;
}

std::vector<std::string> prefixes_of(const std::vector<std::string>& tools) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const auto& t : tools)
    if (auto p = bash_prefix(t); p && seen.insert(*p).second) out.push_back(*p);
  return out;
}

std::vector<std::string> words_of(const std::string& prefix) {
  std::vector<std::string> words;
  size_t b = 0;
  while ((b = prefix.find_first_not_of(' ', b)) != std::string::npos) {
    size_t e = prefix.find(' ', b);
    if (e == std::string::npos) e = prefix.size();
    words.push_back(prefix.substr(b, e - b));
    b = e;
  }
  return words;
}

// A string literal both TOML and Starlark read as `s`.
std::string quoted(const std::string& s) {
  return Json(s).dump();
}

// The names of the regular files in `dir` ending in `suffix`; none when
// `dir` cannot be read.
std::vector<std::string> files_ending(const std::string& dir, std::string_view suffix) {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    std::error_code type_ec;
    if (name.size() > suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0 &&
        fs::is_regular_file(it->path(), type_ec))
      out.push_back(name);
  }
  return out;
}

Status copy_file(const std::string& from, const std::string& to, int mode = 0644) {
  DG_TRY(std::string text, read_file(from));
  return write_file_atomic(to, text, mode);
}

Status remove_file(const std::string& path) {
  if (::unlink(path.c_str()) != 0 && errno != ENOENT)
    return fail("cannot remove " + path + ": " + std::strerror(errno));
  return {};
}

// `dir` made to hold the user's `suffix` files from `user_dir` (copied)
// plus devgraph's own `name` holding `text`; anything else ending in
// `suffix` there (a copy of a file the user has since removed) goes.
Status fill_directory(const std::string& dir, const std::string& user_dir, std::string_view suffix,
                      const std::string& name, const std::string& text) {
  DG_CHECK(make_directories(dir));
  std::set<std::string> keep = {name};
  if (!user_dir.empty() && absolute_path(user_dir) != absolute_path(dir)) {
    for (const auto& f : files_ending(user_dir, suffix)) {
      if (f == name) continue;  // devgraph's own name is devgraph's
      DG_CHECK(copy_file(join_path(user_dir, f), join_path(dir, f)));
      keep.insert(f);
    }
  }
  for (const auto& f : files_ending(dir, suffix))
    if (!keep.count(f)) DG_CHECK(remove_file(join_path(dir, f)));
  return write_file_atomic(join_path(dir, name), text);
}

std::string home_of(const std::vector<std::string>& parent) {
  auto home = env_value(parent, "HOME");
  return home && !home->empty() ? *home : std::string();
}

Expected<std::vector<std::string>> prepare_codex(const BackendOptions& o,
                                                 const std::vector<std::string>& parent) {
  std::string home = codex_home_dir(o);
  DG_CHECK(make_directories(home));
  std::string user;
  if (auto v = env_value(parent, "CODEX_HOME"); v && !v->empty())
    user = *v;
  else if (std::string h = home_of(parent); !h.empty())
    user = join_path(h, ".codex");
  bool same = !user.empty() && absolute_path(user) == absolute_path(home);
  if (!same) {
    std::string config = join_path(home, "config.toml");
    std::string user_config = user.empty() ? "" : join_path(user, "config.toml");
    if (!user_config.empty() && path_exists(user_config))
      DG_CHECK(copy_file(user_config, config, 0600));
    else
      DG_CHECK(remove_file(config));
    // The login itself stays the user's: a symlink, so a refreshed token is
    // written where every other codex run reads it.
    std::string auth = join_path(home, "auth.json");
    DG_CHECK(remove_file(auth));
    std::string user_auth = user.empty() ? "" : join_path(user, "auth.json");
    if (!user_auth.empty() && path_exists(user_auth) &&
        ::symlink(absolute_path(user_auth).c_str(), auth.c_str()) != 0)
      return fail("cannot link " + auth + ": " + std::strerror(errno));
  }
  DG_CHECK(fill_directory(join_path(home, "rules"), same ? "" : join_path(user, "rules"), ".rules",
                          "devgraph.rules", codex_rules(o.disallowed_tools)));
  return std::vector<std::string>{"CODEX_HOME=" + absolute_path(home)};
}

// `link` made a symlink to `target` (whatever was there goes).
Status link_to(const std::string& target, const std::string& link) {
  DG_CHECK(remove_file(link));
  if (::symlink(target.c_str(), link.c_str()) != 0)
    return fail("cannot link " + link + ": " + std::strerror(errno));
  return {};
}

Expected<std::vector<std::string>> prepare_gemini(const BackendOptions& o,
                                                  const std::vector<std::string>& parent) {
  std::string user_home = env_value(parent, "GEMINI_CLI_HOME").value_or(home_of(parent));
  std::string user = user_home.empty() ? "" : join_path(user_home, ".gemini");
  std::string ours = join_path(gemini_home_dir(o), ".gemini");
  DG_CHECK(make_directories(ours));
  // Everything of the user's but what devgraph writes: the login, the
  // keys in .env, extensions and memory stay the user's (symlinks, so a
  // refreshed login reaches them); sessions and history are the run's.
  static const std::set<std::string> owned = {"settings.json", "policies", "tmp", "history"};
  std::error_code ec;
  for (fs::directory_iterator it(ours, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code type_ec;
    if (it->is_symlink(type_ec)) DG_CHECK(remove_file(it->path().string()));
  }
  bool same = user.empty() || absolute_path(user) == absolute_path(ours);
  if (!same) {
    for (fs::directory_iterator it(user, ec), end; !ec && it != end; it.increment(ec)) {
      std::string name = it->path().filename().string();
      if (owned.count(name)) continue;
      DG_CHECK(link_to(absolute_path(it->path().string()), join_path(ours, name)));
    }
  }
  Json settings = Json::object();
  std::string user_settings = same ? "" : join_path(user, "settings.json");
  if (!user_settings.empty() && path_exists(user_settings)) {
    DG_TRY(std::string text, read_file(user_settings));
    settings = Json::parse(text, nullptr, false, /*ignore_comments=*/true);
    if (!settings.is_object())
      return fail(user_settings + " is not a JSON object (gemini would not read it either)");
  }
  if (!o.cli_telemetry) {
    if (!settings["privacy"].is_object()) settings["privacy"] = Json::object();
    settings["privacy"]["usageStatisticsEnabled"] = false;
  }
  DG_CHECK(write_file_atomic(join_path(ours, "settings.json"), settings.dump(2) + "\n", 0600));
  DG_CHECK(fill_directory(gemini_policy_dir(o), same ? "" : join_path(user, "policies"), ".toml",
                          "devgraph.toml", gemini_policy(o.allowed_tools, o.disallowed_tools)));
  DG_CHECK(fill_directory(gemini_admin_policy_dir(o), "", ".toml", "devgraph.toml",
                          gemini_policy({}, o.disallowed_tools)));
  return std::vector<std::string>{"GEMINI_CLI_HOME=" + absolute_path(gemini_home_dir(o)),
                                  "GEMINI_CLI_TRUST_WORKSPACE=true"};
}

}  // namespace

std::optional<std::string> bash_prefix(std::string_view tool) {
  if (tool.size() < 7 || tool.substr(0, 5) != "Bash(" || tool.back() != ')') return std::nullopt;
  std::string inner(tool.substr(5, tool.size() - 6));
  if (inner.size() >= 2 && inner.compare(inner.size() - 2, 2, " *") == 0)
    inner.resize(inner.size() - 2);
  size_t b = inner.find_first_not_of(' ');
  if (b == std::string::npos || inner.find('*') != std::string::npos) return std::nullopt;
  return inner.substr(b, inner.find_last_not_of(' ') - b + 1);
}

std::string codex_rules(const std::vector<std::string>& disallowed) {
  std::string out =
      "# Written by devgraph for persona runs: commands only devgraph runs.\n"
      "# Rewritten at every run; edit GRAPH.yaml headless.disallowed_tools.\n";
  for (const auto& prefix : prefixes_of(disallowed)) {
    std::string pattern;
    for (const auto& w : words_of(prefix)) pattern += (pattern.empty() ? "" : ", ") + quoted(w);
    out += "prefix_rule(pattern = [" + pattern + "], decision = \"forbidden\")\n";
  }
  return out;
}

std::vector<std::string> codex_config_overrides(bool telemetry) {
  if (telemetry) return {};
  return {"-c", "analytics.enabled=false",          "-c", "features.plugins=false",
          "-c", "check_for_update_on_startup=false"};
}

std::string gemini_policy(const std::vector<std::string>& allowed,
                          const std::vector<std::string>& disallowed) {
  std::string out =
      "# Written by devgraph for persona runs; rewritten at every run.\n"
      "# Edit GRAPH.yaml headless.allowed_tools / disallowed_tools instead.\n";
  auto rule = [&](const std::string& prefix, const char* decision, int priority) {
    out += "\n[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = " + quoted(prefix) +
           "\ndecision = \"" + decision + "\"\npriority = " + std::to_string(priority) + "\n";
  };
  for (const auto& p : prefixes_of(allowed)) rule(p, "allow", 100);
  for (const auto& p : prefixes_of(disallowed)) rule(p, "deny", 900);
  return out;
}

std::string codex_home_dir(const BackendOptions& o) {
  return join_path(o.config_dir, "codex-home");
}
std::string gemini_home_dir(const BackendOptions& o) {
  return join_path(o.config_dir, "gemini-home");
}
std::string gemini_policy_dir(const BackendOptions& o) {
  return join_path(gemini_home_dir(o), ".gemini/policies");
}
std::string gemini_admin_policy_dir(const BackendOptions& o) {
  return join_path(o.config_dir, "gemini-admin-policies");
}

Expected<std::vector<std::string>> prepare_cli(const BackendOptions& options,
                                               const std::vector<std::string>& parent) {
  switch (options.kind) {
    case BackendKind::claude:
      if (options.cli_telemetry) return std::vector<std::string>{};
      return std::vector<std::string>{"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"};
    case BackendKind::codex:
      if (options.config_dir.empty()) return fail("--agent codex needs a configuration directory");
      return prepare_codex(options, parent);
    case BackendKind::gemini:
      if (options.config_dir.empty()) return fail("--agent gemini needs a configuration directory");
      return prepare_gemini(options, parent);
    case BackendKind::command:
    case BackendKind::sim:
      break;
  }
  return std::vector<std::string>{};
}

}  // namespace devgraph::agents
