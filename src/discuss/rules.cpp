#include "discuss/rules.h"

#include <algorithm>

#include "util/stem.h"
#include "util/text.h"

namespace devgraph::discuss {

std::string_view risk_level_name(RiskLevel level) {
  switch (level) {
    case RiskLevel::low:
      return "low";
    case RiskLevel::medium:
      return "medium";
    case RiskLevel::high:
      return "high";
    case RiskLevel::critical:
      return "critical";
  }
  return "low";
}

std::optional<RiskLevel> risk_level_from(std::string_view name) {
  for (auto level : {RiskLevel::low, RiskLevel::medium, RiskLevel::high, RiskLevel::critical})
    if (risk_level_name(level) == name) return level;
  return std::nullopt;
}

namespace {

Error bad_answer(const std::string& name, const std::string& what) {
  return fail(ErrorKind::usage, "perspective " + name + ": " + what);
}

std::string tidy(const std::string& text) {
  return squeeze_spaces(text);
}

Expected<std::vector<std::string>> point_list(const Json& answer, const std::string& name,
                                              const char* key) {
  std::vector<std::string> points;
  auto it = answer.find(key);
  if (it == answer.end()) return points;
  if (!it->is_array()) return bad_answer(name, std::string(key) + " must be an array of strings");
  for (size_t i = 0; i < it->size(); ++i) {
    const Json& item = (*it)[i];
    if (!item.is_string())
      return bad_answer(name, std::string(key) + "[" + std::to_string(i) +
                                  "] must be a string, got " + dump_py(item));
    std::string point = tidy(item.get<std::string>());
    if (!point.empty()) points.push_back(std::move(point));
  }
  return points;
}

}  // namespace

Expected<Perspective> parse_answer(const Json& answer, const std::string& name,
                                   const std::string& role,
                                   const std::vector<std::string>& reports) {
  if (!answer.is_object()) return bad_answer(name, "the answer must be a JSON object");
  Perspective p;
  p.name = name;
  p.role = role;
  p.reports = reports;
  auto rating = answer.find("rating");
  if (rating == answer.end()) return bad_answer(name, "rating is missing");
  if (!rating->is_number_integer() || rating->get<long long>() < 1 || rating->get<long long>() > 5)
    return bad_answer(name, "rating must be an integer from 1 to 5, got " + dump_py(*rating));
  p.rating = rating->get<int>();
  DG_TRY(p.strengths, point_list(answer, name, "strengths"));
  DG_TRY(p.weaknesses, point_list(answer, name, "weaknesses"));
  DG_TRY(p.suggestions, point_list(answer, name, "suggestions"));
  DG_TRY(p.missing_requirements, point_list(answer, name, "missing_requirements"));
  auto risk = answer.find("risk_level");
  if (risk != answer.end()) {
    auto level = risk->is_string() ? risk_level_from(risk->get<std::string>()) : std::nullopt;
    if (!level)
      return bad_answer(name,
                        "risk_level must be low, medium, high or critical, got " + dump_py(*risk));
    p.risk_level = level;
  }
  for (const auto& field : reports)
    if (!answer.contains(field)) return bad_answer(name, field + " is missing");
  return p;
}

Perspective failed_perspective(const std::string& name, const std::string& role,
                               const std::string& reason, const std::vector<std::string>& reports) {
  Perspective p;
  p.name = name;
  p.role = role;
  p.reports = reports;
  p.failed = true;
  p.failure = tidy(reason);
  return p;
}

std::string_view severity_name(Severity s) {
  switch (s) {
    case Severity::low:
      return "low";
    case Severity::medium:
      return "medium";
    case Severity::high:
      return "high";
  }
  return "low";
}

std::string_view severity_label(Severity s) {
  switch (s) {
    case Severity::low:
      return "LOW";
    case Severity::medium:
      return "MEDIUM";
    case Severity::high:
      return "HIGH";
  }
  return "LOW";
}

std::string_view divergence_kind_name(DivergenceKind kind) {
  switch (kind) {
    case DivergenceKind::coverage_gap:
      return "coverage_gap";
    case DivergenceKind::high_risk:
      return "high_risk";
    case DivergenceKind::low_rating:
      return "low_rating";
    case DivergenceKind::rating_spread:
      return "rating_spread";
    case DivergenceKind::conflict:
      return "conflict";
  }
  return "conflict";
}

std::vector<Divergence> detect_divergences(const std::vector<Perspective>& perspectives) {
  std::vector<Divergence> gaps, risks, low, spread;
  int max = 0, min = 6;
  for (const auto& p : perspectives) {
    if (p.failed) continue;
    max = std::max(max, p.rating);
    min = std::min(min, p.rating);
    if (!p.missing_requirements.empty())
      gaps.push_back(
          {DivergenceKind::coverage_gap,
           Severity::high,
           {p.name},
           p.name + " finds requirements missing: " + join(p.missing_requirements, "; ")});
    if (p.risk_level == RiskLevel::high || p.risk_level == RiskLevel::critical)
      risks.push_back({DivergenceKind::high_risk,
                       Severity::high,
                       {p.name},
                       p.name + " rates the risk " + std::string(risk_level_name(*p.risk_level))});
    if (p.rating <= 2)
      low.push_back({DivergenceKind::low_rating,
                     Severity::medium,
                     {p.name},
                     p.name + " rates it " + std::to_string(p.rating) + "/5"});
  }
  if (max - min >= 3) {
    Divergence d{DivergenceKind::rating_spread, Severity::medium, {}, ""};
    std::vector<std::string> high_side, low_side;
    for (const auto& p : perspectives) {
      if (p.failed) continue;
      if (p.rating == max) high_side.push_back(p.name);
      if (p.rating == min) low_side.push_back(p.name);
    }
    d.perspectives = high_side;
    d.perspectives.insert(d.perspectives.end(), low_side.begin(), low_side.end());
    d.description = "ratings range from " + std::to_string(min) + " (" + join(low_side, ", ") +
                    ") to " + std::to_string(max) + " (" + join(high_side, ", ") + ")";
    spread.push_back(std::move(d));
  }
  std::vector<Divergence> all;
  for (auto* group : {&gaps, &risks, &low, &spread})
    all.insert(all.end(), group->begin(), group->end());
  return all;
}

long long Average::hundredths() const {
  if (count == 0) return 0;
  // round(100 * sum / count), half up, in integers.
  return (200LL * sum + count) / (2LL * count);
}

std::string Average::two_decimals() const {
  if (count == 0) return "n/a";
  long long h = hundredths();
  std::string cents = std::to_string(h % 100);
  if (cents.size() < 2) cents = "0" + cents;
  return std::to_string(h / 100) + "." + cents;
}

Average average_rating(const std::vector<Perspective>& perspectives) {
  Average a;
  for (const auto& p : perspectives) {
    if (p.failed) continue;
    a.sum += p.rating;
    ++a.count;
  }
  return a;
}

std::string_view recommendation_name(Recommendation r) {
  switch (r) {
    case Recommendation::proceed:
      return "proceed";
    case Recommendation::revise:
      return "revise";
    case Recommendation::proceed_with_caution:
      return "proceed-with-caution";
    case Recommendation::escalate:
      return "escalate";
  }
  return "escalate";
}

Consensus decide(const std::vector<Perspective>& perspectives,
                 const std::vector<Divergence>& divergences, const Round& round) {
  Consensus c;
  c.average = average_rating(perspectives);
  bool gap = false, critical = false, high_risk = false, spread = false;
  bool failed_check = false;  // a failed perspective whose report could block
  int low_ratings = 0;
  for (const auto& p : perspectives) {
    if (p.failed) {
      c.failed.push_back(p.name);
      if (!p.reports.empty()) failed_check = true;
      continue;
    }
    if (p.rating <= 2) ++low_ratings;
    if (p.risk_level == RiskLevel::critical) critical = true;
    if (p.risk_level == RiskLevel::high) high_risk = true;
  }
  bool any_high = false;
  for (const auto& d : divergences) {
    if (d.severity == Severity::high) any_high = true;
    if (d.kind == DivergenceKind::coverage_gap) gap = true;
    if (d.kind == DivergenceKind::rating_spread) spread = true;
  }
  if (c.average.count == 0) c.reasons.push_back("no perspective answered");
  for (const auto& d : divergences)
    if (d.severity == Severity::high) c.reasons.push_back(d.description);
  if (c.average.count > 0 && !c.average.at_least_three())
    c.reasons.push_back("the average rating " + c.average.two_decimals() + " is under 3.00");
  for (const auto& name : c.failed) c.reasons.push_back(name + " did not answer");
  c.reached = c.reasons.empty() && !any_high;
  if (c.reached) return c;

  bool lone_low = low_ratings == 1 && c.average.count >= 2;
  Severity s = Severity::low;
  if (c.average.count == 0 || gap || critical || low_ratings >= 2 ||
      (low_ratings == 1 && !lone_low))
    s = Severity::high;
  else if (lone_low || spread || high_risk || failed_check)
    s = Severity::medium;
  c.severity = s;
  if (s == Severity::high)
    c.recommendation = (c.average.count == 0 || round.final_sign_off || round.already_revised)
                           ? Recommendation::escalate
                           : Recommendation::revise;
  else
    c.recommendation = Recommendation::proceed_with_caution;
  return c;
}

namespace {

bool stop_word(std::string_view word) {
  for (auto stop : kStopWords)
    if (stop == word) return true;
  return false;
}

bool word_byte(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c >= 0x80;
}

}  // namespace

std::vector<std::string> point_words(std::string_view point) {
  std::vector<std::string> words;
  std::string word;
  auto flush = [&] {
    if (!word.empty() && !stop_word(word)) words.push_back(word_stem(word));
    word.clear();
  };
  for (char ch : point) {
    auto c = static_cast<unsigned char>(ch);
    if (c >= 'A' && c <= 'Z') c = static_cast<unsigned char>(c - 'A' + 'a');
    if (word_byte(c))
      word += static_cast<char>(c);
    else
      flush();
  }
  flush();
  std::sort(words.begin(), words.end());
  words.erase(std::unique(words.begin(), words.end()), words.end());
  return words;
}

namespace {

bool same_words(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  if (a.empty() || b.empty()) return false;
  std::vector<std::string> both;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(both));
  size_t either = a.size() + b.size() - both.size();
  return 3 * both.size() >= 2 * either;
}

void add_name(std::vector<std::string>& names, const std::string& name) {
  if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
}

struct Group {
  Theme theme;
  std::vector<std::string> words;  // of the first point
  size_t first = 0;                // order of first appearance
};

// Adds a point to the first group of its kind whose first point it
// matches, else opens a group.
void group_point(std::vector<Group>& groups, PointKind kind, const std::string& text,
                 const std::string& perspective, size_t order) {
  auto words = point_words(text);
  for (auto& g : groups) {
    if (g.theme.kind == kind && same_words(g.words, words)) {
      add_name(g.theme.perspectives, perspective);
      return;
    }
  }
  groups.push_back({Theme{kind, text, {perspective}}, std::move(words), order});
}

std::vector<std::string> merged(std::vector<std::string> a, const std::vector<std::string>& b) {
  for (const auto& name : b) add_name(a, name);
  return a;
}

}  // namespace

bool same_point(std::string_view a, std::string_view b) {
  return same_words(point_words(a), point_words(b));
}

std::string_view point_kind_name(PointKind kind) {
  switch (kind) {
    case PointKind::strength:
      return "strength";
    case PointKind::weakness:
      return "weakness";
    case PointKind::suggestion:
      return "suggestion";
    case PointKind::missing_requirement:
      return "missing requirement";
  }
  return "suggestion";
}

Synthesis synthesize(const std::vector<Perspective>& perspectives,
                     const std::vector<Divergence>& divergences) {
  Synthesis s;
  std::vector<Group> groups, gaps;
  size_t order = 0;
  for (const auto& p : perspectives) {
    if (p.failed) continue;
    for (const auto& t : p.strengths) group_point(groups, PointKind::strength, t, p.name, order++);
    for (const auto& t : p.weaknesses) group_point(groups, PointKind::weakness, t, p.name, order++);
    for (const auto& t : p.suggestions)
      group_point(groups, PointKind::suggestion, t, p.name, order++);
    for (const auto& t : p.missing_requirements)
      group_point(gaps, PointKind::missing_requirement, t, p.name, order++);
  }

  std::vector<const Group*> shared;
  for (const auto& g : groups)
    if (g.theme.perspectives.size() >= 2) shared.push_back(&g);
  std::stable_sort(shared.begin(), shared.end(), [](const Group* a, const Group* b) {
    if (a->theme.perspectives.size() != b->theme.perspectives.size())
      return a->theme.perspectives.size() > b->theme.perspectives.size();
    if (a->first != b->first) return a->first < b->first;
    return a->theme.text < b->theme.text;
  });
  for (const auto* g : shared) s.convergent.push_back(g->theme);

  s.divergent = divergences;
  for (const auto& strength : groups) {
    if (strength.theme.kind != PointKind::strength) continue;
    for (const auto& weakness : groups) {
      if (weakness.theme.kind != PointKind::weakness) continue;
      if (!same_words(strength.words, weakness.words)) continue;
      auto names = merged(strength.theme.perspectives, weakness.theme.perspectives);
      if (names.size() < 2) continue;  // one perspective on both sides is not a disagreement
      s.divergent.push_back({DivergenceKind::conflict, Severity::low, names,
                             "a strength to " + join(strength.theme.perspectives, ", ") + " (\"" +
                                 strength.theme.text + "\"), a weakness to " +
                                 join(weakness.theme.perspectives, ", ") + " (\"" +
                                 weakness.theme.text + "\")"});
    }
  }

  for (const auto& g : gaps) s.coverage_gaps.push_back(g.theme);

  // Candidates in priority order; a later duplicate joins the earlier item.
  struct Candidate {
    ActionItem item;
    std::vector<std::string> words;
    size_t first;
  };
  std::vector<Candidate> items;
  size_t seq = 0;
  auto offer = [&](Severity priority, PointKind source, const std::string& text,
                   const std::string& name) {
    auto words = point_words(text);
    for (auto& c : items) {
      if (same_words(c.words, words)) {
        add_name(c.item.perspectives, name);
        return;
      }
    }
    items.push_back({ActionItem{priority, source, text, {name}}, std::move(words), seq++});
  };
  for (const auto& g : gaps)
    for (const auto& name : g.theme.perspectives)
      offer(Severity::high, PointKind::missing_requirement, g.theme.text, name);
  for (const auto& p : perspectives) {
    if (p.failed) continue;
    if (p.risk_level != RiskLevel::high && p.risk_level != RiskLevel::critical) continue;
    for (const auto& w : p.weaknesses) offer(Severity::high, PointKind::weakness, w, p.name);
  }
  for (const auto& p : perspectives) {
    if (p.failed || p.rating > 2) continue;
    for (const auto& t : p.suggestions) offer(Severity::medium, PointKind::suggestion, t, p.name);
    for (const auto& t : p.weaknesses) offer(Severity::medium, PointKind::weakness, t, p.name);
  }
  for (const auto& p : perspectives)
    if (!p.failed)
      for (const auto& t : p.suggestions) offer(Severity::low, PointKind::suggestion, t, p.name);
  for (const auto& p : perspectives)
    if (!p.failed)
      for (const auto& t : p.weaknesses) offer(Severity::low, PointKind::weakness, t, p.name);
  std::stable_sort(items.begin(), items.end(), [](const Candidate& a, const Candidate& b) {
    if (a.item.priority != b.item.priority) return a.item.priority > b.item.priority;
    if (a.item.perspectives.size() != b.item.perspectives.size())
      return a.item.perspectives.size() > b.item.perspectives.size();
    return a.first < b.first;
  });
  for (auto& c : items) s.actions.push_back(std::move(c.item));
  return s;
}

Outcome discuss(const std::vector<Perspective>& perspectives, const Round& round) {
  Outcome o;
  o.divergences = detect_divergences(perspectives);
  o.consensus = decide(perspectives, o.divergences, round);
  o.synthesis = synthesize(perspectives, o.divergences);
  return o;
}

namespace {

std::string topic(DivergenceKind kind) {
  std::string name(divergence_kind_name(kind));
  std::replace(name.begin(), name.end(), '_', ' ');
  return name;
}

std::string consensus_line(const Consensus& c) {
  if (c.reached) return "reached";
  return "blocked (" + std::string(severity_label(*c.severity)) +
         ", recommendation: " + std::string(recommendation_name(c.recommendation)) + ")";
}

}  // namespace

std::string render_record(const Round& round, const std::string& artifact,
                          const std::vector<Perspective>& perspectives, const Outcome& outcome) {
  const auto& c = outcome.consensus;
  const auto& s = outcome.synthesis;
  std::vector<std::string> names;
  for (const auto& p : perspectives) names.push_back(p.name);
  std::string out = "# Discussion Record";
  if (!round.id.empty()) out += ": " + round.id;
  out += "\n\n**Artifact**: " + artifact + "\n";
  out += "**Perspectives**: " + join(names, ", ") + "\n";
  if (!round.left_out.empty()) out += "**Left Out**: " + join(round.left_out, "; ") + "\n";
  out += "**Consensus**: " + consensus_line(c) + "\n";
  if (c.average.count == 0)
    out += "**Average Rating**: none (no perspective answered)";
  else
    out += "**Average Rating**: " + c.average.two_decimals() + "/5";
  if (!c.failed.empty() && c.average.count > 0)
    out += " (over " + std::to_string(c.average.count) + " of " +
           std::to_string(perspectives.size()) + " perspectives; " + join(c.failed, ", ") +
           " left out: no answer)";
  out += "\n";
  if (!c.reasons.empty()) {
    out += "\n## Blocked By\n";
    for (const auto& r : c.reasons) out += "- " + r + "\n";
  }
  if (!c.failed.empty()) {
    out += "\n## Failed Perspectives\n";
    for (const auto& p : perspectives)
      if (p.failed) out += "- **" + p.name + "**: " + p.failure + "\n";
  }
  out += "\n## Convergent Themes\n";
  if (s.convergent.empty()) out += "- none\n";
  for (const auto& t : s.convergent)
    out += "- " + t.text + " (" + std::string(point_kind_name(t.kind)) + "; " +
           join(t.perspectives, ", ") + ")\n";
  out += "\n## Divergent Views\n";
  if (s.divergent.empty()) out += "- none\n";
  for (const auto& d : s.divergent)
    out += "- **" + topic(d.kind) + "** (" + std::string(severity_name(d.severity)) +
           "): " + d.description + "\n";
  out += "\n## Coverage Gaps\n";
  if (s.coverage_gaps.empty()) out += "- none\n";
  for (const auto& g : s.coverage_gaps)
    out += "- " + g.text + " (" + join(g.perspectives, ", ") + ")\n";
  out += "\n## Action Items\n";
  if (s.actions.empty()) out += "- none\n";
  for (size_t i = 0; i < s.actions.size(); ++i) {
    const auto& a = s.actions[i];
    out += std::to_string(i + 1) + ". [" + std::string(severity_name(a.priority)) + "] " + a.text +
           " (" + std::string(point_kind_name(a.source)) + "; " + join(a.perspectives, ", ") +
           ")\n";
  }
  out += "\n## Ratings\n| Perspective | Role | Rating |\n|-------------|------|--------|\n";
  for (const auto& p : perspectives)
    out += "| " + p.name + " | " + p.role + " | " +
           (p.failed ? std::string("failed") : std::to_string(p.rating) + "/5") + " |\n";
  return out;
}

Json result_json(const Round& round, const std::string& artifact,
                 const std::vector<Perspective>& perspectives, const Outcome& outcome,
                 const std::string& record_path) {
  const auto& c = outcome.consensus;
  const auto& s = outcome.synthesis;
  Json r = Json::object();
  r["verdict"] = c.reached ? "consensus_reached" : "consensus_blocked";
  r["severity"] = c.severity ? Json(std::string(severity_label(*c.severity))) : Json(nullptr);
  r["average"] =
      c.average.count ? Json(static_cast<double>(c.average.hundredths()) / 100.0) : Json(nullptr);
  r["answered"] = c.average.count;
  r["perspectives"] = perspectives.size();
  r["failed"] = c.failed;
  if (!round.left_out.empty()) r["left_out"] = round.left_out;
  Json actions = Json::array();
  for (size_t i = 0; i < s.actions.size() && i < 3; ++i) actions.push_back(s.actions[i].text);
  r["action_items"] = std::move(actions);
  Json views = Json::array();
  for (size_t i = 0; i < s.divergent.size() && i < 3; ++i) {
    const auto& d = s.divergent[i];
    views.push_back({{"kind", std::string(divergence_kind_name(d.kind))},
                     {"severity", std::string(severity_name(d.severity))},
                     {"perspectives", d.perspectives},
                     {"description", d.description}});
  }
  r["divergences"] = std::move(views);
  r["recommendation"] = std::string(recommendation_name(c.recommendation));
  r["round"] = round.id;
  r["artifact"] = artifact;
  r["record"] = record_path;
  return r;
}

}  // namespace devgraph::discuss
