/**
 * The view page's entry point: reads the index, then shows the batch table, the run list, or a run,
 * following the URL hash (`#run=N`, `#run=N&frame=SEQ`) so links work from file:// and the back
 * button goes back. `body[data-view]` says what is shown (`batch`, `list`, `loading`, `run`, or
 * `error` when a run cannot be shown).
 */

import type { RunPayload } from "../view-data.js";
import { renderBatch, renderRunList } from "./batch-page.js";
import { fill, h } from "./dom.js";
import { followLive } from "./live.js";
import { readIndex, readRun } from "./payload.js";
import { renderRun, type ShownRun } from "./run-page.js";

const index = readIndex();
const app = document.getElementById("app") as HTMLElement;
const nav = h("nav", { class: "topbar" });
/** A live page's latest payload for run 0 (live.ts). */
let livePayload: RunPayload | undefined;
/** The run shown, if one is. */
let shown: ShownRun | undefined;
const main = h("main", { id: "view" });
app.replaceChildren(nav, main);

function route(update = false): void {
  shown = undefined;
  const params = new URLSearchParams(location.hash.slice(1));
  const runParam = params.get("run");
  const home = index.batch !== undefined || index.runs.length !== 1;
  const n = runParam !== null ? Number(runParam) : home ? undefined : 0;
  fill(
    nav,
    h("span", { class: "brand" }, "eddy"),
    home && n !== undefined
      ? h("a", { href: "#", id: "back" }, index.batch ? "← all tasks" : "← all runs")
      : null,
    h("span", { class: "muted" }, index.title),
  );
  if (n === undefined || !Number.isInteger(n)) {
    if (index.batch !== undefined) renderBatch(main, index.batch, index.title);
    else renderRunList(main, index.runs, index.title);
    document.body.dataset.view = index.batch !== undefined ? "batch" : "list";
    return;
  }
  const entry = index.runs[n];
  const payload = n === 0 && livePayload !== undefined ? Promise.resolve(livePayload) : readRun(n);
  if (entry === undefined || payload === undefined) {
    main.replaceChildren(
      h("section", { class: "card note error" }, entry?.problem ?? `This page has no run ${n}.`),
    );
    document.body.dataset.view = "error";
    return;
  }
  main.replaceChildren(h("section", { class: "card muted" }, `Loading ${entry.label}…`));
  document.body.dataset.view = "loading";
  const frame = params.get("frame");
  const failed = (err: unknown) => {
    // Never left on "Loading…": whatever went wrong is said where the run would be.
    main.replaceChildren(h("section", { class: "card note error" }, `Cannot show run ${n}: ${String(err)}`));
    document.body.dataset.view = "error";
  };
  payload.then((p) => {
    try {
      shown = renderRun(main, p, entry.label, frame !== null ? Number(frame) : undefined);
      if (frame === null && !update) window.scrollTo(0, 0);
      document.body.dataset.view = "run";
    } catch (err) {
      failed(err);
    }
  }, failed);
}

window.addEventListener("hashchange", () => route());
route();
if (index.live !== undefined)
  followLive(index.live.events, (payload) => {
    livePayload = payload;
    // Redrawn, except while the raw frames are open (they would close).
    // The run page's own raw section, by reference: a `getElementById("raw")` found an element
    // of that id in the answer first, and the page stopped following (markdown.ts).
    if (!shown?.rawOpen()) route(true);
  });
