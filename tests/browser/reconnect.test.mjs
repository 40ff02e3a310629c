// A page whose server goes away catches up when a server is back on the
// same port: every event recorded meanwhile appears once, without a reload.
//
// Hooks: #stream, #log [data-seq].
import assert from "node:assert/strict";
import { test } from "node:test";

import { checkpoint, makeRun, serve, servedSession, until } from "./board.mjs";

// A reconnecting page retries on its own schedule (EventSource waits a
// few seconds between attempts), so the catch-up bound is generous.
const kCatchUpMs = 15000;
const session = servedSession();

const stream = (want) => document.getElementById("stream")?.textContent.trim() === want;
const hasSeq = (seq) => document.querySelector(`#log [data-seq="${seq}"]`) !== null;

test("a page catches up on every event recorded while its server was down, each once", async () => {
  const made = await makeRun(`${session.tmp.dir}/run`);
  session.server = await serve(made.run_dir);
  const port = session.server.port;
  const page = await session.browser.newPage();
  await page.goto(session.server.url);
  await until(page, "the stream is live", stream, "live");
  await until(page, `event ${made.event_seq} is in #log`, hasSeq, made.event_seq);
  await page.evaluate(() => { window.__sameDocument = true; });

  assert.equal(await session.server.stop(), 0, "devgraph board serve exits 0 on SIGTERM");
  session.server = null;
  await until(page, "the page says it lost the stream", stream, "reconnecting");
  const missed = [];
  for (let i = 1; i <= 3; ++i) {
    await checkpoint(made.run_dir, "event", "--event", "NOTE", "--detail",
      JSON.stringify({ text: `missed ${i}` }));
    missed.push(made.event_seq + i);
  }
  session.server = await serve(made.run_dir, port);

  await until(page, "the stream is live again", stream, "live", kCatchUpMs);
  await until(page, `the missed events ${missed.join(", ")} are in #log`,
    (seqs) => seqs.every((s) => document.querySelector(`#log [data-seq="${s}"]`) !== null),
    missed, kCatchUpMs);
  // One more after the catch-up: once it is drawn, anything the catch-up
  // would have drawn twice has been drawn.
  const last = made.event_seq + missed.length + 1;
  await checkpoint(made.run_dir, "event", "--event", "NOTE", "--detail",
    JSON.stringify({ text: "after" }));
  await until(page, `event ${last} is in #log`, hasSeq, last);

  const seqs = await page.$$eval("#log [data-seq]", (els) => els.map((e) => Number(e.dataset.seq)));
  const counts = new Map();
  for (const s of seqs) counts.set(s, (counts.get(s) ?? 0) + 1);
  for (let s = 1; s <= last; ++s) assert.equal(counts.get(s), 1, `event ${s} is in #log once`);
  assert.equal(seqs.length, last, `#log holds ${seqs.join(",")}`);
  assert.equal(await page.evaluate(() => window.__sameDocument), true, "the page was reloaded");
});
