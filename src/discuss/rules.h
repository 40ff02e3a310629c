// What `devgraph discuss` decides once its perspectives have answered: each
// answer read from JSON, the divergences between them, consensus or not, a
// synthesis, the discussion record and the result. Pure: no process, no
// file; the verb runs the agent CLIs, hands their answers here and writes
// what comes back.
//
// Contract:
// - parse_answer() takes one perspective's JSON object or gives an error
//   (usage) naming the perspective and the field: rating an integer 1..5;
//   strengths, weaknesses, suggestions and missing_requirements arrays of
//   strings (absent means empty); risk_level one of low, medium, high,
//   critical. A perspective must state every field it reports (GRAPH.yaml
//   discuss.perspectives[].reports: risk_level, missing_requirements), so
//   that no check passes by omission. Each point is trimmed and its whitespace runs collapsed to
//   one space (so no point breaks a line of the record); empty points are
//   dropped. Other keys are ignored.
// - A perspective whose every backend failed is `failed` with its reason:
//   it is left out of the average and of every rule, listed in the record
//   and the result, and it keeps consensus from being reached (a missing
//   voice is not agreement).
// - detect_divergences() applies four rules to the answered perspectives:
//   missing requirements (high), risk high or critical (high), a rating of
//   2 or less (medium), max - min rating >= 3 (medium, naming those at the
//   max and those at the min). Ordered by severity, then rule, then
//   perspective order.
// - decide(): reached when no divergence is high and the average is at
//   least 3 (integer sum >= 3 * count, no floating point) and nothing
//   failed. Blocked severity, first that applies:
//     HIGH: nobody answered, missing requirements, a critical risk, two or
//       more ratings <= 2, or the only answer rated <= 2;
//     MEDIUM: one rating <= 2 while the others are >= 3, a spread >= 3, a
//       high (not critical) risk, or a failed perspective that reports a
//       risk level or missing requirements (the checks that block could
//       not run);
//     LOW: anything else (another perspective failed).
//   Recommendation: proceed when reached; HIGH -> revise, or escalate when
//   nobody answered, at the final sign-off, or after a revision already
//   made; MEDIUM and LOW -> proceed-with-caution.
// - Matching points: a point's content words are its lowercase ASCII
//   letters and digits (other bytes below 0x80 separate words; bytes from
//   0x80 are letters), without the stop words of kStopWords (function
//   words, and words that only say something is absent: "no", "missing",
//   "lacks", so that "No rollback plan" and "Rollback plan is missing"
//   meet), each stemmed by a few suffix rules (a plural's -s, -es or -ies;
//   -ing and -ed with a doubled consonant; a final e). Two points are the
//   same when their word sets share at least two thirds of their union
//   (3 * |A & B| >= 2 * |A | B|): "The plan has no rollback step" and "The
//   plan has no test step" share plan and step of four words and stay
//   apart. A point with no words matches none.
// - synthesize(): points are visited perspective by perspective in input
//   order, strengths, weaknesses, suggestions, each list in order; a point
//   joins the first earlier group of its kind whose first point it
//   matches. Convergent themes are the groups raised by two or more
//   perspectives, ordered by that number (most first), then first
//   appearance. Divergent views are the divergences, then conflicts (a
//   strength group matching a weakness group of other perspectives, low).
//   Coverage gaps are the missing requirements grouped the same way.
//   Action items, deduplicated by the same matching (a duplicate adds its
//   perspectives to the earlier item): high = missing requirements and the
//   weaknesses of a high or critical risk; medium = suggestions and
//   weaknesses of a perspective rated <= 2; low = other suggestions, then
//   other weaknesses; ordered by priority, perspectives (most first), first
//   appearance.
// - render_record() and result_json() give byte-identical output for the
//   same input; averages print with two decimals, rounded half up; with
//   no answer at all the record's average reads "none (no perspective
//   answered)" and the result's is null.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/expected.h"
#include "util/json.h"

namespace devgraph::discuss {

enum class RiskLevel { low, medium, high, critical };
std::string_view risk_level_name(RiskLevel level);
std::optional<RiskLevel> risk_level_from(std::string_view name);

// One perspective's answer, or its failure.
struct Perspective {
  std::string name;  // GRAPH.yaml discuss.perspectives[].name
  std::string role;
  // What its answer must carry besides the common fields: risk_level,
  // missing_requirements (GRAPH.yaml discuss.perspectives[].reports).
  std::vector<std::string> reports;
  int rating = 0;  // 1..5 when answered
  std::vector<std::string> strengths;
  std::vector<std::string> weaknesses;
  std::vector<std::string> suggestions;
  std::optional<RiskLevel> risk_level;
  std::vector<std::string> missing_requirements;
  bool failed = false;
  std::string failure;  // why, when failed
};

Expected<Perspective> parse_answer(const Json& answer, const std::string& name,
                                   const std::string& role,
                                   const std::vector<std::string>& reports = {});
Perspective failed_perspective(const std::string& name, const std::string& role,
                               const std::string& reason,
                               const std::vector<std::string>& reports = {});

enum class Severity { low, medium, high };
std::string_view severity_name(Severity s);   // "low", "medium", "high"
std::string_view severity_label(Severity s);  // "LOW", "MEDIUM", "HIGH"

enum class DivergenceKind { coverage_gap, high_risk, low_rating, rating_spread, conflict };
std::string_view divergence_kind_name(DivergenceKind kind);  // "coverage_gap", ...

struct Divergence {
  DivergenceKind kind = DivergenceKind::low_rating;
  Severity severity = Severity::medium;
  std::vector<std::string> perspectives;  // for a spread: the max side, then the min side
  std::string description;                // one line
};
std::vector<Divergence> detect_divergences(const std::vector<Perspective>& perspectives);

// The ratings of the answered perspectives, kept as integers.
struct Average {
  int sum = 0;
  int count = 0;
  bool at_least_three() const { return count > 0 && sum >= 3 * count; }
  std::string two_decimals() const;  // "3.33"; "n/a" when nobody answered
  long long hundredths() const;      // rounded half up
};
Average average_rating(const std::vector<Perspective>& perspectives);

// What the caller knows about the round that changes an escalation.
struct Round {
  std::string id;                // "DISCUSS-002", or "" for none
  bool final_sign_off = false;   // a HIGH block always goes to a person
  bool already_revised = false;  // the one revision was spent
  // Perspectives not asked at all, each "name: why" (the record and the
  // result name them; they are no part of any rule).
  std::vector<std::string> left_out;
};

enum class Recommendation { proceed, revise, proceed_with_caution, escalate };
std::string_view recommendation_name(Recommendation r);  // "proceed-with-caution", ...

struct Consensus {
  bool reached = false;
  std::optional<Severity> severity;  // when blocked
  Recommendation recommendation = Recommendation::proceed;
  Average average;
  std::vector<std::string> failed;   // perspectives that did not answer
  std::vector<std::string> reasons;  // why blocked, one line each, in rule order
};
Consensus decide(const std::vector<Perspective>& perspectives,
                 const std::vector<Divergence>& divergences, const Round& round);

inline constexpr std::string_view kStopWords[] = {
    "a",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "been",
    "by",
    "for",
    "from",
    "has",
    "have",
    "in",
    "into",
    "is",
    "it",
    "its",
    "of",
    "on",
    "or",
    "should",
    "that",
    "the",
    "their",
    "there",
    "this",
    "to",
    "was",
    "were",
    "will",
    "with",
    // Words that only say something is absent.
    "absent",
    "lack",
    "lacks",
    "lacking",
    "missing",
    "no",
    "none",
    "not",
    "without",
};
std::vector<std::string> point_words(std::string_view point);  // sorted, unique
bool same_point(std::string_view a, std::string_view b);

enum class PointKind { strength, weakness, suggestion, missing_requirement };
std::string_view point_kind_name(PointKind kind);  // "strength", ..., "missing requirement"

struct Theme {
  PointKind kind = PointKind::weakness;
  std::string text;                       // the group's first point
  std::vector<std::string> perspectives;  // in order of appearance
};

struct ActionItem {
  Severity priority = Severity::low;
  PointKind source = PointKind::suggestion;
  std::string text;
  std::vector<std::string> perspectives;
};

struct Synthesis {
  std::vector<Theme> convergent;
  std::vector<Divergence> divergent;  // divergences, then conflicts
  std::vector<Theme> coverage_gaps;
  std::vector<ActionItem> actions;
};
Synthesis synthesize(const std::vector<Perspective>& perspectives,
                     const std::vector<Divergence>& divergences);

// Everything decided about one discussion.
struct Outcome {
  std::vector<Divergence> divergences;
  Consensus consensus;
  Synthesis synthesis;
};
Outcome discuss(const std::vector<Perspective>& perspectives, const Round& round);

// The discussion record, Markdown.
std::string render_record(const Round& round, const std::string& artifact,
                          const std::vector<Perspective>& perspectives, const Outcome& outcome);
// The verb's RESULT_JSON: verdict, severity, average, the first three
// action items and divergent views, recommendation, the record's path.
Json result_json(const Round& round, const std::string& artifact,
                 const std::vector<Perspective>& perspectives, const Outcome& outcome,
                 const std::string& record_path);

}  // namespace devgraph::discuss
