#include "bundle/dispatch.h"

#include "util/text.h"

#include <cmath>
#include <sstream>

#include "lane/routes.h"
#include "util/clock.h"
#include "util/fs.h"
#include "util/unsynced_files.h"

namespace devgraph::bundle {
namespace {

std::string subject(const BundleLayout& layout, const std::optional<std::string>& task,
                    const std::string& persona) {
  return layout.bundle + (task ? "/" + *task : "") + "/" + persona;
}

}  // namespace

PersonaResult PersonaResult::from_json(Json raw) {
  PersonaResult r;
  if (!raw.is_object()) raw = Json::object();
  r.status = json_str(raw, "status");
  r.summary = json_str(raw, "summary");
  r.concerns = json_str_list(raw, "concerns");
  r.artifacts = json_str_list(raw, "artifacts");
  r.blockers = json_str_list(raw, "blockers");
  r.missing_context = json_str_list(raw, "missing_context");
  if (raw.contains("findings") && raw["findings"].is_array()) r.findings = raw["findings"];
  r.raw = std::move(raw);
  return r;
}

bool PersonaResult::has_blocker(std::string_view name) const {
  for (const auto& b : blockers)
    if (b == name) return true;
  return false;
}

std::vector<std::string> PersonaResult::finding_files() const {
  std::vector<std::string> out;
  for (const auto& f : findings) {
    std::string file = json_str(f, "file", json_str(f, "path"));
    out.push_back(file);
  }
  return out;
}

Json PersonaResult::detail() const {
  Json d{{"agent_handle", handle},
         {"persona", persona},
         {"status", status},
         {"cost_usd", cost_usd},
         {"duration_ms", duration_ms},
         {"session_id", session_id.empty() ? Json() : Json(session_id)},
         {"summary", clip(summary, 300)}};
  if (tokens) d["tokens"] = *tokens;
  if (!usage.empty()) d["usage"] = usage.to_json();
  return d;
}

PersonaDispatch::PersonaDispatch(Launcher& launcher, Journal& journal, const BundleLayout& layout,
                                 CrashPoints& crash, agents::LaunchRequest base,
                                 std::function<int(const std::optional<std::string>&)> urgency)
    : launcher_(launcher),
      journal_(journal),
      layout_(layout),
      crash_(crash),
      base_(std::move(base)),
      urgency_(std::move(urgency)) {}

std::optional<PersonaResult> PersonaDispatch::recorded(const Visit& v) const {
  auto j = load_json_file(layout_.result(v.persona, v.task));
  if (!j || !j->is_object()) return std::nullopt;
  if (json_str(*j, "node") != v.node || j->value("cursor_moves", -1LL) != v.moves)
    return std::nullopt;
  PersonaResult r = PersonaResult::from_json((*j)["result"]);
  r.persona = v.persona;
  r.task = v.task;
  r.node = v.node;
  r.moves = v.moves;
  r.handle = json_str(*j, "handle");
  r.outcome = json_str(*j, "outcome", "result");
  r.session_id = json_str(*j, "session_id");
  r.cost_usd = j->value("cost_usd", 0.0);
  r.duration_ms = j->value("duration_ms", 0LL);
  if (auto k = j->find("tool_calls"); k != j->end() && k->is_number_integer())
    r.tool_calls = k->get<int>();
  // A file saved before results kept their tokens has none.
  r.tokens = token_count(*j, "tokens");
  if (auto u = j->find("usage"); u != j->end()) r.usage = TokenUsage::from_json(*u);
  r.reused = true;
  return r;
}

Expected<std::uint64_t> PersonaDispatch::launch(const Visit& v, const std::string& dispatch) {
  agents::LaunchRequest req = base_;
  req.persona = v.persona;
  req.task = v.task;
  req.dispatch = dispatch;
  req.output_path = layout_.output(v.persona, v.task);
  req.model = v.model;
  req.effort = v.effort;
  crash_.reach("launch", subject(layout_, v.task, v.persona));
  DG_TRY(auto id, launcher_.launch(req));
  live_[id] = v;
  return id;
}

Expected<std::optional<PersonaResult>> PersonaDispatch::take(LaunchEvent ev) {
  using K = LaunchEvent::Kind;
  Json task = ev.task ? Json(*ev.task) : Json();
  auto malformed = [&] {
    return journal_.event(lane::event::kMalformedResult, Json{{"persona", ev.persona},
                                                              {"bundle", layout_.bundle},
                                                              {"task", task},
                                                              {"agent_handle", ev.handle},
                                                              {"reason", clip(ev.detail, 300)}});
  };
  if (ev.kind == K::interrupted) {
    stop(ev.signal);
    return std::optional<PersonaResult>();
  }
  // A pause is the launcher's to honour; a woken descriptor its own.
  if (ev.kind == K::paused || ev.kind == K::woken) return std::optional<PersonaResult>();
  if (ev.kind == K::launched) {
    Json d = {{"persona", ev.persona},
              {"bundle", layout_.bundle},
              {"agent_handle", ev.handle},
              {"headless", true}};
    if (ev.task) d["task"] = *ev.task;
    DG_CHECK(journal_.event(lane::event::kPersonaDispatched, d));
    return std::optional<PersonaResult>();
  }
  // A clean exit without a result is recorded at the resume, before it, as
  // the reference records it, whether or not the resume then answers;
  // without a resume, at the completion.
  if (ev.kind == K::resuming) {
    DG_CHECK(malformed());
    return std::optional<PersonaResult>();
  }
  if (ev.kind == K::backoff) {
    DG_CHECK(journal_.event(lane::event::kNote,
                            Json{{"topic", "cli_error_backoff"},
                                 {"persona", ev.persona},
                                 {"bundle", layout_.bundle},
                                 {"task", task},
                                 {"agent_handle", ev.handle},
                                 {"attempt", ev.attempt},
                                 {"delay_s", static_cast<double>(ev.delay_ms) / 1000.0},
                                 {"error", clip(ev.detail, 300)}}));
    return std::optional<PersonaResult>();
  }
  if (ev.outcome == "malformed_result" && !ev.resumed) DG_CHECK(malformed());
  return std::optional<PersonaResult>(complete(std::move(ev)));
}

PersonaResult PersonaDispatch::complete(LaunchEvent ev) {
  Visit v{ev.persona, ev.task, "", 0};
  if (auto it = live_.find(ev.id); it != live_.end()) {
    v = it->second;
    live_.erase(it);
  }
  // Diagnostic-grade files (util/unsynced_files.h): a result lost to a
  // crash (or to a full disk, logged) is produced again by a new launch,
  // never half-used.
  auto not_written = [&](const Status& st) {
    if (!st) journal_.log("file_not_written", Json{{"error", st.error().message}});
  };
  // A withdrawn launch never ran: no ledger line, no result file.
  const bool withdrawn = ev.outcome == kOutcomeWithdrawn;
  if (!withdrawn) {
    not_written(make_directories(v.task ? layout_.task_dir(*v.task) : layout_.dir()));
    Json line = {{"handle", ev.handle}, {"persona", ev.persona}, {"cost_usd", ev.cost_usd}};
    if (ev.tokens) line["tokens"] = *ev.tokens;
    not_written(append_file(layout_.ledger(), dump_py(line) + "\n"));
  }
  bool stopped = ev.outcome == "interrupted" || withdrawn;
  Json rec = Json::object();
  rec["result"] = ev.result;
  rec["handle"] = ev.handle;
  rec["session_id"] = ev.session_id.empty() ? Json() : Json(ev.session_id);
  rec["cost_usd"] = ev.cost_usd;
  rec["duration_ms"] = ev.duration_ms;
  rec["recorded_at"] = iso_utc(system_clock().wall());
  rec["outcome"] = ev.outcome;
  rec["node"] = v.node;
  rec["cursor_moves"] = v.moves;
  if (ev.tool_calls) rec["tool_calls"] = *ev.tool_calls;
  if (ev.tokens) rec["tokens"] = *ev.tokens;
  if (!ev.usage.empty()) rec["usage"] = ev.usage.to_json();
  if (!stopped)
    not_written(replace_file(layout_.result(v.persona, v.task), dump_py(rec, 2) + "\n"));
  if (!withdrawn) crash_.reach("saved", subject(layout_, v.task, v.persona));
  PersonaResult r = PersonaResult::from_json(std::move(ev.result));
  r.id = ev.id;
  r.persona = v.persona;
  r.task = v.task;
  r.node = v.node;
  r.moves = v.moves;
  r.handle = ev.handle;
  r.session_id = ev.session_id;
  r.outcome = ev.outcome;
  r.cost_usd = ev.cost_usd;
  r.duration_ms = ev.duration_ms;
  r.resumed = ev.resumed;
  r.tool_calls = ev.tool_calls;
  r.tokens = ev.tokens;
  r.usage = ev.usage;
  return r;
}

Expected<std::optional<PersonaResult>> PersonaDispatch::next() {
  // Wait for the first completion, then take whatever else has happened.
  while (arrived_.empty()) {
    if (launcher_.outstanding() == 0) return std::optional<PersonaResult>();
    auto ev = launcher_.next();
    if (!ev) return std::optional<PersonaResult>();
    DG_TRY(auto r, take(std::move(*ev)));
    if (r) arrived_.push_back(std::move(*r));
  }
  while (auto ev = launcher_.poll()) {
    DG_TRY(auto r, take(std::move(*ev)));
    if (r) arrived_.push_back(std::move(*r));
  }
  size_t best = 0;
  for (size_t i = 1; i < arrived_.size(); ++i)
    if (urgency_(arrived_[i].task) > urgency_(arrived_[best].task)) best = i;
  PersonaResult r = std::move(arrived_[best]);
  arrived_.erase(arrived_.begin() + static_cast<std::ptrdiff_t>(best));
  return std::optional<PersonaResult>(std::move(r));
}

Expected<PersonaResult> PersonaDispatch::wait_for(std::uint64_t id) {
  while (true) {
    for (size_t i = 0; i < arrived_.size(); ++i)
      if (arrived_[i].id == id) {
        PersonaResult r = std::move(arrived_[i]);
        arrived_.erase(arrived_.begin() + static_cast<std::ptrdiff_t>(i));
        return r;
      }
    auto ev = launcher_.next();
    if (!ev) return fail("launch " + std::to_string(id) + " never completed");
    DG_TRY(auto r, take(std::move(*ev)));
    if (r) arrived_.push_back(std::move(*r));
  }
}

void PersonaDispatch::stop(int signal) {
  if (stop_signal_ != 0) return;
  stop_signal_ = signal;
  journal_.log("stopping", Json{{"signal", signal}, {"outstanding", launcher_.outstanding()}});
  launcher_.stop_all();
}

std::pair<double, int> PersonaDispatch::ledger_sum() const {
  return ledger_totals(layout_.ledger());
}

std::pair<double, int> ledger_totals(const std::string& ledger_path) {
  LedgerTotals t = ledger_usage(ledger_path);
  return {t.cost_usd, t.persona_runs};
}

LedgerTotals ledger_usage(const std::string& ledger_path) {
  LedgerTotals t;
  auto text = read_file(ledger_path);
  if (!text) return t;
  double cost = 0;
  std::istringstream in(*text);
  std::string line;
  while (std::getline(in, line)) {
    auto j = parse_json(line, "ledger");
    if (!j || !j->is_object()) continue;  // a torn last line of a killed driver
    if (auto c = j->find("cost_usd"); c != j->end() && c->is_number()) cost += c->get<double>();
    if (auto k = j->find("tokens"); k != j->end() && k->is_number_integer())
      t.tokens = t.tokens.value_or(0) + k->get<long long>();
    ++t.persona_runs;
  }
  t.cost_usd = static_cast<double>(std::llround(cost * 10000.0)) / 10000.0;
  return t;
}

}  // namespace devgraph::bundle
