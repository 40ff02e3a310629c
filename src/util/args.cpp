#include "util/args.h"

#include <cmath>

#include <cctype>
#include <charconv>
#include <limits>
#include <string_view>

#include "util/suggest.h"
#include "util/text.h"

namespace devgraph {

std::optional<std::string> ParsedArgs::get(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> ParsedArgs::all(const std::string& name) const {
  auto it = lists_.find(name);
  return it == lists_.end() ? std::vector<std::string>{} : it->second;
}

std::string ParsedArgs::get_or(const std::string& name, const std::string& fallback) const {
  auto v = get(name);
  return v ? *v : fallback;
}

std::string ArgParser::Option::value_name() const {
  if (!metavar.empty()) return metavar;
  std::string meta;
  for (char c : name) meta.push_back(c == '-' ? '_' : static_cast<char>(std::toupper(c)));
  return meta;
}

ArgParser& ArgParser::positional(std::string name, std::string help) {
  Pos p;
  p.name = std::move(name);
  p.help = std::move(help);
  pos_.push_back(std::move(p));
  last_is_positional_ = true;
  return *this;
}

ArgParser& ArgParser::option(std::string name, std::string help, bool required,
                             std::vector<std::string> choices) {
  Opt o;
  o.name = std::move(name);
  o.help = std::move(help);
  o.required = required;
  o.choices = std::move(choices);
  opts_.push_back(std::move(o));
  last_is_positional_ = false;
  return *this;
}

ArgParser& ArgParser::repeated(std::string name, std::string help) {
  Opt o;
  o.name = std::move(name);
  o.help = std::move(help);
  o.repeated = true;
  opts_.push_back(std::move(o));
  last_is_positional_ = false;
  return *this;
}

ArgParser& ArgParser::optional_value(std::string name, std::string help, std::string metavar) {
  Opt o;
  o.name = std::move(name);
  o.help = std::move(help);
  o.optional_value = true;
  o.metavar = std::move(metavar);
  opts_.push_back(std::move(o));
  last_is_positional_ = false;
  return *this;
}

ArgParser& ArgParser::flag(std::string name, std::string help) {
  Opt o;
  o.name = std::move(name);
  o.help = std::move(help);
  o.is_flag = true;
  opts_.push_back(std::move(o));
  last_is_positional_ = false;
  return *this;
}

ArgParser& ArgParser::default_value(std::string text) {
  if (!last_is_positional_ && !opts_.empty()) opts_.back().default_value = std::move(text);
  return *this;
}

ArgParser& ArgParser::hint(ValueHint h) {
  if (last_is_positional_ && !pos_.empty())
    pos_.back().hint = h;
  else if (!opts_.empty())
    opts_.back().hint = h;
  return *this;
}

ArgParser& ArgParser::choices(std::vector<std::string> values) {
  if (last_is_positional_ && !pos_.empty()) pos_.back().choices = std::move(values);
  return *this;
}

std::string wrap_usage(const std::string& usage, size_t width) {
  std::string out;
  size_t start = 0;
  while (start <= usage.size()) {
    size_t end = usage.find('\n', start);
    if (end == std::string::npos) end = usage.size();
    const std::string line = usage.substr(start, end - start);
    // The parts: words, a bracketed group with its spaces being one.
    std::vector<std::string> parts;
    std::string part;
    int depth = 0;
    for (char c : line) {
      if (c == ' ' && depth == 0) {
        if (!part.empty()) parts.push_back(part);
        part.clear();
        continue;
      }
      depth += c == '[' || c == '{' || c == '(' ? 1 : c == ']' || c == '}' || c == ')' ? -1 : 0;
      part.push_back(c);
    }
    if (!part.empty()) parts.push_back(part);
    if (line.size() <= width || parts.size() < 4) {
      out += line;
    } else {
      // "usage: devgraph VERB" (or "devgraph VERB SUB" in a synopsis)
      // stays on the first line; the rest goes under the part after it.
      const size_t head = parts[0] == "usage:" ? 3 : 2;
      std::string first;
      for (size_t i = 0; i < head && i < parts.size(); ++i) first += (i ? " " : "") + parts[i];
      const std::string indent(first.size() + 1, ' ');
      std::string current = first;
      for (size_t i = head; i < parts.size(); ++i) {
        if (current.size() + 1 + parts[i].size() > width && current.size() > indent.size()) {
          out += current + "\n";
          current = indent + parts[i];
        } else {
          current += " " + parts[i];
        }
      }
      out += current;
    }
    if (end == usage.size()) break;
    out += "\n";
    start = end + 1;
  }
  return out;
}

ArgParser& ArgParser::hidden() {
  if (!last_is_positional_ && !opts_.empty()) opts_.back().hidden = true;
  return *this;
}

ArgParser& ArgParser::optional() {
  if (last_is_positional_ && !pos_.empty()) pos_.back().optional = true;
  return *this;
}

const ArgParser::Opt* ArgParser::find(const std::string& name) const {
  for (const auto& o : opts_)
    if (o.name == name) return &o;
  return nullptr;
}

ArgParser::Match ArgParser::match(const std::string& name) const {
  Match m;
  if (name == "help") {
    m.help = true;
    return m;
  }
  if ((m.opt = find(name)) != nullptr) return m;
  // argparse takes any unambiguous prefix of a long option, --help included.
  std::vector<std::string> hits;
  if (!name.empty() && std::string_view("help").substr(0, name.size()) == name) {
    m.help = true;
    hits.push_back("--help");
  }
  for (const auto& o : opts_)
    if (!name.empty() && o.name.compare(0, name.size(), name) == 0) {
      m.opt = &o;
      hits.push_back("--" + o.name);
    }
  if (hits.size() > 1) {
    m.opt = nullptr;
    m.help = false;
    for (const auto& h : hits) m.ambiguous += (m.ambiguous.empty() ? "" : ", ") + h;
  }
  return m;
}

bool ArgParser::looks_like_option(const std::string& word) const {
  // argparse's rule for the word after an option that takes a value: a word
  // that names an option (or a prefix of one) is an option; "-" alone, a
  // negative number and anything with a space are values; any other word
  // starting with '-' is an unknown option.
  if (word.size() < 2 || word[0] != '-') return false;
  if (word == "-h") return true;
  if (word.rfind("--", 0) == 0) {
    const size_t eq = word.find('=');
    Match m = match(word.substr(2, eq == std::string::npos ? eq : eq - 2));
    if (m.opt != nullptr || m.help || !m.ambiguous.empty()) return true;
  }
  size_t i = 1;
  while (i < word.size() && std::isdigit(static_cast<unsigned char>(word[i]))) ++i;
  if (i < word.size() && word[i] == '.') {
    size_t j = i + 1;
    while (j < word.size() && std::isdigit(static_cast<unsigned char>(word[j]))) ++j;
    if (j == word.size() && j > i + 1) return false;  // -.5, -1.5
  } else if (i == word.size()) {
    return false;  // -5
  }
  return word.find(' ') == std::string::npos;
}

std::string ArgParser::usage() const {
  std::string u = "usage: " + prog_ + " [-h]";
  for (const auto& o : opts_) {
    if (o.hidden) continue;
    std::string part = "--" + o.name;
    if (o.optional_value) {
      part += " [" + o.metavar + "]";
    } else if (!o.is_flag) {
      part += " " + o.value_name();
    }
    u += o.required ? " " + part : " [" + part + "]";
  }
  for (const auto& p : pos_) u += p.optional ? " [" + p.name + "]" : " " + p.name;
  return u;
}

namespace {

// One entry of an argparse-style list: the invocation after `indent`
// spaces, then its help 22 columns further (on the next line when the
// invocation is longer).
std::string entry(const std::string& invocation, const std::string& help, size_t indent) {
  const size_t column = indent + 22;
  std::string line = std::string(indent, ' ') + invocation;
  if (help.empty()) return line + "\n";
  if (line.size() + 2 <= column) {
    line += std::string(column - line.size(), ' ');
  } else {
    line += "\n" + std::string(column, ' ');
  }
  return line + wrap_words(help, column, column, 79) + "\n";
}

}  // namespace

std::string braces(const std::vector<std::string>& choices) {
  std::string b = "{";
  for (size_t i = 0; i < choices.size(); ++i) b += (i ? "," : "") + choices[i];
  return b + "}";
}

std::string ArgParser::help() const {
  std::string h = wrap_usage(usage()) + "\n";
  if (!description_.empty()) h += "\n" + wrap_words(description_, 0, 0, 79) + "\n";
  if (!pos_.empty()) h += "\npositional arguments:\n" + arguments_help(true, false);
  h += "\noptions:\n" + entry("-h, --help", "show this help message and exit", 2) +
       arguments_help(false, true);
  const std::string epilog = epilog_ ? epilog_() : "";
  if (!epilog.empty()) h += "\n" + epilog + (epilog.back() == '\n' ? "" : "\n");
  return h;
}

std::string ArgParser::arguments_help(bool with_positionals, bool with_options,
                                      size_t indent) const {
  std::string h;
  if (with_positionals)
    for (const auto& p : pos_)
      h += entry(p.choices.empty() ? p.name : braces(p.choices), p.help, indent);
  if (!with_options) return h;
  for (const auto& o : opts_) {
    if (o.hidden) continue;
    std::string invocation = "--" + o.name;
    if (o.optional_value)
      invocation += " [" + o.metavar + "]";
    else if (!o.choices.empty())
      invocation += " " + braces(o.choices);
    else if (!o.is_flag)
      invocation += " " + o.value_name();
    std::string text = o.help;
    if (o.default_value)
      text += (text.empty() ? "" : " ") + ("(default: " + *o.default_value + ")");
    h += entry(invocation, text, indent);
  }
  return h;
}

std::string ArgParser::synopsis() const {
  std::string s;
  auto add = [&s](const std::string& part) { s += (s.empty() ? "" : " ") + part; };
  for (const auto& p : pos_) {
    std::string name;
    for (char c : p.name) name.push_back(static_cast<char>(std::toupper(c)));
    add(p.optional ? "[" + name + "]" : name);
  }
  for (const auto& o : opts_) {
    if (o.hidden) continue;
    std::string part = "--" + o.name;
    if (o.optional_value)
      part += " [" + o.metavar + "]";
    else if (!o.choices.empty())
      part += " " + braces(o.choices);
    else if (!o.is_flag)
      part += " " + o.value_name();
    if (o.repeated) part += "...";
    add(o.required ? part : "[" + part + "]");
  }
  return s;
}

Error ArgParser::usage_error(const std::string& message) const {
  return Error{usage() + "\n" + prog_ + ": error: " + message, 2, ErrorKind::usage};
}

Expected<ParsedArgs> ArgParser::parse(const std::vector<std::string>& args) const {
  ParsedArgs out;
  size_t i = 0;
  bool only_positionals = false;
  for (; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (!only_positionals && a == "--") {
      only_positionals = true;
      if (allow_rest_) {
        out.rest_.assign(args.begin() + static_cast<long>(i) + 1, args.end());
        break;
      }
      continue;
    }
    if (!only_positionals && a == "-h") return Error{help(), 0};
    if (!only_positionals && a.size() > 2 && a.rfind("--", 0) == 0) {
      std::string name = a.substr(2);
      std::optional<std::string> inline_value;
      if (auto eq = name.find('='); eq != std::string::npos) {
        inline_value = name.substr(eq + 1);
        name = name.substr(0, eq);
      }
      Match m = match(name);
      if (!m.ambiguous.empty())
        return usage_error("ambiguous option: " + a + " could match " + m.ambiguous);
      if (m.help) return Error{help(), 0};
      const Opt* o = m.opt;
      if (o == nullptr) {
        if (allow_rest_) {
          out.rest_.assign(args.begin() + static_cast<long>(i), args.end());
          break;
        }
        std::vector<std::string> known{"help"};
        for (const auto& k : opts_) known.push_back(k.name);
        auto near = closest(name, known);
        return usage_error("unrecognized arguments: " + a +
                           (near ? " (did you mean --" + *near + "?)" : ""));
      }
      name = o->name;
      if (o->is_flag) {
        if (inline_value)
          return usage_error("argument --" + name + ": ignored explicit argument '" +
                             *inline_value + "'");
        out.flags_.insert(name);
        continue;
      }
      if (o->optional_value) {
        out.flags_.insert(name);
        if (!inline_value && i + 1 < args.size() && args[i + 1] != "--" &&
            !looks_like_option(args[i + 1]))
          inline_value = args[++i];
        if (inline_value)
          out.values_[name] = *inline_value;
        else
          out.values_.erase(name);
        continue;
      }
      std::string value;
      if (inline_value) {
        value = *inline_value;
      } else {
        if (i + 1 >= args.size() || looks_like_option(args[i + 1]))
          return usage_error("argument --" + name + ": expected one argument");
        value = args[++i];
      }
      if (!o->choices.empty()) {
        bool okc = false;
        for (const auto& c : o->choices) okc = okc || c == value;
        if (!okc) {
          std::string list;
          for (size_t k = 0; k < o->choices.size(); ++k)
            list += (k ? ", '" : "'") + o->choices[k] + "'";
          return usage_error("argument --" + name + ": invalid choice: '" + value +
                             "' (choose from " + list + ")");
        }
      }
      out.values_[name] = value;
      if (o->repeated) out.lists_[name].push_back(value);
      continue;
    }
    if (out.positionals_.size() < pos_.size()) {
      out.positionals_.push_back(a);
    } else if (allow_rest_) {
      out.rest_.assign(args.begin() + static_cast<long>(i), args.end());
      break;
    } else {
      return usage_error("unrecognized arguments: " + a);
    }
  }
  std::string missing;
  for (size_t k = out.positionals_.size(); k < pos_.size(); ++k)
    if (!pos_[k].optional) missing += (missing.empty() ? "" : ", ") + pos_[k].name;
  for (const auto& o : opts_)
    if (o.required && !out.values_.count(o.name))
      missing += (missing.empty() ? "--" : ", --") + o.name;
  if (!missing.empty()) return usage_error("the following arguments are required: " + missing);
  return out;
}

std::optional<long long> parse_int(std::string_view text, bool* out_of_range) {
  if (out_of_range != nullptr) *out_of_range = false;
  // Python's str.strip() whitespace, ASCII part: \t-\r, \x1c-\x1f, space.
  auto space = [](char c) {
    return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f);
  };
  while (!text.empty() && space(text.front())) text.remove_prefix(1);
  while (!text.empty() && space(text.back())) text.remove_suffix(1);
  bool negative = false;
  if (!text.empty() && (text.front() == '+' || text.front() == '-')) {
    negative = text.front() == '-';
    text.remove_prefix(1);
  }
  // Digits, with single underscores between them (PEP 515).
  unsigned long long magnitude = 0;
  bool overflow = false;
  bool last_digit = false;
  for (char c : text) {
    if (c == '_') {
      if (!last_digit) return std::nullopt;
      last_digit = false;
      continue;
    }
    if (c < '0' || c > '9') return std::nullopt;
    last_digit = true;
    if (magnitude > (~0ULL - 9) / 10) overflow = true;
    if (!overflow) magnitude = magnitude * 10 + static_cast<unsigned>(c - '0');
  }
  if (!last_digit) return std::nullopt;  // empty, or a trailing underscore
  const unsigned long long limit = negative ? 9223372036854775808ULL : 9223372036854775807ULL;
  if (overflow || magnitude > limit) {
    if (out_of_range != nullptr) *out_of_range = true;
    return std::nullopt;
  }
  if (negative)
    return magnitude == limit ? std::numeric_limits<long long>::min()
                              : -static_cast<long long>(magnitude);
  return static_cast<long long>(magnitude);
}

std::optional<double> parse_seconds(const std::string& text) {
  try {
    size_t used = 0;
    double v = std::stod(text, &used);
    if (used != text.size() || !std::isfinite(v)) return std::nullopt;
    return v;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace devgraph
