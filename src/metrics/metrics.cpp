#include "metrics/metrics.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <set>
#include <utility>

#include "util/clock.h"
#include "util/fs.h"
#include "util/passwd.h"
#include "util/token_usage.h"

namespace devgraph::metrics {
namespace {

constexpr const char* kDispatch = "PERSONA_DISPATCHED";
constexpr const char* kTaskCompleteAt = "advance_task";  // GRAPH.yaml lanes.task.complete_at
constexpr const char* kAwaitingHuman = "awaiting_human";

// Keys in first-seen order, as Python's dicts keep them.
template <class V>
class Ordered {
 public:
  V& operator[](const std::string& key) {
    auto it = index_.find(key);
    if (it != index_.end()) return items_[it->second].second;
    index_.emplace(key, items_.size());
    items_.emplace_back(key, V{});
    return items_.back().second;
  }
  bool contains(const std::string& key) const { return index_.count(key) > 0; }
  std::vector<std::pair<std::string, V>>& items() { return items_; }
  const std::vector<std::pair<std::string, V>>& items() const { return items_; }

 private:
  std::map<std::string, size_t> index_;
  std::vector<std::pair<std::string, V>> items_;
};

std::string_view trim(std::string_view s) {
  const char* ws = " \t\n\r\f\v";
  size_t b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

bool truthy(const Json& v) {
  switch (v.type()) {
    case Json::value_t::null:
    case Json::value_t::discarded:
      return false;
    case Json::value_t::boolean:
      return v.get<bool>();
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return v.get<long long>() != 0;
    case Json::value_t::number_float:
      return v.get<double>() != 0.0;
    default:
      return !v.empty();
  }
}

const Json& null_json() {
  static const Json n;
  return n;
}

// `object.get(key)`: the value, else null.
const Json& at(const Json& object, const char* key) {
  if (!object.is_object()) return null_json();
  auto it = object.find(key);
  return it == object.end() ? null_json() : *it;
}
bool has(const Json& object, const char* key) {
  return object.is_object() && object.contains(key);
}
Json get_or(const Json& object, const char* key, Json fallback) {
  return has(object, key) ? object[key] : std::move(fallback);
}

// `ev.get("detail") or {}`.
const Json& detail_of(const Json& event) {
  static const Json empty = Json::object();
  const Json& d = at(event, "detail");
  return d.is_object() && !d.empty() ? d : empty;
}

// The task ids an event names (task, tasks, parallel), first seen first.
std::vector<std::string> tasks_of(const Json& d) {
  std::vector<std::string> out;
  auto add = [&](const Json& t) {
    if (t.is_string() && std::find(out.begin(), out.end(), t.get<std::string>()) == out.end())
      out.push_back(t.get<std::string>());
  };
  add(at(d, "task"));
  for (const char* key : {"tasks", "parallel"})
    if (at(d, key).is_array())
      for (const auto& t : at(d, key)) add(t);
  return out;
}

std::string last_part(const std::string& key) {
  auto pos = key.rfind('/');
  return pos == std::string::npos ? key : key.substr(pos + 1);
}

double number(const Json& v, double fallback = 0.0) {
  return v.is_number() ? v.get<double>() : fallback;
}

double between(std::int64_t a, std::int64_t b) {
  return static_cast<double>(b - a) / 1e6;
}

std::string key_text(const Json& v) {
  return v.is_null() ? "null" : py_str(v);
}

// The persona a dispatch names, without version-2 qualifiers.
std::string persona_of(const Json& d) {
  std::string persona = "unknown";
  const Json& p = at(d, "persona");
  const Json& ps = at(d, "personas");
  if (truthy(p)) {
    persona = py_str(p);
  } else if (ps.is_array() || ps.is_object()) {
    persona.clear();
    bool first = true;
    if (ps.is_array()) {
      for (const auto& x : ps) persona += (first ? "" : ", ") + py_str(x), first = false;
    } else {
      for (auto it = ps.begin(); it != ps.end(); ++it)
        persona += (first ? "" : ", ") + it.key(), first = false;
    }
  }
  auto cut = persona.find(" (");
  if (cut != std::string::npos) persona.resize(cut);
  return std::string(trim(persona));
}

// The legacy (graph version 2) destinations of the task lane by event type.
const char* legacy_move(const std::string& type) {
  static const std::map<std::string, const char*> moves = {
      {"TASK_SCHEDULED", "write_tdd"},
      {"WAVE_SCHEDULED", "write_tdd"},
      {"TDD_RED_CONFIRMED", "implement"},
      {"IMPLEMENT_DONE", "verify"},
      {"IMPLEMENT_DONE_WITH_CONCERNS", "concern_triage"},
      {"IMPLEMENT_BLOCKED", "blocker_recovery"},
      {"BLOCKER_RECOVERY", "implement"},
      {"MALFORMED_RESULT", "blocker_recovery"},
      {"TEST_DONE", "verify"},
      {"TEST_DONE_WITH_CONCERNS", "concern_triage"},
      {"ADVERSARIAL_DONE", "commit_task"},
      {"VERIFY_DONE", "commit_task"},
      {"TASK_COMMITTED", "task_review"},
      {"REVIEW_FINDINGS", "repair_task"},
      {"REPAIR_DONE", "commit_repair"},
      {"REPAIR_COMMITTED", "task_review"},
      {"REVIEW_APPROVED", "advance_task"},
  };
  auto it = moves.find(type);
  return it == moves.end() ? nullptr : it->second;
}

std::string legacy_node(const std::string& node) {
  if (node == "test" || node == "adversarial_test") return "verify";
  return node;
}

struct Move {
  size_t index;
  std::string key;
  std::string dest;
  Json bundle;
};

std::vector<Move> task_moves(const std::vector<Json>& events, bool legacy) {
  std::vector<Move> moves;
  for (size_t i = 0; i < events.size(); ++i) {
    const Json& d = detail_of(events[i]);
    if (at(d, "lane_to").is_string() && truthy(at(d, "task"))) {
      std::string key = truthy(at(d, "cursor"))
                            ? py_str(at(d, "cursor"))
                            : py_str(at(d, "bundle")) + "/" + py_str(at(d, "task"));
      moves.push_back({i, key, d["lane_to"].get<std::string>(), at(d, "bundle")});
    } else if (legacy) {
      const std::string type = py_str(at(events[i], "type"));
      std::string target;
      if (const char* t = legacy_move(type)) target = t;
      if (type == "CONCERN_TRIAGED") {
        const Json& resume = at(d, "resume");
        target = at(d, "route") == "correctness_or_scope" ? "repair_task"
                 : truthy(resume)                         ? py_str(resume)
                                                          : "verify";
      }
      if (target.empty()) continue;
      for (const auto& t : tasks_of(d))
        moves.push_back({i, t, legacy_node(target), at(d, "bundle")});
    }
  }
  return moves;
}

Json stat_table(const Ordered<std::vector<double>>& samples) {
  struct Row {
    std::string key;
    Json stats;
    double total;
  };
  std::vector<Row> rows;
  for (const auto& [key, values] : samples.items()) {
    if (values.empty()) continue;
    double sum = 0;
    for (double v : values) sum += v;
    double total = py_round(sum, 1);
    rows.push_back(
        {key,
         Json{{"count", static_cast<long long>(values.size())},
              {"total_seconds", total},
              {"avg_seconds", py_round(sum / static_cast<double>(values.size()), 1)},
              {"max_seconds", py_round(*std::max_element(values.begin(), values.end()), 1)}},
         total});
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const Row& a, const Row& b) { return -a.total < -b.total; });
  Json out = Json::object();
  for (auto& r : rows) out[r.key] = std::move(r.stats);
  return out;
}

using Interval = std::pair<std::int64_t, std::int64_t>;

double union_seconds(std::vector<Interval> intervals) {
  std::sort(intervals.begin(), intervals.end());
  double total = 0;
  std::optional<Interval> current;
  for (const auto& [s, e] : intervals) {
    if (!current) {
      current = Interval{s, e};
    } else if (s <= current->second) {
      current->second = std::max(current->second, e);
    } else {
      total += between(current->first, current->second);
      current = Interval{s, e};
    }
  }
  if (current) total += between(current->first, current->second);
  return py_round(total, 1);
}

struct TaskRecord {
  Json bundle;
  std::string task;
  std::string started_at;
  std::int64_t started = 0;
  std::optional<std::string> completed_at;
  std::optional<std::int64_t> completed;
  std::optional<double> seconds;
  long long dispatches = 0;
  long long repairs = 0;
  Ordered<double> node_seconds;
};

Error bad_event(size_t i, const std::string& what) {
  return fail(ErrorKind::usage, "events.jsonl record " + std::to_string(i + 1) + ": " + what);
}

Expected<std::vector<std::int64_t>> event_times(const std::vector<Json>& events) {
  std::vector<std::int64_t> ts;
  ts.reserve(events.size());
  for (size_t i = 0; i < events.size(); ++i) {
    const Json& raw = at(events[i], "ts");
    if (!raw.is_string()) return bad_event(i, "no 'ts' time stamp");
    auto t = parse_timestamp(raw.get<std::string>());
    if (!t) return bad_event(i, "'ts' is not an ISO 8601 time: " + py_repr(raw));
    if (!at(events[i], "type").is_string()) return bad_event(i, "no 'type'");
    ts.push_back(t->micros);
  }
  return ts;
}

// Python's format(value, spec) for the specs the reports use: '<' or '>'
// alignment to `width` code points.
size_t code_points(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}
std::string left(const std::string& s, size_t width) {
  size_t n = code_points(s);
  return n >= width ? s : s + std::string(width - n, ' ');
}
std::string right(const std::string& s, size_t width) {
  size_t n = code_points(s);
  return n >= width ? s : std::string(width - n, ' ') + s;
}
std::string first_code_points(const std::string& s, size_t count) {
  size_t n = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) {
      if (n == count) return s.substr(0, i);
      ++n;
    }
  }
  return s;
}
std::string hms_of(const Json& v) {
  return hms(number(v));
}

void compact(std::string& out, const Json& v) {
  if (v.is_object()) {
    out.push_back('{');
    bool first = true;
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (!first) out.push_back(',');
      first = false;
      out += dump_py(Json(it.key()));
      out.push_back(':');
      compact(out, it.value());
    }
    out.push_back('}');
  } else if (v.is_array()) {
    out.push_back('[');
    bool first = true;
    for (const auto& item : v) {
      if (!first) out.push_back(',');
      first = false;
      compact(out, item);
    }
    out.push_back(']');
  } else {
    out += dump_py(v);
  }
}

std::string sort_key(const Json& session) {
  const Json& s = at(session, "started_at");
  return s.is_string() ? s.get<std::string>() : "";
}

std::string dollars(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "$%.4f", x);
  return buf;
}

std::string home_dir() {
  if (const char* h = std::getenv("HOME")) return h;
  return home_of_uid(::getuid()).value_or("/");
}

std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return names;
  while (dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") names.push_back(n);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string join_py(const std::string& dir, const std::string& name) {
  return dir == "." ? name : join_path(dir, name);
}

// pathlib's resolve(): symlinks followed where the path exists.
std::string resolved(const std::string& path) {
  if (char* real = ::realpath(path.c_str(), nullptr)) {
    std::string out = real;
    std::free(real);
    return out;
  }
  return absolute_path(path);
}

}  // namespace

std::optional<Instant> parse_timestamp(const std::string& s) {
  auto digits = [&](size_t pos, size_t n, int& out) {
    if (pos + n > s.size()) return false;
    out = 0;
    for (size_t i = pos; i < pos + n; ++i) {
      if (s[i] < '0' || s[i] > '9') return false;
      out = out * 10 + (s[i] - '0');
    }
    return true;
  };
  int y, mo, d, h = 0, mi = 0, sec = 0;
  if (!digits(0, 4, y) || s.size() < 10 || s[4] != '-' || !digits(5, 2, mo) || s[7] != '-' ||
      !digits(8, 2, d))
    return std::nullopt;
  if (mo < 1 || mo > 12 || d < 1 || d > 31) return std::nullopt;
  size_t pos = 10;
  long long micros = 0;
  if (pos < s.size()) {
    ++pos;  // any one separator, as fromisoformat takes it
    if (!digits(pos, 2, h)) return std::nullopt;
    pos += 2;
    if (pos < s.size() && s[pos] == ':') {
      if (!digits(pos + 1, 2, mi)) return std::nullopt;
      pos += 3;
      if (pos < s.size() && s[pos] == ':') {
        if (!digits(pos + 1, 2, sec)) return std::nullopt;
        pos += 3;
        if (pos < s.size() && (s[pos] == '.' || s[pos] == ',')) {
          size_t start = ++pos;
          while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') ++pos;
          size_t n = pos - start;
          if (n == 0) return std::nullopt;
          for (size_t k = 0; k < 6; ++k) micros = micros * 10 + (k < n ? s[start + k] - '0' : 0);
        }
      }
    }
  }
  if (h > 23 || mi > 59 || sec > 59) return std::nullopt;
  bool naive = true;
  long long offset = 0;
  if (pos < s.size()) {
    naive = false;
    if (s[pos] == 'Z' && pos + 1 == s.size()) {
      offset = 0;
    } else if (s[pos] == '+' || s[pos] == '-') {
      int oh, om = 0, os = 0;
      if (!digits(pos + 1, 2, oh)) return std::nullopt;
      size_t p = pos + 3;
      if (p < s.size()) {
        if (s[p] != ':' || !digits(p + 1, 2, om)) return std::nullopt;
        p += 3;
        if (p < s.size()) {
          if (s[p] != ':' || !digits(p + 1, 2, os)) return std::nullopt;
          p += 3;
        }
      }
      if (p != s.size() || oh > 23 || om > 59) return std::nullopt;
      offset = (oh * 3600LL + om * 60LL + os) * (s[pos] == '-' ? -1 : 1);
    } else {
      return std::nullopt;
    }
  }
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = sec;
  long long secs = static_cast<long long>(::timegm(&tm)) - offset;
  return Instant{secs * 1000000LL + micros, naive};
}

std::optional<std::string> compact_timestamp(const std::string& text) {
  auto t = parse_timestamp(text);
  if (!t) return std::nullopt;
  std::time_t secs = static_cast<std::time_t>(t->micros >= 0 ? t->micros / 1000000
                                                             : -((-t->micros + 999999) / 1000000));
  if (t->naive) {
    // Python's astimezone() takes a naive time as local time.
    std::tm wall{};
    ::gmtime_r(&secs, &wall);
    wall.tm_isdst = -1;
    secs = ::mktime(&wall);
  }
  std::tm utc{};
  ::gmtime_r(&secs, &utc);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &utc);
  return std::string(buf);
}

double py_round(double x, int digits) {
  if (!std::isfinite(x)) return x;
  char buf[512];
  std::snprintf(buf, sizeof buf, "%.*f", digits, x);
  return std::strtod(buf, nullptr);
}

std::string hms(double seconds) {
  long long secs = static_cast<long long>(std::nearbyint(seconds));
  auto floor_div = [](long long a, long long b) {
    long long q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
  };
  long long h = floor_div(secs, 3600);
  long long rem = secs - h * 3600;
  long long m = rem / 60, s = rem % 60;
  char buf[64];
  if (h)
    std::snprintf(buf, sizeof buf, "%lldh%02lldm", h, m);
  else if (m)
    std::snprintf(buf, sizeof buf, "%lldm%02llds", m, s);
  else
    std::snprintf(buf, sizeof buf, "%llds", s);
  return buf;
}

Expected<Json> compute_timing(const Json& state, const std::vector<Json>& events) {
  if (events.empty())
    return Json{
        {"wall_seconds", 0},       {"node_dwell", Json::object()},  {"personas", Json::object()},
        {"tasks", Json::object()}, {"concurrency", Json::object()}, {"counts", Json::object()}};
  DG_TRY(auto ts, event_times(events));
  const double wall = py_round(between(ts.front(), ts.back()), 1);
  const Json& version = at(state, "graph_version");
  const bool legacy = !truthy(version) || (version.is_number() && version.get<double>() < 3);

  Ordered<std::vector<double>> dwell;
  std::optional<std::pair<std::string, std::int64_t>> last_go;
  for (size_t i = 0; i < events.size(); ++i) {
    const Json& d = detail_of(events[i]);
    if (!has(d, "from") || !has(d, "to")) continue;
    if (last_go) dwell[last_go->first].push_back(between(last_go->second, ts[i]));
    last_go = std::make_pair(key_text(d["to"]), ts[i]);
  }

  Ordered<TaskRecord> tasks;
  std::map<std::string, std::pair<std::string, std::int64_t>> cursor_last;
  for (const Move& m : task_moves(events, legacy)) {
    const std::int64_t t = ts[m.index];
    const bool fresh = !tasks.contains(m.key);
    TaskRecord& rec = tasks[m.key];
    if (fresh) {
      rec.bundle = m.bundle;
      rec.task = last_part(m.key);
      rec.started_at = events[m.index]["ts"].get<std::string>();
      rec.started = t;
    }
    if (auto it = cursor_last.find(m.key); it != cursor_last.end()) {
      const double spent = between(it->second.second, t);
      rec.node_seconds[it->second.first] += spent;
      if (!legacy) dwell[it->second.first].push_back(spent);
    }
    cursor_last[m.key] = {m.dest, t};
    if (m.dest == "repair_task") ++rec.repairs;
    if (m.dest == kTaskCompleteAt || truthy(at(detail_of(events[m.index]), "cursor_complete"))) {
      rec.completed_at = events[m.index]["ts"].get<std::string>();
      rec.completed = t;
      rec.seconds = py_round(between(rec.started, t), 1);
    }
  }

  Ordered<std::vector<double>> persona_samples;
  std::vector<Interval> busy;
  for (size_t i = 0; i < events.size(); ++i) {
    if (events[i]["type"] != kDispatch) continue;
    const Json& d = detail_of(events[i]);
    const std::string persona = persona_of(d);
    const std::vector<std::string> mine = tasks_of(d);
    const std::set<std::string> my_tasks(mine.begin(), mine.end());
    const Json& handle = at(d, "agent_handle");
    for (size_t j = i + 1; j < events.size(); ++j) {
      if (events[j]["type"] == kDispatch) continue;
      const Json& nd = detail_of(events[j]);
      bool by_handle = truthy(handle) && at(nd, "agent_handle") == handle;
      bool by_task = false;
      for (const auto& t : tasks_of(nd)) by_task = by_task || my_tasks.count(t) > 0;
      bool by_node =
          !truthy(handle) && my_tasks.empty() && at(events[j], "node") == at(events[i], "node");
      if (!by_handle && !by_task && !by_node) continue;
      persona_samples[persona].push_back(between(ts[i], ts[j]));
      busy.emplace_back(ts[i], ts[j]);
      for (auto& [key, rec] : tasks.items())
        if (my_tasks.count(last_part(key)) || my_tasks.count(key)) ++rec.dispatches;
      break;
    }
  }

  std::vector<std::pair<std::int64_t, int>> points;
  double task_busy = 0;
  for (const auto& [key, rec] : tasks.items()) {
    std::int64_t end = rec.completed ? *rec.completed : ts.back();
    points.emplace_back(rec.started, 1);
    points.emplace_back(end, -1);
    task_busy += between(rec.started, end);
  }
  std::sort(points.begin(), points.end());
  long long peak = 0, cur = 0;
  for (const auto& p : points) peak = std::max(peak, cur += p.second);
  const double mean = wall != 0.0 ? py_round(task_busy / wall, 2) : 0.0;
  const double persona_busy = busy.empty() ? 0.0 : union_seconds(busy);
  const double only = wall - persona_busy;

  std::map<std::string, long long> types;
  long long transitions = 0;
  for (const auto& ev : events) {
    ++types[ev["type"].get<std::string>()];
    const Json& d = detail_of(ev);
    if (has(d, "to") || has(d, "lane_to")) ++transitions;
  }
  const Json& bundles = at(state, "bundles");
  const Json& m = at(state, "metrics");
  long long complete = 0;
  for (const auto& [key, rec] : tasks.items()) complete += rec.completed_at.has_value();
  Json counts = {
      {"events", static_cast<long long>(events.size())},
      {"transitions", transitions},
      {"dispatches", types[kDispatch]},
      {"bundles",
       static_cast<long long>(bundles.is_array() || bundles.is_object() ? bundles.size() : 0)},
      {"tasks", static_cast<long long>(tasks.items().size())},
      {"tasks_complete", complete},
      {"repair_cycles", get_or(m, "repair_cycles", 0)},
      {"review_cycles", get_or(m, "review_cycles", 0)},
      {"malformed_results", types["MALFORMED_RESULT"]},
      {"orchestrator_corrections", types["ORCHESTRATOR_CORRECTION"]},
      {"human_interruptions", get_or(m, "human_interruptions", 0)},
  };

  Json task_json = Json::object();
  for (auto& [key, rec] : tasks.items()) {
    auto& ns = rec.node_seconds.items();
    std::stable_sort(ns.begin(), ns.end(),
                     [](const auto& a, const auto& b) { return -a.second < -b.second; });
    Json node_seconds = Json::object();
    for (const auto& [node, secs] : ns) node_seconds[node] = py_round(secs, 1);
    task_json[key] = Json{{"bundle", rec.bundle},
                          {"task", rec.task},
                          {"started_at", rec.started_at},
                          {"completed_at", rec.completed_at ? Json(*rec.completed_at) : Json()},
                          {"seconds", rec.seconds ? Json(*rec.seconds) : Json()},
                          {"dispatches", rec.dispatches},
                          {"repairs", rec.repairs},
                          {"node_seconds", std::move(node_seconds)}};
  }
  return Json{{"wall_seconds", wall},
              {"counts", std::move(counts)},
              {"node_dwell", stat_table(dwell)},
              {"personas", stat_table(persona_samples)},
              {"tasks", std::move(task_json)},
              {"concurrency",
               {{"max_active_tasks", peak},
                {"mean_active_tasks", mean},
                {"persona_busy_seconds", persona_busy},
                {"orchestrator_only_seconds", py_round(only < 0.0 ? 0.0 : only, 1)}}}};
}

Json compute_costs(const std::vector<Json>& events) {
  struct Sum {
    long long results = 0;
    double cost = 0;
    std::optional<long long> tokens;
    TokenUsage usage;
    void add(double c, const Json& t, const TokenUsage& u) {
      ++results;
      cost += c;
      if (t.is_number_integer()) tokens = tokens.value_or(0) + t.get<long long>();
      usage += u;
    }
    Json json() const {
      return Json{{"results", results},
                  {"cost_usd", py_round(cost, 6)},
                  {"tokens", tokens ? Json(*tokens) : Json()},
                  {"usage", usage.to_json()}};
    }
  };
  std::map<std::string, std::pair<std::string, std::string>> dispatched;  // persona, bundle
  std::set<std::string> counted;
  Sum run;
  Ordered<Sum> personas, bundles;
  for (const auto& ev : events) {
    const Json& d = detail_of(ev);
    const Json& handle = at(d, "agent_handle");
    if (!handle.is_string()) continue;
    const std::string h = handle.get<std::string>();
    if (at(ev, "type") == kDispatch) {
      dispatched.emplace(h, std::make_pair(persona_of(d), json_str(d, "bundle")));
      continue;
    }
    if (!at(d, "cost_usd").is_number() || !counted.insert(h).second) continue;
    auto known = dispatched.find(h);
    std::string persona = at(d, "persona").is_string() ? persona_of(d)
                          : known != dispatched.end()  ? known->second.first
                                                       : "unknown";
    std::string bundle =
        json_str(d, "bundle", known != dispatched.end() ? known->second.second : "");
    const double cost = d["cost_usd"].get<double>();
    const Json& tokens = at(d, "tokens");
    // A detail written before results carried their usage has none.
    const TokenUsage usage = TokenUsage::from_json(at(d, "usage"));
    run.add(cost, tokens, usage);
    personas[persona].add(cost, tokens, usage);
    if (!bundle.empty()) bundles[bundle].add(cost, tokens, usage);
  }
  Json p = Json::object(), b = Json::object();
  for (const auto& [k, s] : personas.items()) p[k] = s.json();
  for (const auto& [k, s] : bundles.items()) b[k] = s.json();
  return Json{{"run", run.json()}, {"personas", std::move(p)}, {"bundles", std::move(b)}};
}

Expected<Json> compute_waiting(const std::vector<Json>& events) {
  struct Wait {
    double backoff = 0;
    long long backoffs = 0;
    double human = 0;
  };
  Ordered<Wait> bundles;
  std::vector<Interval> pauses;
  std::map<std::string, std::pair<std::string, std::int64_t>> waiting;  // cursor -> bundle, since
  if (events.empty()) return Json{{"provider_pause_seconds", 0.0}, {"bundles", Json::object()}};
  DG_TRY(auto ts, event_times(events));
  for (size_t i = 0; i < events.size(); ++i) {
    const Json& d = detail_of(events[i]);
    const std::string topic = json_str(d, "topic");
    if (events[i]["type"] == "NOTE" && topic == "cli_error_backoff") {
      Wait& w = bundles[json_str(d, "bundle", "-")];
      w.backoff += number(at(d, "delay_s"));
      ++w.backoffs;
    }
    if (events[i]["type"] == "NOTE" && topic == "limits" && at(d, "paused_until").is_string()) {
      if (auto until = parse_timestamp(d["paused_until"].get<std::string>())) {
        std::int64_t end = std::min(until->micros, ts.back());
        if (end > ts[i]) pauses.emplace_back(ts[i], end);
      }
    }
    if (!at(d, "lane_to").is_string()) continue;
    std::string cursor = truthy(at(d, "cursor")) ? py_str(at(d, "cursor"))
                         : truthy(at(d, "task"))
                             ? json_str(d, "bundle") + "/" + py_str(at(d, "task"))
                             : json_str(d, "bundle");
    if (auto it = waiting.find(cursor); it != waiting.end()) {
      bundles[it->second.first].human += between(it->second.second, ts[i]);
      waiting.erase(it);
    }
    if (d["lane_to"] == kAwaitingHuman) waiting[cursor] = {json_str(d, "bundle", "-"), ts[i]};
  }
  for (const auto& [cursor, w] : waiting) bundles[w.first].human += between(w.second, ts.back());
  Json b = Json::object();
  for (const auto& [k, w] : bundles.items())
    b[k] = Json{{"backoff_seconds", py_round(w.backoff, 1)},
                {"backoffs", w.backoffs},
                {"human_seconds", py_round(w.human, 1)}};
  return Json{{"provider_pause_seconds", pauses.empty() ? 0.0 : union_seconds(pauses)},
              {"bundles", std::move(b)}};
}

std::string session_name(const std::string& run_dir, const Json& state) {
  const std::string dir = py_path(run_dir, false);
  const std::string parent = dirname_of(dir);
  if (basename_of(parent) == "runs") {
    const std::string home = dirname_of(parent);
    return basename_of(dirname_of(home)) + "-" + basename_of(home);
  }
  const Json repo = get_or(state, "repo", "unknown");
  if (!repo.is_string()) return "unknown";
  std::string name = basename_of(py_path(repo.get<std::string>(), false));
  return name.empty() || name == "." || name == "/" ? "unknown" : name;
}

Expected<Json> build_session(const std::string& run_dir, const Json& state,
                             const std::vector<Json>& events,
                             const std::optional<std::string>& name,
                             const std::string& recorded_at) {
  DG_TRY(Json timing, compute_timing(state, events));
  DG_TRY(Json waiting, compute_waiting(events));
  Json bundles = Json::array();
  const Json& state_bundles = at(state, "bundles");
  if (state_bundles.is_array()) {
    for (const auto& b : state_bundles) {
      Json tasks = Json::array();
      const Json& bt = at(b, "tasks");
      if (bt.is_array())
        for (const auto& t : bt)
          tasks.push_back(
              Json{{"id", at(t, "id")},
                   {"title", get_or(t, "title", "")},
                   {"deps", get_or(t, "deps", get_or(t, "depends_on", Json::array()))}});
      bundles.push_back(Json{{"id", at(b, "id")},
                             {"branch", at(b, "branch")},
                             {"status", at(b, "status")},
                             {"tasks", std::move(tasks)}});
    }
  }
  Json s = Json::object();
  s["schema"] = kSchema;
  s["recorded_at"] = recorded_at;
  s["run_id"] = get_or(state, "run_id", basename_of(py_path(run_dir, false)));
  s["name"] = name && !name->empty() ? *name : session_name(run_dir, state);
  s["run_dir"] = run_dir;
  s["repo"] = at(state, "repo");
  s["default_branch"] = at(state, "default_branch");
  s["delivery"] = at(state, "delivery");
  s["graph_version"] = get_or(state, "graph_version", 2);
  s["status"] = at(state, "status");
  s["node"] = at(state, "node");
  s["started_at"] = events.empty() ? at(state, "started_at") : events.front()["ts"];
  s["ended_at"] = events.empty() ? at(state, "updated_at") : events.back()["ts"];
  for (const char* k : {"wall_seconds", "counts", "node_dwell", "personas", "tasks", "concurrency"})
    s[k] = timing[k];
  s["capacity"] = at(state, "capacity");
  s["handoffs"] = get_or(state, "handoffs", 0);
  s["costs"] = compute_costs(events);
  s["waiting"] = std::move(waiting);
  Json script = Json::array();
  for (const auto& e : events) script.push_back(e);
  s["replay"] = Json{{"bundles", std::move(bundles)},
                     {"tasks_runtime", get_or(state, "tasks_runtime", Json::object())},
                     {"bundles_runtime", get_or(state, "bundles_runtime", Json::object())},
                     {"prs", get_or(state, "prs", Json::array())},
                     {"events", std::move(script)}};
  return s;
}

Expected<std::string> session_filename(const Json& session) {
  const Json& started = at(session, "started_at");
  auto stamp = started.is_string() ? compact_timestamp(started.get<std::string>()) : std::nullopt;
  if (!stamp)
    return fail(ErrorKind::usage,
                "the run has no readable start time (started_at " + py_repr(started) + ")");
  return py_str(at(session, "name")) + "-" + *stamp + ".jsonl";
}

std::string merged_file(const std::vector<Json>& existing, const Json& session) {
  std::vector<const Json*> kept;
  for (const auto& s : existing)
    if (at(s, "run_id") != at(session, "run_id")) kept.push_back(&s);
  kept.push_back(&session);
  std::stable_sort(kept.begin(), kept.end(),
                   [](const Json* a, const Json* b) { return sort_key(*a) < sort_key(*b); });
  std::string out;
  for (const Json* s : kept) {
    compact(out, *s);
    out.push_back('\n');
  }
  return out;
}

Expected<std::string> format_report(const Json& session) {
  auto need = [&](const Json& obj, const char* key) -> Expected<const Json*> {
    if (!has(obj, key))
      return fail(ErrorKind::usage, std::string("not a session record: no '") + key + "'");
    return &obj[key];
  };
  DG_TRY(const Json* run_id, need(session, "run_id"));
  DG_TRY(const Json* name, need(session, "name"));
  DG_TRY(const Json* wall, need(session, "wall_seconds"));
  DG_TRY(const Json* c, need(session, "counts"));
  DG_TRY(const Json* cc, need(session, "concurrency"));
  DG_TRY(const Json* dwell, need(session, "node_dwell"));
  DG_TRY(const Json* personas, need(session, "personas"));
  DG_TRY(const Json* tasks, need(session, "tasks"));
  std::map<std::string, std::string> n;
  for (const char* k : {"bundles", "tasks_complete", "tasks", "dispatches", "repair_cycles",
                        "review_cycles", "malformed_results", "orchestrator_corrections"}) {
    DG_TRY(const Json* v, need(*c, k));
    n[k] = py_str(*v);
  }
  std::vector<std::string> lines;
  lines.push_back("session " + py_str(*run_id) + "  (" + py_str(*name) + ", graph v" +
                  py_str(at(session, "graph_version")) + ", " + py_str(at(session, "status")) +
                  ")");
  lines.push_back("  " + py_str(at(session, "started_at")) + " -> " +
                  py_str(at(session, "ended_at")) + "   wall " + hms_of(*wall));
  lines.push_back("  bundles " + n["bundles"] + "  tasks " + n["tasks_complete"] + "/" +
                  n["tasks"] + " complete  dispatches " + n["dispatches"] + "  repairs " +
                  n["repair_cycles"] + "  reviews " + n["review_cycles"] + "  malformed " +
                  n["malformed_results"] + "  corrections " + n["orchestrator_corrections"]);
  lines.push_back("  concurrency: peak " + py_str(at(*cc, "max_active_tasks")) + " tasks, mean " +
                  py_str(at(*cc, "mean_active_tasks")) + "; persona busy " +
                  hms_of(get_or(*cc, "persona_busy_seconds", 0)) + ", orchestrator-only " +
                  hms_of(get_or(*cc, "orchestrator_only_seconds", 0)));
  const Json& cap = at(session, "capacity");
  if (truthy(cap)) {
    std::string counters;
    const Json& cs = at(cap, "counters");
    if (cs.is_object())
      for (auto it = cs.begin(); it != cs.end(); ++it)
        counters += (counters.empty() ? "" : ", ") + it.key() + " " + py_str(it.value());
    lines.push_back("  orchestrator capacity: tier " + py_str(at(cap, "tier")) + " (" + counters +
                    "); handoffs " + py_str(get_or(session, "handoffs", 0)));
  }
  lines.push_back("");
  lines.push_back("  " + left("node", 26) + right("visits", 7) + right("total", 9) +
                  right("avg", 8) + right("max", 8));
  for (auto it = dwell->begin(); it != dwell->end(); ++it) {
    const Json& s = it.value();
    lines.push_back("  " + left(it.key(), 26) + right(py_str(at(s, "count")), 7) +
                    right(hms_of(at(s, "total_seconds")), 9) +
                    right(hms_of(at(s, "avg_seconds")), 8) +
                    right(hms_of(at(s, "max_seconds")), 8));
  }
  lines.push_back("");
  lines.push_back("  " + left("persona", 34) + right("runs", 5) + right("total", 9) +
                  right("avg", 8) + right("max", 8));
  for (auto it = personas->begin(); it != personas->end(); ++it) {
    const Json& s = it.value();
    lines.push_back("  " + left(first_code_points(it.key(), 34), 34) +
                    right(py_str(at(s, "count")), 5) + right(hms_of(at(s, "total_seconds")), 9) +
                    right(hms_of(at(s, "avg_seconds")), 8) +
                    right(hms_of(at(s, "max_seconds")), 8));
  }
  if (truthy(*tasks)) {
    lines.push_back("");
    lines.push_back("  " + left("task", 22) + right("duration", 9) + right("repairs", 8) +
                    "  slowest node");
    std::vector<std::pair<std::string, const Json*>> rows;
    for (auto it = tasks->begin(); it != tasks->end(); ++it)
      rows.emplace_back(it.key(), &it.value());
    auto secs = [](const Json* t) {
      const Json& s = at(*t, "seconds");
      return truthy(s) ? number(s) : 0.0;
    };
    std::stable_sort(rows.begin(), rows.end(), [&](const auto& a, const auto& b) {
      return -secs(a.second) < -secs(b.second);
    });
    for (const auto& [key, t] : rows) {
      const Json& ns = at(*t, "node_seconds");
      std::string slow_node;
      Json slow_secs = 0;
      if (ns.is_object() && !ns.empty()) {
        slow_node = ns.begin().key();
        slow_secs = ns.begin().value();
      }
      const Json& s = at(*t, "seconds");
      lines.push_back("  " + left(key, 22) + right(s.is_null() ? "open" : hms_of(s), 9) +
                      right(py_str(at(*t, "repairs")), 8) + "  " + slow_node + " " +
                      hms_of(slow_secs));
    }
  }
  // devgraph's additions, after everything the reference prints.
  const Json& costs = at(session, "costs");
  if (costs.is_object()) {
    auto tokens = [](const Json& v) { return v.is_null() ? std::string("-") : py_str(v); };
    lines.push_back("");
    lines.push_back("  " + left("cost by persona", 34) + right("runs", 5) + right("cost", 11) +
                    right("tokens", 10));
    const Json& ps = at(costs, "personas");
    if (ps.is_object())
      for (auto it = ps.begin(); it != ps.end(); ++it)
        lines.push_back("  " + left(first_code_points(it.key(), 34), 34) +
                        right(py_str(at(it.value(), "results")), 5) +
                        right(dollars(number(at(it.value(), "cost_usd"))), 11) +
                        right(tokens(at(it.value(), "tokens")), 10));
    const Json& waits = at(at(session, "waiting"), "bundles");
    const Json& bs = at(costs, "bundles");
    std::vector<std::string> keys;
    for (const Json* m : {&bs, &waits})
      if (m->is_object())
        for (auto it = m->begin(); it != m->end(); ++it)
          if (std::find(keys.begin(), keys.end(), it.key()) == keys.end()) keys.push_back(it.key());
    lines.push_back("");
    lines.push_back("  " + left("bundle", 22) + right("runs", 5) + right("cost", 11) +
                    right("tokens", 10) + right("back-off", 10) + right("human", 8));
    for (const auto& k : keys) {
      const Json& b = at(bs, k.c_str());
      const Json& w = at(waits, k.c_str());
      lines.push_back(
          "  " + left(k, 22) + right(py_str(get_or(b, "results", 0)), 5) +
          right(dollars(number(at(b, "cost_usd"))), 11) + right(tokens(at(b, "tokens")), 10) +
          right(hms_of(at(w, "backoff_seconds")), 10) + right(hms_of(at(w, "human_seconds")), 8));
    }
    const Json& run = at(costs, "run");
    lines.push_back("");
    lines.push_back("  run cost " + dollars(number(at(run, "cost_usd"))) + " over " +
                    py_str(get_or(run, "results", 0)) + " persona results, tokens " +
                    tokens(at(run, "tokens")) + ", provider pause " +
                    hms_of(at(at(session, "waiting"), "provider_pause_seconds")));
    // The tokens part by part, once any persona result reported them.
    bool any_usage = false;
    if (ps.is_object())
      for (auto it = ps.begin(); it != ps.end(); ++it)
        any_usage = any_usage || !TokenUsage::from_json(at(it.value(), "usage")).empty();
    if (any_usage) {
      auto row = [&](const std::string& who, const Json& sum) {
        const Json& u = at(sum, "usage");
        std::string line = "  " + left(first_code_points(who, 22), 22);
        for (const char* key : {"input", "cache_read", "cache_write", "output", "reasoning"})
          line += right(tokens(at(u, key)), 12);
        return line;
      };
      lines.push_back("");
      lines.push_back("  " + left("tokens by persona", 22) + right("input", 12) +
                      right("cache read", 12) + right("cache write", 12) + right("output", 12) +
                      right("reasoning", 12));
      for (auto it = ps.begin(); it != ps.end(); ++it) lines.push_back(row(it.key(), it.value()));
      lines.push_back(row("run", run));
    }
  }
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) out += (i ? "\n" : "") + lines[i];
  return out;
}

std::string format_sessions(const std::vector<Json>& sessions) {
  std::string out = left("run_id", 26) + left("started", 22) + right("wall", 8) +
                    right("tasks", 7) + right("peak", 6) + "  status";
  for (const auto& s : sessions) {
    const Json& c = at(s, "counts");
    const Json& started = at(s, "started_at");
    std::string start = truthy(started) ? first_code_points(py_str(started), 19) : "";
    out += "\n" + left(py_str(get_or(s, "run_id", "")), 26) + left(start, 22) +
           right(hms_of(get_or(s, "wall_seconds", 0)), 8) +
           right(py_str(get_or(c, "tasks_complete", 0)), 3) + "/" +
           left(py_str(get_or(c, "tasks", 0)), 3) +
           right(py_str(get_or(at(s, "concurrency"), "max_active_tasks", 0)), 6) + "  " +
           py_str(at(s, "status"));
  }
  return out;
}

Expected<Run> load_run(const std::string& run_dir) {
  const std::string state_path = join_path(run_dir, "state.json");
  if (!is_directory(run_dir)) return fail(ErrorKind::not_found, "no run directory at " + run_dir);
  if (!path_exists(state_path))
    return fail(ErrorKind::not_found, run_dir + " is not a run directory (no state.json)");
  DG_TRY(std::string text, read_file(state_path));
  auto state = parse_json(text, state_path);
  if (!state) return fail(ErrorKind::usage, state.error().message);
  if (!state->is_object()) return fail(ErrorKind::usage, state_path + " is not a JSON object");
  Run run{std::move(*state), {}};
  const std::string events_path = join_path(run_dir, "events.jsonl");
  if (path_exists(events_path)) {
    DG_TRY(auto events, load_sessions(events_path));
    run.events = std::move(events);
  }
  return run;
}

Expected<std::vector<Json>> load_sessions(const std::string& path) {
  std::vector<Json> out;
  if (!path_exists(path)) return out;
  DG_TRY(std::string text, read_file(path));
  size_t line_no = 0, pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    ++line_no;
    std::string_view line = trim(std::string_view(text).substr(pos, end - pos));
    pos = end + 1;
    if (line.empty()) continue;
    auto j = parse_json(line, path + " line " + std::to_string(line_no));
    if (!j) return fail(ErrorKind::usage, j.error().message);
    if (!j->is_object())
      return fail(ErrorKind::usage,
                  path + " line " + std::to_string(line_no) + " is not a JSON object");
    out.push_back(std::move(*j));
  }
  return out;
}

Expected<Json> pick_session(const std::vector<Json>& sessions, const std::string& path,
                            const std::optional<std::string>& run_id) {
  if (sessions.empty()) return fail("no sessions recorded in " + path);
  if (!run_id) {
    const Json* best = &sessions.front();
    for (const auto& s : sessions)
      if (sort_key(s) > sort_key(*best)) best = &s;
    return *best;
  }
  Json known = Json::array();
  for (const auto& s : sessions) {
    if (at(s, "run_id") == *run_id) return s;
    known.push_back(at(s, "run_id"));
  }
  return fail(ErrorKind::not_found,
              "run " + py_repr(*run_id) + " is not in " + path + "; known: " + py_repr(known));
}

Expected<std::vector<Json>> load_sessions_matching(const std::string& spec) {
  const std::string p = py_path(spec, true);
  std::vector<std::string> files;
  if (is_directory(p)) {
    for (const auto& n : names_in(p))
      if (ends_with(n, ".jsonl")) files.push_back(join_py(p, n));
  } else if (path_exists(p)) {
    files.push_back(p);
  } else {
    std::string parent = dirname_of(p);
    if (parent.empty()) parent = ".";
    const std::string prefix = basename_of(p) + "-";
    for (const auto& n : names_in(parent))
      if (n.size() >= prefix.size() + 6 && n.compare(0, prefix.size(), prefix) == 0 &&
          ends_with(n, ".jsonl"))
        files.push_back(join_py(parent, n));
    const std::string legacy = join_py(parent, basename_of(p) + ".jsonl");
    if (path_exists(legacy)) files.push_back(legacy);
  }
  std::vector<Json> sessions;
  for (const auto& f : files) {
    DG_TRY(auto some, load_sessions(f));
    for (auto& s : some) sessions.push_back(std::move(s));
  }
  std::stable_sort(sessions.begin(), sessions.end(),
                   [](const Json& a, const Json& b) { return sort_key(a) < sort_key(b); });
  return sessions;
}

std::string default_metrics_dir() {
  const char* over = std::getenv("DEVELOP_METRICS_DIR");
  if (over && *over) return py_path(over, true);
  const char* root = std::getenv("AI_ROOT");
  std::string base = root ? py_path(root, true) : join_path(home_dir(), ".ai");
  return join_py(base, "metrics/develop");
}

Expected<std::string> record(const std::string& run_dir, const std::optional<std::string>& name,
                             const std::optional<std::string>& metrics_dir) {
  const std::string dir = resolved(py_path(run_dir, true));
  DG_TRY(Run run, load_run(dir));
  DG_TRY(Json session,
         build_session(dir, run.state, run.events, name, iso_utc(system_clock().wall())));
  DG_TRY(std::string file, session_filename(session));
  const std::string out_dir = metrics_dir ? py_path(*metrics_dir, false) : default_metrics_dir();
  const std::string path = join_py(out_dir, file);
  DG_TRY(auto existing, load_sessions(path));
  DG_CHECK(make_directories(out_dir));
  DG_CHECK(write_file_atomic(path, merged_file(existing, session)));
  return path;
}

std::string py_path(const std::string& path, bool expand_user) {
  std::string p = path;
  if (expand_user && !p.empty() && p[0] == '~') {
    size_t slash = p.find('/');
    std::string user = p.substr(1, slash == std::string::npos ? std::string::npos : slash - 1);
    std::optional<std::string> home = user.empty() ? home_dir() : home_of_user(user);
    if (home) p = *home + (slash == std::string::npos ? "" : p.substr(slash));
  }
  const bool absolute = !p.empty() && p[0] == '/';
  std::string out;
  size_t pos = 0;
  while (pos <= p.size()) {
    size_t end = p.find('/', pos);
    if (end == std::string::npos) end = p.size();
    std::string part = p.substr(pos, end - pos);
    if (!part.empty() && part != ".") out += (out.empty() ? "" : "/") + part;
    pos = end + 1;
  }
  if (absolute) return "/" + out;
  return out.empty() ? "." : out;
}

}  // namespace devgraph::metrics
