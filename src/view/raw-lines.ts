/**
 * The raw frames a page carries for one run: the tape's lines exactly as written, bounded
 * (limits.ts) — the first lines (`rawHead`, `rawHeadChars`) and the last (`rawTail`,
 * `rawTailChars`), a line standing for the ones in between, and a line longer than `rawLineChars`
 * re-serialized with its long values cut (so it is still one JSON frame, with a `view_note` saying
 * how long it is in the tape).
 */
import { VIEW_LIMITS } from "./limits.js";
import type { FrameRecord } from "./read.js";
import type { RunPayload, RunView } from "./view-data.js";

/** Longest string value in a shortened frame line. */
const VALUE_CHARS = 300;
/** Array entries and object keys kept in a shortened frame line. */
const ENTRIES = 20;
/** Nesting kept in a shortened frame line. */
const DEPTH = 6;

/** Collects a run's raw frame lines within the page's bounds. */
export class RawLines {
  private readonly head: string[] = [];
  private headChars = 0;
  private headFull = false;
  /** The last lines, oldest first from `tailStart`. */
  private tail: string[] = [];
  private tailStart = 0;
  private tailChars = 0;
  private omitted = 0;
  private firstOmittedSeq: number | undefined;

  /** A frame line as read (`record`: its parsed frame). */
  add(line: string, record: FrameRecord): void {
    this.keep(line.length <= VIEW_LIMITS.rawLineChars ? line : shortLine(record, line.length));
  }

  /** A line too long to read. */
  unread(number: number, bytes: number): void {
    this.keep(
      JSON.stringify({
        type: "unread_line",
        line: number,
        bytes,
        view_note: "this tape line was too long to read",
      }),
    );
  }

  /** The lines, in tape order, with one line standing for those left out. */
  lines(): string[] {
    const tail = this.tail.slice(this.tailStart);
    if (this.omitted === 0) return [...this.head, ...tail];
    const marker = {
      type: "frames_omitted",
      ...(this.firstOmittedSeq === undefined ? {} : { seq: this.firstOmittedSeq }),
      count: this.omitted,
      view_note: `${this.omitted.toLocaleString("en-US")} frames are not on this page (it keeps the first and the last ones); the tape has them all`,
    };
    return [...this.head, JSON.stringify(marker), ...tail];
  }

  /** Lines left out of the page. */
  get omittedCount(): number {
    return this.omitted;
  }

  /** A run's page part: its view (saying how many raw frames were left out, when any) and these lines. */
  payload(view: RunView): RunPayload {
    if (this.omitted > 0) {
      const note = `${this.omitted.toLocaleString("en-US")} raw frames (of the middle of the tape) not shown`;
      view.omitted = [...(view.omitted ?? []), note];
    }
    return { view, raw: this.lines() };
  }

  private keep(line: string): void {
    if (!this.headFull) {
      if (
        this.head.length < VIEW_LIMITS.rawHead &&
        this.headChars + line.length <= VIEW_LIMITS.rawHeadChars
      ) {
        this.head.push(line);
        this.headChars += line.length;
        return;
      }
      this.headFull = true;
    }
    this.tail.push(line);
    this.tailChars += line.length;
    while (
      this.tail.length - this.tailStart > VIEW_LIMITS.rawTail ||
      this.tailChars > VIEW_LIMITS.rawTailChars
    ) {
      // The oldest tail line leaves the page.
      const dropped = this.tail[this.tailStart++] as string;
      this.tailChars -= dropped.length;
      if (this.omitted++ === 0) this.firstOmittedSeq = seqOf(dropped);
    }
    if (this.tailStart > 4096 && this.tailStart * 2 > this.tail.length) {
      this.tail = this.tail.slice(this.tailStart);
      this.tailStart = 0;
    }
  }
}

/** A frame too long for the page as one JSON line: its long values cut, its length in the tape noted. */
function shortLine(record: FrameRecord, chars: number): string {
  const short = shorten(record, 0) as Record<string, unknown>;
  short.view_note = `shortened for this page: ${chars.toLocaleString("en-US")} characters in the tape`;
  return JSON.stringify(short);
}

function shorten(value: unknown, depth: number): unknown {
  if (typeof value === "string") {
    return value.length <= VALUE_CHARS
      ? value
      : `${value.slice(0, VALUE_CHARS)}… (${(value.length - VALUE_CHARS).toLocaleString("en-US")} more characters)`;
  }
  if (value === null || typeof value !== "object") return value;
  if (depth >= DEPTH) return "…";
  if (Array.isArray(value)) {
    const out = value.slice(0, ENTRIES).map((v) => shorten(v, depth + 1));
    if (value.length > ENTRIES) out.push(`… ${value.length - ENTRIES} more`);
    return out;
  }
  const out: Record<string, unknown> = {};
  let n = 0;
  for (const key in value) {
    if (n++ === ENTRIES * 2) {
      out["…"] = "more fields";
      break;
    }
    out[key] = shorten((value as Record<string, unknown>)[key], depth + 1);
  }
  return out;
}

function seqOf(line: string): number | undefined {
  const m = /"seq":(\d+)/.exec(line);
  return m === null ? undefined : Number(m[1]);
}
