// The PreToolUse hook protocol and the built-in self-check.
#include <sys/stat.h>

#include <fstream>

#include "guard/internal.h"
#include "util/fs.h"

namespace devgraph::guard {
namespace {

// Python truthiness for JSON values: the payload fields are read with
// `a or b` fallbacks, so "", 0, null, [] and {} all count as absent.
bool truthy(const Json& v) {
  if (v.is_null()) return false;
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number_integer()) return v.get<long long>() != 0;
  if (v.is_number_unsigned()) return v.get<unsigned long long>() != 0;
  if (v.is_number_float()) return v.get<double>() != 0.0;
  if (v.is_string()) return !v.get_ref<const std::string&>().empty();
  if (v.is_array() || v.is_object()) return !v.empty();
  return true;
}

const Json* field(const Json& obj, const char* a, const char* b) {
  auto it = obj.find(a);
  if (it != obj.end() && truthy(*it)) return &*it;
  if (b) {
    it = obj.find(b);
    if (it != obj.end() && truthy(*it)) return &*it;
  }
  return nullptr;
}

std::string string_field(const Json& obj, const char* a, const char* b) {
  const Json* v = field(obj, a, b);
  return v && v->is_string() ? v->get<std::string>() : "";
}

}  // namespace

std::string hook_response(const std::string& payload_text, const std::string& fallback_cwd,
                          const Roots& roots) {
  if (payload_text.find_first_not_of(" \t\r\n") == std::string::npos) return "";
  Json payload = Json::parse(payload_text, nullptr, /*allow_exceptions=*/false);
  if (payload.is_discarded() || !payload.is_object()) return "";
  if (const Json* event = field(payload, "hook_event_name", "hookEventName"))
    if (!event->is_string() || event->get_ref<const std::string&>() != "PreToolUse") return "";
  std::string tool = string_field(payload, "tool_name", "toolName");
  Json empty = Json::object();
  const Json* input = field(payload, "tool_input", "toolInput");
  if (!input) input = &empty;
  if (!input->is_object()) return "";
  std::string cwd = string_field(payload, "cwd", nullptr);
  cwd = resolve_path(cwd.empty() ? fallback_cwd : cwd, fallback_cwd, roots.home);

  Verdict reason;
  if (tool == "Edit" || tool == "Write" || tool == "NotebookEdit" || tool == "MultiEdit") {
    std::string path = string_field(*input, "file_path", "notebook_path");
    if (!path.empty()) reason = check_write(path, cwd, roots);
  } else if (tool == "Bash") {
    reason = check_bash(string_field(*input, "command", nullptr), cwd, roots);
  }
  if (!reason) return "";
  Json out = Json::object();
  out["hookSpecificOutput"] = Json::object();
  out["hookSpecificOutput"]["hookEventName"] = "PreToolUse";
  out["hookSpecificOutput"]["permissionDecision"] = "deny";
  out["hookSpecificOutput"]["permissionDecisionReason"] = "[devgraph guard] " + *reason;
  return dump_py(out) + "\n";
}

std::vector<std::string> self_check() {
  std::vector<std::string> failures;
  auto tmp = TempDir::create("devgraph-guard");
  if (!tmp) return {"cannot create a temporary directory: " + tmp.error().message};
  const std::string root = resolve_path(tmp->path(), "/", "");
  auto put = [](const std::string& path, const std::string& text) {
    (void)make_directories(dirname_of(path));
    std::ofstream(path) << text;
  };
  // A primary clone with an origin, a linked worktree of it, a clone
  // without a remote, and a plain directory below an empty `.git`
  // directory (not a repository); no git needed.
  auto git_dir = [&](const std::string& dir, const std::string& config) {
    put(dir + "/HEAD", "ref: refs/heads/main\n");
    put(dir + "/config", config);
    (void)make_directories(dir + "/objects");
    (void)make_directories(dir + "/refs/heads");
  };
  const std::string primary = root + "/primary";
  git_dir(primary + "/.git", "[remote \"origin\"]\n\turl = https://github.com/Acme/Widgets.git\n");
  put(primary + "/.git/worktrees/feat/HEAD", "ref: refs/heads/develop/feat\n");
  put(primary + "/.git/worktrees/feat/commondir", "../..\n");
  put(primary + "/README.md", "x\n");
  const std::string linked = root + "/linked";
  put(linked + "/.git", "gitdir: " + primary + "/.git/worktrees/feat\n");
  const std::string solo = root + "/solo-app";
  git_dir(solo + "/.git", "[core]\n");
  const std::string plain = root + "/stray/plain";
  (void)make_directories(plain);
  (void)make_directories(root + "/stray/.git");

  Roots roots;
  roots.home = root + "/home";
  roots.worktrees = root + "/ai/worktrees";
  roots.develop_home = root + "/ai/develop";
  const std::string wt = roots.worktrees;

  auto expect = [&](const std::string& label, bool ok) {
    if (!ok) failures.push_back(label);
  };
  auto allowed = [&](const std::string& cmd, const std::string& cwd) {
    return !check_bash(cmd, cwd, roots).has_value();
  };

  expect("probe primary", probe(primary).kind == CheckoutKind::kPrimary);
  expect("probe linked", probe(linked).kind == CheckoutKind::kWorktree);
  expect("linked common dir", probe(linked).common_dir == primary + "/.git");
  expect("empty .git directory is no repository", probe(plain).kind == CheckoutKind::kNone);
  expect("identity from origin", owner_repo(probe(primary)) == "Acme/Widgets");
  expect("identity from linked", owner_repo(probe(linked)) == "Acme/Widgets");
  expect("identity without origin", owner_repo(probe(solo)) == "local/solo-app");

  auto p = resolve_placement(primary, std::string("develop/add-login"), roots);
  expect("placement resolves", p.ok());
  if (p) {
    expect("placement slug", p->branch_slug == std::optional<std::string>("develop-add-login"));
    expect("placement worktree",
           p->worktree_path == std::optional<std::string>(wt + "/Acme/Widgets/develop-add-login"));
    expect("placement delivery", p->delivery == "github");
  }
  auto s = resolve_placement(solo, std::string("develop/x"), roots);
  expect("local placement", s.ok() && s->owner == "local" && s->delivery == "local");
  expect("non-repository fails", !resolve_placement(plain, std::nullopt, roots).ok());

  expect("write in primary denied", check_write(primary + "/a.txt", root, roots).has_value());
  expect("relative write in primary denied", check_write("a.txt", primary, roots).has_value());
  expect("write in linked allowed", !check_write(linked + "/a.txt", root, roots));
  expect("write elsewhere allowed", !check_write(plain + "/a.txt", root, roots));

  expect("canonical worktree allowed",
         allowed("git worktree add " + wt + "/Acme/Widgets/x -b x main", primary));
  expect("worktree owner case-insensitive",
         allowed("git worktree add " + wt + "/acme/widgets/x -b x main", primary));
  expect("worktree wrong depth denied", !allowed("git worktree add " + wt + "/x -b x", primary));
  expect("worktree outside root denied",
         !allowed("git worktree add " + plain + "/x -b x", primary));
  expect("git commit in primary denied", !allowed("git commit -m x", primary));
  expect("git -C primary denied", !allowed("git -C " + primary + " add .", plain));
  expect("git --git-dir primary denied",
         !allowed("git --git-dir=" + primary + "/.git reset --hard", plain));
  expect("GIT_WORK_TREE primary denied",
         !allowed("GIT_WORK_TREE=" + primary + " git checkout .", plain));
  expect("read-only git allowed", allowed("git status && git log --oneline | head", primary));
  expect("pull --ff-only allowed", allowed("git pull --ff-only", primary));
  expect("git commit in linked allowed", allowed("git add -A && git commit -m x", linked));
  expect("redirect denied", !allowed("echo hi > out.txt", primary));
  expect("quoted > allowed", allowed("grep \"a > b\" README.md 2>/dev/null", primary));
  expect("cd then redirect denied", !allowed("cd " + primary + " && echo hi >> x", plain));
  expect("bash -c denied", !allowed("bash -c 'touch x'", primary));
  expect("substitution denied", !allowed("echo $(rm README.md)", primary));
  expect("xargs denied", !allowed("ls | xargs rm", primary));
  expect("find -delete denied", !allowed("find . -name '*.o' -delete", primary));
  expect("cp -t denied", !allowed("cp -t " + primary + " /etc/hostname", plain));
  expect("sed -i denied", !allowed("sed -i s/x/y/ README.md", primary));
  expect("dd of= denied", !allowed("dd if=/dev/zero of=" + primary + "/z count=1", plain));
  expect("here-doc into sh denied", !allowed("sh <<'EOF'\ntouch x\nEOF", primary));
  expect("unparseable in primary denied", !allowed("echo 'unterminated", primary));
  expect("unparseable elsewhere allowed", allowed("echo 'unterminated", plain));
  expect("writes in linked allowed",
         allowed("mkdir -p a && echo x > a/b && sed -i s/x/y/ a/b", linked));

  Roots exempt = roots;
  exempt.exempt.push_back(primary);
  expect("exempt primary allowed", !check_write(primary + "/a.txt", root, exempt));
  return failures;
}

}  // namespace devgraph::guard
