#include "util/args.h"

#include <charconv>

namespace devgraph {

std::optional<std::string> ParsedArgs::get(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return it->second;
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

ArgParser& ArgParser::flag(std::string name, std::string help) {
  opts_.push_back({std::move(name), std::move(help), false, true, {}});
  return *this;
}

const ArgParser::Opt* ArgParser::find(const std::string& name) const {
  for (const auto& o : opts_)
    if (o.name == name) return &o;
  return nullptr;
}

std::string ArgParser::usage() const {
  std::string u = "usage: " + prog_ + " [-h]";
  for (const auto& o : opts_) {
    std::string part = "--" + o.name;
    if (!o.is_flag) {
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
  return Error{usage() + "\n" + prog_ + ": error: " + message, 2};
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
    if (!only_positionals && (a == "-h" || a == "--help")) return Error{help(), 0};
    if (!only_positionals && a.size() > 2 && a.rfind("--", 0) == 0) {
      std::string name = a.substr(2);
      std::optional<std::string> inline_value;
      if (auto eq = name.find('='); eq != std::string::npos) {
        inline_value = name.substr(eq + 1);
        name = name.substr(0, eq);
      }
      const Opt* o = find(name);
      if (o == nullptr) {
        if (allow_rest_) {
          out.rest_.assign(args.begin() + static_cast<long>(i), args.end());
          break;
        }
        return usage_error("unrecognized arguments: " + a);
      }
      if (o->is_flag) {
        if (inline_value)
          return usage_error("argument --" + name + ": ignored explicit argument '" +
                             *inline_value + "'");
        out.flags_.insert(name);
        continue;
      }
      std::string value;
      if (inline_value) {
        value = *inline_value;
      } else {
        if (i + 1 >= args.size() || (args[i + 1].rfind("--", 0) == 0 && args[i + 1].size() > 2 &&
                                     find(args[i + 1].substr(2, args[i + 1].find('=') - 2)))) {
          return usage_error("argument --" + name + ": expected one argument");
        }
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

std::optional<long long> parse_int(const std::string& text) {
  long long v = 0;
  const char* b = text.data();
  const char* e = b + text.size();
  if (b != e && *b == '+') ++b;
  auto [p, ec] = std::from_chars(b, e, v);
  if (ec != std::errc() || p != e || b == e) return std::nullopt;
  return v;
}

}  // namespace devgraph
