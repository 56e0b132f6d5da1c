/**
 * Reads the page's data blocks: the JSON index, and each run's gzip+base64 payload (decoded with
 * the browser's DecompressionStream only when the run is opened).
 */
import { PAGE_IDS, type PageIndex, type RunPayload } from "../view-data.js";

/** The page index. */
export function readIndex(): PageIndex {
  const el = document.getElementById(PAGE_IDS.index);
  if (el === null) throw new Error("this page has no eddy data");
  return JSON.parse(el.textContent ?? "") as PageIndex;
}

const cache = new Map<number, Promise<RunPayload>>();

/** Run `n`'s payload, or undefined when the page has none for it (its tape could not be read). */
export function readRun(n: number): Promise<RunPayload> | undefined {
  const hit = cache.get(n);
  if (hit !== undefined) return hit;
  const el = document.getElementById(`${PAGE_IDS.runPrefix}${n}`);
  if (el === null) return undefined;
  const promise = decode(el.textContent ?? "");
  cache.set(n, promise);
  return promise;
}

async function decode(base64: string): Promise<RunPayload> {
  const binary = atob(base64.trim());
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return JSON.parse(await new Response(stream).text()) as RunPayload;
}
