#include "board/page.h"

namespace devgraph::board {

namespace {

// Every value from the run goes through text() (textContent), so a title
// holding markup shows as the characters it is.
constexpr const char* kPage = R"PAGE(<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>devgraph board</title>
<style>
  body { font: 13px/1.4 system-ui, sans-serif; margin: 0; color: #1d2330; background: #f6f7f9; }
  header { padding: 8px 16px; background: #1d2330; color: #fff; display: flex; gap: 14px;
           align-items: baseline; flex-wrap: wrap; }
  header h1 { font-size: 15px; margin: 0; }
  .pill { padding: 1px 8px; border-radius: 10px; background: #44506a; }
  .pill.live { background: #2f7d4a; } .pill.lost { background: #9b2d2d; }
  main { display: grid; grid-template-columns: minmax(360px, 3fr) minmax(300px, 2fr); gap: 12px;
         padding: 12px; }
  section { background: #fff; border: 1px solid #dde1e8; border-radius: 6px; padding: 6px 10px;
            overflow: auto; max-height: 70vh; }
  section.wide { grid-column: 1 / -1; max-height: none; }
  h2 { font-size: 13px; margin: 4px 0 6px; }
  table { border-collapse: collapse; width: 100%; }
  td, th { text-align: left; padding: 2px 6px; border-bottom: 1px solid #eef0f4; vertical-align: top; }
  .lane { display: flex; gap: 6px; align-items: stretch; margin: 4px 0; flex-wrap: wrap; }
  .lane b { width: 90px; flex: none; }
  .node { border: 1px solid #cfd5df; border-radius: 4px; padding: 2px 6px; min-width: 80px; }
  .node .name { font-size: 11px; color: #5a6478; }
  .tok { display: inline-block; margin: 1px; padding: 0 4px; border-radius: 3px; font-size: 11px;
         color: #fff; cursor: pointer; }
  .tok.orchestrator { background: #1d2330; } .tok.bundle { background: #2f5fa8; }
  .tok.task { background: #3d8a5a; } .tok.waiting_human { background: #b0462c; }
  .tok.complete { opacity: 0.45; }
  details { border-bottom: 1px solid #eef0f4; padding: 2px 0; }
  summary { cursor: pointer; }
  summary span { margin-right: 10px; }
  .muted { color: #6b7486; }
  #filter { width: 60%; box-sizing: border-box; padding: 3px; }
  .bar { position: relative; height: 12px; background: #f0f2f6; margin: 1px 0; }
  .span { position: absolute; top: 0; height: 12px; min-width: 2px; }
  .span.persona { background: #2f5fa8; } .span.backoff { background: #d08b1e; }
  .span.pause { background: #9b2d2d; } .span.human { background: #b0462c; }
  #log div { font-family: ui-monospace, monospace; font-size: 12px; white-space: pre-wrap;
             border-bottom: 1px solid #f0f1f4; }
  .trace td:nth-child(3) { font-weight: 600; }
</style>
</head>
<body>
<header>
  <h1>devgraph board</h1>
  <span id="run"></span>
  <span id="status" class="pill"></span>
  <span id="node"></span>
  <span>bundles <b id="bundles-total">0</b></span>
  <span>tasks <b id="tasks-total">0</b></span>
  <span>running <b id="running">0</b></span>
  <span>cost <b id="cost"></b></span>
  <span>tokens <b id="tokens"></b></span>
  <span id="stream" class="pill">connecting</span>
</header>
<main>
  <section class="wide">
    <h2>Lanes</h2>
    <div id="lanes"></div>
  </section>
  <section>
    <h2>Bundles</h2>
    <input id="filter" placeholder="filter bundles and tasks by id or title">
    <select id="status-filter"><option value="">every status</option></select>
    <div id="bundles"></div>
  </section>
  <section>
    <h2>Decision trace <span id="trace-of" class="muted"></span></h2>
    <input id="trace-issue" placeholder="issue number" size="10">
    <table class="trace"><tbody id="trace"></tbody></table>
  </section>
  <section class="wide">
    <h2>Timeline <span class="muted">persona runs (blue), back-offs (amber), provider pauses and
    waits for a person (red)</span></h2>
    <div id="timeline"></div>
  </section>
  <section>
    <h2>Costs</h2>
    <table><thead><tr><th>persona</th><th>results</th><th>cost (USD)</th><th>tokens</th><th>input</th><th>cache read</th><th>cache write</th><th>output</th><th>reasoning</th></tr>
    </thead><tbody id="costs"></tbody></table>
  </section>
  <section>
    <h2>Events <span id="count"></span></h2>
    <div id="log"></div>
  </section>
</main>
<script id="board-data" type="application/json">null</script>
<script>
"use strict";
const $ = (id) => document.getElementById(id);
function text(el, value) { el.textContent = value == null ? "" : String(value); return el; }
function make(tag, value, cls) {
  const el = document.createElement(tag);
  if (value !== undefined) text(el, value);
  if (cls) el.className = cls;
  return el;
}
let data = null, lastSeq = 0, pending = null, snapshot = false, selected = null;
const opened = new Set();
function ms(ts) { const t = Date.parse(ts); return isNaN(t) ? null : t; }
function asOf() { return snapshot ? ms(view().as_of) : Date.now(); }
function elapsed(start, end) {
  const a = ms(start); if (a == null) return "";
  const b = end ? ms(end) : asOf(); if (b == null) return "";
  const s = Math.max(0, Math.round((b - a) / 1000));
  return s >= 3600 ? Math.floor(s / 3600) + "h" + String(Math.floor(s % 3600 / 60)).padStart(2, "0") + "m"
       : s >= 60 ? Math.floor(s / 60) + "m" + String(s % 60).padStart(2, "0") + "s" : s + "s";
}
function view() { return (data && data.view) || { lanes: [], bundles: [], timeline: [], traces: {} }; }
function safeUrl(u) { return typeof u === "string" && /^https?:\/\//.test(u) ? u : null; }
function drawHeader() {
  const state = (data && data.state) || {}, v = view(), t = v.totals || {};
  text($("run"), state.run_id || data.run_dir);
  text($("status"), state.status);
  text($("node"), state.node ? "at " + state.node : "");
  text($("bundles-total"), t.bundles || 0);
  text($("tasks-total"), t.tasks || 0);
  text($("running"), t.running_personas || 0);
  text($("cost"), t.cost_usd == null ? "-" : "$" + Number(t.cost_usd).toFixed(4));
  text($("tokens"), t.tokens == null ? "-" : t.tokens);
}
function drawLanes() {
  const box = $("lanes"); box.replaceChildren();
  for (const lane of view().lanes) {
    const row = make("div", undefined, "lane");
    row.appendChild(make("b", lane.name));
    for (const n of lane.nodes) {
      const node = make("div", undefined, "node");
      node.appendChild(make("div", n.name, "name"));
      const toks = n.tokens || [];
      for (const tok of toks.slice(0, 24)) {
        const chip = make("span", tok.id, "tok " + tok.kind + " " + (tok.status || ""));
        chip.title = tok.kind + " " + tok.id + " (" + (tok.status || "") + ")";
        chip.addEventListener("click", () => selectBundle(String(tok.id).split("/")[0]));
        node.appendChild(chip);
      }
      if (toks.length > 24) node.appendChild(make("span", "+" + (toks.length - 24) + " more", "muted"));
      row.appendChild(node);
    }
    box.appendChild(row);
  }
}
function matches(want, values) {
  return !want || values.some((x) => String(x == null ? "" : x).toLowerCase().includes(want));
}
function drawBundles() {
  const want = $("filter").value.toLowerCase(), status = $("status-filter").value;
  const box = $("bundles"); box.replaceChildren();
  const statuses = new Set();
  for (const b of view().bundles) {
    statuses.add(b.status);
    if (status && b.status !== status) continue;
    const bundleHit = matches(want, [b.id, b.title, b.branch, (b.issues || []).join(" ")]);
    const taskHits = b.tasks.filter((t) => matches(want, [t.id, b.id + "/" + t.id, t.title]));
    if (!bundleHit && taskHits.length === 0) continue;
    const d = make("details");
    d.dataset.bundle = b.id;
    d.open = opened.has(b.id) || (!!want && taskHits.length > 0 && !bundleHit);
    d.addEventListener("toggle", () => { if (d.open) opened.add(b.id); else opened.delete(b.id); });
    const s = make("summary");
    s.appendChild(make("span", b.id));
    s.appendChild(make("span", b.status));
    s.appendChild(make("span", b.node || "", "muted"));
    s.appendChild(make("span", b.title));
    s.appendChild(make("span", elapsed(b.start, b.end), "muted"));
    if (b.cost && b.cost.cost_usd != null) s.appendChild(make("span", "$" + Number(b.cost.cost_usd).toFixed(4), "muted"));
    const url = safeUrl(b.pr_url);
    if (url) { const a = make("a", url); a.href = url; a.rel = "noreferrer"; s.appendChild(a); }
    else if (b.branch) s.appendChild(make("span", b.branch, "muted"));
    const traceLink = make("a", "trace"); traceLink.href = "#";
    traceLink.addEventListener("click", (e) => { e.preventDefault(); selectBundle(b.id); });
    s.appendChild(traceLink);
    d.appendChild(s);
    if (b.parked_reason) d.appendChild(make("div", "parked: " + b.parked_reason, "muted"));
    if (b.waiting) d.appendChild(make("div", "waited: back-off " + b.waiting.backoff_seconds + " s (" +
      b.waiting.backoffs + "), for a person " + b.waiting.human_seconds + " s", "muted"));
    const table = make("table"), body = make("tbody");
    for (const t of b.tasks) {
      const row = make("tr");
      row.dataset.task = b.id + "/" + t.id;
      if (want && !bundleHit && !taskHits.includes(t)) row.hidden = true;
      for (const v of [t.id, t.title, t.node, t.status, elapsed(t.start, t.end),
        t.personas.map((p) => p.persona + (p.end ? " " + elapsed(p.start, p.end) : " running")).join(", ")])
        row.appendChild(make("td", v));
      body.appendChild(row);
    }
    table.appendChild(body); d.appendChild(table);
    box.appendChild(d);
  }
  const sel = $("status-filter");
  if (sel.options.length - 1 !== statuses.size) {
    const keep = sel.value; sel.replaceChildren(make("option", "every status"));
    sel.options[0].value = "";
    for (const st of statuses) { const o = make("option", st); o.value = st; sel.appendChild(o); }
    sel.value = keep;
  }
}
function selectBundle(id) { selected = { bundle: id }; drawTrace(); }
function drawTrace() {
  const body = $("trace"); body.replaceChildren();
  const traces = view().traces || {};
  let entries = [];
  if (selected && selected.issue) {
    const it = (traces.issues || {})[selected.issue];
    text($("trace-of"), "issue #" + selected.issue + (it && it.bundle ? " (bundle " + it.bundle + ")" : ""));
    if (it) entries = it.entries.concat(((traces.bundles || {})[it.bundle]) || []);
  } else if (selected && selected.bundle) {
    text($("trace-of"), "bundle " + selected.bundle);
    entries = ((traces.bundles || {})[selected.bundle]) || [];
  } else {
    text($("trace-of"), "(pick a bundle or an issue)");
  }
  for (const e of entries) {
    const row = make("tr");
    for (const v of [e.seq, String(e.ts || "").slice(11, 19), e.kind, e.what, e.evidence])
      row.appendChild(make("td", v));
    row.title = e.ts || "";
    body.appendChild(row);
  }
}
function drawTimeline() {
  const box = $("timeline"); box.replaceChildren();
  const spans = view().timeline || [];
  if (!spans.length) return;
  let lo = Infinity, hi = -Infinity;
  const end = (s) => s.end ? ms(s.end) : s.seconds != null ? ms(s.start) + s.seconds * 1000 : asOf();
  for (const s of spans) { lo = Math.min(lo, ms(s.start)); hi = Math.max(hi, end(s)); }
  const width = Math.max(1, hi - lo);
  const rows = new Map();
  for (const s of spans) {
    const key = s.bundle || "run";
    if (!rows.has(key)) rows.set(key, []);
    rows.get(key).push(s);
  }
  const table = make("table"), body = make("tbody");
  let shown = 0;
  for (const [key, list] of rows) {
    if (++shown > 200) { body.appendChild(make("tr", "+" + (rows.size - 200) + " more bundles (filter to see them)")); break; }
    const row = make("tr");
    row.appendChild(make("td", key));
    const cell = make("td"); cell.style.width = "85%";
    const bar = make("div", undefined, "bar");
    for (const s of list) {
      const el = make("div", undefined, "span " + s.kind);
      const a = ms(s.start), b = end(s);
      el.style.left = (100 * (a - lo) / width) + "%";
      el.style.width = (100 * Math.max(0, b - a) / width) + "%";
      el.title = s.kind + " " + (s.label || "") + (s.task ? " " + s.task : "") + " " + elapsed(s.start, s.end) +
        (s.reason ? ": " + s.reason : "");
      bar.appendChild(el);
    }
    cell.appendChild(bar); row.appendChild(cell); body.appendChild(row);
  }
  table.appendChild(body); box.appendChild(table);
}
function drawCosts() {
  const body = $("costs"); body.replaceChildren();
  const c = view().costs || {};
  const rows = Object.entries(c.personas || {});
  if (c.run) rows.push(["run", c.run]);
  for (const [name, v] of rows) {
    const row = make("tr");
    const u = v.usage || {}, n = (x) => x == null ? "-" : x;
    for (const x of [name, v.results, v.cost_usd, n(v.tokens), n(u.input), n(u.cache_read),
                     n(u.cache_write), n(u.output), n(u.reasoning)]) row.appendChild(make("td", x));
    body.appendChild(row);
  }
}
function addEvent(e) {
  const line = document.createElement("div");
  const d = e.detail || {};
  const about = d.cursor || d.bundle || d.pr || "";
  text(line, [e.seq, e.ts, e.type, e.node, about].filter((x) => x !== undefined && x !== "")
    .join("  "));
  line.dataset.seq = e.seq;
  const log = $("log");
  log.insertBefore(line, log.firstChild);
  while (log.childElementCount > 1000) log.removeChild(log.lastChild);
  text($("count"), "(" + e.seq + ")");
}
function drawAll() {
  drawHeader(); drawLanes(); drawBundles(); drawTrace(); drawTimeline(); drawCosts();
  document.body.dataset.ready = "1";
}
async function load() {
  const r = await fetch("/data.json", { cache: "no-store" });
  data = await r.json();
  drawAll();
}
function reload() {
  if (pending) return;
  pending = setTimeout(() => { pending = null; load().catch(() => {}); }, 250);
}
async function start() {
  const embedded = JSON.parse($("board-data").textContent);
  if (embedded) {  // a snapshot (devgraph board build): no server to ask
    snapshot = true;
    data = embedded;
    drawAll();
    for (const e of data.events || []) addEvent(e);
    text($("stream"), "snapshot");
    return;
  }
  await load();
  for (const e of data.events || []) addEvent(e);
  lastSeq = data.event_seq || 0;
  const stream = new EventSource("/events?last_event_id=" + lastSeq);
  stream.addEventListener("open", () => { text($("stream"), "live").className = "pill live"; });
  stream.addEventListener("error", () => { text($("stream"), "reconnecting").className = "pill lost"; });
  stream.addEventListener("event", (m) => {
    const e = JSON.parse(m.data);
    if (e.seq <= lastSeq) return;
    lastSeq = e.seq;
    addEvent(e);
    reload();
  });
}
$("filter").addEventListener("input", drawBundles);
$("status-filter").addEventListener("change", drawBundles);
$("trace-issue").addEventListener("change", () => {
  const n = $("trace-issue").value.replace(/^#/, "").trim();
  selected = n ? { issue: n } : null; drawTrace();
});
start().catch((err) => text($("stream"), "error: " + err));
</script>
</body>
</html>
)PAGE";

}  // namespace

const std::string& board_page() {
  static const std::string page = kPage;
  return page;
}

std::string board_snapshot_page(const Json& data) {
  // JSON inside a script element: every '<' escaped, so nothing in the
  // data can close the element; the page parses it as JSON, never as code.
  std::string json = dump_py(data);
  std::string safe;
  safe.reserve(json.size());
  for (char c : json) {
    if (c == '<')
      safe += "\\u003c";
    else
      safe.push_back(c);
  }
  std::string page = board_page();
  const std::string slot = "<script id=\"board-data\" type=\"application/json\">null</script>";
  auto at = page.find(slot);
  const size_t open = slot.find('>') + 1;
  page.replace(at + open, 4, safe);
  return page;
}

}  // namespace devgraph::board
