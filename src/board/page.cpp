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
  body { font: 14px/1.4 system-ui, sans-serif; margin: 0; color: #1d2330; background: #f6f7f9; }
  header { padding: 10px 16px; background: #1d2330; color: #fff; display: flex; gap: 16px;
           align-items: baseline; flex-wrap: wrap; }
  header h1 { font-size: 16px; margin: 0; }
  .pill { padding: 1px 8px; border-radius: 10px; background: #44506a; }
  .pill.live { background: #2f7d4a; } .pill.lost { background: #9b2d2d; }
  main { display: grid; grid-template-columns: minmax(320px, 1fr) minmax(320px, 1fr); gap: 16px;
         padding: 16px; }
  section { background: #fff; border: 1px solid #dde1e8; border-radius: 6px; padding: 8px 12px;
            overflow: auto; max-height: 80vh; }
  h2 { font-size: 14px; margin: 4px 0 8px; }
  table { border-collapse: collapse; width: 100%; }
  td, th { text-align: left; padding: 3px 6px; border-bottom: 1px solid #eef0f4;
           vertical-align: top; }
  #filter { width: 100%; box-sizing: border-box; margin-bottom: 6px; padding: 4px; }
  #log div { font-family: ui-monospace, monospace; font-size: 12px; white-space: pre-wrap;
             border-bottom: 1px solid #f0f1f4; }
</style>
</head>
<body>
<header>
  <h1>devgraph board</h1>
  <span id="run"></span>
  <span id="status" class="pill"></span>
  <span id="node"></span>
  <span id="stream" class="pill">connecting</span>
</header>
<main>
  <section>
    <h2>Bundles</h2>
    <input id="filter" placeholder="filter bundles and tasks">
    <table><thead><tr><th>bundle</th><th>status</th><th>node</th><th>title</th><th>PR or branch</th>
    </tr></thead><tbody id="bundles"></tbody></table>
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
function cell(row, value) { row.appendChild(text(document.createElement("td"), value)); }
let data = null, lastSeq = 0, pending = null;
function cursorNode(state, id) {
  const rt = (state.bundles_runtime || {})[id] || {};
  return rt.node || "";
}
function drawBundles() {
  const state = (data && data.state) || {};
  const want = $("filter").value.toLowerCase();
  const body = $("bundles");
  body.replaceChildren();
  for (const b of state.bundles || []) {
    const pr = b.pr && b.pr.url ? b.pr.url : (b.branch || "");
    const row = document.createElement("tr");
    const values = [b.id, b.status, cursorNode(state, b.id), b.title, pr];
    if (want && !values.join(" ").toLowerCase().includes(want)) continue;
    values.forEach((v) => cell(row, v));
    body.appendChild(row);
  }
}
function drawHeader() {
  const state = (data && data.state) || {};
  text($("run"), state.run_id || data.run_dir);
  text($("status"), state.status);
  text($("node"), state.node ? "at " + state.node : "");
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
async function load() {
  const r = await fetch("/data.json", { cache: "no-store" });
  data = await r.json();
  drawHeader();
  drawBundles();
}
function reload() {
  if (pending) return;
  pending = setTimeout(() => { pending = null; load().catch(() => {}); }, 100);
}
async function start() {
  const embedded = JSON.parse($("board-data").textContent);
  if (embedded) {  // a snapshot (devgraph board build): no server to ask
    data = embedded;
    drawHeader();
    drawBundles();
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
