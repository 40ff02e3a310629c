// A board built from a session record (`devgraph metrics record`, then
// `devgraph board build RECORD.jsonl`) opens from a file with no server
// and nothing asked of the network, after the run's directory is gone,
// and shows the run's events and bundles.
//
// Hooks: #stream, #log [data-seq] and [data-bundle="ID"] (checked last,
// with a message naming it). A record keeps each bundle's id, branch, status
// and tasks but not its title (the reference's record format), so the
// bundles are found by id.
import assert from "node:assert/strict";
import { rmSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { after, before, test } from "node:test";

import {
  checkpoint, devgraph, launch, makeRun, missingHook, run, scratch, streamText, until,
} from "./board.mjs";

let tmp, browser;

before(async () => {
  tmp = scratch();
  browser = await launch();
});

after(async () => {
  await browser?.close();
  tmp?.remove();
});

test("a snapshot built from a session record opens from a file with no server", async () => {
  const made = await makeRun(`${tmp.dir}/run`);
  await checkpoint(made.run_dir, "event", "--event", "NOTE", "--detail",
    JSON.stringify({ text: "recorded" }));
  const lastSeq = made.event_seq + 1;
  const out = await run(devgraph, ["metrics", "record", made.run_dir, "--metrics-dir",
    `${tmp.dir}/metrics`]);
  const record = out.split("\n")[0].trim();
  assert.match(record, /\.jsonl$/, out);
  rmSync(made.run_dir, { recursive: true });
  const file = `${tmp.dir}/replay.html`;
  await run(devgraph, ["board", "build", record, "-o", file]);

  const page = await browser.newPage();
  const asked = [];
  await page.route(/^(?!file:)/, (route) => { asked.push(route.request().url()); route.abort(); });
  await page.goto(pathToFileURL(file).href);
  await until(page, "#stream says snapshot", () =>
    document.getElementById("stream")?.textContent.trim() === "snapshot");
  assert.equal(await page.evaluate(streamText), "snapshot");
  await until(page, `all ${lastSeq} events are in #log`, (n) =>
    document.querySelectorAll("#log [data-seq]").length === n, lastSeq);
  const seqs = await page.$$eval("#log [data-seq]", (els) => els.map((e) => Number(e.dataset.seq)));
  assert.deepEqual(seqs, Array.from({ length: lastSeq }, (_, i) => lastSeq - i), "newest first");
  assert.deepEqual(asked, [], "the snapshot asked the network for something");

  for (const b of made.bundles) {
    assert.equal(await page.locator(`[data-bundle="${b.id}"]`).count(), 1,
      missingHook(`[data-bundle="${b.id}"]`));
  }
});
