#include "install/install.h"

#include <algorithm>
#include <array>
#include <ostream>

#include "install/config_text.h"
#include "util/fs.h"
#include "util/json.h"

namespace devgraph::install {
namespace {

using namespace std::string_view_literals;

// The verbs a model-driven tech lead or orchestrator runs through its shell
// tool. `install` itself and `demo` are for people, not agents.
constexpr std::array kVerbs{"checkpoint"sv, "schedule"sv, "guard"sv, "run-bundle"sv, "validate"sv};

// Why each verb is granted; Codex shows the justification when it applies a rule.
std::string_view why(std::string_view verb) {
  if (verb == "checkpoint") return "devgraph: record run state";
  if (verb == "schedule") return "devgraph: schedule tasks and check footprints";
  if (verb == "guard") return "devgraph: check worktree and write placement";
  if (verb == "run-bundle") return "devgraph: drive one bundle headless";
  return "devgraph: validate the graph, state and results";
}

// Claude Code: the matcher covers the tools that run commands or write
// files, which is what the placement guard judges.
constexpr std::string_view kHookMatcher = "Bash|Edit|Write|MultiEdit|NotebookEdit";
constexpr int kHookTimeoutSeconds = 10;

std::string env_or(const Context& ctx, const std::string& name, const std::string& fallback) {
  auto it = ctx.env.find(name);
  return it == ctx.env.end() || it->second.empty() ? fallback : it->second;
}

// Sources for where each tool keeps its configuration:
// - Claude Code: user settings in ~/.claude/settings.json; the directory
//   moves with CLAUDE_CONFIG_DIR. https://docs.claude.com/en/docs/claude-code/settings
// - Codex: $CODEX_HOME (default ~/.codex) holds config.toml; rules are
//   *.rules files under its rules/ directory, all loaded at start-up.
//   https://developers.openai.com/codex/config-basic and
//   https://developers.openai.com/codex/rules
// - Copilot CLI: ~/.copilot, moved by COPILOT_HOME; saved approvals live in
//   permissions-config.json.
//   https://docs.github.com/en/copilot/how-tos/copilot-cli/set-up-copilot-cli/configure-copilot-cli
//   and the config-directory reference (github/docs pull request 44916).
std::string claude_settings(const Context& ctx) {
  return join_path(env_or(ctx, "CLAUDE_CONFIG_DIR", join_path(ctx.home, ".claude")),
                   "settings.json");
}
std::string codex_home(const Context& ctx) {
  return env_or(ctx, "CODEX_HOME", join_path(ctx.home, ".codex"));
}
std::string codex_rules(const Context& ctx) {
  return join_path(join_path(codex_home(ctx), "rules"), "devgraph.rules");
}
std::string codex_config(const Context& ctx) {
  return join_path(codex_home(ctx), "config.toml");
}
std::string copilot_permissions(const Context& ctx) {
  return join_path(env_or(ctx, "COPILOT_HOME", join_path(ctx.home, ".copilot")),
                   "permissions-config.json");
}

std::vector<std::string> write_roots(const Context& ctx) {
  return {join_path(ctx.home, ".ai/develop"), join_path(ctx.home, ".ai/worktrees")};
}

// The command words a granted call starts with: `devgraph` as the persona
// files write it, and the running binary's absolute path.
std::vector<std::string> programs(const Context& ctx) {
  std::vector<std::string> out{"devgraph"};
  if (!ctx.devgraph_bin.empty() && ctx.devgraph_bin != "devgraph") out.push_back(ctx.devgraph_bin);
  return out;
}

// A path as a shell word: quoted only when it has to be.
std::string shell_word(const std::string& s) {
  bool plain = !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           std::string_view("/._-+:@%").find(c) != std::string_view::npos;
  });
  if (plain) return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

struct Existing {
  std::optional<std::string> bytes;
};

Expected<Existing> read_existing(const std::string& path) {
  if (!path_exists(path)) return Existing{};
  if (is_directory(path)) return fail(path + ": is a directory, not a file");
  DG_TRY(std::string bytes, read_file(path));
  return Existing{std::move(bytes)};
}

bool blank(const std::string& s) {
  return s.find_first_not_of(" \t\r\n") == std::string::npos;
}

constexpr const char* kRefuse = "; fix or move the file and run again (nothing was changed)";

// Parses an existing JSON config; an absent or blank file is an empty object.
Expected<Json> load_json_config(const std::string& path, const Existing& existing) {
  if (!existing.bytes || blank(*existing.bytes)) return Json::object();
  Json value;
  try {
    value = Json::parse(*existing.bytes);
  } catch (const Json::parse_error& e) {
    std::string what = e.what();
    if (auto p = what.find("]: "); p != std::string::npos) what = what.substr(p + 3);
    return fail(path + ": not valid JSON (" + what + ")" + kRefuse);
  }
  if (!value.is_object()) return fail(path + ": the top level is not a JSON object" + kRefuse);
  return value;
}

// `parent[key]` as a container of the wanted type, created when missing.
Expected<Json*> child(Json& parent, const std::string& key, Json::value_t type,
                      const std::string& path, const std::string& where) {
  if (!parent.contains(key))
    parent[key] = type == Json::value_t::array ? Json::array() : Json::object();
  Json& c = parent[key];
  if (c.type() != type)
    return fail(path + ": " + where + " is not " +
                (type == Json::value_t::array ? "an array" : "an object") + kRefuse);
  return &c;
}

void append_missing(Json& array, const std::vector<std::string>& wanted) {
  for (const auto& w : wanted)
    if (std::find(array.begin(), array.end(), Json(w)) == array.end()) array.push_back(w);
}

// Same JSON value: keep the user's bytes. Otherwise pretty-print with the
// two-space indent both tools write, keeping UTF-8 as is.
FileChange json_change(const std::string& path, const Existing& existing, const Json& before,
                       const Json& after, std::string what) {
  FileChange change{path, existing.bytes, existing.bytes.value_or(""), std::move(what)};
  if (!existing.bytes || before != after) change.after = after.dump(2) + "\n";
  return change;
}

// ---- Claude Code ------------------------------------------------------------
// permissions.allow holds rules such as `Bash(git diff *)`: a Bash rule
// matches the command text by prefix, `*` standing for the rest.
// Hooks: hooks.PreToolUse is a list of {matcher, hooks: [{type: "command",
// command, timeout}]}; the command reads the tool call as JSON on stdin.
// https://docs.claude.com/en/docs/claude-code/iam and
// https://docs.claude.com/en/docs/claude-code/hooks
Expected<Plan> plan_claude(const Context& ctx) {
  Plan plan{Tool::claude, {}, {}};
  const std::string path = claude_settings(ctx);
  DG_TRY(Existing existing, read_existing(path));
  DG_TRY(Json before, load_json_config(path, existing));
  Json after = before;

  std::vector<std::string> rules;
  for (const auto& prog : programs(ctx))
    for (auto verb : kVerbs)
      rules.push_back("Bash(" + shell_word(prog) + " " + std::string(verb) + " *)");
  DG_TRY(Json * permissions,
         child(after, "permissions", Json::value_t::object, path, "permissions"));
  DG_TRY(Json * allow,
         child(*permissions, "allow", Json::value_t::array, path, "permissions.allow"));
  append_missing(*allow, rules);
  std::string what = "allow devgraph's verbs in Claude Code (permissions.allow)";

  if (ctx.hook) {
    const std::string command = shell_word(ctx.devgraph_bin) + " guard hook";
    DG_TRY(Json * hooks, child(after, "hooks", Json::value_t::object, path, "hooks"));
    DG_TRY(Json * pre, child(*hooks, "PreToolUse", Json::value_t::array, path, "hooks.PreToolUse"));
    bool present = false;
    for (const auto& entry : *pre) {
      if (!entry.is_object() || !entry.contains("hooks") || !entry["hooks"].is_array()) continue;
      for (const auto& h : entry["hooks"])
        if (h.is_object() && h.value("command", Json()) == Json(command)) present = true;
    }
    if (!present)
      pre->push_back(Json{{"matcher", kHookMatcher},
                          {"hooks", Json::array({Json{{"type", "command"},
                                                      {"command", command},
                                                      {"timeout", kHookTimeoutSeconds}}})}});
    what += ", and `devgraph guard hook` as a PreToolUse hook";
  }
  plan.files.push_back(json_change(path, existing, before, after, what));
  return plan;
}

// ---- Copilot CLI ------------------------------------------------------------
// permissions-config.json: locations.<absolute path>.tool_approvals is a list
// of {kind, ...}; a `commands` approval lists commandIdentifiers, where a
// trailing `:*` matches the identifier alone or followed by arguments; a
// `write` approval lets the agent write files; allowed_directories are extra
// directories the path gate accepts, and each must exist.
// (github/docs pull request 44916, "Document Copilot CLI
// permissions-config.json schema and persisted approvals".) Identifiers with
// a space are reported not to match in some versions (github/copilot-cli
// issue 4150); `copilot --allow-tool 'shell(devgraph:*)'` is the broader
// fallback a user can choose by hand.
Expected<Plan> plan_copilot(const Context& ctx) {
  Plan plan{Tool::copilot, {}, write_roots(ctx)};
  const std::string path = copilot_permissions(ctx);
  if (ctx.location.empty() || ctx.location.front() != '/')
    return fail("copilot approvals need an absolute --location (the repository path)");
  DG_TRY(Existing existing, read_existing(path));
  DG_TRY(Json before, load_json_config(path, existing));
  Json after = before;

  DG_TRY(Json * locations, child(after, "locations", Json::value_t::object, path, "locations"));
  const std::string where = "locations[\"" + ctx.location + "\"]";
  DG_TRY(Json * loc, child(*locations, ctx.location, Json::value_t::object, path, where));
  DG_TRY(Json * approvals,
         child(*loc, "tool_approvals", Json::value_t::array, path, where + ".tool_approvals"));
  std::vector<std::string> identifiers;
  for (const auto& prog : programs(ctx))
    for (auto verb : kVerbs) identifiers.push_back(prog + " " + std::string(verb) + ":*");

  Json* commands = nullptr;
  bool write = false;
  for (auto& a : *approvals) {
    if (!a.is_object()) continue;
    if (a.value("kind", Json()) == Json("write")) write = true;
    if (a.value("kind", Json()) == Json("commands") && !commands) {
      if (!a.contains("commandIdentifiers")) a["commandIdentifiers"] = Json::array();
      if (!a["commandIdentifiers"].is_array())
        return fail(path + ": " + where +
                    " has a commands approval whose commandIdentifiers is "
                    "not an array" +
                    kRefuse);
      commands = &a;
    }
  }
  if (commands) {
    append_missing((*commands)["commandIdentifiers"], identifiers);
  } else {
    approvals->push_back(Json{{"kind", "commands"}, {"commandIdentifiers", identifiers}});
  }
  if (!write) approvals->push_back(Json{{"kind", "write"}});
  DG_TRY(Json * dirs, child(*loc, "allowed_directories", Json::value_t::array, path,
                            where + ".allowed_directories"));
  append_missing(*dirs, write_roots(ctx));
  plan.files.push_back(json_change(
      path, existing, before, after,
      "approve devgraph's verbs, file writes and the run directories for " + ctx.location));
  return plan;
}

// ---- Codex ------------------------------------------------------------------
// Rules: Starlark files of prefix_rule(pattern = [...], decision = "allow",
// justification = "..."); the pattern is the command's leading argv words.
// https://developers.openai.com/codex/rules
// Sandbox: with sandbox_mode = "workspace-write", writes outside the
// workspace are denied unless the root is listed in
// [sandbox_workspace_write] writable_roots (config.toml,
// https://developers.openai.com/codex/config-basic and its sandbox pages).
std::string rule_line(const std::string& prog, std::string_view verb) {
  return "prefix_rule(pattern = [" + Json(prog).dump() + ", " + Json(std::string(verb)).dump() +
         "], decision = \"allow\", justification = " + Json(std::string(why(verb))).dump() + ")";
}

Expected<FileChange> plan_codex_rules(const Context& ctx) {
  const std::string path = codex_rules(ctx);
  DG_TRY(Existing existing, read_existing(path));
  std::string text = existing.bytes.value_or("");
  if (existing.bytes) {
    auto ok = check_starlark(text, path);
    if (!ok) return fail(ok.error().message + kRefuse);
  }
  std::vector<std::string> lines;
  {
    size_t pos = 0;
    while (pos < text.size()) {
      size_t eol = text.find('\n', pos);
      std::string l = text.substr(pos, eol == std::string::npos ? std::string::npos : eol - pos);
      l.erase(0, l.find_first_not_of(" \t"));
      l.erase(l.find_last_not_of(" \t\r") + 1);
      lines.push_back(l);
      pos = eol == std::string::npos ? text.size() : eol + 1;
    }
  }
  std::string added;
  for (const auto& prog : programs(ctx))
    for (auto verb : kVerbs) {
      std::string rule = rule_line(prog, verb);
      if (std::find(lines.begin(), lines.end(), rule) == lines.end()) added += rule + "\n";
    }
  std::string after = text;
  if (!added.empty()) {
    if (!existing.bytes || blank(text))
      after = "# Commands devgraph runs, allowed by `devgraph install codex`.\n";
    else if (after.back() != '\n')
      after += "\n";
    after += added;
  }
  return FileChange{path, existing.bytes, after,
                    "allow devgraph's verbs in Codex (execpolicy rules)"};
}

Expected<FileChange> plan_codex_config(const Context& ctx) {
  const std::string path = codex_config(ctx);
  DG_TRY(Existing existing, read_existing(path));
  const std::string text = existing.bytes.value_or("");
  auto scanned = scan_toml(text, path);
  if (!scanned) return fail(scanned.error().message + kRefuse);
  const auto& statements = *scanned;
  const std::vector<std::string> roots = write_roots(ctx);
  const std::string what = "make the run directories writable in Codex's sandbox";

  auto array_text = [](const std::vector<std::string>& items) {
    std::string s;
    for (const auto& r : items) s += (s.empty() ? "" : ", ") + toml_quote(r);
    return s;
  };

  const TomlStatement* header = nullptr;
  const TomlStatement* dotted_sibling = nullptr;  // top-level sandbox_workspace_write.<x> = ...
  for (const auto& st : statements) {
    bool in_table = st.table == "sandbox_workspace_write";
    if (st.kind == TomlStatement::Kind::table && st.key == "sandbox_workspace_write") header = &st;
    if (st.kind != TomlStatement::Kind::key_value) continue;
    if (st.table.empty() && st.key == "sandbox_workspace_write")
      return fail(path + ":" + std::to_string(st.line) +
                  ": sandbox_workspace_write is an inline table; add writable_roots by hand" +
                  kRefuse);
    if (st.table.empty() && st.key.rfind("sandbox_workspace_write.", 0) == 0 && !dotted_sibling)
      dotted_sibling = &st;
    bool target = (in_table && st.key == "writable_roots") ||
                  (st.table.empty() && st.key == "sandbox_workspace_write.writable_roots");
    if (!target) continue;
    std::string_view value(text);
    value = value.substr(st.value_begin, st.value_end - st.value_begin);
    auto array =
        parse_toml_string_array(value, path + ":" + std::to_string(st.line) + ": writable_roots");
    if (!array) return fail(array.error().message + kRefuse);
    std::vector<std::string> missing;
    for (const auto& r : roots)
      if (std::find(array->values.begin(), array->values.end(), r) == array->values.end())
        missing.push_back(r);
    std::string after = text;
    if (!missing.empty()) {
      std::string insert = (array->needs_comma      ? ", "
                            : array->trailing_comma ? " "
                                                    : "") +
                           array_text(missing);
      after.insert(st.value_begin + array->insert_at, insert);
    }
    return FileChange{path, existing.bytes, after, what};
  }

  std::string after = text;
  std::string line;
  size_t at;
  if (header) {
    line = "writable_roots = [" + array_text(roots) + "]\n";
    at = header->end;
  } else if (dotted_sibling) {
    line = "sandbox_workspace_write.writable_roots = [" + array_text(roots) + "]\n";
    at = dotted_sibling->end;
  } else {
    if (!after.empty() && after.back() != '\n') after += "\n";
    if (!after.empty()) after += "\n";
    after += "[sandbox_workspace_write]\nwritable_roots = [" + array_text(roots) + "]\n";
    return FileChange{path, existing.bytes, after, what};
  }
  // A statement at the very end of a file without a final newline.
  if (at > 0 && after[at - 1] != '\n') {
    after.insert(at, "\n");
    ++at;
  }
  after.insert(at, line);
  return FileChange{path, existing.bytes, after, what};
}

Expected<Plan> plan_codex(const Context& ctx) {
  Plan plan{Tool::codex, {}, {}};
  DG_TRY(FileChange rules, plan_codex_rules(ctx));
  DG_TRY(FileChange config, plan_codex_config(ctx));
  plan.files.push_back(std::move(rules));
  plan.files.push_back(std::move(config));
  return plan;
}

std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < s.size()) {
    size_t eol = s.find('\n', pos);
    out.push_back(s.substr(pos, eol == std::string::npos ? std::string::npos : eol - pos));
    pos = eol == std::string::npos ? s.size() : eol + 1;
  }
  return out;
}

}  // namespace

std::optional<Tool> parse_tool(std::string_view name) {
  if (name == "claude") return Tool::claude;
  if (name == "codex") return Tool::codex;
  if (name == "copilot") return Tool::copilot;
  return std::nullopt;
}

std::string_view tool_name(Tool tool) {
  switch (tool) {
    case Tool::claude:
      return "claude";
    case Tool::codex:
      return "codex";
    case Tool::copilot:
      return "copilot";
  }
  return "?";
}

std::span<const std::string_view> granted_verbs() {
  return kVerbs;
}

bool Plan::changes_anything() const {
  return std::any_of(files.begin(), files.end(), [](const FileChange& f) { return f.changed(); });
}

std::vector<std::string> config_files(Tool tool, const Context& ctx) {
  switch (tool) {
    case Tool::claude:
      return {claude_settings(ctx)};
    case Tool::codex:
      return {codex_rules(ctx), codex_config(ctx)};
    case Tool::copilot:
      return {copilot_permissions(ctx)};
  }
  return {};
}

Expected<Plan> plan_install(Tool tool, const Context& ctx) {
  if (ctx.home.empty() || ctx.home.front() != '/')
    return fail("HOME must be an absolute directory (it is '" + ctx.home + "')");
  if (ctx.hook && tool != Tool::claude) return fail("--hook applies to claude only", 2);
  switch (tool) {
    case Tool::claude:
      return plan_claude(ctx);
    case Tool::codex:
      return plan_codex(ctx);
    case Tool::copilot:
      return plan_copilot(ctx);
  }
  return fail("unknown tool");
}

std::string render_diff(const FileChange& change) {
  if (!change.changed()) return "";
  const auto a = split_lines(change.before.value_or(""));
  const auto b = split_lines(change.after);
  std::string out = "--- " + (change.before ? change.path : std::string("/dev/null")) + "\n";
  out += "+++ " + change.path + "\n";
  // Longest common subsequence on lines; config files are small. Past a
  // size bound the preview shows the whole old and new text instead.
  const size_t n = a.size(), m = b.size();
  std::vector<char> ops;  // ' ', '-', '+'
  std::vector<std::string> texts;
  if (n * m <= 4'000'000) {
    std::vector<std::vector<int>> lcs(n + 1, std::vector<int>(m + 1, 0));
    for (size_t i = n; i-- > 0;)
      for (size_t j = m; j-- > 0;)
        lcs[i][j] = a[i] == b[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
    size_t i = 0, j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && a[i] == b[j]) {
        ops.push_back(' ');
        texts.push_back(a[i]);
        ++i;
        ++j;
      } else if (i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1])) {
        ops.push_back('-');  // removals first, as diff(1) shows them
        texts.push_back(a[i++]);
      } else {
        ops.push_back('+');
        texts.push_back(b[j++]);
      }
    }
  } else {
    for (const auto& l : a) ops.push_back('-'), texts.push_back(l);
    for (const auto& l : b) ops.push_back('+'), texts.push_back(l);
  }
  // Hunks: changed lines with two lines of context, "@@" between gaps.
  const size_t context = 2;
  std::vector<bool> show(ops.size(), false);
  for (size_t k = 0; k < ops.size(); ++k) {
    if (ops[k] == ' ') continue;
    size_t from = k >= context ? k - context : 0;
    for (size_t x = from; x < std::min(ops.size(), k + context + 1); ++x) show[x] = true;
  }
  bool gap = true;
  for (size_t k = 0; k < ops.size(); ++k) {
    if (!show[k]) {
      gap = true;
      continue;
    }
    if (gap) out += "@@\n";
    gap = false;
    out += std::string(1, ops[k]) + texts[k] + "\n";
  }
  return out;
}

Expected<std::vector<std::string>> apply_plan(const Plan& plan, const std::string& stamp) {
  std::vector<std::string> backups;
  for (const auto& dir : plan.directories) DG_CHECK(make_directories(dir));
  for (const auto& f : plan.files) {
    if (!f.changed()) continue;
    DG_CHECK(make_directories(dirname_of(f.path)));
    if (f.before) {
      std::string backup = f.path + ".devgraph-backup-" + stamp;
      for (int n = 1; path_exists(backup); ++n)
        backup = f.path + ".devgraph-backup-" + stamp + "-" + std::to_string(n);
      // Settings may hold tokens: the backup is readable by the owner only.
      DG_CHECK(write_file_atomic(backup, *f.before, 0600));
      backups.push_back(backup);
    }
    DG_CHECK(write_file_atomic(f.path, f.after, 0600));
  }
  return backups;
}

int run_install(Tool tool, const Context& ctx, const Options& options, Terminal& terminal,
                const std::string& stamp, std::ostream& out, std::ostream& err) {
  const std::string name = "devgraph install " + std::string(tool_name(tool));
  auto plan = plan_install(tool, ctx);
  if (!plan) {
    err << name << ": " << plan.error().message << "\n";
    return plan.error().exit_code;
  }
  if (!plan->changes_anything()) {
    out << name << ": nothing to change; devgraph's grants are already in place (";
    bool first = true;
    for (const auto& f : plan->files) out << (first ? "" : ", ") << f.path, first = false;
    out << ")\n";
    return 0;
  }
  out << name << " will change:\n";
  for (const auto& f : plan->files)
    if (f.changed()) out << "  " << f.path << ": " << f.what << "\n";
  out << "\n";
  for (const auto& f : plan->files) out << render_diff(f);
  if (options.dry_run) {
    out << "\n(dry run: nothing was written)\n";
    return 0;
  }
  if (!options.yes) {
    if (!terminal.interactive()) {
      err << name << ": no terminal to ask on; run again with --yes to apply, or --dry-run to "
          << "preview (nothing was changed)\n";
      return 1;
    }
    auto answer = terminal.ask("Apply these changes? [y/N] ");
    std::string a = answer.value_or("");
    a.erase(0, a.find_first_not_of(" \t"));
    a.erase(a.find_last_not_of(" \t\r\n") + 1);
    if (a != "y" && a != "Y" && a != "yes" && a != "YES" && a != "Yes") {
      out << "Not applied; nothing was changed.\n";
      return 1;
    }
  }
  auto backups = apply_plan(*plan, stamp);
  if (!backups) {
    err << name << ": " << backups.error().message << "\n";
    return 1;
  }
  for (const auto& b : *backups) out << "backup: " << b << "\n";
  for (const auto& f : plan->files)
    if (f.changed()) out << "updated: " << f.path << "\n";
  return 0;
}

}  // namespace devgraph::install
