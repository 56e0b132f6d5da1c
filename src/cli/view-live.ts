/**
 * `eddy view --live URL`: follows a run of `eddy serve` in the viewer page as its frames arrive.
 * eddy reads the run's events itself (`eddy/client`, reconnecting with `Last-Event-ID`, with the
 * token from `--token` or `EDDY_SERVE_TOKEN`) and serves the page on 127.0.0.1 under a random
 * path, with a stream of the run's view as it grows (view-live-page.ts, with a bounded number of
 * connections); the page only talks to that local server, so the token stays in this process: it
 * is in no page, file or URL.
 *
 * Every frame from the server is untrusted: it is read like a tape line (src/view/read.ts: a JSON
 * object with the frame envelope, else a one-line error) and shown through the same bounded view
 * model as a tape (src/view/run-model.ts). A URL that is not a run on an eddy server (HTML, garbage,
 * a refused token) ends the command with one line naming it. When the run has ended the page keeps
 * being served, showing the final state, until Ctrl-C.
 */
import type { ServerResponse } from "node:http";
import { EddyError } from "../errors.js";
import { createServeClient, type ServeClient } from "../serve/client.js";
import { encodeSseMessage } from "../sse/encoder.js";
import { fetchCause } from "../util/fetch-cause.js";
import { LiveRunView } from "../view/live-view.js";
import { parseViewTape } from "../view/read.js";
import type { RunPayload } from "../view/view-data.js";
import type { CliIo } from "./run-command.js";
import { terminalSafe } from "./terminal.js";
import { type LivePageSource, PageStream, serveLivePage } from "./view-live-page.js";

/** Milliseconds between redraws of the page while frames come. */
const REDRAW_MS = 200;

/** The event that tells a page the run's stream has ended. */
const ENDED = encodeSseMessage({ event: "ended", data: "{}" });

/** A run's address on a server, from a run URL or its events URL. */
export function parseLiveUrl(text: string): { baseUrl: string; id: string; shown: string } {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw usage(
      `--live ${JSON.stringify(text.slice(0, 200))} is not a URL: give a run's URL on eddy serve, e.g. http://127.0.0.1:7341/v1/runs/run_…`,
    );
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw usage(`--live: ${url.protocol} URLs are not followed: give an http(s) URL of a run on eddy serve`);
  const match = /^(.*)\/v1\/runs\/([^/]+)(?:\/events)?\/?$/.exec(url.pathname);
  if (match === null)
    throw usage(
      `--live: ${url.origin}${url.pathname.slice(0, 200)} is not a run's URL: give …/v1/runs/ID or …/v1/runs/ID/events`,
    );
  const id = decodeURIComponent(match[2] as string);
  if (!/^run_[A-Za-z0-9]{1,64}$/.test(id))
    throw usage(`--live: ${JSON.stringify(id.slice(0, 100))} is not a run id of eddy serve (run_…)`);
  const base = `${url.origin}${match[1] as string}`;
  return { baseUrl: base, id, shown: `${base}/v1/runs/${id}` };
}

/** Follows the run until it ends, serving the page until a signal; returns the exit code. */
export async function viewLiveCommand(
  text: string,
  token: string | undefined,
  io: CliIo,
  open?: (url: string) => Promise<unknown>,
): Promise<number> {
  const target = parseLiveUrl(text);
  const client = createServeClient({ baseUrl: target.baseUrl, ...(token === undefined ? {} : { token }) });
  const run = await firstLook(client, target);
  const state = new LiveState(target.shown);
  const page = await serveLivePage(state, `${target.id} (live)`);
  io.stdout.write(`${page.url}\n`);
  if (open) await open(page.url);
  io.stderr.write(
    `eddy view: following ${target.shown} (${terminalSafe(run.status, { oneLine: true })}); the page is at ${page.url}\n`,
  );
  const stop = new AbortController();
  const remove = io.onSignal(() => stop.abort("interrupted"));
  try {
    try {
      for await (const event of client.events(target.id, { signal: stop.signal })) state.add(event.frame);
    } catch (err) {
      if (!stop.signal.aborted) throw err;
    }
    state.end();
    if (!stop.signal.aborted) {
      io.stderr.write(
        `eddy view: the run's stream ended (${terminalSafe(state.reason(), { oneLine: true })}); serving the page until Ctrl-C\n`,
      );
      await new Promise<void>((done) => {
        if (stop.signal.aborted) done();
        stop.signal.addEventListener("abort", () => done(), { once: true });
      });
    }
    return 0;
  } finally {
    remove();
    await page.close();
  }
}

/** GET the run first: a URL that is not eddy serve (or a refused token) fails here with one line. */
async function firstLook(client: ServeClient, target: { shown: string; id: string }) {
  let view: unknown;
  try {
    view = await client.get(target.id);
  } catch (err) {
    if (EddyError.isInstance(err)) throw err;
    const reason = err instanceof SyntaxError ? "it did not answer JSON" : causeOf(err);
    throw usage(`--live: ${target.shown} is not a run on eddy serve: ${reason}`);
  }
  const status = (view as { status?: unknown } | null)?.status;
  if (typeof status !== "string")
    throw usage(`--live: ${target.shown} did not answer like eddy serve (no run status)`);
  return { status };
}

function causeOf(err: unknown): string {
  const cause = fetchCause(err);
  if (cause !== undefined) return `cannot connect (${cause})`;
  return err instanceof Error ? err.message : String(err);
}

/** Options of `LiveState` (tests set them). */
export interface LiveStateOptions {
  /** @defaultValue REDRAW_MS (200) */
  redrawMs?: number;
  /** How long a page may leave a view unread. @defaultValue `LISTEN_TIMEOUTS.unreadMs` (60 s) */
  unreadMs?: number;
}

/**
 * The run's view so far (`LiveRunView`, bounded) and the page streams waiting for it. Redraws come
 * at most every `REDRAW_MS`, and never closer than four times the last one took, so a long run
 * leaves the process free to answer Ctrl-C. A page's stream holds at most the latest view unsent
 * (`PageStream`, view-live-page.ts).
 */
export class LiveState implements LivePageSource {
  private readonly view = new LiveRunView();
  private readonly pages = new Set<PageStream>();
  private payload: RunPayload | undefined;
  private timer: NodeJS.Timeout | undefined;
  private lastRedrawMs = 0;
  private ended = false;

  constructor(
    private readonly source: string,
    private readonly options: LiveStateOptions = {},
  ) {}

  /** Takes a frame, checked as a tape line is (a one-line `tape_invalid` error otherwise). */
  add(frame: unknown): void {
    const line = JSON.stringify(frame);
    if ((frame as { type?: unknown }).type === "tape_header")
      throw new EddyError("tape_invalid", `${this.source}: the server sent a tape header as a frame`, {
        fault: "user",
      });
    const [record] = parseViewTape(`${line}\n`, this.source).frames;
    if (record === undefined) return;
    this.view.add(record, line);
    this.timer ??= setTimeout(
      () => {
        this.timer = undefined;
        const start = performance.now();
        this.publish(this.view.snapshot());
        this.lastRedrawMs = performance.now() - start;
      },
      Math.max(this.options.redrawMs ?? REDRAW_MS, 4 * this.lastRedrawMs),
    );
  }

  end(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.ended = true;
    this.publish(this.view.end());
    for (const page of this.pages) page.end(ENDED);
  }

  reason(): string {
    return this.payload?.view.reason ?? "no frames";
  }

  /** A page's stream: the latest view now, then each redraw. */
  watch(res: ServerResponse): void {
    const page = new PageStream(res, this.options.unreadMs);
    this.pages.add(page);
    res.once("close", () => this.pages.delete(page));
    if (this.payload !== undefined) page.view(message(this.payload));
    if (this.ended) page.end(ENDED);
  }

  current(): RunPayload | undefined {
    return this.payload;
  }

  /** Sends a new view to every page (an unchanged one is not sent again). */
  private publish(payload: RunPayload | undefined): void {
    if (payload === undefined || payload === this.payload) return;
    this.payload = payload;
    const text = message(payload);
    for (const page of this.pages) page.view(text);
  }
}

function message(payload: RunPayload): string {
  return encodeSseMessage({ data: JSON.stringify(payload) });
}

function usage(message: string): EddyError {
  return new EddyError("invalid_argument", message, { fault: "user" });
}
