#include "templates/render.h"

#include <algorithm>
#include <array>
#include <set>

#include "util/fs.h"

namespace devgraph::templates {
namespace {

using namespace std::string_view_literals;

// The vocabulary of each shipped template. A name here is a promise that the
// driver can fill it; keep this table and skill/templates/ in step (a test
// renders every shipped template with every name of its vocabulary).
constexpr std::array kPersonaPrompt{"skill_dir"sv, "persona"sv, "dispatch"sv};
constexpr std::array<std::string_view, 0> kResultReminder{};
constexpr std::array kTaskBrief{
    "task_id"sv,          "task_title"sv,   "bundle_id"sv,     "worktree"sv,  "base_commit"sv,
    "scratch_dir"sv,      "test_command"sv, "build_command"sv, "footprint"sv, "depends_on"sv,
    "concurrent_tasks"sv, "plan_section"sv, "spec_path"sv,     "plan_path"sv};
constexpr std::array kPlanner{"bundle_id"sv,      "spec_path"sv, "worktree"sv,       "branch"sv,
                              "default_branch"sv, "plan_path"sv, "tasks_json_path"sv};
constexpr std::array kWriter{"task_id"sv,     "bundle_id"sv,    "brief_path"sv,       "worktree"sv,
                             "scratch_dir"sv, "test_command"sv, "concurrent_tasks"sv, "extra"sv};
constexpr std::array kVerifier{"task_id"sv,     "bundle_id"sv,   "brief_path"sv,  "worktree"sv,
                               "base_commit"sv, "scratch_dir"sv, "test_command"sv};
constexpr std::array kTaskReview{"task_id"sv,       "bundle_id"sv,         "brief_path"sv,
                                 "diff_path"sv,     "base_commit"sv,       "footprint_pathspec"sv,
                                 "tester_result"sv, "adversarial_result"sv};
constexpr std::array kFinalReview{"bundle_id"sv, "spec_path"sv, "plan_path"sv,       "worktree"sv,
                                  "diff_path"sv, "base"sv,      "task_results_dir"sv};
constexpr std::array kDocReview{"bundle_id"sv, "spec_path"sv, "plan_path"sv,
                                "worktree"sv,  "diff_path"sv, "base"sv};
constexpr std::array kRepair{"bundle_id"sv,    "worktree"sv,      "spec_path"sv, "plan_path"sv,
                             "test_command"sv, "findings_path"sv, "findings"sv};
constexpr std::array kTechLead{"bundle_id"sv,
                               "skill_dir"sv,
                               "spec_path"sv,
                               "issue_count"sv,
                               "issues"sv,
                               "worktree"sv,
                               "branch"sv,
                               "base"sv,
                               "default_branch"sv,
                               "delivery"sv,
                               "merge_policy"sv,
                               "primary_clone"sv,
                               "run_dir"sv,
                               "max_parallel_tasks"sv,
                               "max_live_personas"sv,
                               "test_command"sv,
                               "build_command"sv,
                               "generation"sv};
constexpr std::array kMergeAudit{"pr_number"sv, "pr_title"sv, "diff_range"sv, "default_branch"sv,
                                 "merged_at"sv};
constexpr std::array kFix{"loop"sv,      "max_loops"sv,     "worktree"sv,  "gaps"sv,
                          "gaps_path"sv, "criteria_line"sv, "validation"sv};
constexpr std::array kFixReview{"loop"sv,      "worktree"sv,      "base"sv,
                                "diff_path"sv, "criteria_line"sv, "previous_line"sv};
constexpr std::array kDiagnosis{"worktree"sv,     "why_stopped"sv,   "gaps_path"sv,
                                "attempts_dir"sv, "criteria_line"sv, "new_evidence_line"sv};
constexpr std::array kCritique{"round"sv,    "perspective"sv,  "role"sv,   "focus"sv,
                               "artifact"sv, "context_line"sv, "reports"sv};
constexpr std::array kDebug{"slug"sv,      "debug_file"sv, "worktree"sv, "branch"sv,
                            "goal"sv,      "tdd_mode"sv,   "mode"sv,     "step"sv,
                            "directive"sv, "state"sv,      "answered"sv};
constexpr std::array kSpecialist{"slug"sv, "hint"sv, "debug_file"sv, "worktree"sv, "analysis"sv};

const std::array<TemplateSpec, 18> kSpecs{{
    {"persona-prompt", "the first message of every persona launch", kPersonaPrompt},
    {"result-reminder", "asks a resumed persona for its missing RESULT_JSON line", kResultReminder},
    {"task-brief", "the brief written for each task when the plan is accepted", kTaskBrief},
    {"planner-dispatch", "planner: plan one bundle", kPlanner},
    {"writer-dispatch", "tdd-writer, developer, iac-developer: one task", kWriter},
    {"verifier-dispatch", "tester, adversarial-tester: one task", kVerifier},
    {"task-review-dispatch", "code-reviewer: one task against its brief", kTaskReview},
    {"final-review-dispatch", "code-reviewer: the whole branch", kFinalReview},
    {"documentation-reviewer-dispatch", "documentation-reviewer: the whole branch", kDocReview},
    {"bundle-repair-dispatch", "developer: repair bundle-level findings", kRepair},
    {"tech-lead-dispatch", "the model-driven tech lead (headless disabled)", kTechLead},
    {"merge-audit-dispatch", "merge-auditor: one merged pull request", kMergeAudit},
    {"critique-dispatch", "critic: one perspective on one artifact", kCritique},
    {"fix-dispatch", "the fixer: one loop of a fix", kFix},
    {"fix-review-dispatch", "the re-reviewer of a fix loop", kFixReview},
    {"diagnosis-dispatch", "the diagnosis persona: why gaps survive a fix loop", kDiagnosis},
    {"debug-dispatch", "the debugger: one step of a debug session", kDebug},
    {"specialist-dispatch", "a specialist: a debug session's proposed fix direction", kSpecialist},
}};

bool name_start(char c) {
  return c >= 'a' && c <= 'z';
}
bool name_char(char c) {
  return name_start(c) || (c >= '0' && c <= '9') || c == '_';
}

std::string trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return "";
  size_t e = s.find_last_not_of(" \t");
  return std::string(s.substr(b, e - b + 1));
}

std::string where(std::string_view origin, int line) {
  return std::string(origin) + ":" + std::to_string(line);
}

}  // namespace

std::span<const TemplateSpec> template_specs() {
  return kSpecs;
}

const TemplateSpec* template_spec(std::string_view name) {
  for (const auto& s : kSpecs)
    if (s.name == name) return &s;
  return nullptr;
}

Expected<Template> parse_template(std::string_view text, std::string_view origin) {
  Template t;
  t.origin_ = std::string(origin);
  std::string literal;
  int line = 1;
  auto flush = [&] {
    if (!literal.empty()) t.pieces_.push_back({false, std::move(literal), 0});
    literal.clear();
  };
  size_t i = 0;
  while (i < text.size()) {
    char c = text[i];
    if (c == '\\' && text.substr(i, 3) == "\\{{") {
      literal += "{{";
      i += 3;
      continue;
    }
    if (c != '{' || text.substr(i, 2) != "{{") {
      if (c == '\n') ++line;
      literal += c;
      ++i;
      continue;
    }
    const int start_line = line;
    size_t close = text.find("}}", i + 2);
    if (close == std::string_view::npos)
      return fail(where(origin, start_line) + ": unterminated placeholder (no closing }})");
    std::string_view inner = text.substr(i + 2, close - i - 2);
    const auto newlines = std::count(inner.begin(), inner.end(), '\n');
    if (!inner.empty() && inner[0] == '#') {
      // A comment. When it is alone on its line, the line goes with it.
      size_t line_start = literal.rfind('\n');
      std::string_view before =
          std::string_view(literal).substr(line_start == std::string::npos ? 0 : line_start + 1);
      bool alone_before = trim(before).empty();
      size_t after = close + 2;
      size_t eol = text.find('\n', after);
      std::string_view rest =
          text.substr(after, (eol == std::string_view::npos ? text.size() : eol) - after);
      line += static_cast<int>(newlines);
      if (alone_before && trim(rest).empty()) {
        literal.resize(literal.size() - before.size());
        i = eol == std::string_view::npos ? text.size() : eol + 1;
        if (eol != std::string_view::npos) ++line;
      } else {
        i = after;
      }
      continue;
    }
    std::string name = trim(inner);
    bool valid =
        !name.empty() && name_start(name[0]) && std::all_of(name.begin(), name.end(), name_char);
    if (!valid)
      return fail(where(origin, start_line) + ": malformed placeholder {{" + std::string(inner) +
                  "}} (names are lower-case letters, digits and _; write \\{{ for a literal {{)");
    flush();
    t.pieces_.push_back({true, std::move(name), start_line});
    i = close + 2;
  }
  flush();
  return t;
}

std::vector<std::string> Template::placeholders() const {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const auto& p : pieces_)
    if (p.is_placeholder && seen.insert(p.text).second) out.push_back(p.text);
  return out;
}

Expected<std::string> Template::render(const Values& values) const {
  std::string out;
  for (const auto& p : pieces_) {
    if (!p.is_placeholder) {
      out += p.text;
      continue;
    }
    auto it = values.find(p.text);
    if (it == values.end())
      return fail(where(origin_, p.line) + ": no value for placeholder {{" + p.text + "}}");
    out += it->second;
  }
  return out;
}

Expected<Template> load_template(const std::string& path) {
  DG_TRY(std::string text, read_file(path));
  return parse_template(text, path);
}

namespace {

// Every placeholder the template uses must be in its declared vocabulary.
Status check_vocabulary(const Template& t, const TemplateSpec& spec) {
  for (const auto& p : t.pieces()) {
    if (!p.is_placeholder) continue;
    if (std::find(spec.placeholders.begin(), spec.placeholders.end(), p.text) ==
        spec.placeholders.end())
      return fail(where(t.origin(), p.line) + ": unknown placeholder {{" + p.text + "}} (" +
                  std::string(spec.name) + " knows: " +
                  [&] {
                    std::string known;
                    for (auto n : spec.placeholders)
                      known += (known.empty() ? "" : ", ") + std::string(n);
                    return known.empty() ? std::string("none") : known;
                  }() +
                  ")");
  }
  return {};
}

std::string template_path(const std::string& skill_dir, std::string_view name) {
  return join_path(join_path(skill_dir, "templates"), std::string(name) + ".md");
}

}  // namespace

Expected<std::string> render_skill_template(const std::string& skill_dir, std::string_view name,
                                            const Values& values) {
  const TemplateSpec* spec = template_spec(name);
  if (spec == nullptr) return fail("no template named '" + std::string(name) + "'");
  DG_TRY(Template t, load_template(template_path(skill_dir, name)));
  DG_CHECK(check_vocabulary(t, *spec));
  return t.render(values);
}

std::vector<std::string> check_skill_templates(const std::string& skill_dir) {
  std::vector<std::string> problems;
  for (const auto& spec : kSpecs) {
    std::string path = template_path(skill_dir, spec.name);
    if (!path_exists(path)) {
      problems.push_back("template " + std::string(spec.name) + " has no file " + path);
      continue;
    }
    auto t = load_template(path);
    if (!t) {
      problems.push_back(t.error().message);
      continue;
    }
    if (auto st = check_vocabulary(*t, spec); !st) problems.push_back(st.error().message);
  }
  return problems;
}

std::string bullet_list(const std::vector<std::string>& items) {
  if (items.empty()) return "none";
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : "\n") + ("- `" + item + "`");
  return out;
}

}  // namespace devgraph::templates
