// The board server's memory (VmRSS and VmHWM from /proc/PID/status) on a
// run of 1,000 tasks: idle, then with 10 real Chromium pages open while
// the run records 20 more events, for `devgraph board serve` and, in the
// same run, the reference's dashboard.py serving the same directory
// (whose pages poll /data.json every 2 s). The run is made by
// tests/support/make_board_run.py; the pages are driven by the browser
// tests' tooling (tests/browser/: `npm ci` there, and Debian's chromium).
//
// With 10 pages open, devgraph's figure is read once every page shows the
// last event; the reference's once every page has polled three times
// after the last event was recorded.
//
// usage: node bench/board_memory.mjs BUILD_DIR [REFERENCE_DIR]
// REFERENCE_DIR is the reference's checkout (its runtime/dashboard.py), or
// DEVGRAPH_REFERENCE_DIR; without either only devgraph is measured.
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";

const [build, refArg] = process.argv.slice(2);
if (!build) {
  console.error("usage: node bench/board_memory.mjs BUILD_DIR [REFERENCE_DIR]");
  process.exit(2);
}
process.env.DEVGRAPH_BIN = path.resolve(build, "devgraph");
const refDir = refArg || process.env.DEVGRAPH_REFERENCE_DIR || "";
const dashboard = refDir ? path.join(refDir, "runtime", "dashboard.py") : "";
if (dashboard && !existsSync(dashboard)) {
  console.error(`board_memory: no runtime/dashboard.py in ${refDir}`);
  process.exit(2);
}
const board = await import("../tests/browser/board.mjs");
const kPages = 10, kEvents = 20;
const running = [];  // every server started, stopped at the end whatever happens

function memory(pid) {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = (key) => Number(status.match(new RegExp(`^${key}:\\s+(\\d+) kB`, "m"))[1]);
  return { rss: kib("VmRSS"), hwm: kib("VmHWM") };
}

const mib = (kib) => (kib / 1024).toFixed(1);

// The reference's server: its URL is on the first line it prints.
function startReference(runDir) {
  const child = spawn("python3", [dashboard, "serve", runDir, "--port", "0"],
    { stdio: ["ignore", "pipe", "ignore"] });
  const exited = new Promise((resolve) => child.on("exit", resolve));
  return new Promise((resolve, reject) => {
    let out = "";
    exited.then((code) => reject(new Error(`dashboard.py exited (${code})`)));
    child.stdout.on("data", (d) => {
      out += d;
      const m = out.match(/http:\/\/127\.0\.0\.1:\d+\//);
      const stop = () => { child.kill("SIGTERM"); return exited; };
      if (m) resolve({ url: m[0], pid: child.pid, stop });
    });
  });
}

async function appendEvents(runDir) {
  for (let i = 0; i < kEvents; ++i) {
    await board.checkpoint(runDir, "event", "--event", "NOTE", "--detail",
      JSON.stringify({ text: `bench ${i}` }));
  }
}

async function measureDevgraph(browser, runDir, lastSeq) {
  const server = await board.serve(runDir);
  running.push(server);
  const idle = memory(server.pid);
  const pages = [];
  for (let i = 0; i < kPages; ++i) {
    const page = await browser.newPage();
    await page.goto(server.url);
    await board.until(page, "live", () => document.getElementById("stream")?.textContent
      .trim() === "live", undefined, 20000);
    pages.push(page);
  }
  await appendEvents(runDir);
  const want = lastSeq + kEvents;
  for (const page of pages) {
    await board.until(page, `event ${want}`, (s) => document.querySelector(
      `#log [data-seq="${s}"]`) !== null, want, 20000);
  }
  const open = memory(server.pid);
  for (const page of pages) await page.close();
  await server.stop();
  return { idle, open };
}

async function measureReference(browser, runDir) {
  const server = await startReference(runDir);
  running.push(server);
  const idle = memory(server.pid);
  const polls = [];
  const pages = [];
  for (let i = 0; i < kPages; ++i) {
    const page = await browser.newPage();
    const n = { count: 0 };
    page.on("response", (r) => { if (r.url().endsWith("/data.json") && r.ok()) n.count++; });
    await page.goto(server.url);
    pages.push(page);
    polls.push(n);
  }
  await appendEvents(runDir);
  // Three polls of every page after the last event: each has drawn it.
  const after = polls.map((n) => n.count + 3);
  await Promise.all(pages.map((page, i) => new Promise((resolve) => {
    const check = () => { if (polls[i].count >= after[i]) resolve(); };
    page.on("response", check);
    check();
  })));
  const open = memory(server.pid);
  for (const page of pages) await page.close();
  await server.stop();
  return { idle, open };
}

const tmp = board.scratch();
const browser = await board.launch();
try {
  const runs = {};
  const made = await board.makeRun(`${tmp.dir}/dg`, { bundles: 100, tasks: 10, direct: true });
  runs.devgraph = await measureDevgraph(browser, made.run_dir, made.event_seq);
  if (dashboard) {
    const ref = await board.makeRun(`${tmp.dir}/ref`, { bundles: 100, tasks: 10, direct: true });
    runs.reference = await measureReference(browser, ref.run_dir);
  }
  console.log(`run: ${made.bundles.length} bundles, ${made.tasks.length} tasks, ` +
    `${made.event_seq} events, then ${kEvents} more with ${kPages} Chromium pages open`);
  for (const [name, m] of Object.entries(runs)) {
    console.log(`${name.padEnd(9)} idle VmRSS ${mib(m.idle.rss)} MiB (VmHWM ${mib(m.idle.hwm)}); ` +
      `${kPages} pages VmRSS ${mib(m.open.rss)} MiB (VmHWM ${mib(m.open.hwm)})`);
  }
  if (runs.reference) {
    const d = runs.devgraph, r = runs.reference;
    console.log(`reference / devgraph: idle RSS ${(r.idle.rss / d.idle.rss).toFixed(1)}x, ` +
      `${kPages} pages RSS ${(r.open.rss / d.open.rss).toFixed(1)}x, ` +
      `HWM ${(r.open.hwm / d.open.hwm).toFixed(1)}x`);
  }
} finally {
  for (const server of running) await server.stop();
  await browser.close();
  tmp.remove();
}
