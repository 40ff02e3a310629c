// Repository topology and path resolution: which checkout a path is in,
// what the repository is called, and where its worktrees belong. Only
// stat/lstat/readlink and a few small file reads; no git process.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <sstream>

#include "guard/internal.h"
#include "util/passwd.h"

namespace devgraph::guard {
namespace {

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : fallback;
}

std::string current_home() {
  if (const char* h = std::getenv("HOME"); h && *h) return h;
  if (auto h = home_of_uid(getuid())) return *h;
  return "/";
}

// Expands a leading `~` or `~user` the way Python's expanduser() does.
std::string expand_user(const std::string& path, const std::string& home) {
  if (path.empty() || path[0] != '~') return path;
  size_t slash = path.find('/');
  std::string user = path.substr(1, slash == std::string::npos ? std::string::npos : slash - 1);
  std::string rest = slash == std::string::npos ? "" : path.substr(slash);
  if (user.empty()) return (home == "/" && !rest.empty() ? "" : home) + rest;
  if (auto h = home_of_user(user)) return *h + rest;
  return path;
}

// Lexical clean-up in the manner of pathlib: no empty or "." components,
// no trailing slash. ".." is left alone (it may cross a symlink).
std::string pathlib_norm(const std::string& path) {
  if (path.empty()) return ".";
  std::string out = path[0] == '/' ? "/" : "";
  std::stringstream ss(path);
  std::string part;
  while (std::getline(ss, part, '/')) {
    if (part.empty() || part == ".") continue;
    if (!out.empty() && out.back() != '/') out += '/';
    out += part;
  }
  return out.empty() ? "." : out;
}

std::string parent_of(const std::string& p) {
  size_t slash = p.rfind('/');
  if (slash == std::string::npos || slash == 0) return "/";
  return p.substr(0, slash);
}

std::string last_component(const std::string& p) {
  size_t slash = p.rfind('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

bool under(const std::string& path, const std::string& root) {
  if (path == root) return true;
  if (root == "/") return !path.empty() && path[0] == '/';
  return path.size() > root.size() && path.compare(0, root.size(), root) == 0 &&
         path[root.size()] == '/';
}

std::vector<std::string> split_components(const std::string& p) {
  std::vector<std::string> out;
  std::stringstream ss(p);
  std::string part;
  while (std::getline(ss, part, '/'))
    if (!part.empty()) out.push_back(part);
  return out;
}

std::string read_small_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::string text;
  char buf[4096];
  while (in && text.size() < (1u << 20)) {
    in.read(buf, sizeof buf);
    text.append(buf, static_cast<size_t>(in.gcount()));
  }
  return text;
}

std::string strip(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n\f\v");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r\n\f\v");
  return s.substr(b, e - b + 1);
}

std::string strip_slashes(std::string s) {
  while (!s.empty() && s.front() == '/') s.erase(0, 1);
  while (!s.empty() && s.back() == '/') s.pop_back();
  return s;
}

// "owner/repo" from an SSH (user@host:path) or URL remote, "" otherwise.
std::string remote_owner_repo(const std::string& raw) {
  std::string url = strip(raw);
  size_t at = url.find('@');
  if (at != std::string::npos && at > 0) {
    size_t colon = url.find(':', at + 1);
    if (colon != std::string::npos && colon > at + 1 && colon + 1 < url.size() &&
        url.find('\n') == std::string::npos) {
      std::string path = url.substr(colon + 1);
      if (path.size() > 4 && path.compare(path.size() - 4, 4, ".git") == 0)
        path.resize(path.size() - 4);
      return strip_slashes(path);
    }
  }
  size_t sep = url.find("://");
  if (sep == std::string::npos) return "";
  std::string scheme = url.substr(0, sep);
  for (char& c : scheme) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (scheme != "https" && scheme != "http" && scheme != "git" && scheme != "ssh") return "";
  std::string rest = url.substr(sep + 3);
  size_t slash = rest.find_first_of("/?#");
  std::string netloc = rest.substr(0, slash);
  if (netloc.empty()) return "";
  std::string path = slash == std::string::npos ? "" : rest.substr(slash);
  path = path.substr(0, path.find_first_of("?#"));
  path = strip_slashes(path);
  if (path.size() >= 4 && path.compare(path.size() - 4, 4, ".git") == 0)
    path.resize(path.size() - 4);
  return path;
}

std::string origin_owner_repo(const Checkout& c) {
  if (c.common_dir.empty()) return "";
  std::stringstream lines(read_small_file(c.common_dir + "/config"));
  std::string line;
  bool in_origin = false;
  while (std::getline(lines, line)) {
    std::string s = strip(line);
    if (!s.empty() && s[0] == '[') {
      for (char& ch : s)
        if (ch == '\'') ch = '"';
      in_origin = s == "[remote \"origin\"]";
    } else if (in_origin && s.rfind("url", 0) == 0) {
      size_t eq = s.find('=');
      return remote_owner_repo(eq == std::string::npos ? "" : s.substr(eq + 1));
    }
  }
  return "";
}

std::string local_owner_repo(const Checkout& c) {
  if (c.common_dir.empty()) return "";
  std::string top = last_component(c.common_dir) == ".git" ? parent_of(c.common_dir) : c.common_dir;
  std::string name = last_component(top);
  return name.empty() ? "" : "local/" + name;
}

std::string identity_root(const Roots& roots) {
  return resolve_path(roots.worktrees, "/", roots.home);
}

bool is_dir(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// The first bytes of a small file, or "" when it cannot be read. Plain
// read(2): HEAD is read on every probe of a primary clone.
std::string read_prefix(const std::string& path, size_t max) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  std::string text(max, '\0');
  size_t got = 0;
  while (got < max) {
    ssize_t n = ::read(fd, text.data() + got, max - got);
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  text.resize(got);
  return text;
}

// git reads a detached HEAD's object id from the file's first bytes and
// ignores what follows them; the shortest id (SHA-1) is 40 hex digits.
bool starts_with_object_id(const std::string& s) {
  if (s.size() < 40) return false;
  for (size_t i = 0; i < 40; ++i)
    if (!std::isxdigit(static_cast<unsigned char>(s[i]))) return false;
  return true;
}

// HEAD as git accepts it: a symlink into refs/, "ref: refs/..." or an
// object id. Only a regular file is read (a FIFO named HEAD would block).
bool valid_head(const std::string& path) {
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) return false;
  if (S_ISLNK(st.st_mode)) {
    char buf[4096];
    ssize_t n = readlink(path.c_str(), buf, sizeof buf);
    return n >= 5 && std::string(buf, static_cast<size_t>(n)).rfind("refs/", 0) == 0;
  }
  if (!S_ISREG(st.st_mode)) return false;
  std::string text = read_prefix(path, 255);
  if (text.rfind("ref:", 0) == 0 && strip(text.substr(4)).rfind("refs/", 0) == 0) return true;
  return starts_with_object_id(text);
}

// git's own test for a git directory: a valid HEAD, and objects/ and refs/
// in its common directory (the one its `commondir` file names, as a linked
// worktree's does; else the directory itself).
bool is_git_dir(const std::string& dir) {
  if (!valid_head(dir + "/HEAD")) return false;
  std::string common = strip(read_prefix(dir + "/commondir", 4096));
  if (common.empty())
    common = dir;
  else if (common[0] != '/')
    common = dir + "/" + common;
  return is_dir(common + "/objects") && is_dir(common + "/refs");
}

}  // namespace

Roots Roots::from_env() {
  Roots r;
  r.home = current_home();
  std::string ai = pathlib_norm(expand_user(env_or("AI_ROOT", r.home + "/.ai"), r.home));
  r.worktrees =
      pathlib_norm(expand_user(env_or("DEVELOP_WORKTREES_ROOT", ai + "/worktrees"), r.home));
  r.develop_home = pathlib_norm(expand_user(env_or("DEVELOP_HOME_ROOT", ai + "/develop"), r.home));
  if (const char* raw = std::getenv("DEVELOP_GUARD_EXEMPT")) {
    char buf[4096];
    std::string cwd = getcwd(buf, sizeof buf) ? buf : "/";
    std::stringstream ss(raw);
    std::string entry;
    while (std::getline(ss, entry, ':'))
      if (!entry.empty()) r.exempt.push_back(resolve_path(entry, cwd, r.home));
  }
  return r;
}

std::string resolve_path(const std::string& path, const std::string& cwd, const std::string& home) {
  std::string p = expand_user(path, home);
  if (p.empty() || p[0] != '/') p = (cwd.empty() ? std::string("/") : cwd) + "/" + p;
  std::deque<std::string> todo;
  for (auto& c : split_components(p)) todo.push_back(std::move(c));
  std::string out;  // "" is the root
  bool missing = false;
  int links = 0;
  while (!todo.empty()) {
    std::string c = std::move(todo.front());
    todo.pop_front();
    if (c == ".") continue;
    if (c == "..") {
      size_t slash = out.rfind('/');
      out = slash == std::string::npos ? "" : out.substr(0, slash);
      continue;
    }
    std::string candidate = out + "/" + c;
    if (missing) {
      out = candidate;
      continue;
    }
    struct stat st {};
    if (lstat(candidate.c_str(), &st) != 0) {
      missing = true;
      out = candidate;
      continue;
    }
    if (S_ISLNK(st.st_mode) && ++links <= 40) {
      char buf[4096];
      ssize_t n = readlink(candidate.c_str(), buf, sizeof buf);
      if (n > 0) {
        std::string target(buf, static_cast<size_t>(n));
        auto parts = split_components(target);
        for (auto it = parts.rbegin(); it != parts.rend(); ++it) todo.push_front(*it);
        if (target[0] == '/') out = "";
        continue;
      }
    }
    out = candidate;
  }
  return out.empty() ? "/" : out;
}

Checkout probe(const std::string& dir) {
  return detail::probe_resolved(resolve_path(dir, "/", current_home()));
}

std::string owner_repo(const Checkout& checkout) {
  std::string from_origin = origin_owner_repo(checkout);
  return from_origin.empty() ? local_owner_repo(checkout) : from_origin;
}

std::string branch_slug(const std::string& branch) {
  std::string out = branch;
  for (char& c : out)
    if (c == '/') c = '-';
  return out;
}

Json Placement::to_json() const {
  auto opt = [](const std::optional<std::string>& v) { return v ? Json(*v) : Json(nullptr); };
  Json j = Json::object();
  j["owner"] = owner;
  j["repo"] = repo;
  j["delivery"] = delivery;
  j["primary_top"] = opt(primary_top);
  j["checkout_kind"] = opt(checkout_kind);
  j["worktrees_dir"] = worktrees_dir;
  j["develop_home"] = develop_home;
  j["branch"] = opt(branch);
  j["branch_slug"] = opt(branch_slug);
  j["worktree_path"] = opt(worktree_path);
  return j;
}

Expected<Placement> resolve_placement(const std::string& cwd,
                                      const std::optional<std::string>& branch,
                                      const Roots& roots) {
  Checkout c = detail::probe_resolved(resolve_path(cwd, "/", roots.home));
  if (c.common_dir.empty())
    return fail(cwd + " is not inside a git repository; placement cannot be derived", 2);
  std::string from_origin = origin_owner_repo(c);
  std::string identity = from_origin.empty() ? local_owner_repo(c) : from_origin;
  size_t slash = identity.find('/');
  if (slash == std::string::npos)
    return fail("cannot derive <owner>/<repo> for the repository containing " + cwd, 2);
  Placement p;
  p.owner = identity.substr(0, slash);
  p.repo = identity.substr(slash + 1);
  p.delivery = from_origin.empty() ? "local" : "github";
  if (last_component(c.common_dir) == ".git") p.primary_top = parent_of(c.common_dir);
  if (c.kind != CheckoutKind::kNone)
    p.checkout_kind = c.kind == CheckoutKind::kPrimary ? "primary" : "worktree";
  p.worktrees_dir = pathlib_norm(roots.worktrees + "/" + p.owner + "/" + p.repo);
  p.develop_home = pathlib_norm(roots.develop_home + "/" + p.owner + "/" + p.repo);
  if (branch && !branch->empty()) {
    p.branch = *branch;
    p.branch_slug = branch_slug(*branch);
    p.worktree_path = pathlib_norm(p.worktrees_dir + "/" + *p.branch_slug);
  } else if (branch) {
    p.branch = *branch;
  }
  return p;
}

Verdict check_worktree(const std::string& path, const std::string& cwd, const Roots& roots) {
  std::string rcwd = resolve_path(cwd, "/", roots.home);
  Checkout c = detail::probe_resolved(detail::nearest_existing(rcwd));
  return detail::worktree_target_reason(resolve_path(path, rcwd, roots.home), c, roots);
}

Verdict check_write(const std::string& path, const std::string& cwd, const Roots& roots) {
  std::string resolved = resolve_path(path, resolve_path(cwd, "/", roots.home), roots.home);
  if (auto primary = detail::primary_containing(resolved, roots))
    return detail::deny_write(path, *primary, roots);
  return std::nullopt;
}

namespace detail {

Checkout probe_resolved(const std::string& start) {
  std::string d = start.empty() ? "/" : start;
  while (true) {
    std::string g = (d == "/" ? "" : d) + "/.git";
    struct stat st {};
    if (stat(g.c_str(), &st) == 0) {
      if (S_ISDIR(st.st_mode) && is_git_dir(g)) return Checkout{CheckoutKind::kPrimary, d, g, g};
      std::string gd;
      if (S_ISREG(st.st_mode)) {
        std::string text = strip(read_small_file(g));
        if (text.rfind("gitdir:", 0) == 0) gd = strip(text.substr(7));
        if (!gd.empty() && gd[0] != '/') gd = resolve_path(gd, d, "");
        if (!gd.empty()) gd = pathlib_norm(gd);
        if (!gd.empty() && !is_git_dir(gd)) gd.clear();
      }
      if (!gd.empty()) {
        auto parts = split_components(gd);
        for (size_t k = parts.size(); k-- > 0;) {
          if (parts[k] == "worktrees") {
            std::string common;
            for (size_t m = 0; m < k; ++m) common += "/" + parts[m];
            return Checkout{CheckoutKind::kWorktree, d, gd, common.empty() ? "/" : common};
          }
        }
        for (const auto& part : parts)
          if (part == "modules") return Checkout{CheckoutKind::kPrimary, d, gd, gd};
        return Checkout{CheckoutKind::kWorktree, d, gd, gd};
      }
    }
    if (d == "/") return Checkout{};
    d = parent_of(d);
  }
}

std::string nearest_existing(const std::string& path) {
  std::string p = path.empty() ? "/" : path;
  struct stat st {};
  while (p != "/" && stat(p.c_str(), &st) != 0) p = parent_of(p);
  return p;
}

bool is_exempt(const std::string& top, const Roots& roots) {
  if (top.empty()) return false;
  for (const auto& e : roots.exempt)
    if (under(top, e)) return true;
  return false;
}

std::optional<Checkout> primary_containing(const std::string& path, const Roots& roots) {
  std::string anchor = nearest_existing(path);
  struct stat st {};
  if (stat(anchor.c_str(), &st) == 0 && !S_ISDIR(st.st_mode)) anchor = parent_of(anchor);
  Checkout c = probe_resolved(anchor);
  if (c.kind == CheckoutKind::kPrimary && !is_exempt(c.top, roots)) return c;
  return std::nullopt;
}

std::string suggest_worktree(const Checkout& checkout, const Roots& roots) {
  std::string identity = owner_repo(checkout);
  if (identity.empty()) identity = "<owner>/<repo>";
  return "git worktree add " + roots.worktrees + "/" + identity +
         "/<branch-slug> -b <branch> <default-branch>";
}

std::string deny_write(const std::string& subject, const Checkout& primary, const Roots& roots) {
  return subject + " is inside the primary clone " + primary.top +
         ", which is read-only; do the work in a linked worktree (" +
         suggest_worktree(primary, roots) + ")";
}

Verdict worktree_target_reason(const std::string& target, const Checkout& checkout,
                               const Roots& roots) {
  std::string root = identity_root(roots);
  if (!under(target, root) || target == root)
    return "worktree target " + target + " is outside " + roots.worktrees + "; worktrees live at " +
           roots.worktrees + "/<owner>/<repo>/<name>";
  auto parts = split_components(target.substr(root == "/" ? 0 : root.size()));
  if (parts.size() != 3)
    return "worktree target " + target + " must be exactly " + roots.worktrees +
           "/<owner>/<repo>/<name> (three levels below the worktrees root)";
  std::string identity = owner_repo(checkout);
  if (!identity.empty()) {
    size_t slash = identity.find('/');
    auto lower = [](std::string s) {
      for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      return s;
    };
    if (lower(parts[0]) != lower(identity.substr(0, slash)) ||
        lower(parts[1]) != lower(identity.substr(slash + 1)))
      return "worktree target " + target + " does not match the repository " + identity +
             "; expected " + roots.worktrees + "/" + identity + "/<name>";
  }
  return std::nullopt;
}

std::optional<std::string> home_of(const std::string& user, const Roots& roots) {
  if (user.empty()) return roots.home;
  return home_of_user(user);
}

}  // namespace detail
}  // namespace devgraph::guard
