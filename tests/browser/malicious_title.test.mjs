// Markup in a run's text (a bundle's and a task's title, an event's
// detail) shows as the characters it is, on the served page and in a
// built snapshot: nothing in it becomes an element or runs.
//
// Hooks: body text, #stream and [data-bundle="ID"] (checked last, so a
// missing hook fails with its name after every other check).
import assert from "node:assert/strict";
import { pathToFileURL } from "node:url";
import { after, before, test } from "node:test";

import {
  checkpoint, devgraph, launch, makeRun, missingHook, run, scratch, serve, streamText, until,
} from "./board.mjs";

const kTitle = `<img src=x onerror="window.__pwned=1"><script>window.__pwned=1</script>`;
let tmp, browser, server, made;

before(async () => {
  tmp = scratch();
  browser = await launch();
  made = await makeRun(`${tmp.dir}/run`, { title: kTitle });
  await checkpoint(made.run_dir, "event", "--event", "NOTE", "--detail",
    JSON.stringify({ text: kTitle }));
});

after(async () => {
  if (server) await server.stop();
  await browser?.close();
  tmp?.remove();
});

// Before any of the page's own code: every <img>, and every <script> but
// the page's own, that enters the document is recorded.
function watchForInjectedElements() {
  window.__injected = [];
  new MutationObserver((records) => {
    for (const r of records) {
      for (const n of r.addedNodes) {
        if (n.nodeType !== 1) continue;
        for (const el of [n, ...n.querySelectorAll("img, script")]) {
          const own = el.tagName === "SCRIPT" && (el.id === "board-data" ||
            !el.textContent.includes("__pwned"));
          if (el.tagName === "IMG" || (el.tagName === "SCRIPT" && !own))
            window.__injected.push(el.outerHTML.slice(0, 200));
        }
      }
    }
  }).observe(document, { childList: true, subtree: true });
}

async function expectText(page, bundleId) {
  await until(page, "the title is drawn as text", (title) =>
    document.body.textContent.includes(title), kTitle);
  // An <img> made from the title, even one never attached, would have
  // failed to load by now: this probe asks the same server (or
  // directory) for a missing file after it.
  await page.evaluate(() => new Promise((resolve) => {
    const probe = new Image();
    probe.onload = probe.onerror = resolve;
    probe.src = "probe-" + Date.now();
  }));
  assert.equal(await page.evaluate(() => window.__pwned), undefined, "the title's markup ran");
  assert.deepEqual(await page.evaluate(() => window.__injected), [],
    "elements were made from the run's text");
  assert.equal(await page.evaluate(() => document.querySelectorAll("img").length), 0);

  const bundle = page.locator(`[data-bundle="${bundleId}"]`);
  assert.equal(await bundle.count(), 1, missingHook(`[data-bundle="${bundleId}"]`));
  const text = await bundle.textContent();
  assert.ok(text.includes(kTitle), `the bundle's text holds its title literally: ${text}`);
}

test("a title of markup shows as text on the served page", async () => {
  server = await serve(made.run_dir);
  const page = await browser.newPage();
  await page.addInitScript(watchForInjectedElements);
  await page.goto(server.url);
  await until(page, "the stream is live", (want) => document.getElementById("stream")
    ?.textContent.trim() === want, "live");
  await expectText(page, made.bundles[0].id);
});

test("a title of markup shows as text in a built snapshot", async () => {
  const file = `${tmp.dir}/board.html`;
  await run(devgraph, ["board", "build", made.run_dir, "-o", file]);
  const page = await browser.newPage();
  await page.addInitScript(watchForInjectedElements);
  await page.goto(pathToFileURL(file).href);
  await until(page, "the page says it is a snapshot", (want) =>
    document.getElementById("stream")?.textContent.trim() === want, "snapshot");
  assert.equal(await page.evaluate(streamText), "snapshot");
  await expectText(page, made.bundles[0].id);
});
