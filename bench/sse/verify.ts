/**
 * Correctness before speed: every contender must deliver exactly the generated events (eddy: one
 * provider_event per event carrying it, an output_text_delta after each text delta, `[DONE]` as a
 * `done` frame, contiguous stamps, and no validation error on this spec-valid stream).
 */
import { isDeepStrictEqual } from "node:util";
import type { Frame } from "../../src/frames/frame.js";
import type { Chunking } from "../../test/support/chunking.js";
import type { SseContender } from "./contenders.js";
import type { GeneratedStream } from "./stream.js";

/**
 * What went wrong, or `undefined` when the contender delivered the stream exactly.
 *
 * Items are checked as they arrive and not kept: retaining every frame here would make V8 pretenure
 * the frames' allocation sites (objects that survive get allocated in old space from then on),
 * and the timed runs that follow would pay for it in major GCs (eddy measured ~1.7× instead of
 * ~1.2× the floor at 100k events).
 */
export async function verify(
  contender: SseContender,
  stream: GeneratedStream,
  bytes: Uint8Array,
  chunking: Chunking,
  expectDone = true,
): Promise<string | undefined> {
  const check = contender.name.startsWith("eddy")
    ? frameChecker(stream, expectDone)
    : eventChecker(stream.events);
  try {
    await contender.decode(chunking.split(bytes), check.accept);
  } catch (err) {
    return `threw ${err instanceof Error ? err.message : String(err)}`;
  }
  return check.finish();
}

interface Checker {
  accept: (item: unknown) => void;
  finish: () => string | undefined;
}

function eventChecker(want: readonly unknown[]): Checker {
  let count = 0;
  let problem: string | undefined;
  return {
    accept(event) {
      if (problem === undefined && !isDeepStrictEqual(event, want[count])) problem = `event ${count} differs`;
      count++;
    },
    finish: () => (count !== want.length ? `${count} events, want ${want.length}` : problem),
  };
}

function frameChecker(stream: GeneratedStream, expectDone: boolean): Checker {
  const events = eventChecker(stream.events);
  let problem: string | undefined;
  let seq = 0;
  let text = "";
  let deltas = 0;
  let previousType: unknown;
  let done = false;
  const fail = (message: string) => {
    problem ??= message;
  };
  return {
    accept(item) {
      const f = item as Frame;
      const i = seq++;
      if (f.seq !== i || f.run_id === "") fail(`frame ${i} is stamped seq ${f.seq}`);
      if (done) fail(`frame ${i} follows the done frame`);
      if (f.type === "output_text_delta") {
        if (previousType !== "response.output_text.delta")
          fail(`output_text_delta at ${i} does not follow a text delta`);
        text += f.delta;
        deltas++;
        previousType = undefined;
        return;
      }
      if (f.type !== "provider_event") return fail(`unexpected frame type ${f.type}`);
      if (f.errors !== undefined) fail(`frame ${i} has errors: ${f.errors.join("; ")}`);
      previousType = (f.data as { type?: unknown } | undefined)?.type;
      if (f.status === "event") events.accept(f.data);
      else if (f.status === "done") done = true;
      else fail(`frame ${i} has status ${f.status}`);
    },
    finish() {
      if (problem !== undefined) return problem;
      if (done !== expectDone) return expectDone ? "no final done frame" : "unexpected done frame";
      if (deltas !== stream.textDeltas)
        return `${deltas} output_text_delta frames, want ${stream.textDeltas}`;
      if (text !== stream.text) return "output_text_delta frames do not add up to the text";
      return events.finish();
    },
  };
}

/** Byte-level variations of the stream every real client meets; the floor is LF-only by design. */
export interface Probe {
  name: string;
  what: string;
  /** The probe's body, from the stream's LF body. */
  body: (lf: string) => string;
  /** Whether the body still ends with `data: [DONE]`. @defaultValue true */
  done?: false;
}

export const PROBES: Probe[] = [
  { name: "CRLF", what: "CRLF line endings", body: (lf) => lf.replaceAll("\n", "\r\n") },
  {
    name: "comments",
    what: "`: keep-alive` comment blocks before every event",
    body: (lf) => lf.replaceAll("event: ", ": keep-alive\n\nevent: "),
  },
  {
    name: "no final \\n\\n",
    what: "no `[DONE]`, and `response.completed` lacks its blank line: WHATWG says discard it; eddy frames it",
    body: (lf) => lf.slice(0, -"\n\ndata: [DONE]\n\n".length),
    done: false,
  },
];
