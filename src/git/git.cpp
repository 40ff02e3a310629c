#include "git/git.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <utility>

#include "util/fs.h"
#include "util/text.h"

namespace devgraph::git {
namespace {

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r')) s.pop_back();
  size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\n')) ++i;
  return s.substr(i);
}

class RealGit final : public Git {
 public:
  RealGit(CommandRunner& runner, std::string dir, std::map<std::string, std::string> env,
          GitOptions options)
      : runner_(runner), dir_(std::move(dir)), env_(std::move(env)), options_(options) {}

  const std::string& dir() const override { return dir_; }
  bool runs_hooks() const override { return options_.run_hooks; }

  Status pre_commit(const std::vector<std::string>& pathspec) override {
    if (!options_.run_hooks) return {};
    if (pathspec.empty()) return run_hook("pre-commit", {}, {});
    // The hook sees the index `git commit -- <pathspec>` would commit: HEAD
    // and these paths, in an index of its own, so what else is staged (and
    // what the hook stages) stays out of the real index.
    DG_TRY(std::string index, git_path("devgraph-pre-commit-index"));
    (void)std::remove(index.c_str());  // a killed run's leftover
    std::map<std::string, std::string> env = {{"GIT_INDEX_FILE", index}};
    auto head = run({"rev-parse", "--verify", "--quiet", "HEAD^{commit}"});
    std::vector<std::string> add = {"add", "--"};
    add.insert(add.end(), pathspec.begin(), pathspec.end());
    Status ran = [&]() -> Status {
      DG_TRY(auto read, run(head ? std::vector<std::string>{"read-tree", trim(*head)}
                                 : std::vector<std::string>{"read-tree", "--empty"},
                            "", env));
      (void)read;
      DG_TRY(auto added, run(add, "", env));
      (void)added;
      return run_hook("pre-commit", {}, env);
    }();
    (void)std::remove(index.c_str());  // the commit builds its own
    return ran;
  }

  Expected<std::string> rev_parse(const std::string& rev) override {
    if (rev == "HEAD" && !env_.count("GIT_DIR") && !env_.count("GIT_COMMON_DIR"))
      if (auto head = head_from_files(dir_)) return *head;
    DG_TRY(auto out, run({"rev-parse", "--verify", "--quiet", rev + "^{commit}"}));
    return trim(out);
  }

  Expected<std::vector<StatusEntry>> status() override {
    // Status may refresh the index; other writers share this worktree, so
    // it never takes index.lock for that.
    DG_TRY(auto out, run({std::begin(kStatusArgs), std::end(kStatusArgs)}, "",
                         {{"GIT_OPTIONAL_LOCKS", "0"}}));
    return parse_porcelain_z(out);
  }

  Status add(const std::vector<std::string>& pathspec) override {
    if (pathspec.empty()) return fail("git add: empty pathspec");
    std::vector<std::string> args = {"add", "--"};
    args.insert(args.end(), pathspec.begin(), pathspec.end());
    DG_TRY(auto out, run(args));
    (void)out;
    return {};
  }

  Expected<std::vector<std::string>> staged(const std::vector<std::string>& pathspec) override {
    std::vector<std::string> args = {"diff", "--cached", "--name-only", "-z"};
    if (!pathspec.empty()) {
      args.push_back("--");
      args.insert(args.end(), pathspec.begin(), pathspec.end());
    }
    DG_TRY(auto out, run(args));
    std::vector<std::string> paths;
    size_t pos = 0;
    while (pos < out.size()) {
      auto end = out.find('\0', pos);
      if (end == std::string::npos) end = out.size();
      if (end > pos) paths.push_back(out.substr(pos, end - pos));
      pos = end + 1;
    }
    return paths;
  }

  Expected<std::string> commit(const CommitRequest& request,
                               const std::vector<std::string>& pathspec,
                               bool pre_commit_done) override {
    if (request.subject.empty()) return fail("git commit: empty subject");
    std::string message = format_commit_message(request);
    if (options_.run_hooks) {
      if (!pre_commit_done) DG_CHECK(pre_commit(pathspec));
      DG_TRY(message, commit_msg_hook(std::move(message)));
    }
    // The message goes through stdin so no text is ever read as an option.
    // The hooks ran above, each once: --no-verify keeps git from running
    // them again.
    std::vector<std::string> args = {"commit", "-q", "--no-verify", "-F", "-"};
    if (!pathspec.empty()) {
      args.push_back("--");
      args.insert(args.end(), pathspec.begin(), pathspec.end());
    }
    DG_TRY(auto out, run(args, message));
    (void)out;
    return rev_parse("HEAD");
  }

  Expected<std::vector<TrailerHit>> find_trailer(const std::string& key,
                                                 const std::string& since) override {
    std::string range = since.empty() ? "HEAD" : since + "..HEAD";
    // \x1f between fields, \x1e between commits: neither appears in a hash
    // or a one-line trailer value.
    std::string fmt = "--format=%H%x1f%(trailers:key=" + key + ",valueonly,separator=%x1f)%x1e";
    DG_TRY(auto out, run({"log", fmt, range}));
    std::vector<TrailerHit> hits;
    size_t pos = 0;
    while (pos < out.size()) {
      auto end = out.find('\x1e', pos);
      if (end == std::string::npos) end = out.size();
      std::string rec = trim(out.substr(pos, end - pos));
      pos = end + 1;
      auto sep = rec.find('\x1f');
      if (sep == std::string::npos) continue;
      std::string hash = rec.substr(0, sep);
      std::string rest = rec.substr(sep + 1);
      size_t p = 0;
      while (p <= rest.size()) {
        auto e = rest.find('\x1f', p);
        if (e == std::string::npos) e = rest.size();
        std::string value = trim(rest.substr(p, e - p));
        if (!value.empty()) hits.push_back({hash, value});
        p = e + 1;
      }
    }
    return hits;
  }

  Status worktree_add(const std::string& path, const std::string& branch,
                      const std::string& base) override {
    auto exists = run({"rev-parse", "--verify", "--quiet", "refs/heads/" + branch});
    if (exists.ok()) {
      DG_TRY(auto out, run({"worktree", "add", path, branch}));
      (void)out;
    } else {
      DG_TRY(auto out, run({"worktree", "add", "-b", branch, path, base}));
      (void)out;
    }
    return {};
  }

  Expected<std::string> diff(const std::string& range) override { return run({"diff", range}); }

  Status push(const std::string& remote, const std::string& branch) override {
    DG_TRY(auto out, run({"push", "-q", "-u", remote, branch}));
    (void)out;
    return {};
  }

  Expected<std::optional<std::string>> remote_head(const std::string& remote,
                                                   const std::string& branch) override {
    DG_TRY(auto out, run({"ls-remote", remote, "refs/heads/" + branch}));
    out = trim(out);
    if (out.empty()) return std::optional<std::string>();
    return std::optional<std::string>(out.substr(0, out.find_first_of(" \t")));
  }

  Expected<std::vector<std::string>> log_oneline(const std::string& base) override {
    DG_TRY(auto out, run({"log", "--reverse", "--format=%H %s", base + "..HEAD"}));
    std::vector<std::string> lines;
    size_t pos = 0;
    while (pos < out.size()) {
      auto end = out.find('\n', pos);
      if (end == std::string::npos) end = out.size();
      if (end > pos) lines.push_back(out.substr(pos, end - pos));
      pos = end + 1;
    }
    return lines;
  }

 private:
  // Runs the repository's hook `name` (`git hook run --ignore-missing`):
  // ok when it passed or there is none, an ErrorKind::hook error with its
  // output when it refused or timed out.
  Status run_hook(const std::string& name, const std::vector<std::string>& args,
                  const std::map<std::string, std::string>& extra_env) {
    CommandSpec spec = base_spec({"hook", "run", "--ignore-missing", name}, extra_env);
    if (!args.empty()) {
      spec.argv.push_back("--");
      spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    }
    spec.timeout = options_.hook_timeout;
    spec.max_output_bytes = 64 * 1024;
    DG_TRY(auto r, runner_.run(spec));
    if (r.ok()) return {};
    // `git hook` came with git 2.36; an older git says it has no such
    // command, which is no refusal of the repository's hook.
    if (!r.timed_out && r.err.find("'hook' is not a git command") != std::string::npos)
      return fail("git hook run: this git is older than 2.36 and cannot run the repository's " +
                  name + " hook; update git, or set GRAPH.yaml headless.run_git_hooks: false");
    std::string output = clip_tail(r.out + r.err, kHookOutputMax);
    std::string why = r.timed_out ? "timed out" : last_line(output);
    if (why.empty()) why = "exit " + std::to_string(r.exit_code);
    Error e = fail(ErrorKind::hook, "the repository's " + name + " hook refused the commit in " +
                                        dir_ + ": " + why);
    e.output = std::move(output);
    return e;
  }

  // A path in the worktree's git directory (`git rev-parse --git-path`).
  Expected<std::string> git_path(const std::string& name) {
    DG_TRY(auto where, run({"rev-parse", "--git-path", name}));
    std::string path = trim(where);
    if (path.empty()) return fail("git rev-parse --git-path: no answer in " + dir_);
    if (path[0] != '/') path = dir_ + "/" + path;
    return path;
  }

  // The commit-msg hook on `message`, in a file of the worktree's git
  // directory as git's own COMMIT_EDITMSG is; the hook may rewrite it (a
  // sign-off line), and what it leaves is the message.
  Expected<std::string> commit_msg_hook(std::string message) {
    DG_TRY(std::string path, git_path("DEVGRAPH_COMMIT_MSG"));
    DG_CHECK(write_file_atomic(path, message));
    Status hook = run_hook("commit-msg", {path}, {});
    auto edited = read_file(path);
    (void)std::remove(path.c_str());  // a leftover is harmless: rewritten next time
    DG_CHECK(hook);
    if (!edited) return edited.error();
    return std::move(*edited);
  }

  CommandSpec base_spec(const std::vector<std::string>& args,
                        const std::map<std::string, std::string>& extra_env = {}) const {
    CommandSpec spec;
    spec.argv = {"git"};
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    spec.cwd = dir_;
    spec.env = env_;
    for (const auto& [k, v] : extra_env) spec.env[k] = v;
    // Never let git stop for a pager, an editor or a credential prompt.
    spec.env["GIT_PAGER"] = "cat";
    spec.env["GIT_EDITOR"] = "true";
    spec.env["GIT_TERMINAL_PROMPT"] = "0";
    return spec;
  }

  Expected<std::string> run(std::vector<std::string> args, std::string input = "",
                            const std::map<std::string, std::string>& extra_env = {}) {
    CommandSpec spec = base_spec(args, extra_env);
    spec.input = std::move(input);
    DG_TRY(auto r, runner_.run(spec));
    if (!r.ok()) {
      std::string why = last_line(r.err.empty() ? r.out : r.err);
      if (r.timed_out) why = "timed out";
      return fail("git " + (args.empty() ? std::string() : args[0]) + " failed in " + dir_ + ": " +
                  (why.empty() ? "exit " + std::to_string(r.exit_code) : why));
    }
    return std::move(r.out);
  }

  CommandRunner& runner_;
  std::string dir_;
  std::map<std::string, std::string> env_;
  GitOptions options_;
};

}  // namespace

std::unique_ptr<Git> make_git(CommandRunner& runner, std::string dir,
                              std::map<std::string, std::string> env, GitOptions options) {
  return std::make_unique<RealGit>(runner, std::move(dir), std::move(env), options);
}

namespace {

std::optional<std::string> first_line_of(const std::string& path) {
  auto text = read_file(path);
  if (!text) return std::nullopt;
  auto end = text->find('\n');
  if (end == std::string::npos) return std::nullopt;  // a ref file always ends in one
  return text->substr(0, end);
}

bool is_object_name(const std::string& s) {
  return (s.size() == 40 || s.size() == 64) && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

// `ref` (e.g. "refs/heads/main") in the common directory: the loose file,
// else packed-refs.
std::optional<std::string> resolve_ref(const std::string& common, const std::string& ref) {
  if (ref.rfind("refs/", 0) != 0 || ref.find("..") != std::string::npos) return std::nullopt;
  if (path_exists(common + "/" + ref)) {
    auto line = first_line_of(common + "/" + ref);
    if (line && is_object_name(*line)) return line;
    return std::nullopt;  // a symbolic or odd ref: let git answer
  }
  auto packed = read_file(common + "/packed-refs");
  if (!packed) return std::nullopt;
  size_t pos = 0;
  while (pos < packed->size()) {
    auto end = packed->find('\n', pos);
    if (end == std::string::npos) end = packed->size();
    std::string_view line(packed->data() + pos, end - pos);
    pos = end + 1;
    auto space = line.find(' ');
    if (line.empty() || line[0] == '#' || line[0] == '^' || space == std::string_view::npos)
      continue;
    if (line.substr(space + 1) == ref) {
      std::string name(line.substr(0, space));
      if (is_object_name(name)) return name;
      return std::nullopt;
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> head_from_files(const std::string& dir) {
  if (std::getenv("GIT_DIR") || std::getenv("GIT_COMMON_DIR")) return std::nullopt;
  std::string dotgit = dir + "/.git";
  std::string gitdir;
  if (is_directory(dotgit)) {
    gitdir = dotgit;
  } else {
    auto line = first_line_of(dotgit);
    if (!line || line->rfind("gitdir: ", 0) != 0) return std::nullopt;
    gitdir = line->substr(8);
    if (gitdir.empty()) return std::nullopt;
    if (gitdir[0] != '/') gitdir = dir + "/" + gitdir;
  }
  std::string common = gitdir;
  if (path_exists(gitdir + "/commondir")) {
    auto line = first_line_of(gitdir + "/commondir");
    if (!line || line->empty()) return std::nullopt;
    common = (*line)[0] == '/' ? *line : gitdir + "/" + *line;
  }
  if (path_exists(common + "/reftable")) return std::nullopt;
  auto head = first_line_of(gitdir + "/HEAD");
  if (!head) return std::nullopt;
  if (is_object_name(*head)) return head;
  if (head->rfind("ref: ", 0) != 0) return std::nullopt;
  std::string ref = head->substr(5);
  // Per-worktree refs (refs/bisect, refs/worktree, ...) live in the
  // worktree's own directory; a branch HEAD names lives in the common one.
  if (ref.rfind("refs/heads/", 0) != 0) return std::nullopt;
  return resolve_ref(common, ref);
}

std::string format_commit_message(const CommitRequest& request) {
  std::string msg = request.subject + "\n";
  if (!request.body.empty()) {
    msg += "\n" + request.body;
    if (msg.back() != '\n') msg += "\n";
  }
  if (!request.trailers.empty()) {
    msg += "\n";
    for (const auto& [k, v] : request.trailers) msg += k + ": " + v + "\n";
  }
  return msg;
}

Expected<std::string> commit_paths(Git& git, const std::vector<std::string>& pathspec,
                                   const CommitRequest& request,
                                   const std::function<void(const char*)>& on_step,
                                   bool pre_commit_done) {
  // Nothing of ours changed: no `git add` at all (an empty pathspec is an
  // error to git) and, above all, no pathless commit of the whole index.
  if (pathspec.empty()) return std::string();
  DG_CHECK(git.add(pathspec));
  if (on_step) on_step("commit");
  auto c = git.commit(request, pathspec, pre_commit_done);
  if (on_step) on_step("committed");
  if (c || c.error().kind == ErrorKind::hook) return c;
  // The paths were listed as changed, so a refused commit is rare: asked
  // only then, a pathspec with nothing staged is nothing to commit rather
  // than an error.
  DG_TRY(auto staged, git.staged(pathspec));
  if (staged.empty()) return std::string();
  return c;
}

Expected<CommandResult> run_git(CommandRunner& runner, const std::string& dir,
                                const std::vector<std::string>& args,
                                std::chrono::milliseconds timeout, bool stop_on_signal) {
  CommandSpec spec;
  spec.argv = {"git", "-C", dir};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.env = {{"GIT_OPTIONAL_LOCKS", "0"}, {"GIT_TERMINAL_PROMPT", "0"}};
  spec.timeout = timeout;
  spec.stop_on_signal = stop_on_signal;
  return runner.run(spec);
}

}  // namespace devgraph::git
