// check_bash(): walks the parsed command line the way a shell would run it
// and asks, for every command, "does this write into a primary clone?".
//
// The walk keeps, per shell scope, the set of directories the shell may be
// in (a `cd` that might not run leaves both the old and the new directory
// possible) and the variables assigned so far. What cannot be known
// statically (a `$(...)` result, an unknown variable, the arguments xargs
// appends, a script read from a pipe) is "unresolved": the command is then
// denied when it runs in, or names a path inside, a primary clone, and
// allowed otherwise, so ordinary work in worktrees and scratch directories
// keeps flowing while a primary clone fails closed.
#include <sys/stat.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <set>
#include <string_view>

#include "guard/internal.h"
#include "guard/shell.h"

namespace devgraph::guard {
namespace {

using shell::Command;
using shell::Part;
using shell::Script;
using shell::Word;

// A word after expansion; `known` is false when any piece of it is decided
// only at run time.
struct Value {
  std::string text;
  bool known = true;
};

// git subcommands that only read, or manage refs, remotes, configuration
// and worktrees; they may run in a primary clone. Everything else,
// including aliases, is treated as changing the checkout.
constexpr std::string_view kGitReadOnly[] = {"annotate",
                                             "archive",
                                             "blame",
                                             "branch",
                                             "bundle",
                                             "cat-file",
                                             "check-attr",
                                             "check-ignore",
                                             "check-mailmap",
                                             "check-ref-format",
                                             "cherry",
                                             "config",
                                             "count-objects",
                                             "describe",
                                             "diff",
                                             "diff-files",
                                             "diff-index",
                                             "diff-tree",
                                             "fetch",
                                             "for-each-ref",
                                             "format-patch",
                                             "fsck",
                                             "gc",
                                             "grep",
                                             "help",
                                             "log",
                                             "ls-files",
                                             "ls-remote",
                                             "ls-tree",
                                             "maintenance",
                                             "merge-base",
                                             "name-rev",
                                             "notes",
                                             "prune",
                                             "range-diff",
                                             "reflog",
                                             "remote",
                                             "rev-list",
                                             "rev-parse",
                                             "shortlog",
                                             "show",
                                             "show-branch",
                                             "show-ref",
                                             "status",
                                             "tag",
                                             "var",
                                             "verify-commit",
                                             "verify-pack",
                                             "verify-tag",
                                             "version",
                                             "whatchanged",
                                             "worktree"};

// git global options that take the next word as their value.
constexpr std::string_view kGitValueOpts[] = {
    "--config-env",   "--git-dir",   "--list-cmds", "--namespace",
    "--super-prefix", "--work-tree", "-C",          "-c"};
// Both lists are searched by bisection.
static_assert(std::is_sorted(std::begin(kGitReadOnly), std::end(kGitReadOnly)));
static_assert(std::is_sorted(std::begin(kGitValueOpts), std::end(kGitValueOpts)));

template <size_t N>
bool listed(const std::string_view (&list)[N], std::string_view word) {
  return std::binary_search(std::begin(list), std::end(list), word);
}

bool starts_with(std::string_view s, std::string_view p) {
  return s.substr(0, p.size()) == p;
}

std::string base_name(const std::string& p) {
  size_t slash = p.rfind('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

struct Ctx {
  std::vector<std::string> cwds;  // "" is a directory decided at run time
  std::vector<std::string> oldpwd;
  std::vector<std::vector<std::string>> dirstack;
  std::map<std::string, Value> vars;
  bool structured = false;  // inside if/while/for/case: every cd is conditional
};

class Analyzer {
 public:
  Analyzer(const std::string& cwd, const Roots& roots) : roots_(roots) {
    cwd_ = cwd;
    if (auto p = detail::primary_containing(cwd, roots)) seen(*p);
  }

  Verdict run(const std::string& command) {
    Ctx ctx;
    ctx.cwds = {cwd_};
    ctx.oldpwd = {cwd_};
    text(command, ctx, "the command");
    if (deny_) return deny_;
    if (unresolved_ && primary_seen_)
      return "cannot tell what " + *unresolved_ +
             " touches, and the command involves the primary clone " + primary_seen_->top +
             ", which is read-only; spell the paths out or work in a linked worktree (" +
             detail::suggest_worktree(*primary_seen_, roots_) + ")";
    return std::nullopt;
  }

 private:
  // ---- bookkeeping --------------------------------------------------------

  bool done() const { return deny_.has_value(); }

  void seen(const Checkout& primary) {
    if (!primary_seen_) primary_seen_ = primary;
  }

  void unresolved(const std::string& what) {
    if (!unresolved_) unresolved_ = what;
  }

  void deny(std::string reason) {
    if (!deny_) deny_ = std::move(reason);
  }

  // A literal word that looks like a path: remember whether it points into
  // a primary clone (used only to fail closed on unresolved commands).
  void note(const Value& v, const Ctx& ctx) {
    if (!v.known || primary_seen_ || v.text.empty() || ++notes_ > 256) return;
    std::string t = v.text;
    if (size_t eq = t.find('='); eq != std::string::npos && t[0] == '-') t = t.substr(eq + 1);
    if (t.find('/') == std::string::npos && t[0] != '~' && t != "." && t != "..") return;
    for (const auto& c : ctx.cwds) {
      if (c.empty() && t[0] != '/' && t[0] != '~') continue;
      if (auto p =
              detail::primary_containing(resolve_path(t, c.empty() ? "/" : c, roots_.home), roots_))
        return seen(*p);
    }
  }

  // ---- parsing entry points -----------------------------------------------

  // Parses and walks `source` in `ctx`; a parse failure is unresolved and
  // the raw text is scanned for paths so a primary clone fails closed.
  void text(const std::string& source, Ctx& ctx, const std::string& what) {
    if (++depth_ > 8) {
      unresolved(what + " (nested too deeply)");
      --depth_;
      return;
    }
    auto parsed = shell::parse_shell(source);
    if (!parsed) {
      unresolved(what + " (" + parsed.error().message + ")");
      scan_raw(source, ctx);
    } else {
      script(*parsed, ctx);
    }
    --depth_;
  }

  void scan_raw(const std::string& source, const Ctx& ctx) {
    std::string token;
    auto flush = [&] {
      if (!token.empty()) note(Value{token, true}, ctx);
      token.clear();
    };
    for (char c : source) {
      if (c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' || c == '|' || c == '(' ||
          c == ')' || c == '<' || c == '>' || c == '\'' || c == '"' || c == '`' || c == '=')
        flush();
      else
        token += c;
    }
    flush();
  }

  // ---- the shell grammar --------------------------------------------------

  void script(const Script& s, Ctx& ctx) {
    for (const auto& list : s.lists) {
      if (done()) return;
      if (list.background) {
        Ctx copy = ctx;
        and_or(list, copy);
      } else {
        and_or(list, ctx);
      }
    }
  }

  void and_or(const shell::AndOr& list, Ctx& ctx) {
    for (size_t k = 0; k < list.pipelines.size() && !done(); ++k) {
      const auto& cmds = list.pipelines[k].commands;
      if (cmds.size() == 1) {
        command(cmds[0], ctx, k == 0 && !ctx.structured);
      } else {
        for (const auto& c : cmds) {
          Ctx copy = ctx;  // each part of a pipeline runs in a subshell
          command(c, copy, false);
        }
      }
    }
  }

  void command(const Command& cmd, Ctx& ctx, bool certain) {
    if (++commands_ > 4000) {
      unresolved("a very long command");
      return;
    }
    if (cmd.kind == Command::kSubshell) {
      Ctx copy = ctx;
      if (cmd.body) script(*cmd.body, copy);
      redirects(cmd, ctx, {});
      return;
    }
    std::vector<Value> values;
    values.reserve(cmd.words.size());
    for (const auto& w : cmd.words) values.push_back(expand(w, ctx));
    for (const auto& v : values) note(v, ctx);

    // Reserved words open or close compound commands; their bodies are
    // walked as ordinary commands, with every cd treated as conditional.
    size_t first = 0;
    while (first < values.size() && values[first].known) {
      const std::string& t = values[first].text;
      if (t == "!" || t == "{" || t == "}" || t == "fi" || t == "done" || t == "esac" ||
          t == "time") {
        ++first;
      } else if (t == "if" || t == "then" || t == "elif" || t == "else" || t == "while" ||
                 t == "until" || t == "do") {
        ctx.structured = true;
        certain = false;
        ++first;
      } else {
        break;
      }
    }
    if (first < values.size() && values[first].known) {
      const std::string& t = values[first].text;
      if (t == "for" || t == "select" || t == "case" || t == "function" || t == "[[" ||
          starts_with(t, "((")) {
        ctx.structured = ctx.structured || t != "[[";
        redirects(cmd, ctx, {});
        return;
      }
    }

    // Leading NAME=value words: variables when alone, environment otherwise.
    std::map<std::string, Value> env;
    size_t argv0 = first;
    while (argv0 < cmd.words.size() && shell::is_assignment(cmd.words[argv0])) {
      const std::string& t = values[argv0].text;
      size_t eq = cmd.words[argv0].parts[0].text.find('=');
      std::string name = cmd.words[argv0].parts[0].text.substr(0, eq);
      if (!name.empty() && name.back() == '+') name.pop_back();
      Value v{t.substr(std::min(t.size(), eq + 1)), values[argv0].known};
      if (!values[argv0].known) {
        // The value part alone may still be literal; keep it conservative.
        v.text.clear();
      }
      env[name] = v;
      ++argv0;
    }
    redirects(cmd, ctx, env);
    if (done()) return;
    std::vector<Value> argv(values.begin() + static_cast<long>(argv0), values.end());
    if (argv.empty()) {
      for (auto& [k, v] : env) ctx.vars[k] = v;
      return;
    }
    run(argv, ctx, certain, env, false, heredoc_of(cmd, ctx));
  }

  // The text a command reads as a script on stdin, when it is a
  // here-document or here-string written in the command line.
  std::optional<Value> heredoc_of(const Command& cmd, Ctx& ctx) {
    for (const auto& r : cmd.redirects) {
      if ((r.op == "<<" || r.op == "<<-") && r.heredoc) {
        Value v;
        for (const auto& p : r.heredoc->parts) {
          if (p.kind == Part::kLiteral)
            v.text += p.text;
          else
            v.known = false;
        }
        return v;
      }
      if (r.op == "<<<") {
        Ctx copy = ctx;
        return expand(r.target, copy);
      }
      if (r.op == "<" && (r.fd == -1 || r.fd == 0)) return Value{"", false};
    }
    return std::nullopt;
  }

  void redirects(const Command& cmd, Ctx& ctx, const std::map<std::string, Value>& env) {
    (void)env;
    for (const auto& r : cmd.redirects) {
      if (done()) return;
      if (r.heredoc) {
        // Substitutions in an unquoted here-document run.
        expand(*r.heredoc, ctx);
        continue;
      }
      Value target = expand(r.target, ctx);
      bool writes = r.op == ">" || r.op == ">>" || r.op == ">|" || r.op == "&>" || r.op == "&>>" ||
                    r.op == "<>";
      if (r.op == ">&") writes = !(target.known && (all_digits(target.text) || target.text == "-"));
      if (r.op == "<&" && target.known && !all_digits(target.text) && target.text != "-")
        writes = false;
      if (writes) write(target, ctx, "redirection target " + r.target.raw);
    }
  }

  // ---- expansion ----------------------------------------------------------

  Value expand(const Word& w, Ctx& ctx) {
    Value v;
    for (const auto& p : w.parts) {
      switch (p.kind) {
        case Part::kLiteral:
          v.text += p.text;
          break;
        case Part::kTilde:
          if (auto h = detail::home_of(p.text, roots_))
            v.text += *h;
          else
            v.text += "~" + p.text;
          break;
        case Part::kParam: {
          auto known = param(p.text, ctx);
          if (known)
            v.text += *known;
          else
            v.known = false;
          break;
        }
        case Part::kSubst: {
          if (p.script) {
            Ctx copy = ctx;
            script(*p.script, copy);
          }
          v.known = false;
          break;
        }
        case Part::kArith:
          v.known = false;
          break;
      }
    }
    return v;
  }

  std::optional<std::string> param(const std::string& name, const Ctx& ctx) {
    if (name == "HOME") return roots_.home;
    if (name == "PWD" && ctx.cwds.size() == 1 && !ctx.cwds[0].empty()) return ctx.cwds[0];
    if (name == "OLDPWD" && ctx.oldpwd.size() == 1 && !ctx.oldpwd[0].empty()) return ctx.oldpwd[0];
    auto it = ctx.vars.find(name);
    if (it != ctx.vars.end() && it->second.known) return it->second.text;
    return std::nullopt;
  }

  // ---- effects ------------------------------------------------------------

  // A file written (created, changed or removed) at `target`.
  void write(const Value& target, const Ctx& ctx, const std::string& subject) {
    if (!target.known) return unresolved(subject);
    if (target.text.empty()) return;
    for (const auto& c : ctx.cwds) {
      bool relative = target.text[0] != '/' && target.text[0] != '~';
      if (c.empty() && relative) {
        unresolved(subject + " (relative to an unknown directory)");
        continue;
      }
      std::string resolved = resolve_path(target.text, c.empty() ? "/" : c, roots_.home);
      if (auto p = detail::primary_containing(resolved, roots_)) {
        return deny(detail::deny_write(subject + " (" + resolved + ")", *p, roots_));
      }
    }
  }

  // The command changes the directory it runs in (`what` describes it).
  void in_place(const std::vector<std::string>& dirs, const std::string& what,
                const std::string& extra = "") {
    for (const auto& c : dirs) {
      if (c.empty()) {
        unresolved(what + " (in an unknown directory)");
        continue;
      }
      if (auto p = detail::primary_containing(c, roots_)) {
        return deny(what + " changes the primary clone " + p->top + ", which is read-only" + extra +
                    "; do the work in a linked worktree (" + detail::suggest_worktree(*p, roots_) +
                    ")");
      }
    }
  }

  std::vector<std::string> resolve_dirs(const Value& dir, const Ctx& ctx) {
    std::vector<std::string> out;
    for (const auto& c : ctx.cwds) {
      if (!dir.known || (c.empty() && dir.text[0] != '/' && dir.text[0] != '~')) {
        out.push_back("");
        continue;
      }
      out.push_back(
          resolve_path(dir.text.empty() ? "." : dir.text, c.empty() ? "/" : c, roots_.home));
    }
    return out;
  }

  void change_dir(Ctx& ctx, std::vector<std::string> next, bool certain) {
    bool all_exist = true;
    for (const auto& d : next) {
      struct stat st {};
      if (d.empty() || stat(d.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) all_exist = false;
      if (!d.empty())
        if (auto p = detail::primary_containing(d, roots_)) seen(*p);
    }
    ctx.oldpwd = ctx.cwds;
    if (!(certain && all_exist)) next.insert(next.end(), ctx.cwds.begin(), ctx.cwds.end());
    std::sort(next.begin(), next.end());
    next.erase(std::unique(next.begin(), next.end()), next.end());
    if (next.size() > 8) {
      next.resize(8);
      next.push_back("");
    }
    ctx.cwds = std::move(next);
  }

  // ---- commands -----------------------------------------------------------

  void run(std::vector<Value> argv, Ctx& ctx, bool certain, std::map<std::string, Value> env,
           bool more_args, const std::optional<Value>& stdin_script) {
    for (int hops = 0; hops < 32 && !argv.empty() && !done(); ++hops) {
      if (!argv[0].known) return;  // an unknown program: nothing to check
      const std::string prog = base_name(argv[0].text);
      size_t i = 1;
      auto value_at = [&](size_t k) { return k < argv.size() ? argv[k] : Value{"", true}; };
      // Drops a wrapper's own `consumed` words (sudo, env); with a --chdir
      // the wrapped command is checked where it will run, and true says so.
      auto unwrap = [&](size_t consumed, const std::optional<Value>& chdir) {
        argv.erase(argv.begin(), argv.begin() + static_cast<long>(std::min(consumed, argv.size())));
        if (!chdir) return false;
        Ctx copy = ctx;
        copy.cwds = resolve_dirs(*chdir, ctx);
        run(argv, copy, false, env, more_args, stdin_script);
        return true;
      };

      if (prog == "sudo" || prog == "doas") {
        std::optional<Value> chdir;
        while (i < argv.size() && argv[i].known && starts_with(argv[i].text, "-")) {
          const std::string& t = argv[i].text;
          if (t == "--") {
            ++i;
            break;
          }
          if (t == "-D" || t == "--chdir")
            chdir = value_at(++i);
          else if (starts_with(t, "--chdir="))
            chdir = Value{t.substr(8), true};
          else if (t == "-u" || t == "-g" || t == "-h" || t == "-p" || t == "-C" || t == "-U" ||
                   t == "-r" || t == "-t" || t == "-T" || t == "--user" || t == "--group" ||
                   t == "--host" || t == "--prompt" || t == "--close-from" || t == "--role" ||
                   t == "--type" || t == "--other-user" || t == "--command-timeout")
            ++i;
          ++i;
        }
        if (unwrap(i, chdir)) return;
        continue;
      }
      if (prog == "env") {
        std::optional<Value> chdir;
        while (i < argv.size()) {
          const Value& a = argv[i];
          if (a.known && (a.text == "-C" || a.text == "--chdir")) {
            chdir = value_at(++i);
          } else if (a.known && starts_with(a.text, "--chdir=")) {
            chdir = Value{a.text.substr(8), true};
          } else if (a.known && (a.text == "-u" || a.text == "--unset")) {
            ++i;
          } else if (a.known && (a.text == "-S" || a.text == "--split-string" ||
                                 starts_with(a.text, "--split-string=") ||
                                 (starts_with(a.text, "-S") && a.text.size() > 2))) {
            // env -S 'prog args': the string is split into words.
            Value s = a.text == "-S" || a.text == "--split-string"
                          ? value_at(++i)
                          : Value{a.text.substr(a.text.find_first_of("S=") + 1), true};
            std::vector<Value> rest(argv.begin() + static_cast<long>(std::min(i + 1, argv.size())),
                                    argv.end());
            if (!s.known) return unresolved("env -S with a computed command");
            auto parsed = shell::parse_shell(s.text);
            std::vector<Value> words;
            if (parsed && parsed->lists.size() == 1 && parsed->lists[0].pipelines.size() == 1 &&
                parsed->lists[0].pipelines[0].commands.size() == 1) {
              for (const auto& w : parsed->lists[0].pipelines[0].commands[0].words)
                words.push_back(expand(w, ctx));
            } else {
              return unresolved("env -S " + s.text);
            }
            words.insert(words.end(), rest.begin(), rest.end());
            argv = std::move(words);
            i = 0;
            break;
          } else if (a.known && a.text == "--") {
            ++i;
            break;
          } else if (a.known && starts_with(a.text, "-") && a.text.size() > 1) {
            // -i, -0, -v, --ignore-environment ...
          } else if (a.known && a.text.find('=') != std::string::npos && a.text[0] != '=') {
            size_t eq = a.text.find('=');
            env[a.text.substr(0, eq)] = Value{a.text.substr(eq + 1), true};
          } else if (!a.known && i < argv.size()) {
            return;  // a computed word: treat as an unknown program
          } else {
            break;
          }
          ++i;
        }
        if (unwrap(i, chdir)) return;
        continue;
      }
      if (prog == "nohup" || prog == "setsid" || prog == "builtin" || prog == "exec" ||
          prog == "time" || prog == "command" || prog == "unbuffer" || prog == "nice" ||
          prog == "ionice" || prog == "stdbuf" || prog == "timeout" || prog == "chronic" ||
          prog == "caffeinate" || prog == "strace" || prog == "ltrace" || prog == "chroot" ||
          prog == "flock" || prog == "watch") {
        if (prog == "command" || prog == "builtin" || prog == "exec") {
          while (i < argv.size() && argv[i].known && starts_with(argv[i].text, "-")) {
            const std::string& t = argv[i].text;
            if (t == "-v" || t == "-V") return;  // lookup only
            if (t == "--") {
              ++i;
              break;
            }
            i += t == "-a" ? 2 : 1;  // exec -a NAME
          }
        } else if (prog == "chroot") {
          // chroot DIR cmd: the command sees DIR as /; anything it writes
          // lands under DIR.
          while (i < argv.size() && argv[i].known && starts_with(argv[i].text, "-")) ++i;
          Value root = value_at(i);
          write(root, ctx, "chroot directory " + root.text);
          return;
        } else if (prog == "flock") {
          while (i < argv.size() && argv[i].known && starts_with(argv[i].text, "-")) {
            if (argv[i].text == "-w" || argv[i].text == "-E" || argv[i].text == "--timeout" ||
                argv[i].text == "--conflict-exit-code")
              ++i;
            ++i;
          }
          ++i;  // the lock file or directory
          if (i < argv.size() && argv[i].known &&
              (argv[i].text == "-c" || argv[i].text == "--command")) {
            Value s = value_at(i + 1);
            if (!s.known) return unresolved("flock -c with a computed command");
            Ctx copy = ctx;
            text(s.text, copy, "flock -c");
            return;
          }
        } else {
          // Options up to the wrapped program; a few take a value.
          while (i < argv.size() && argv[i].known && starts_with(argv[i].text, "-") &&
                 argv[i].text != "-") {
            const std::string& t = argv[i].text;
            if (t == "--") {
              ++i;
              break;
            }
            bool takes_value =
                (prog == "nice" && (t == "-n" || t == "--adjustment")) ||
                (prog == "ionice" && (t == "-c" || t == "-n" || t == "-p" || t == "-P" ||
                                      t == "-u" || t == "--class" || t == "--classdata")) ||
                (prog == "stdbuf" && (t == "-i" || t == "-o" || t == "-e")) ||
                (prog == "timeout" &&
                 (t == "-s" || t == "-k" || t == "--signal" || t == "--kill-after")) ||
                (prog == "strace" && (t == "-o" || t == "-e" || t == "-p" || t == "-s" ||
                                      t == "-u" || t == "-E" || t == "-P" || t == "-a")) ||
                (prog == "ltrace" &&
                 (t == "-o" || t == "-e" || t == "-p" || t == "-s" || t == "-u" || t == "-a")) ||
                (prog == "watch" && (t == "-n" || t == "-d" || t == "--interval"));
            if ((prog == "strace" || prog == "ltrace") && t == "-o") {
              write(value_at(i + 1), ctx, prog + " output file");
            }
            i += takes_value ? 2 : 1;
          }
          if (prog == "timeout" && i < argv.size()) ++i;  // the duration
          if (prog == "watch") {
            // watch joins its arguments and runs them with sh -c.
            std::string joined;
            for (size_t k = i; k < argv.size(); ++k) {
              if (!argv[k].known) return unresolved("watch with a computed command");
              joined += (k > i ? " " : "") + argv[k].text;
            }
            Ctx copy = ctx;
            text(joined, copy, "watch's command");
            return;
          }
        }
        argv.erase(argv.begin(), argv.begin() + static_cast<long>(std::min(i, argv.size())));
        continue;
      }
      if (prog == "xargs") {
        std::optional<std::string> replace;
        while (i < argv.size() && argv[i].known && starts_with(argv[i].text, "-")) {
          const std::string& t = argv[i].text;
          if (t == "--") {
            ++i;
            break;
          }
          if (t == "-I") {
            replace = value_at(i + 1).text;
            i += 2;
            continue;
          }
          if (starts_with(t, "-I") || starts_with(t, "--replace")) {
            replace = t.size() > 2 && t[1] == 'I' ? t.substr(2) : "{}";
            if (size_t eq = t.find('='); eq != std::string::npos) replace = t.substr(eq + 1);
            ++i;
            continue;
          }
          if (t == "-i") replace = "{}";
          bool takes_value = t == "-a" || t == "-d" || t == "-E" || t == "-L" || t == "-l" ||
                             t == "-n" || t == "-P" || t == "-s" || t == "--arg-file" ||
                             t == "--delimiter" || t == "--max-args" || t == "--max-lines" ||
                             t == "--max-procs" || t == "--max-chars" || t == "--eof" ||
                             t == "--process-slot-var";
          i += takes_value ? 2 : 1;
        }
        argv.erase(argv.begin(), argv.begin() + static_cast<long>(std::min(i, argv.size())));
        if (argv.empty()) return;  // echo
        if (replace && !replace->empty())
          for (auto& a : argv)
            if (a.text.find(*replace) != std::string::npos) a.known = false;
        more_args = !replace.has_value();
        continue;
      }
      if (prog == "bash" || prog == "sh" || prog == "dash" || prog == "zsh" || prog == "ksh" ||
          prog == "mksh" || prog == "ash" || prog == "busybox" || prog == "fish") {
        if (prog == "busybox") {
          if (i < argv.size() && argv[i].known && (argv[i].text == "sh" || argv[i].text == "ash")) {
            ++i;
          } else {
            argv.erase(argv.begin());
            continue;  // busybox APPLET args
          }
        }
        bool dash_c = false;
        bool from_stdin = false;
        while (i < argv.size() && argv[i].known &&
               (starts_with(argv[i].text, "-") || starts_with(argv[i].text, "+"))) {
          const std::string& t = argv[i].text;
          if (t == "--" || t == "-") {
            ++i;
            break;
          }
          if (t == "-o" || t == "+o" || t == "-O" || t == "+O" || t == "--rcfile" ||
              t == "--init-file") {
            i += 2;
            continue;
          }
          if (!starts_with(t, "--")) {
            if (t.find('c') != std::string::npos) dash_c = true;
            if (t.find('s') != std::string::npos) from_stdin = true;
          }
          ++i;
        }
        if (dash_c) {
          Value s = value_at(i);
          if (!s.known) return unresolved(prog + " -c with a computed script");
          Ctx copy = ctx;
          text(s.text, copy, prog + " -c script");
          return;
        }
        if (i < argv.size() && !from_stdin) return;  // a script file: not visible here
        if (stdin_script) {
          if (!stdin_script->known) return unresolved(prog + " reading a script from stdin");
          Ctx copy = ctx;
          text(stdin_script->text, copy, prog + "'s here-document script");
          return;
        }
        return unresolved(prog + " reading a script from stdin");
      }
      if (prog == "eval") {
        std::string joined;
        for (size_t k = 1; k < argv.size(); ++k) {
          if (!argv[k].known) return unresolved("eval of a computed string");
          joined += (k > 1 ? " " : "") + argv[k].text;
        }
        text(joined, ctx, "eval'd text");
        return;
      }
      break;
    }
    if (argv.empty() || done() || !argv[0].known) return;
    command_proper(argv, ctx, certain, env, more_args);
  }

  // Positional arguments: everything not starting with '-' (after "--",
  // everything), skipping the values of options listed in `value_opts`.
  static std::vector<Value> positionals(
      const std::vector<Value>& argv, std::initializer_list<const char*> value_opts,
      std::vector<std::pair<std::string, Value>>* opts = nullptr) {
    std::vector<Value> out;
    bool rest = false;
    for (size_t k = 1; k < argv.size(); ++k) {
      const Value& a = argv[k];
      if (rest || !a.known || a.text.empty() || a.text[0] != '-' || a.text == "-") {
        out.push_back(a);
        continue;
      }
      if (a.text == "--") {
        rest = true;
        continue;
      }
      bool takes = false;
      for (const char* o : value_opts) takes = takes || a.text == o;
      if (takes) {
        if (opts) opts->push_back({a.text, k + 1 < argv.size() ? argv[k + 1] : Value{"", true}});
        ++k;
      } else if (opts) {
        size_t eq = a.text.find('=');
        opts->push_back({a.text.substr(0, eq), eq == std::string::npos
                                                   ? Value{"", true}
                                                   : Value{a.text.substr(eq + 1), true}});
      }
    }
    return out;
  }

  static std::optional<Value> option(const std::vector<std::pair<std::string, Value>>& opts,
                                     std::initializer_list<const char*> names) {
    for (auto it = opts.rbegin(); it != opts.rend(); ++it)
      for (const char* n : names)
        if (it->first == n) return it->second;
    return std::nullopt;
  }

  void command_proper(const std::vector<Value>& argv, Ctx& ctx, bool certain,
                      const std::map<std::string, Value>& env, bool more_args) {
    const std::string prog = base_name(argv[0].text);
    auto unresolved_args = [&](const std::string& what) {
      if (more_args) {
        bool relative_cwd_primary = false;
        (void)relative_cwd_primary;
        unresolved(what + " with arguments supplied at run time");
        in_place_unresolved(ctx, what);
      }
    };

    if (prog == "cd" || prog == "pushd" || prog == "popd" || prog == "chdir") {
      if (prog == "popd") {
        if (ctx.dirstack.empty()) return;
        auto next = ctx.dirstack.back();
        ctx.dirstack.pop_back();
        return change_dir(ctx, next, certain);
      }
      auto pos = positionals(argv, {});
      Value target;
      if (pos.empty()) {
        if (prog == "pushd") {
          if (ctx.dirstack.empty()) return;
          auto next = ctx.dirstack.back();
          ctx.dirstack.back() = ctx.cwds;
          return change_dir(ctx, next, certain);
        }
        target = Value{roots_.home, true};
      } else {
        target = pos[0];
      }
      if (target.known && target.text == "-") {
        auto next = ctx.oldpwd;
        return change_dir(ctx, next, certain);
      }
      if (prog == "pushd") ctx.dirstack.push_back(ctx.cwds);
      return change_dir(ctx, resolve_dirs(target, ctx), certain);
    }

    if (prog == "git") return git(argv, ctx, env, more_args);

    if (prog == "export" || prog == "declare" || prog == "typeset" || prog == "local" ||
        prog == "readonly") {
      for (size_t k = 1; k < argv.size(); ++k) {
        if (!argv[k].known) continue;
        size_t eq = argv[k].text.find('=');
        if (eq == std::string::npos || eq == 0 || argv[k].text[0] == '-') continue;
        ctx.vars[argv[k].text.substr(0, eq)] = Value{argv[k].text.substr(eq + 1), true};
      }
      return;
    }

    // Programs whose positional arguments are all written.
    if (prog == "rm" || prog == "rmdir" || prog == "touch" || prog == "mkdir" || prog == "unlink" ||
        prog == "shred" || prog == "mkfifo" || prog == "mknod" || prog == "tee" ||
        prog == "truncate" || prog == "mv" || prog == "srm") {
      std::vector<std::pair<std::string, Value>> opts;
      auto pos =
          positionals(argv,
                      {"-m", "--mode", "-s", "--size", "-r", "--reference", "-n", "--iterations",
                       "-t", "--target-directory", "-S", "--suffix", "-d", "--date", "-Z"},
                      &opts);
      if (prog == "truncate" || prog == "touch") {
        // -r/--reference names a file that is only read.
      }
      if (prog == "mknod" && pos.size() > 1) pos.resize(1);
      if (prog == "mv") {
        if (auto t = option(opts, {"-t", "--target-directory"})) pos.push_back(*t);
      }
      for (const auto& p : pos) {
        write(p, ctx, "`" + prog + "` target " + p.text);
        if (done()) return;
      }
      unresolved_args(prog);
      return;
    }

    // Programs that write a destination: -t DIR, else the last positional.
    if (prog == "cp" || prog == "ln" || prog == "install" || prog == "rsync" || prog == "scp" ||
        prog == "link") {
      std::vector<std::pair<std::string, Value>> opts;
      auto pos = positionals(argv,
                             {"-t",
                              "--target-directory",
                              "-S",
                              "--suffix",
                              "-m",
                              "--mode",
                              "-o",
                              "--owner",
                              "-g",
                              "--group",
                              "-e",
                              "--rsh",
                              "--exclude",
                              "--include",
                              "--exclude-from",
                              "--include-from",
                              "--files-from",
                              "-f",
                              "--filter",
                              "--chmod",
                              "-T",
                              "--temp-dir",
                              "--partial-dir",
                              "--backup-dir",
                              "--log-file",
                              "--password-file",
                              "--compare-dest",
                              "--copy-dest",
                              "--link-dest",
                              "-P",
                              "-i",
                              "-F",
                              "-l",
                              "-c",
                              "-J",
                              "-o",
                              "-B"},
                             &opts);
      if (prog == "scp" || prog == "rsync") {
        // Skip scp/rsync's flag-only letters that positionals() took for values.
      }
      std::vector<Value> targets;
      if (auto t = option(opts, {"-t", "--target-directory"})) {
        targets.push_back(*t);
      } else if (prog == "install" && option(opts, {"-d", "--directory"})) {
        targets = pos;
      } else if (!pos.empty()) {
        if ((prog == "ln" || prog == "link") && pos.size() == 1)
          targets.push_back(Value{".", true});
        else
          targets.push_back(pos.back());
        if (more_args && !targets.empty()) targets.back().known = false;
      }
      if (prog == "rsync" && option(opts, {"--remove-source-files"}))
        for (size_t k = 0; k + 1 < pos.size(); ++k) targets.push_back(pos[k]);
      for (const auto& t : targets) {
        if ((prog == "rsync" || prog == "scp") && t.known) {
          size_t colon = t.text.find(':');
          if (colon != std::string::npos && t.text.find('/') > colon) continue;  // remote
        }
        write(t, ctx, "`" + prog + "` destination " + t.text);
        if (done()) return;
      }
      if (targets.empty()) unresolved_args(prog);
      return;
    }

    if (prog == "chmod" || prog == "chown" || prog == "chgrp" || prog == "chattr" ||
        prog == "setfacl" || prog == "setfattr") {
      std::vector<Value> pos;
      bool reference = false;
      for (size_t k = 1; k < argv.size(); ++k) {
        const Value& a = argv[k];
        if (a.known && starts_with(a.text, "--reference")) reference = true;
        if (a.known && (a.text == "-R" || a.text == "-v" || a.text == "-c" || a.text == "-f" ||
                        a.text == "-h" || a.text == "-H" || a.text == "-L" || a.text == "-P" ||
                        (starts_with(a.text, "--") && a.text.size() > 2) || a.text == "-n"))
          continue;
        if (a.known &&
            (a.text == "-m" || a.text == "-x" || a.text == "-n" || a.text == "-M" ||
             a.text == "-X" || a.text == "-v") &&
            (prog == "setfacl" || prog == "setfattr")) {
          ++k;
          continue;
        }
        pos.push_back(a);
      }
      size_t skip = (reference || prog == "setfacl" || prog == "setfattr") ? 0 : 1;
      for (size_t k = skip; k < pos.size(); ++k) {
        write(pos[k], ctx, "`" + prog + "` target " + pos[k].text);
        if (done()) return;
      }
      unresolved_args(prog);
      return;
    }

    if (prog == "sed" || prog == "perl" || prog == "ruby")
      return in_place_editor(argv, ctx, more_args);

    if (prog == "dd") {
      for (size_t k = 1; k < argv.size(); ++k) {
        const Value& a = argv[k];
        if (a.known && starts_with(a.text, "of=")) {
          write(Value{a.text.substr(3), true}, ctx, "`dd` output " + a.text.substr(3));
        } else if (!a.known) {
          unresolved("dd with a computed operand");
        }
      }
      return;
    }

    if (prog == "find") return find(argv, ctx, env);

    if (prog == "patch") {
      std::vector<std::pair<std::string, Value>> opts;
      auto pos = positionals(argv,
                             {"-d", "--directory", "-o", "--output", "-i", "--input", "-p", "-B",
                              "-z", "-D", "-F", "-r", "-V"},
                             &opts);
      if (auto o = option(opts, {"-o", "--output"})) return write(*o, ctx, "`patch` output");
      if (!pos.empty()) return write(pos[0], ctx, "`patch` target " + pos[0].text);
      std::vector<std::string> dirs = ctx.cwds;
      if (auto d = option(opts, {"-d", "--directory"})) dirs = resolve_dirs(*d, ctx);
      return in_place(dirs, "`patch`");
    }

    if (prog == "tar" || prog == "unzip" || prog == "curl" || prog == "wget") {
      return fetchers(argv, ctx, prog);
    }
  }

  void in_place_unresolved(const Ctx& ctx, const std::string& what) {
    (void)what;
    for (const auto& c : ctx.cwds)
      if (!c.empty())
        if (auto p = detail::primary_containing(c, roots_)) seen(*p);
  }

  // sed -i / perl -i / ruby -i: the files after the script are rewritten.
  void in_place_editor(const std::vector<Value>& argv, Ctx& ctx, bool more_args) {
    const std::string prog = base_name(argv[0].text);
    bool inplace = false;
    bool script_given = false;
    std::vector<Value> pos;
    bool rest = false;
    for (size_t k = 1; k < argv.size(); ++k) {
      const Value& a = argv[k];
      if (rest || !a.known || a.text.size() < 2 || a.text[0] != '-') {
        pos.push_back(a);
        continue;
      }
      const std::string& t = a.text;
      if (t == "--") {
        rest = true;
        continue;
      }
      if (starts_with(t, "--")) {
        if (starts_with(t, "--in-place")) inplace = true;
        if (t == "--expression" || t == "--file") {
          script_given = true;
          ++k;
        }
        if (starts_with(t, "--expression=") || starts_with(t, "--file=")) script_given = true;
        continue;
      }
      // A cluster of single-letter switches; some take the rest as a value.
      for (size_t c = 1; c < t.size(); ++c) {
        char ch = t[c];
        if (ch == 'i') {
          inplace = true;
          if (prog != "sed") break;  // perl/ruby: -i[ext] takes the rest
          continue;                  // sed: -i[SUFFIX] also takes the rest,
                                     // but clusters like -ni are common
        }
        if (ch == 'e' || ch == 'f' || (prog == "sed" && ch == 'l') ||
            (prog != "sed" && (ch == 'E' || ch == 'I' || ch == 'M' || ch == 'm' || ch == 'x' ||
                               ch == 'C' || ch == 'd' || ch == 'D' || ch == 'r'))) {
          if (ch == 'e' || ch == 'f' || ch == 'E') script_given = true;
          if (c + 1 == t.size()) ++k;  // the value is the next word
          break;
        }
      }
    }
    if (!inplace) return;
    size_t first = script_given ? 0 : 1;
    for (size_t k = first; k < pos.size(); ++k) {
      write(pos[k], ctx, "`" + prog + " -i` file " + pos[k].text);
      if (done()) return;
    }
    if (more_args) {
      unresolved(prog + " -i with files supplied at run time");
      in_place_unresolved(ctx, prog);
    }
  }

  void find(const std::vector<Value>& argv, Ctx& ctx, const std::map<std::string, Value>& env) {
    size_t k = 1;
    while (k < argv.size() && argv[k].known &&
           (argv[k].text == "-H" || argv[k].text == "-L" || argv[k].text == "-P" ||
            starts_with(argv[k].text, "-O") || argv[k].text == "-D")) {
      k += argv[k].text == "-D" ? 2 : 1;
    }
    std::vector<Value> roots;
    while (k < argv.size() && !(argv[k].known && (starts_with(argv[k].text, "-") ||
                                                  argv[k].text == "(" || argv[k].text == "!")))
      roots.push_back(argv[k++]);
    if (roots.empty()) roots.push_back(Value{".", true});
    for (; k < argv.size() && !done(); ++k) {
      const Value& a = argv[k];
      if (!a.known) continue;
      if (a.text == "-delete") {
        for (const auto& r : roots) write(r, ctx, "`find -delete` under " + r.text);
      } else if (a.text == "-fprint" || a.text == "-fprint0" || a.text == "-fls" ||
                 a.text == "-fprintf") {
        if (k + 1 < argv.size()) write(argv[k + 1], ctx, "`find " + a.text + "` file");
        ++k;
      } else if (a.text == "-exec" || a.text == "-execdir" || a.text == "-ok" ||
                 a.text == "-okdir") {
        std::vector<Value> inner;
        size_t m = k + 1;
        while (m < argv.size() && !(argv[m].known && (argv[m].text == ";" || argv[m].text == "+")))
          inner.push_back(argv[m++]);
        k = m;
        bool in_dir = a.text == "-execdir" || a.text == "-okdir";
        // Run the command once per root, with {} standing for the root (a
        // write under a root lands in the same checkout as the root).
        for (const auto& r : roots) {
          if (done()) break;
          std::vector<Value> call = inner;
          for (auto& w : call) {
            if (!w.known) continue;
            size_t at = w.text.find("{}");
            if (at == std::string::npos) continue;
            if (!r.known) {
              w.known = false;
              continue;
            }
            w.text.replace(at, 2, r.text);
          }
          Ctx copy = ctx;
          if (in_dir) copy.cwds = resolve_dirs(r, ctx);
          run(call, copy, false, env, false, std::nullopt);
        }
      }
    }
  }

  void fetchers(const std::vector<Value>& argv, Ctx& ctx, const std::string& prog) {
    if (prog == "curl") {
      for (size_t k = 1; k + 1 < argv.size(); ++k)
        if (argv[k].known && (argv[k].text == "-o" || argv[k].text == "--output"))
          write(argv[k + 1], ctx, "`curl` output");
      for (size_t k = 1; k < argv.size(); ++k)
        if (argv[k].known && (argv[k].text == "-O" || argv[k].text == "--remote-name"))
          in_place(ctx.cwds, "`curl -O`");
      return;
    }
    if (prog == "wget") {
      bool named = false;
      for (size_t k = 1; k < argv.size(); ++k) {
        if (!argv[k].known) continue;
        const std::string& t = argv[k].text;
        if ((t == "-O" || t == "--output-document" || t == "-P" || t == "--directory-prefix") &&
            k + 1 < argv.size()) {
          if (!(argv[k + 1].known && argv[k + 1].text == "-"))
            write(argv[k + 1], ctx, "`wget` output");
          named = true;
          ++k;
        } else if (starts_with(t, "--output-document=") || starts_with(t, "--directory-prefix=")) {
          write(Value{t.substr(t.find('=') + 1), true}, ctx, "`wget` output");
          named = true;
        }
      }
      if (!named) in_place(ctx.cwds, "`wget`");
      return;
    }
    if (prog == "unzip") {
      for (size_t k = 1; k + 1 < argv.size(); ++k)
        if (argv[k].known && argv[k].text == "-d") return write(argv[k + 1], ctx, "`unzip -d`");
      for (size_t k = 1; k < argv.size(); ++k)
        if (argv[k].known && (argv[k].text == "-l" || argv[k].text == "-t" ||
                              argv[k].text == "-p" || argv[k].text == "-Z"))
          return;
      return in_place(ctx.cwds, "`unzip`");
    }
    // tar: extraction writes under -C (or the working directory); creation
    // writes the -f archive.
    bool extract = false, create = false;
    std::optional<Value> file, dir;
    for (size_t k = 1; k < argv.size(); ++k) {
      if (!argv[k].known) continue;
      const std::string& t = argv[k].text;
      if (t == "--extract" || t == "--get")
        extract = true;
      else if (t == "--create" || t == "--append" || t == "--update" || t == "--delete")
        create = true;
      else if ((t == "-C" || t == "--directory") && k + 1 < argv.size())
        dir = argv[++k];
      else if (starts_with(t, "--directory="))
        dir = Value{t.substr(12), true};
      else if ((t == "-f" || t == "--file") && k + 1 < argv.size())
        file = argv[++k];
      else if (starts_with(t, "--file="))
        file = Value{t.substr(7), true};
      else if (!starts_with(t, "--") && (k == 1 || t[0] == '-')) {
        std::string letters = t[0] == '-' ? t.substr(1) : t;
        for (size_t c = 0; c < letters.size(); ++c) {
          char ch = letters[c];
          if (ch == 'x') extract = true;
          if (ch == 'c' || ch == 'r' || ch == 'u') create = true;
          if (ch == 'f' || ch == 'C') {
            Value v = c + 1 < letters.size() && t[0] == '-' ? Value{letters.substr(c + 1), true}
                      : k + 1 < argv.size()                 ? argv[++k]
                                                            : Value{"", true};
            (ch == 'f' ? file : dir) = v;
            if (t[0] == '-') break;
          }
        }
      }
    }
    if (extract) {
      if (dir)
        write(*dir, ctx, "`tar -x` directory");
      else
        in_place(ctx.cwds, "`tar -x`");
    }
    if (create && file && !(file->known && file->text == "-")) write(*file, ctx, "`tar` archive");
  }

  // ---- git ----------------------------------------------------------------

  void git(const std::vector<Value>& argv, Ctx& ctx, const std::map<std::string, Value>& env,
           bool more_args) {
    std::vector<std::string> dirs = ctx.cwds;
    std::optional<Value> git_dir, work_tree;
    auto from_env = [&](const char* name) -> std::optional<Value> {
      if (auto it = env.find(name); it != env.end()) return it->second;
      if (auto it = ctx.vars.find(name); it != ctx.vars.end()) return it->second;
      return std::nullopt;
    };
    git_dir = from_env("GIT_DIR");
    work_tree = from_env("GIT_WORK_TREE");
    size_t k = 1;
    for (; k < argv.size(); ++k) {
      const Value& a = argv[k];
      if (!a.known)
        return unresolved("git with a computed option or subcommand"),
               in_place_unresolved(ctx, "git");
      const std::string& t = a.text;
      if (t.empty() || t[0] != '-') break;
      Value v{"", true};
      bool has = false;
      std::string name = t;
      if (size_t eq = t.find('='); eq != std::string::npos && starts_with(t, "--")) {
        name = t.substr(0, eq);
        v = Value{t.substr(eq + 1), true};
        has = true;
      } else if (listed(kGitValueOpts, t) && k + 1 < argv.size()) {
        v = argv[++k];
        has = true;
      }
      if (!has) continue;
      if (name == "-C") {
        Ctx tmp = ctx;
        tmp.cwds = dirs;
        dirs = resolve_dirs(v, tmp);
      } else if (name == "--git-dir") {
        git_dir = v;
      } else if (name == "--work-tree") {
        work_tree = v;
      } else if (name == "-c" && v.known && starts_with(v.text, "core.worktree=")) {
        work_tree = Value{v.text.substr(14), true};
      }
    }
    if (k >= argv.size()) return;  // git --version, git -h ...
    const std::string sub = argv[k].text;
    std::vector<Value> args(argv.begin() + static_cast<long>(k) + 1, argv.end());

    // Every place this git acts on: the directory it runs in, and the git
    // directory and work tree when given explicitly.
    std::vector<std::string> places = dirs;
    Ctx at_dir = ctx;
    at_dir.cwds = dirs;
    if (git_dir) {
      auto d = resolve_dirs(*git_dir, at_dir);
      places.insert(places.end(), d.begin(), d.end());
    }
    if (work_tree) {
      auto d = resolve_dirs(*work_tree, at_dir);
      places.insert(places.end(), d.begin(), d.end());
    }

    auto first_arg = [&]() -> std::string { return args.empty() ? "" : args[0].text; };
    auto has_arg = [&](const char* flag) {
      return std::any_of(args.begin(), args.end(),
                         [&](const Value& v) { return v.known && v.text == flag; });
    };
    auto output_option = [&](std::initializer_list<const char*> names) -> std::optional<Value> {
      for (size_t m = 0; m < args.size(); ++m) {
        if (!args[m].known) continue;
        for (const char* n : names) {
          std::string eq = std::string(n) + "=";
          if (args[m].text == n && m + 1 < args.size()) return args[m + 1];
          if (starts_with(args[m].text, eq) && starts_with(n, "--"))
            return Value{args[m].text.substr(eq.size()), true};
          if (!starts_with(n, "--") && starts_with(args[m].text, n) && args[m].text.size() > 2)
            return Value{args[m].text.substr(2), true};
        }
      }
      return std::nullopt;
    };

    if (sub == "worktree") {
      std::string action = first_arg();
      std::optional<Value> target;
      if (action == "add") target = worktree_add_target(args);
      if (action == "move" && args.size() >= 3) target = args.back();
      if (!target) return;
      if (!target->known) {
        unresolved("git worktree " + action + " to a computed path");
        return in_place_unresolved(at_dir, "git");
      }
      for (const auto& d : dirs) {
        if (d.empty()) {
          unresolved("git worktree " + action + " from an unknown directory");
          continue;
        }
        Checkout repo = detail::probe_resolved(detail::nearest_existing(d));
        if (git_dir && git_dir->known)
          repo = detail::probe_resolved(
              detail::nearest_existing(resolve_path(git_dir->text, d, roots_.home)));
        if (detail::is_exempt(repo.top, roots_)) continue;
        std::string resolved = resolve_path(target->text, d, roots_.home);
        if (auto why = detail::worktree_target_reason(resolved, repo, roots_))
          return deny(*why + "; use: " + detail::suggest_worktree(repo, roots_));
      }
      return;
    }
    if (sub == "clone" || sub == "init") {
      auto pos = positionals(std::vector<Value>(argv.begin() + static_cast<long>(k), argv.end()),
                             {"-b",
                              "--branch",
                              "-o",
                              "--origin",
                              "--depth",
                              "--reference",
                              "-c",
                              "--config",
                              "--template",
                              "--separate-git-dir",
                              "-u",
                              "--upload-pack",
                              "-j",
                              "--jobs",
                              "--filter",
                              "--shallow-since",
                              "--shallow-exclude",
                              "--reference-if-able",
                              "--object-format",
                              "--initial-branch",
                              "--shared",
                              "--bundle-uri",
                              "--server-option",
                              "--ref-format"});
      Value dest;
      if (sub == "init") {
        dest = pos.empty() ? Value{".", true} : pos[0];
      } else if (pos.size() >= 2) {
        dest = pos[1];
      } else if (pos.size() == 1 && pos[0].known) {
        std::string name = base_name(pos[0].text);
        while (!name.empty() && name.back() == '/') name.pop_back();
        if (name.size() > 4 && name.compare(name.size() - 4, 4, ".git") == 0)
          name.resize(name.size() - 4);
        if (size_t colon = name.rfind(':'); colon != std::string::npos)
          name = name.substr(colon + 1);
        dest = Value{name.empty() ? "." : name, true};
      } else {
        dest = Value{"", false};
      }
      return write(dest, at_dir, "`git " + sub + "` destination " + dest.text);
    }

    bool read_only = listed(kGitReadOnly, sub);
    if (sub == "stash") read_only = first_arg() == "list" || first_arg() == "show";
    if (sub == "pull") read_only = has_arg("--ff-only");
    if (sub == "submodule")
      read_only = first_arg() == "status" || first_arg() == "summary" || first_arg() == "foreach";
    if (sub == "bundle") read_only = first_arg() != "create";
    if (sub == "format-patch" && !has_arg("--stdout")) {
      if (auto o = output_option({"-o", "--output-directory"}))
        write(*o, at_dir, "`git format-patch` output");
      else
        in_place(dirs, "`git format-patch` (writes patch files here)");
      return;
    }
    if (auto o = output_option({"--output"})) write(*o, at_dir, "`git " + sub + " --output`");
    if (sub == "archive") {
      if (auto o = output_option({"-o"})) write(*o, at_dir, "`git archive -o`");
    }
    if (sub == "bundle" && first_arg() == "create" && args.size() >= 2)
      write(args[1], at_dir, "`git bundle` file");
    if (done() || read_only) return;
    (void)more_args;
    in_place(places, "`git " + sub + "`",
             " (allowed there: status/log/diff/show/fetch, `git pull --ff-only`, branch and "
             "worktree management)");
  }

  static std::optional<Value> worktree_add_target(const std::vector<Value>& args) {
    for (size_t m = 1; m < args.size(); ++m) {
      const Value& a = args[m];
      if (a.known && a.text == "--")
        return m + 1 < args.size() ? std::optional(args[m + 1]) : std::nullopt;
      if (!a.known || a.text.empty() || a.text[0] != '-') return a;
      if (a.text == "-b" || a.text == "-B" || a.text == "--reason" || a.text == "--orphan") ++m;
    }
    return std::nullopt;
  }

  const Roots& roots_;
  std::string cwd_;
  Verdict deny_;
  std::optional<std::string> unresolved_;
  std::optional<Checkout> primary_seen_;
  int depth_ = 0;
  int commands_ = 0;
  int notes_ = 0;
};

}  // namespace

Verdict check_bash(const std::string& command, const std::string& cwd, const Roots& roots) {
  std::string rcwd = resolve_path(cwd, "/", roots.home);
  Analyzer a(rcwd, roots);
  return a.run(command);
}

}  // namespace devgraph::guard
