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

/** What went wrong, or `undefined` when the contender delivered the stream exactly. */
export async function verify(
  contender: SseContender,
  stream: GeneratedStream,
  bytes: Uint8Array,
  chunking: Chunking,
  expectDone = true,
): Promise<string | undefined> {
  const delivered: unknown[] = [];
  try {
    await contender.decode(chunking.split(bytes), (item) => delivered.push(item));
  } catch (err) {
    return `threw ${err instanceof Error ? err.message : String(err)}`;
  }
  if (contender.name.startsWith("eddy")) return verifyFrames(delivered as Frame[], stream, expectDone);
  return compareEvents(delivered, stream.events);
}

function compareEvents(got: readonly unknown[], want: readonly unknown[]): string | undefined {
  if (got.length !== want.length) return `${got.length} events, want ${want.length}`;
  const bad = want.findIndex((w, i) => !isDeepStrictEqual(got[i], w));
  return bad === -1 ? undefined : `event ${bad} differs`;
}

function verifyFrames(
  frames: readonly Frame[],
  stream: GeneratedStream,
  expectDone: boolean,
): string | undefined {
  const events: unknown[] = [];
  let text = "";
  let deltas = 0;
  for (const [i, f] of frames.entries()) {
    if (f.seq !== i || f.run_id === "") return `frame ${i} is stamped seq ${f.seq}`;
    if (f.type === "output_text_delta") {
      const before = frames[i - 1];
      const type = before?.type === "provider_event" ? (before.data as { type?: unknown }).type : undefined;
      if (type !== "response.output_text.delta")
        return `output_text_delta at ${i} does not follow a text delta`;
      text += f.delta;
      deltas++;
      continue;
    }
    if (f.type !== "provider_event") return `unexpected frame type ${f.type}`;
    if (f.errors !== undefined) return `frame ${i} has errors: ${f.errors.join("; ")}`;
    if (f.status === "event") events.push(f.data);
    else if (f.status !== "done" || i !== frames.length - 1) return `frame ${i} has status ${f.status}`;
  }
  const last = frames.at(-1);
  const endsDone = last?.type === "provider_event" && last.status === "done";
  if (endsDone !== expectDone) return expectDone ? "no final done frame" : "unexpected done frame";
  if (deltas !== stream.textDeltas) return `${deltas} output_text_delta frames, want ${stream.textDeltas}`;
  if (text !== stream.text) return "output_text_delta frames do not add up to the text";
  return compareEvents(events, stream.events);
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
