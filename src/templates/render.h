// Rendering the texts devgraph sends to personas: task briefs and dispatch
// texts live as editable files under <skill>/templates/, never as strings in
// code, so a user can reword them without rebuilding devgraph.
//
// Placeholder syntax (the whole of it):
//   {{name}}        replaced by the value supplied for `name`. A name is
//                   lower-case letters, digits and `_`, starting with a
//                   letter; spaces inside the braces are allowed
//                   (`{{ name }}`).
//   {{# note }}     a comment for whoever edits the template; dropped from
//                   the output. A comment alone on its line drops the line.
//   \{{             a literal `{{` in the output.
// Anything else that starts with `{{` (an unterminated or malformed
// placeholder) is an error naming the file and line.
//
// Contracts:
// - Every template has a declared vocabulary (template_spec()): the names the
//   driver knows how to fill. A placeholder outside the vocabulary is an
//   error naming it ("unknown placeholder {{foo}}"), and so is a placeholder
//   in use for which the caller supplied no value ("no value for
//   placeholder {{foo}}"). A template need not use its whole vocabulary:
//   a user may delete a line.
// - A value is inserted verbatim (no escaping, no re-expansion: a value
//   containing `{{x}}` stays literal). Text that came from a model or a
//   user (findings, issue titles) should go through fence_untrusted()
//   (util/untrusted.h) first so
//   the receiving persona reads it as data, not as instructions.
// - Rendering is pure: parse once (parse_template), render many times.
#pragma once

#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "util/expected.h"

namespace devgraph::templates {

using Values = std::map<std::string, std::string, std::less<>>;

// A declared template: its file under <skill>/templates/ and the placeholder
// names the driver supplies for it.
struct TemplateSpec {
  std::string_view name;  // "task-brief"; the file is templates/<name>.md
  std::string_view purpose;
  std::span<const std::string_view> placeholders;
};

// Every template devgraph ships, in a stable order.
std::span<const TemplateSpec> template_specs();
// The spec named `name`, or nullptr.
const TemplateSpec* template_spec(std::string_view name);

class Template {
 public:
  struct Piece {
    bool is_placeholder = false;
    std::string text;  // literal text, or the placeholder's name
    int line = 0;      // 1-based line of a placeholder, for messages
  };

  // Names used by the template, each once, in order of first use.
  std::vector<std::string> placeholders() const;
  // Fails naming the first used placeholder with no entry in `values`.
  Expected<std::string> render(const Values& values) const;
  const std::string& origin() const { return origin_; }
  const std::vector<Piece>& pieces() const { return pieces_; }

 private:
  friend Expected<Template> parse_template(std::string_view, std::string_view);
  std::string origin_;
  std::vector<Piece> pieces_;
};

// Parses template text; `origin` (a file name) prefixes error messages.
Expected<Template> parse_template(std::string_view text, std::string_view origin);
Expected<Template> load_template(const std::string& path);

// Reads <skill_dir>/templates/<name>.md, checks every placeholder against
// the template's declared vocabulary, and renders it with `values`. Fails
// when `name` is not a declared template, the file is missing or malformed,
// or a placeholder is unknown or has no value.
Expected<std::string> render_skill_template(const std::string& skill_dir, std::string_view name,
                                            const Values& values);

// Checks one template file against its vocabulary without rendering it;
// every problem, one line each (empty when sound). For `validate graph`.
std::vector<std::string> check_skill_templates(const std::string& skill_dir);


// "- `a`\n- `b`" for a list of globs or paths; "none" when empty.
std::string bullet_list(const std::vector<std::string>& items);

}  // namespace devgraph::templates
