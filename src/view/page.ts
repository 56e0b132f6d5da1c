/**
 * One self-contained HTML file for one or more runs, or a batch folder. Nothing is fetched at view
 * time, so it works from file:// and offline: the script and style are inlined, and a
 * Content-Security-Policy (`default-src 'none'`, the inline script and style allowed by hash)
 * keeps it so — a remote image in a model's Markdown is not loaded, and an injected script would
 * not run even if it got past the sanitizer.
 *
 * Model output, tool output and file names are untrusted. They never enter the HTML as markup:
 * the page index is JSON in a `<script type="application/json">` block with every `<` escaped, and
 * each run's view and raw frames travel gzip-compressed and base64-encoded (a 100k-frame tape
 * shrinks about tenfold), decoded by the page only when that run is opened.
 */
import { createHash } from "node:crypto";
import { gzipSync } from "node:zlib";
import { EDDY_VERSION } from "../version.js";
import { loadViewAssets, type ViewAssets } from "./assets.js";
import {
  type BatchView,
  PAGE_IDS,
  type PageIndex,
  type RunIndexEntry,
  type RunPayload,
} from "./view-data.js";

/** One run of a page: its index entry, and its payload unless its tape could not be read. */
export interface PageRun {
  entry: RunIndexEntry;
  payload?: RunPayload;
}

/** What a page shows. */
export interface PageInput {
  title: string;
  runs: Iterable<PageRun>;
  batch?: BatchView;
  /** A live page: its run follows this same-origin stream (`PageIndex.live`); the CSP allows only it. */
  live?: { events: string };
}

/** Renders the page. Runs are consumed one at a time, so only one run's frames are in memory at once. */
export function renderViewPage(input: PageInput, assets: ViewAssets = loadViewAssets()): string {
  const blocks: string[] = [];
  const runs: RunIndexEntry[] = [];
  for (const run of input.runs) {
    if (run.payload !== undefined) {
      const packed = gzipSync(JSON.stringify(run.payload)).toString("base64");
      blocks.push(
        `<script type="${PAGE_IDS.payloadType}" id="${PAGE_IDS.runPrefix}${runs.length}">${packed}</script>`,
      );
    }
    runs.push(run.entry);
  }
  const index: PageIndex = { title: input.title, eddy_version: EDDY_VERSION, runs };
  if (input.batch !== undefined) index.batch = input.batch;
  if (input.live !== undefined) index.live = input.live;
  const script = scriptSafe(assets.script);
  const csp = [
    "default-src 'none'",
    `script-src '${sha256(script)}'`,
    `style-src '${sha256(assets.style)}'`,
    "img-src data:",
    ...(input.live === undefined ? [] : ["connect-src 'self'"]),
    "base-uri 'none'",
    "form-action 'none'",
  ].join("; ");
  return [
    "<!doctype html>",
    '<html lang="en">',
    "<head>",
    '<meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${csp}">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<meta name="generator" content="eddy ${escapeHtml(EDDY_VERSION)}">`,
    `<title>${escapeHtml(input.title)}</title>`,
    `<style>${assets.style}</style>`,
    "</head>",
    "<body>",
    "<noscript>This page needs JavaScript to show the run.</noscript>",
    '<div id="app"></div>',
    `<script type="application/json" id="${PAGE_IDS.index}">${jsonForScript(index)}</script>`,
    ...blocks,
    `<script>${script}</script>`,
    "</body>",
    "</html>",
    "",
  ].join("\n");
}

/** JSON that cannot end its `<script>` block or open a comment: every `<` is escaped. */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value).replace(/</g, "\\u003c");
}

/** Refuses a script that would end its `<script>` element early (the build checks this too). */
function scriptSafe(script: string): string {
  if (/<\/script|<!--/i.test(script)) {
    throw new Error("the view page script contains </script or <!--; rebuild it with esbuild's escaping");
  }
  return script;
}

function sha256(text: string): string {
  return `sha256-${createHash("sha256").update(text, "utf8").digest("base64")}`;
}

/** Escapes text for HTML content and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
