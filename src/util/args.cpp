#include "util/args.h"

#include <cmath>

#include <cctype>
#include <charconv>
#include <limits>
#include <string_view>

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

ArgParser& ArgParser::positional(std::string name, std::string help) {
  pos_.push_back({std::move(name), std::move(help)});
  return *this;
}

ArgParser& ArgParser::option(std::string name, std::string help, bool required,
                             std::vector<std::string> choices) {
  opts_.push_back({std::move(name), std::move(help), required, false, std::move(choices)});
  return *this;
}

ArgParser& ArgParser::repeated(std::string name, std::string help) {
  opts_.push_back({std::move(name), std::move(help), false, false, {}, true});
  return *this;
}

ArgParser& ArgParser::optional_value(std::string name, std::string help, std::string metavar) {
  opts_.push_back(
      {std::move(name), std::move(help), false, false, {}, false, true, std::move(metavar)});
  return *this;
}

ArgParser& ArgParser::flag(std::string name, std::string help) {
  opts_.push_back({std::move(name), std::move(help), false, true, {}});
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
    std::string part = "--" + o.name;
    if (o.optional_value) {
      part += " [" + o.metavar + "]";
    } else if (!o.is_flag) {
      std::string meta;
      for (char c : o.name) meta.push_back(c == '-' ? '_' : static_cast<char>(std::toupper(c)));
      part += " " + meta;
    }
    u += o.required ? " " + part : " [" + part + "]";
  }
  for (const auto& p : pos_) u += " " + p.name;
  return u;
}

std::string ArgParser::help() const {
  std::string h = usage() + "\n";
  if (!description_.empty()) h += "\n" + description_ + "\n";
  if (!pos_.empty()) {
    h += "\npositional arguments:\n";
    for (const auto& p : pos_) h += "  " + p.name + (p.help.empty() ? "" : "  " + p.help) + "\n";
  }
  h += "\noptions:\n  -h, --help  show this help message and exit\n";
  for (const auto& o : opts_) {
    h += "  --" + o.name;
    if (o.optional_value) h += " [" + o.metavar + "]";
    if (!o.choices.empty()) {
      h += " {";
      for (size_t i = 0; i < o.choices.size(); ++i) h += (i ? "," : "") + o.choices[i];
      h += "}";
    }
    if (!o.help.empty()) h += "  " + o.help;
    h += "\n";
  }
  return h;
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
        return usage_error("unrecognized arguments: " + a);
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
    missing += (missing.empty() ? "" : ", ") + pos_[k].name;
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
