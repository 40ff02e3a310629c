// What the board's browser tests share: runs made in temporary
// directories, the real `devgraph` binary (checkpoint, board serve, board
// build), and a headless Chromium from the system (never one downloaded)
// driven by playwright-core.
//
// Nothing here sleeps: every wait is for a DOM condition or a process
// event, and every timeout is a failure condition with a message saying
// what did not happen.
//
// The page's hooks, the only things the tests look for (the board's DOM
// contract; a test whose hook is missing fails with a message naming
// it):
// - document.body.dataset.ready === "1" once the first data is drawn.
// - #stream: "live" while the event stream is open, "reconnecting" while
//   it is lost, "snapshot" in a built file.
// - #log [data-seq="N"]: one element per event the page has, newest
//   first, N the event's seq.
// - [data-bundle="ID"]: one element per bundle; its text includes the
//   bundle's title.
// - [data-task="BUNDLE/TASK"]: one element per task of the run (it may
//   sit inside a collapsed group).
// - #tasks-total: its text is the number of tasks in the run.
// - #filter: an input; typing text shows only the bundles and tasks whose
//   id or title contains it (their groups expanded).
// - #costs: a row per persona, then "run": persona, results, cost, tokens,
//   input, cache read, cache write, output, reasoning ("-": not reported).
// - #tokens: the run's tokens.
import { execFile, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { after, before } from "node:test";

import { chromium } from "playwright-core";

const here = path.dirname(fileURLToPath(import.meta.url));

export const devgraph = process.env.DEVGRAPH_BIN || "devgraph";
export const chromiumPath = process.env.DEVGRAPH_CHROMIUM || "/usr/bin/chromium";
const makeRunScript = path.join(here, "..", "support", "make_board_run.py");

// A scratch directory removed by the returned function.
export function scratch() {
  const dir = mkdtempSync(path.join(os.tmpdir(), "devgraph-board-"));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

// Runs a program to its end; resolves with its stdout, rejects with its
// stderr when it fails.
export function run(file, args, env = {}) {
  return new Promise((resolve, reject) => {
    execFile(file, args, { env: { ...process.env, ...env }, maxBuffer: 64 << 20 },
      (err, stdout, stderr) => {
        if (!err) return resolve(stdout);
        reject(new Error(`${path.basename(file)} ${args.join(" ")}: ${err.message}\n${stderr}`));
      });
  });
}

// `devgraph checkpoint RUN ...`; resolves once the process has exited.
export function checkpoint(runDir, ...args) {
  return run(devgraph, ["checkpoint", runDir, ...args]);
}

// A run of `bundles` bundles of `tasks` tasks (tests/support/make_board_run.py);
// resolves with what it made: {run_dir, bundles, tasks, event_seq}.
export async function makeRun(runDir, { bundles = 2, tasks = 2, title, direct = false } = {}) {
  const args = [makeRunScript, devgraph, runDir, "--bundles", String(bundles),
    "--tasks", String(tasks)];
  if (title !== undefined) args.push("--title", title);
  if (direct) args.push("--direct");
  return JSON.parse(await run("python3", args));
}

// `devgraph board serve RUN --port PORT`: resolves once it has printed its
// URL. stop() sends SIGTERM and resolves with its exit code.
export function serve(runDir, port = 0) {
  const child = spawn(devgraph, ["board", "serve", runDir, "--port", String(port)],
    { stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d) => { stderr += d; });
  const exited = new Promise((resolve) =>
    child.on("exit", (code, signal) => resolve(code ?? signal)));
  return new Promise((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`devgraph board serve printed no URL within 10 s: ${stderr}`));
    }, 10000);
    exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`devgraph board serve exited (${code}) before printing its URL: ${stderr}`));
    });
    child.stdout.on("data", (d) => {
      out += d;
      const nl = out.indexOf("\n");
      if (nl < 0) return;
      clearTimeout(timer);
      const url = out.slice(0, nl).trim();
      resolve({
        url,
        port: Number(new URL(url).port),
        pid: child.pid,
        stderr: () => stderr,
        stop: () => { child.kill("SIGTERM"); return exited; },
      });
    });
  });
}

// A headless Chromium; playwright-core starts it with a fresh temporary
// profile (user-data dir) and removes it on close(). Each page is in a
// context of its own, as if in a browser of its own: a browser holds at
// most 6 connections to one server, and each board page keeps one open.
export async function launch() {
  const browser = await chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  return {
    newPage: async () => (await browser.newContext()).newPage(),
    close: () => browser.close(),
  };
}

// Waits until `fn(arg)` is true in the page, or fails after `timeout` ms
// with `what` and, to tell a missing hook from a slow page, what the page
// shows.
export async function until(page, what, fn, arg, timeout = 5000) {
  try {
    await page.waitForFunction(fn, arg, { timeout });
  } catch (err) {
    if (!/Timeout/.test(String(err))) throw err;
    const seen = await page.evaluate(() => ({
      stream: document.getElementById("stream")?.textContent ?? "(no #stream)",
      ready: document.body?.dataset.ready ?? "(unset)",
      events: document.querySelectorAll("#log [data-seq]").length,
    })).catch(() => ({}));
    throw new Error(`${what}: not within ${timeout} ms (the page shows ${JSON.stringify(seen)})`);
  }
}

// For the hooks of the DOM contract that the page before its rewrite
// lacks: says so in the failure.
export const missingHook = (hook) =>
  `${hook} is part of the board's DOM contract and the page does not have it`;

export const streamText = () => document.getElementById("stream")?.textContent.trim();

// What a test file on a served run shares: a scratch directory and a
// browser made before its tests, and the server a test keeps in
// `session.server`, all stopped, closed and removed after them.
export function servedSession() {
  const session = { tmp: null, browser: null, server: null };
  before(async () => {
    session.tmp = scratch();
    session.browser = await launch();
  });
  after(async () => {
    if (session.server) await session.server.stop();
    await session.browser?.close();
    session.tmp?.remove();
  });
  return session;
}
