// Costs and tokens read the same whatever agent CLI reported them: the
// persona runtime turns claude's, codex's and gemini's usage into one shape
// (input, cache read, cache write, output, reasoning), and the costs table
// shows each part per persona and for the run, "-" where a CLI reported
// none, as the run records each result.
//
// Hooks: #costs (a row per persona, then "run"), #cost, #tokens.
import assert from "node:assert/strict";
import { test } from "node:test";

import { checkpoint, makeRun, serve, servedSession, until } from "./board.mjs";

const session = servedSession();

async function result(runDir, handle, persona, event, cost, tokens, usage) {
  await checkpoint(runDir, "event", "--event", "PERSONA_DISPATCHED", "--detail",
    JSON.stringify({ persona, bundle: "b1", agent_handle: handle }));
  await checkpoint(runDir, "event", "--event", event, "--detail",
    JSON.stringify({ agent_handle: handle, cost_usd: cost, tokens, usage }));
}

const rows = () => [...document.querySelectorAll("#costs tr")].map((r) =>
  [...r.children].map((c) => c.textContent.trim()));

test("every backend's tokens are shown part by part, per persona and for the run", async () => {
  const made = await makeRun(`${session.tmp.dir}/run`, { bundles: 1, tasks: 1 });
  session.server = await serve(made.run_dir);
  const page = await session.browser.newPage();
  await page.goto(session.server.url);
  await until(page, "the stream is live", () =>
    document.getElementById("stream")?.textContent.trim() === "live");

  // As a claude result reads once normalized (cache parts, no reasoning),
  // then a codex one (reasoning, no cache write).
  await result(made.run_dir, "h1", "developer", "IMPLEMENT_DONE", 0.5, 1025,
    { input: 5, cache_read: 1000, cache_write: 8, output: 12, reasoning: null });
  await result(made.run_dir, "h2", "tester", "VERIFY_DONE", 0.25, 45,
    { input: 10, cache_read: 20, cache_write: null, output: 15, reasoning: 6 });
  await until(page, "the run's row holds both results", () =>
    [...document.querySelectorAll("#costs tr")].some((r) =>
      r.firstChild?.textContent === "run" && r.children[1]?.textContent === "2"));

  const table = Object.fromEntries((await page.evaluate(rows)).map((r) => [r[0], r.slice(1)]));
  assert.deepEqual(table.developer, ["1", "0.5", "1025", "5", "1000", "8", "12", "-"]);
  assert.deepEqual(table.tester, ["1", "0.25", "45", "10", "20", "-", "15", "6"]);
  assert.deepEqual(table.run, ["2", "0.75", "1070", "15", "1020", "8", "27", "6"]);
  assert.equal(await page.locator("#tokens").textContent(), "1070");
});
