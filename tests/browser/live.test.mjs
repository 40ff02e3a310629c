// A page on a live run shows each new event as the run records it,
// without a reload: within 1 s of `devgraph checkpoint event` returning.
//
// Hooks: #stream, #log [data-seq].
import assert from "node:assert/strict";
import { performance } from "node:perf_hooks";
import { test } from "node:test";

import { checkpoint, makeRun, serve, servedSession, streamText, until } from "./board.mjs";

const kBoundMs = 1000;
const session = servedSession();

test("a new event reaches an open page within 1 s of its append, without a reload", async (t) => {
  const made = await makeRun(`${session.tmp.dir}/run`);
  session.server = await serve(made.run_dir);
  const page = await session.browser.newPage();
  await page.goto(session.server.url);
  await until(page, "the stream is live", (want) => document.getElementById("stream")
    ?.textContent.trim() === want, "live");
  await until(page, `the run's last event (seq ${made.event_seq}) is in #log`,
    (seq) => document.querySelector(`#log [data-seq="${seq}"]`) !== null, made.event_seq);
  await page.evaluate(() => { window.__sameDocument = true; });

  const times = [];
  for (let i = 1; i <= 3; ++i) {
    const seq = made.event_seq + i;
    await checkpoint(made.run_dir, "event", "--event", "NOTE", "--detail",
      JSON.stringify({ text: `live ${i}` }));
    const appended = performance.now();
    await until(page, `event ${seq} appears in #log`,
      (s) => document.querySelector(`#log [data-seq="${s}"]`) !== null, seq, kBoundMs);
    times.push(performance.now() - appended);
  }
  t.diagnostic(`append to page: ${times.map((ms) => ms.toFixed(1)).join(", ")} ms`);
  for (const ms of times) assert.ok(ms < kBoundMs, `an event took ${ms.toFixed(0)} ms to appear`);
  assert.equal(await page.evaluate(() => window.__sameDocument), true, "the page was reloaded");
  assert.equal(await page.evaluate(streamText), "live");
  // Newest first.
  const order = await page.$$eval("#log [data-seq]", (els) => els.slice(0, 3).map((e) =>
    Number(e.dataset.seq)));
  assert.deepEqual(order, [made.event_seq + 3, made.event_seq + 2, made.event_seq + 1]);
});
