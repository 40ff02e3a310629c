// A recursive-descent reader for shell command lines. One Parser walks the
// text once; nested constructs ($( ), backticks, subshells) recurse with a
// depth counter so hostile input cannot exhaust the stack. Here-documents
// are collected when the line that introduced them ends, wherever that
// newline is met (possibly inside a command substitution), which is why
// the pending list lives on the Parser and not on a Script.
#include "guard/shell.h"

#include <cctype>
#include <optional>

namespace devgraph::guard::shell {
namespace {

bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}
bool is_meta(char c) {
  return is_blank(c) || c == '\n' || c == ';' || c == '&' || c == '|' || c == '(' || c == ')' ||
         c == '<' || c == '>';
}
bool is_name_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

struct PendingHeredoc {
  std::string delimiter;
  bool strip_tabs = false;
  bool expand = true;
  std::shared_ptr<Word> body;
};

class Parser {
 public:
  Parser(std::string_view text, int depth, std::vector<PendingHeredoc>* pending)
      : s_(text), depth_(depth), pending_(pending ? pending : &own_pending_) {}

  // Parses commands until end of input, or until an unmatched `)` when
  // `until_paren` is set (which is consumed).
  Expected<Script> script(bool until_paren) {
    if (depth_ > kMaxDepth) return fail("shell: nesting too deep");
    Script out;
    AndOr list;
    Pipeline pipe;
    Command cmd;
    bool cmd_started = false;  // words or redirects seen in `cmd`
    bool dbracket = false;     // inside [[ ... ]], where < > && || are words

    auto end_command = [&]() {
      if (cmd_started || cmd.kind == Command::kSubshell) pipe.commands.push_back(std::move(cmd));
      cmd = Command{};
      cmd_started = false;
    };
    auto end_pipeline = [&]() -> bool {
      end_command();
      if (pipe.commands.empty()) return false;
      list.pipelines.push_back(std::move(pipe));
      pipe = Pipeline{};
      return true;
    };
    auto end_list = [&](bool background) {
      end_pipeline();
      if (!list.pipelines.empty()) {
        // A trailing operator with nothing after it (`a &&` then newline)
        // continues on the next line in a real shell; keep ops consistent.
        while (list.ops.size() >= list.pipelines.size()) list.ops.pop_back();
        list.background = background;
        out.lists.push_back(std::move(list));
      }
      list = AndOr{};
    };

    while (true) {
      skip_blanks();
      if (i_ >= s_.size()) {
        if (until_paren) return fail("shell: missing `)`");
        end_list(false);
        if (!pending_->empty() && pending_ == &own_pending_) {
          // A here-document cut off by the end of the text: the shell takes
          // the rest as its body; there is no rest.
          for (auto& h : *pending_) h.body->raw = "";
          pending_->clear();
        }
        return out;
      }
      char c = s_[i_];
      if (dbracket) {
        if (c == '\n' || c == ';') return fail("shell: unterminated [[");
        if (c == '<' || c == '>' || c == '&' || c == '|' || c == '(' || c == ')') {
          size_t n = 1;
          while (i_ + n < s_.size() && s_[i_ + n] == c && n < 2) ++n;
          Word w;
          w.raw = std::string(s_.substr(i_, n));
          w.parts.push_back(Part{Part::kLiteral, w.raw, false, nullptr});
          cmd.words.push_back(std::move(w));
          i_ += n;
          continue;
        }
      }
      if (c == '#') {
        while (i_ < s_.size() && s_[i_] != '\n') ++i_;
        continue;
      }
      if (c == '\n') {
        ++i_;
        if (!list.ops.empty() && pipe.commands.empty() && !cmd_started) {
          // `a &&` newline `b`: the list continues.
        } else if (!pipe.commands.empty() && !cmd_started && cmd.kind == Command::kSimple) {
          // `a |` newline `b`: the pipeline continues.
        } else {
          end_list(false);
        }
        auto st = read_heredocs();
        if (!st) return st.error();
        continue;
      }
      if (c == ')') {
        if (!until_paren) return fail("shell: unexpected `)`");
        ++i_;
        end_list(false);
        return out;
      }
      if (c == ';') {
        ++i_;
        while (i_ < s_.size() && (s_[i_] == ';' || s_[i_] == '&')) ++i_;  // ;; ;& ;;&
        end_list(false);
        continue;
      }
      if (c == '&' && peek(1) == '&') {
        i_ += 2;
        if (!end_pipeline()) return fail("shell: `&&` without a command before it");
        list.ops.push_back("&&");
        continue;
      }
      if (c == '|' && peek(1) == '|') {
        i_ += 2;
        if (!end_pipeline()) return fail("shell: `||` without a command before it");
        list.ops.push_back("||");
        continue;
      }
      if (c == '|') {
        i_ += (peek(1) == '&') ? 2 : 1;
        end_command();
        if (pipe.commands.empty()) return fail("shell: `|` without a command before it");
        continue;
      }
      if (c == '&' && peek(1) != '>') {
        ++i_;
        end_list(true);
        continue;
      }
      if (c == '(' && !cmd_started && cmd.kind == Command::kSimple) {
        if (peek(1) == '(') {
          // (( arithmetic )): evaluated, never executed or redirected.
          auto w = arith_word();
          if (!w) return w.error();
          cmd.words.push_back(std::move(*w));
          cmd_started = true;
          continue;
        }
        ++i_;
        Parser inner(s_.substr(i_), depth_ + 1, pending_);
        auto body = inner.script(true);
        if (!body) return body.error();
        i_ += inner.i_;
        cmd.kind = Command::kSubshell;
        cmd.body = std::make_shared<Script>(std::move(*body));
        continue;
      }
      if (c == '(') {
        // `name ( )` introduces a function body; anything else is a syntax
        // error in a shell too.
        size_t j = i_ + 1;
        while (j < s_.size() && is_blank(s_[j])) ++j;
        if (cmd_started && cmd.words.size() == 1 && j < s_.size() && s_[j] == ')') {
          i_ = j + 1;
          end_list(false);
          continue;
        }
        return fail("shell: unexpected `(`");
      }
      // Redirection (with an optional fd number or {name} in front)?
      if (auto r = try_redirect(); r.has_value()) {
        if (!r->ok()) return r->error();
        cmd.redirects.push_back(std::move(r->value()));
        cmd_started = true;
        continue;
      }
      if (cmd.kind == Command::kSubshell) return fail("shell: word after `)`");
      size_t before = i_;
      auto w = word();
      if (!w) return w.error();
      if (i_ == before) return fail("shell: unexpected character");
      if (!cmd_started && w->raw == "[[") dbracket = true;
      if (dbracket && w->raw == "]]") dbracket = false;
      cmd.words.push_back(std::move(*w));
      cmd_started = true;
    }
  }

  // Reads one word at the current position (which is not a metacharacter).
  Expected<Word> word() {
    if (depth_ > kMaxDepth) return fail("shell: nesting too deep");
    Word w;
    size_t start = i_;
    bool at_start = true;
    bool assignment_value_start = false;
    while (i_ < s_.size()) {
      char c = s_[i_];
      if (is_meta(c)) {
        if ((c == '<' || c == '>') && peek(1) == '(') {
          i_ += 2;
          auto sub = subst_until_paren();
          if (!sub) return sub.error();
          w.parts.push_back(std::move(*sub));
          at_start = false;
          continue;
        }
        break;
      }
      if ((at_start || assignment_value_start) && c == '~') {
        size_t j = i_ + 1;
        while (j < s_.size() && !is_meta(s_[j]) && s_[j] != '/' && s_[j] != ':' &&
               (is_name_char(s_[j]) || s_[j] == '-' || s_[j] == '.'))
          ++j;
        if (j >= s_.size() || is_meta(s_[j]) || s_[j] == '/' || s_[j] == ':') {
          w.parts.push_back(
              Part{Part::kTilde, std::string(s_.substr(i_ + 1, j - i_ - 1)), false, nullptr});
          i_ = j;
          at_start = false;
          assignment_value_start = false;
          continue;
        }
      }
      at_start = false;
      assignment_value_start = false;
      if (c == '\\') {
        if (peek(1) == '\n') {
          i_ += 2;
          continue;
        }
        if (i_ + 1 >= s_.size()) {
          literal(w, "\\", false);
          ++i_;
          continue;
        }
        literal(w, std::string(1, s_[i_ + 1]), true);
        i_ += 2;
        continue;
      }
      if (c == '\'') {
        size_t end = s_.find('\'', i_ + 1);
        if (end == std::string_view::npos) return fail("shell: unterminated single quote");
        literal(w, std::string(s_.substr(i_ + 1, end - i_ - 1)), true);
        i_ = end + 1;
        continue;
      }
      if (c == '"') {
        ++i_;
        auto st = double_quoted(w, false);
        if (!st) return st.error();
        continue;
      }
      if (c == '$' || c == '`') {
        if (c == '$' && peek(1) == '\'') {
          i_ += 2;
          auto st = ansi_c(w);
          if (!st) return st.error();
          continue;
        }
        if (c == '$' && peek(1) == '"') {
          i_ += 2;
          auto st = double_quoted(w, false);
          if (!st) return st.error();
          continue;
        }
        auto st = dollar_or_backtick(w, false);
        if (!st) return st.error();
        continue;
      }
      if (c == '=' && !w.parts.empty() && w.parts.size() == 1 &&
          w.parts[0].kind == Part::kLiteral && !w.parts[0].quoted &&
          is_name_start(w.parts[0].text[0])) {
        bool name = true;
        for (char ch : w.parts[0].text) name = name && is_name_char(ch);
        if (name) assignment_value_start = true;
      }
      literal(w, std::string(1, c), false);
      ++i_;
    }
    w.raw = std::string(s_.substr(start, i_ - start));
    return w;
  }

  size_t pos() const { return i_; }

  // Scans a here-document body (or any text) for substitutions, keeping
  // everything else literal.
  Expected<Word> expanding_text() {
    Word w;
    auto st = double_quoted(w, true);
    if (!st) return st.error();
    w.raw = std::string(s_);
    return w;
  }

 private:
  char peek(size_t ahead) const { return i_ + ahead < s_.size() ? s_[i_ + ahead] : '\0'; }

  void skip_blanks() {
    while (i_ < s_.size()) {
      if (is_blank(s_[i_])) {
        ++i_;
      } else if (s_[i_] == '\\' && peek(1) == '\n') {
        i_ += 2;
      } else {
        break;
      }
    }
  }

  static void literal(Word& w, const std::string& text, bool quoted) {
    if (!w.parts.empty() && w.parts.back().kind == Part::kLiteral &&
        w.parts.back().quoted == quoted)
      w.parts.back().text += text;
    else
      w.parts.push_back(Part{Part::kLiteral, text, quoted, nullptr});
  }

  // After an opening `"` (or over a whole here-document body when
  // `to_end`): literal text, backslash escapes, $ and backtick expansions.
  Status double_quoted(Word& w, bool to_end) {
    while (i_ < s_.size()) {
      char c = s_[i_];
      if (c == '"' && !to_end) {
        ++i_;
        if (w.parts.empty()) literal(w, "", true);  // "" is an empty word, not none
        return {};
      }
      if (c == '\\') {
        char n = peek(1);
        if (n == '\n') {
          i_ += 2;
          continue;
        }
        if (n == '$' || n == '`' || n == '\\' || (n == '"' && !to_end)) {
          literal(w, std::string(1, n), true);
          i_ += 2;
          continue;
        }
        literal(w, "\\", true);
        ++i_;
        continue;
      }
      if (c == '$' || c == '`') {
        DG_CHECK(dollar_or_backtick(w, true));
        continue;
      }
      literal(w, std::string(1, c), true);
      ++i_;
    }
    if (to_end) return {};
    return fail("shell: unterminated double quote");
  }

  Status ansi_c(Word& w) {
    std::string out;
    while (i_ < s_.size()) {
      char c = s_[i_];
      if (c == '\'') {
        ++i_;
        literal(w, out, true);
        return {};
      }
      if (c == '\\' && i_ + 1 < s_.size()) {
        char n = s_[i_ + 1];
        i_ += 2;
        switch (n) {
          case 'n':
            out += '\n';
            break;
          case 't':
            out += '\t';
            break;
          case 'r':
            out += '\r';
            break;
          case 'a':
            out += '\a';
            break;
          case 'b':
            out += '\b';
            break;
          case 'e':
          case 'E':
            out += '\x1b';
            break;
          case 'f':
            out += '\f';
            break;
          case 'v':
            out += '\v';
            break;
          case 'x': {
            int v = 0, n_digits = 0;
            while (n_digits < 2 && i_ < s_.size() &&
                   std::isxdigit(static_cast<unsigned char>(s_[i_]))) {
              char d = s_[i_++];
              v = v * 16 + (std::isdigit(static_cast<unsigned char>(d))
                                ? d - '0'
                                : (std::tolower(static_cast<unsigned char>(d)) - 'a' + 10));
              ++n_digits;
            }
            out += static_cast<char>(v);
            break;
          }
          case '0':
          case '1':
          case '2':
          case '3':
          case '4':
          case '5':
          case '6':
          case '7': {
            int v = n - '0', n_digits = 1;
            while (n_digits < 3 && i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '7') {
              v = v * 8 + (s_[i_++] - '0');
              ++n_digits;
            }
            out += static_cast<char>(v & 0xff);
            break;
          }
          default:
            out += n;
            break;  // \\ \' \" \?
        }
        continue;
      }
      out += c;
      ++i_;
    }
    return fail("shell: unterminated $'...' quote");
  }

  // At a `$` or backtick.
  Status dollar_or_backtick(Word& w, bool quoted) {
    char c = s_[i_];
    if (c == '`') {
      ++i_;
      std::string inner;
      while (i_ < s_.size() && s_[i_] != '`') {
        if (s_[i_] == '\\' && i_ + 1 < s_.size() &&
            (s_[i_ + 1] == '`' || s_[i_ + 1] == '\\' || s_[i_ + 1] == '$')) {
          inner += s_[i_ + 1];
          i_ += 2;
          continue;
        }
        inner += s_[i_++];
      }
      if (i_ >= s_.size()) return fail("shell: unterminated backtick");
      ++i_;
      Parser sub(inner, depth_ + 1, nullptr);
      auto body = sub.script(false);
      if (!body) return body.error();
      w.parts.push_back(
          Part{Part::kSubst, inner, quoted, std::make_shared<Script>(std::move(*body))});
      return {};
    }
    char n = peek(1);
    if (n == '(') {
      if (peek(2) == '(') {
        auto a = arith_word();
        if (!a) return a.error();
        w.parts.push_back(Part{Part::kArith, a->raw, quoted, nullptr});
        return {};
      }
      i_ += 2;
      auto sub = subst_until_paren();
      if (!sub) return sub.error();
      sub->quoted = quoted;
      w.parts.push_back(std::move(*sub));
      return {};
    }
    if (n == '{') {
      i_ += 2;
      std::string body;
      int level = 1;
      size_t first_sub = w.parts.size();
      while (i_ < s_.size()) {
        char ch = s_[i_];
        if (ch == '\\' && i_ + 1 < s_.size()) {
          body += s_.substr(i_, 2);
          i_ += 2;
          continue;
        }
        if (ch == '$' && (peek(1) == '(' || peek(1) == '{')) {
          if (peek(1) == '(') {
            // A substitution inside ${...:-$(cmd)} still runs.
            Word tmp;
            DG_CHECK(dollar_or_backtick(tmp, true));
            for (auto& p : tmp.parts) w.parts.push_back(std::move(p));
            body += "$(...)";
            continue;
          }
          ++level;
          body += "${";
          i_ += 2;
          continue;
        }
        if (ch == '`') {
          Word tmp;
          DG_CHECK(dollar_or_backtick(tmp, true));
          for (auto& p : tmp.parts) w.parts.push_back(std::move(p));
          continue;
        }
        if (ch == '\'' && !quoted) {
          size_t end = s_.find('\'', i_ + 1);
          if (end == std::string_view::npos) return fail("shell: unterminated single quote");
          body += s_.substr(i_, end - i_ + 1);
          i_ = end + 1;
          continue;
        }
        if (ch == '}') {
          if (--level == 0) break;
        }
        body += ch;
        ++i_;
      }
      if (i_ >= s_.size()) return fail("shell: unterminated ${");
      ++i_;
      // The parameter itself goes before any substitutions found inside.
      w.parts.insert(w.parts.begin() + static_cast<long>(first_sub),
                     Part{Part::kParam, body, quoted, nullptr});
      return {};
    }
    if (is_name_start(n)) {
      size_t j = i_ + 1;
      while (j < s_.size() && is_name_char(s_[j])) ++j;
      w.parts.push_back(
          Part{Part::kParam, std::string(s_.substr(i_ + 1, j - i_ - 1)), quoted, nullptr});
      i_ = j;
      return {};
    }
    if (std::isdigit(static_cast<unsigned char>(n)) || n == '@' || n == '*' || n == '#' ||
        n == '?' || n == '$' || n == '!' || n == '-') {
      w.parts.push_back(Part{Part::kParam, std::string(1, n), quoted, nullptr});
      i_ += 2;
      return {};
    }
    literal(w, "$", quoted);
    ++i_;
    return {};
  }

  // After `$(`, `<(` or `>(`: the inner script up to its `)`.
  Expected<Part> subst_until_paren() {
    size_t start = i_;
    Parser inner(s_.substr(i_), depth_ + 1, pending_);
    auto body = inner.script(true);
    if (!body) return body.error();
    i_ += inner.i_;
    return Part{Part::kSubst, std::string(s_.substr(start, i_ - start - 1)), false,
                std::make_shared<Script>(std::move(*body))};
  }

  // At `((` or `$((`: skips to the matching `))`.
  Expected<Word> arith_word() {
    size_t start = i_;
    if (s_[i_] == '$') ++i_;
    i_ += 2;
    int level = 2;
    while (i_ < s_.size() && level > 0) {
      char c = s_[i_];
      if (c == '(') ++level;
      if (c == ')') --level;
      if (c == '\'' || c == '"') {
        size_t end = s_.find(c, i_ + 1);
        if (end == std::string_view::npos) return fail("shell: unterminated quote");
        i_ = end;
      }
      ++i_;
    }
    if (level > 0) return fail("shell: missing `))`");
    Word w;
    w.raw = std::string(s_.substr(start, i_ - start));
    w.parts.push_back(Part{Part::kLiteral, w.raw, true, nullptr});
    return w;
  }

  // A redirection at the current position, or nullopt when there is none.
  std::optional<Expected<Redirect>> try_redirect() {
    size_t j = i_;
    int fd = -1;
    while (j < s_.size() && std::isdigit(static_cast<unsigned char>(s_[j]))) ++j;
    if (j > i_ && j < s_.size() && (s_[j] == '<' || s_[j] == '>') && j - i_ < 9) {
      fd = std::stoi(std::string(s_.substr(i_, j - i_)));
    } else if (s_[i_] == '{') {
      size_t k = i_ + 1;
      while (k < s_.size() && is_name_char(s_[k])) ++k;
      if (k > i_ + 1 && k + 1 < s_.size() && s_[k] == '}' && (s_[k + 1] == '<' || s_[k + 1] == '>'))
        j = k + 1, fd = -2;
      else
        j = i_;
    } else {
      j = i_;
    }
    if (j >= s_.size()) return std::nullopt;
    static constexpr std::string_view kOps[] = {"&>>", "<<<", "<<-", "&>", "<<", "<>",
                                                "<&",  ">>",  ">|",  ">&", "<",  ">"};
    std::string_view rest = s_.substr(j);
    std::string_view op;
    for (auto candidate : kOps) {
      if (rest.substr(0, candidate.size()) == candidate) {
        op = candidate;
        break;
      }
    }
    if (op.empty() || (fd != -1 && op[0] == '&')) return std::nullopt;
    if ((op == "<" || op == ">") && rest.size() > 1 && rest[1] == '(') return std::nullopt;
    i_ = j + op.size();
    skip_blanks();
    if (i_ >= s_.size() ||
        (is_meta(s_[i_]) && !((s_[i_] == '<' || s_[i_] == '>') && peek(1) == '(')))
      return Expected<Redirect>(
          fail("shell: redirection `" + std::string(op) + "` without a target"));
    auto target = word();
    if (!target) return Expected<Redirect>(target.error());
    Redirect r;
    r.fd = fd;
    r.op = std::string(op);
    r.target = std::move(*target);
    if (op == "<<" || op == "<<-") {
      PendingHeredoc h;
      h.strip_tabs = op == "<<-";
      for (const auto& p : r.target.parts) {
        if (p.quoted) h.expand = false;
        h.delimiter += p.kind == Part::kParam ? "$" + p.text : p.text;
      }
      h.body = std::make_shared<Word>();
      r.heredoc = h.body;
      pending_->push_back(std::move(h));
    }
    return Expected<Redirect>(std::move(r));
  }

  // At the start of a line after a newline: the bodies of pending
  // here-documents, in order.
  Status read_heredocs() {
    auto pending = std::move(*pending_);
    pending_->clear();
    for (auto& h : pending) {
      std::string body;
      bool found = false;
      while (i_ < s_.size()) {
        size_t eol = s_.find('\n', i_);
        std::string_view line =
            s_.substr(i_, eol == std::string_view::npos ? std::string_view::npos : eol - i_);
        i_ = eol == std::string_view::npos ? s_.size() : eol + 1;
        std::string_view cmp = line;
        if (h.strip_tabs)
          while (!cmp.empty() && cmp.front() == '\t') cmp.remove_prefix(1);
        if (cmp == h.delimiter) {
          found = true;
          break;
        }
        body += cmp;
        body += '\n';
      }
      (void)found;  // a body cut off by the end of the text is still a body
      if (h.expand) {
        Parser sub(body, depth_ + 1, nullptr);
        auto w = sub.expanding_text();
        if (!w) return w.error();
        *h.body = std::move(*w);
      } else {
        h.body->raw = body;
        h.body->parts.push_back(Part{Part::kLiteral, body, true, nullptr});
      }
    }
    return {};
  }

  std::string_view s_;
  size_t i_ = 0;
  int depth_;
  std::vector<PendingHeredoc> own_pending_;
  std::vector<PendingHeredoc>* pending_;
};

}  // namespace

Expected<Script> parse_shell(std::string_view text) {
  Parser p(text, 0, nullptr);
  return p.script(false);
}

bool is_assignment(const Word& word) {
  if (word.parts.empty() || word.parts[0].kind != Part::kLiteral || word.parts[0].quoted)
    return false;
  const std::string& t = word.parts[0].text;
  size_t eq = t.find('=');
  if (eq == std::string::npos || eq == 0 || !is_name_start(t[0])) return false;
  size_t end = eq;
  if (end > 0 && t[end - 1] == '+') --end;  // NAME+=value
  for (size_t k = 0; k < end; ++k)
    if (!is_name_char(t[k])) return false;
  return true;
}

}  // namespace devgraph::guard::shell
