/**
 * A served run's events: the frames in the order the server delivered them, read by any number
 * of watchers, each at its own position. A watcher holds a cursor, never a queue of its own, so a
 * slow client costs nothing but its cursor: its stream is pulled (`ReadableStream` backpressure)
 * and only takes the next frames from the shared log when its socket has room for them.
 *
 * An event's id is its position in the log, which is the frame's `seq`: a run resumed after a
 * decision (`POST /v1/runs/ID/decisions`) has its live frames appended after the
 * `run_ended: awaiting_approval` its watchers already saw, renumbered to go on from there
 * (serve/runs.ts, `deliver`), so ids and `seq`s keep growing and `Last-Event-ID` stays exact
 * (docs/architecture.md, "eddy serve").
 */
import type { Frame } from "../frames/frame.js";
import { encodeSseComment, encodeSseMessage } from "../sse/encoder.js";

/** The frames of one run, appended as they come; watchers wake when there is more. */
export interface RunLog {
  readonly frames: readonly Frame[];
  /** How many frames the log holds (`frames.length`, without reading a stored log's tape). */
  readonly count: number;
  /** True while frames may still come (a run is going on). */
  readonly live: boolean;
  append(frame: Frame): void;
  /** The run went on again (resumed): frames will come. */
  reopen(): void;
  /** No frame comes until `reopen` (the run ended). */
  close(): void;
  /** Resolves at the next append or state change. */
  changed(): Promise<void>;
}

/** An empty log (`live` until closed), or one holding `frames` already (closed: a finished run read from its tape). */
export function createRunLog(frames: Frame[] = [], live = true): RunLog {
  let isLive = live;
  let wake: (() => void) | undefined;
  let next: Promise<void> | undefined;
  const notify = () => {
    const w = wake;
    wake = undefined;
    next = undefined;
    w?.();
  };
  return {
    frames,
    get count() {
      return frames.length;
    },
    get live() {
      return isLive;
    },
    append(frame) {
      frames.push(frame);
      notify();
    },
    reopen() {
      isLive = true;
      notify();
    },
    close() {
      isLive = false;
      notify();
    },
    changed() {
      next ??= new Promise<void>((resolve) => {
        wake = resolve;
      });
      return next;
    },
  };
}

/**
 * The log of a finished run listed from its tape's summary (replay/tape-summary.ts): its frames are
 * read from the tape only when asked for (`load`, through a `LoadedFrames` cache), so a server with
 * many runs holds none of their frames until a watcher wants them. Going on again (`reopen`, an
 * interrupted run resumed) reads them once for good: from then on it is a live log.
 */
export function storedRunLog(count: number, load: () => Frame[]): RunLog {
  let own: RunLog | undefined;
  const owned = () => {
    own ??= createRunLog([...load()], false);
    return own;
  };
  return {
    get frames() {
      return own?.frames ?? load();
    },
    get count() {
      return own?.count ?? count;
    },
    get live() {
      return own?.live ?? false;
    },
    append: (frame) => owned().append(frame),
    reopen: () => owned().reopen(),
    close: () => own?.close(),
    changed: () => owned().changed(),
  };
}

/** The frames of the few stored logs read last, by tape path (least recently read dropped first). */
export class LoadedFrames {
  private readonly loaded = new Map<string, Frame[]>();

  constructor(
    private readonly read: (path: string) => Frame[],
    private readonly keep = 8,
  ) {}

  frames(path: string): Frame[] {
    let frames = this.loaded.get(path);
    if (frames !== undefined) this.loaded.delete(path);
    else frames = this.read(path);
    this.loaded.set(path, frames);
    for (const oldest of this.loaded.keys()) {
      if (this.loaded.size <= this.keep) break;
      this.loaded.delete(oldest);
    }
    return frames;
  }
}

/** Options of `sseStream`. */
export interface SseStreamOptions {
  /** Send frames after this event id (`Last-Event-ID`). @defaultValue -1 (from the first) */
  after?: number;
  /** Milliseconds between keep-alive comments while nothing happens. @defaultValue 15_000 */
  keepAliveMs?: number;
  /** Frames taken from the log per pull (bounds what one pull buffers). @defaultValue 64 */
  batch?: number;
  /** Called once when the stream ends (finished, or cancelled by the client). */
  onClose?: () => void;
}

const encoder = new TextEncoder();

/**
 * The log as an SSE body: `id: N`, `event: <frame type>`, `data: <frame JSON>` per frame, from the
 * one after `after`; the stream ends once the run is no longer live and every frame is sent.
 */
export function sseStream(log: RunLog, options: SseStreamOptions = {}): ReadableStream<Uint8Array> {
  let cursor = Math.max(-1, options.after ?? -1) + 1;
  const batch = options.batch ?? 64;
  const keepAliveMs = options.keepAliveMs ?? 15_000;
  let closed = false;
  const finish = () => {
    if (closed) return;
    closed = true;
    options.onClose?.();
  };
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        for (;;) {
          if (cursor < log.frames.length) {
            const end = Math.min(log.frames.length, cursor + batch);
            let text = "";
            for (; cursor < end; cursor++) {
              const frame = log.frames[cursor] as Frame;
              text += encodeSseMessage({
                id: String(cursor),
                event: frame.type,
                data: JSON.stringify(frame),
              });
            }
            controller.enqueue(encoder.encode(text));
            return;
          }
          if (!log.live) {
            controller.close();
            finish();
            return;
          }
          const more = await waitOrTimeout(log.changed(), keepAliveMs);
          if (closed) return;
          if (!more) {
            controller.enqueue(encoder.encode(encodeSseComment("keep-alive")));
            return;
          }
        }
      },
      cancel() {
        finish();
      },
    },
    { highWaterMark: 1 },
  );
}

/** True when `promise` settled first, false after `ms`. */
function waitOrTimeout(promise: Promise<void>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    timer.unref?.();
    promise.then(() => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}
