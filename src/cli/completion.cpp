#include "cli/completion.h"

#include <dirent.h>

#include <algorithm>
#include <exception>

#include "inbox/inbox.h"
#include "issues/local_store.h"
#include "store/run_store.h"
#include "util/fs.h"
#include "util/json.h"
#include "util/text.h"

namespace devgraph::completion {
namespace {

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// The names in `dir` but . and .., sorted; none when it cannot be read.
std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (auto* e = ::readdir(d)) {
      std::string name = e->d_name;
      if (name != "." && name != "..") names.push_back(std::move(name));
    }
    ::closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

// The runs of a develop home with a state.json, newest (greatest id) first.
std::vector<std::string> runs_of(const std::string& home) {
  const std::string runs = join_path(home, "runs");
  std::vector<std::string> ids;
  for (const auto& name : names_in(runs))
    if (name[0] != '.' && path_exists(join_path(runs, name + "/state.json"))) ids.push_back(name);
  std::reverse(ids.begin(), ids.end());
  return ids;
}

std::vector<Candidate> bundles_of(const std::string& home) {
  std::vector<Candidate> out;
  auto add = [&out](const std::string& id, const std::string& about) {
    if (!is_valid_id(id)) return;
    for (const auto& c : out)
      if (c.value == id) return;
    out.push_back({id, about});
  };
  for (const auto& run : runs_of(home)) {
    auto state = load_json_file(join_path(home, "runs/" + run + "/state.json"));
    if (!state || !state->is_object()) continue;
    if (auto b = state->find("bundles"); b != state->end() && b->is_array())
      for (const auto& e : *b) {
        const std::string title = json_str(e, "title");
        add(json_str(e, "id"), one_line(title.empty() ? "run " + run : title, 60));
      }
    if (auto rt = state->find("bundles_runtime"); rt != state->end() && rt->is_object())
      for (const auto& [id, cursor] : rt->items()) add(id, "run " + run);
  }
  std::sort(out.begin(), out.end(),
            [](const Candidate& a, const Candidate& b) { return a.value < b.value; });
  return out;
}

std::vector<Candidate> issues_of(const std::string& home) {
  const std::string dir = join_path(home, "issues");
  std::vector<Candidate> out;
  if (auto all = issues::LocalIssues(dir).list()) {
    for (const auto& i : *all)
      out.push_back({std::to_string(i.number), one_line(i.state + ": " + i.title, 60)});
    return out;
  }
  // A file that does not parse: the numbers still are the file names.
  std::vector<long long> numbers;
  for (const auto& name : names_in(dir)) {
    if (name.size() < 4 || name.substr(name.size() - 3) != ".md") continue;
    const std::string digits = name.substr(0, name.size() - 3);
    if (digits.find_first_not_of("0123456789") != std::string::npos) continue;
    if (auto n = parse_int(digits)) numbers.push_back(*n);
  }
  std::sort(numbers.begin(), numbers.end());
  for (long long n : numbers) out.push_back({std::to_string(n), ""});
  return out;
}

std::vector<Candidate> slugs_of(const std::string& home) {
  std::vector<Candidate> out;
  for (const auto& name : names_in(join_path(home, "debug")))
    if (name.size() > 3 && name[0] != '.' && name.substr(name.size() - 3) == ".md")
      out.push_back({name.substr(0, name.size() - 3), ""});
  return out;
}

// The option of `p` that `name` selects: itself, else the one option it is
// a prefix of (argparse's rule).
const ArgParser::Option* lookup(const ArgParser& p, const std::string& name) {
  const ArgParser::Option* hit = nullptr;
  for (const auto& o : p.options()) {
    if (o.name == name) return &o;
    if (name.empty() || !starts_with(o.name, name)) continue;
    if (hit != nullptr) return nullptr;
    hit = &o;
  }
  return hit;
}

// Where the words before the last one leave the command line.
struct Context {
  const Verb* verb = nullptr;
  ArgParser top{""};
  std::vector<Subcommand> subs;
  const ArgParser* parser = nullptr;
  bool in_sub = false;
  size_t sub_slot = 0;  // the positional of `top` that is the sub-command
  size_t taken = 0;     // positionals `parser` has taken
  bool only_positionals = false;
  const ArgParser::Option* pending = nullptr;  // the last word is its value
  std::string repo = ".";
};

void set_up(Context& c, const Verb& v) {
  c.verb = &v;
  c.top = v.parser();
  if (v.subcommands != nullptr) c.subs = v.subcommands();
  c.parser = &c.top;
  c.sub_slot = c.top.positionals().size();
  for (size_t i = 0; i < c.top.positionals().size(); ++i)
    if (c.top.positionals()[i].hint == ValueHint::subcommand) c.sub_slot = i;
}

bool at_subcommand(const Context& c) {
  return !c.in_sub && !c.subs.empty() && c.taken == c.sub_slot;
}

void take_positional(Context& c, const std::string& word) {
  if (at_subcommand(c))
    for (const auto& s : c.subs)
      if (s.name == word) {
        c.parser = &s.parser;
        c.in_sub = true;
        c.taken = 0;
        return;
      }
  ++c.taken;
}

// Reads the words between the verb and the last word.
void walk(Context& c, const std::vector<std::string>& w) {
  for (size_t i = 1; i + 1 < w.size(); ++i) {
    const std::string& word = w[i];
    if (!c.only_positionals && word == "--") {
      c.only_positionals = true;
      continue;
    }
    if (!c.only_positionals && word.size() > 1 && word[0] == '-') {
      std::string name = word == "-o" ? "output" : word.substr(word[1] == '-' ? 2 : 1);
      std::optional<std::string> value;
      if (auto eq = name.find('='); eq != std::string::npos) {
        value = name.substr(eq + 1);
        name = name.substr(0, eq);
      }
      const ArgParser::Option* o = lookup(*c.parser, name);
      if (o == nullptr || o->is_flag || o->optional_value) continue;
      if (!value) {
        if (i + 2 == w.size()) {
          c.pending = o;
          return;
        }
        value = w[++i];
      }
      if (o->name == "repo") c.repo = *value;
      continue;
    }
    take_positional(c, word);
  }
}

std::vector<Candidate> values(const std::vector<std::string>& choices, ValueHint hint,
                              const std::string& partial, const std::string& prefix,
                              const std::string& repo, ValueSource& source) {
  std::vector<Candidate> out;
  if (!choices.empty()) {
    for (const auto& c : choices)
      if (starts_with(c, partial)) out.push_back({prefix + c, ""});
    return out;
  }
  switch (hint) {
    case ValueHint::file:
      return {{":file", ""}};
    case ValueHint::directory:
      return {{":dir", ""}};
    case ValueHint::bundle:
    case ValueHint::issue:
    case ValueHint::run:
    case ValueHint::slug:
      for (auto& v : source.values(hint, repo))
        if (starts_with(v.value, partial)) out.push_back({prefix + v.value, v.description});
      return out;
    default:
      return out;
  }
}

std::vector<Candidate> flags(const ArgParser& p, const std::string& cur) {
  std::vector<Candidate> out;
  for (const auto& o : p.options())
    if (!o.hidden && starts_with("--" + o.name, cur))
      out.push_back({"--" + o.name, one_line(o.help, 60)});
  if (starts_with("--help", cur)) out.push_back({"--help", "show the help and exit"});
  return out;
}

std::vector<Candidate> complete_last(Context& c, const std::string& cur, ValueSource& source) {
  if (c.pending != nullptr)
    return values(c.pending->choices, c.pending->hint, cur, "", c.repo, source);
  if (!c.only_positionals && starts_with(cur, "--") && cur.find('=') != std::string::npos) {
    const size_t eq = cur.find('=');
    const ArgParser::Option* o = lookup(*c.parser, cur.substr(2, eq - 2));
    if (o == nullptr || o->is_flag) return {};
    return values(o->choices, o->hint, cur.substr(eq + 1), cur.substr(0, eq + 1), c.repo, source);
  }
  if (!c.only_positionals && starts_with(cur, "-")) return flags(*c.parser, cur);
  if (at_subcommand(c)) {
    std::vector<Candidate> out;
    for (const auto& s : c.subs)
      if (starts_with(s.name, cur)) out.push_back({s.name, one_line(s.summary, 60)});
    return out;
  }
  const auto& pos = c.parser->positionals();
  if (c.taken < pos.size())
    return values(pos[c.taken].choices, pos[c.taken].hint, cur, "", c.repo, source);
  return c.only_positionals ? std::vector<Candidate>{} : flags(*c.parser, cur);
}

std::vector<Candidate> complete_words(std::span<const Verb> verbs,
                                      const std::vector<std::string>& w, ValueSource& source) {
  const std::string& cur = w.back();
  if (w.size() == 1) {
    std::vector<Candidate> out;
    for (const Verb& v : verbs)
      if (starts_with(v.name, cur)) out.push_back({v.name, one_line(v.summary, 60)});
    for (const char* f : {"--help", "--version"})
      if (!cur.empty() && starts_with(f, cur)) out.push_back({f, ""});
    return out;
  }
  const Verb* verb = nullptr;
  for (const Verb& v : verbs)
    if (w[0] == v.name) verb = &v;
  if (verb == nullptr) return {};
  Context c;
  set_up(c, *verb);
  walk(c, w);
  return complete_last(c, cur, source);
}

}  // namespace

std::vector<Candidate> home_values(ValueHint hint, const std::string& home) {
  switch (hint) {
    case ValueHint::bundle:
      return bundles_of(home);
    case ValueHint::issue:
      return issues_of(home);
    case ValueHint::run: {
      std::vector<Candidate> out;
      for (auto& id : runs_of(home)) out.push_back({id, ""});
      return out;
    }
    case ValueHint::slug:
      return slugs_of(home);
    default:
      return {};
  }
}

std::vector<Candidate> RepositoryValues::values(ValueHint hint, const std::string& repo) {
  try {
    auto home = inbox::develop_home_of(repo);
    return home ? home_values(hint, *home) : std::vector<Candidate>{};
  } catch (const std::exception&) {
    return {};
  }
}

std::vector<Candidate> complete(std::span<const Verb> verbs, std::vector<std::string> words,
                                ValueSource& source) {
  if (words.empty()) words.emplace_back();
  // bash's `--flag` `=` `value` is one word again.
  std::vector<std::string> w;
  for (size_t i = 0; i < words.size(); ++i) {
    if (words[i] == "=" && !w.empty() && starts_with(w.back(), "--") &&
        w.back().find('=') == std::string::npos) {
      w.back() += "=";
      if (i + 1 < words.size()) w.back() += words[++i];
      continue;
    }
    w.push_back(words[i]);
  }
  std::vector<Candidate> out;
  try {
    out = complete_words(verbs, w, source);
  } catch (const std::exception&) {
    return {};
  }
  // What bash calls the last word may be only the end of the joined one.
  const size_t strip = w.back().size() - words.back().size();
  if (strip > 0)
    for (auto& c : out)
      if (c.value[0] != ':') c.value = c.value.substr(std::min(strip, c.value.size()));
  return out;
}

namespace {

// Each script asks the binary it completes for (the command word as typed)
// and falls back to the shell's own file completion on ":file" / ":dir".
constexpr const char* kBash = R"(# bash completion for devgraph; made by `devgraph completion bash`.
_devgraph() {
  local cur=${COMP_WORDS[COMP_CWORD]}
  local -a reply
  mapfile -t reply < <(command "${COMP_WORDS[0]}" completion --complete -- "${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null)
  case ${reply[0]-} in
    :file) compopt -o filenames 2>/dev/null; mapfile -t COMPREPLY < <(compgen -f -- "$cur") ;;
    :dir) compopt -o filenames 2>/dev/null; mapfile -t COMPREPLY < <(compgen -d -- "$cur") ;;
    *) COMPREPLY=("${reply[@]}") ;;
  esac
}
complete -F _devgraph devgraph
)";

constexpr const char* kZsh = R"(#compdef devgraph
# zsh completion for devgraph; made by `devgraph completion zsh`.
_devgraph() {
  local -a reply items
  local line value
  reply=("${(@f)$(command ${words[1]} completion --complete --describe -- "${(@)words[2,CURRENT]}" 2>/dev/null)}")
  case ${reply[1]-} in
    :file) _files; return ;;
    :dir) _files -/; return ;;
  esac
  for line in "${reply[@]}"; do
    [[ -z $line ]] && continue
    value=${line%%$'\t'*}
    value=${value//:/\\:}
    if [[ $line == *$'\t'* ]]; then
      items+=("$value:${line#*$'\t'}")
    else
      items+=("$value")
    fi
  done
  _describe -t devgraph devgraph items
}
if [[ ${funcstack[1]-} == _devgraph ]]; then
  _devgraph "$@"
else
  compdef _devgraph devgraph
fi
)";

constexpr const char* kFish = R"(# fish completion for devgraph; made by `devgraph completion fish`.
function __devgraph_complete
    set -l words (commandline -opc)
    set -l cur (commandline -ct)
    set -l cmd $words[1]
    set -e words[1]
    set -l reply (command $cmd completion --complete --describe -- $words "$cur" 2>/dev/null)
    switch "$reply[1]"
        case :file
            __fish_complete_path "$cur"
        case :dir
            __fish_complete_directories "$cur"
        case '*'
            printf '%s\n' $reply
    end
end
complete -c devgraph -f -a '(__devgraph_complete)'
)";

}  // namespace

std::string script(std::string_view shell) {
  if (shell == "bash") return kBash;
  if (shell == "zsh") return kZsh;
  if (shell == "fish") return kFish;
  return "";
}

}  // namespace devgraph::completion
