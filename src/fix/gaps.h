// A review's gaps and its verdict, read from a code-reviewer's result or
// from a review file a person or another tool wrote (`devgraph fix
// --review FILE`). Pure: no process, no file.
//
// Contract:
// - Severities: CRITICAL, HIGH, MEDIUM, LOW. A reviewer's `Critical` is
//   CRITICAL, `Important` HIGH, `Minor` MEDIUM (code-reviewer.md's words);
//   the names themselves are accepted in any case. An unknown severity is
//   an error naming the gap.
// - The verdict: BLOCKED when the reviewer said so (status BLOCKED or
//   NEEDS_CONTEXT: its blockers or missing context are the reason); else
//   FIX-FIRST when a CRITICAL or HIGH gap remains; else SHIP. MEDIUM and
//   LOW gaps are kept and reported but never hold a branch back.
// - review_from_result(): a persona result (contracts/agent-result) whose
//   `findings` are objects with severity, file and description (line
//   optional; `issue`, `title` or `summary` stand in for a missing
//   description). A finding that is not an object, or has no file or no
//   description, is an error naming its index.
// - parse_review_file(): either JSON (a persona result as above, or
//   {"verdict": "SHIP"|"FIX-FIRST"|"BLOCKED", "gaps": [...], "reason": ...}
//   with gaps shaped like findings), or Markdown in which every line
//   `- [SEVERITY] description — file:line` (an em dash or " -- "; line
//   optional) is a gap and a line `Verdict: X` states the verdict. A
//   stated verdict must agree with the gaps (FIX-FIRST needs a CRITICAL or
//   HIGH gap, SHIP has none); otherwise it is an error. Text with no gap
//   and no verdict is an error (nothing says the review was read).
// - gap_key(): a gap's identity across loops: its file and its
//   description's lowercase letters and digits, words single-spaced; the
//   line and severity are not part of it (a fix moves lines). same_gaps()
//   compares the sets of keys of the CRITICAL and HIGH gaps.
// - render_gap(): "[HIGH] description — file:line" (":line" only when
//   known), one line: newlines in the description become spaces.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/expected.h"
#include "util/json.h"

namespace devgraph::fix {

enum class Severity { critical, high, medium, low };
std::string_view severity_name(Severity s);  // "CRITICAL", ...
std::optional<Severity> severity_from(std::string_view text);

struct Gap {
  Severity severity = Severity::high;
  std::string file;
  std::optional<int> line;
  std::string description;

  bool blocking() const { return severity == Severity::critical || severity == Severity::high; }
  bool operator==(const Gap&) const = default;
};

enum class Verdict { ship, fix_first, blocked };
std::string_view verdict_name(Verdict v);  // "SHIP", "FIX-FIRST", "BLOCKED"

struct Review {
  Verdict verdict = Verdict::ship;
  std::vector<Gap> gaps;  // in the order given
  std::string reason;     // BLOCKED: why, in one line
};

Expected<Review> review_from_result(const Json& result);
Expected<Review> parse_review_file(std::string_view text);

std::string gap_key(const Gap& gap);
bool same_gaps(const std::vector<Gap>& a, const std::vector<Gap>& b);
std::string render_gap(const Gap& gap);
Json to_json(const Gap& gap);

}  // namespace devgraph::fix
