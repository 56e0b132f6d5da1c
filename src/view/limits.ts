/**
 * What one view page may hold, and reading a tape's untrusted fields. A tape is any file a user
 * was given: every field may have any type and any size, so the view reads each through the
 * guards below and puts at most these bounds on the page — a long field is cut with its full size
 * shown, a long list is cut with a count of what was left out, and the raw frames keep the
 * beginning and the end of the tape (docs/pitfalls.md, "The run viewer").
 */
import { isJsonObject } from "../util/json.js";

/** Bounds of one run's part of a view page. */
export const VIEW_LIMITS = {
  /** Longest text of one field (a tool output, arguments, a message, a file). */
  fieldChars: 70_000,
  /** Longest answer (`run_ended.output_text`). */
  answerChars: 200_000,
  /** Longest short value (a model name, a code, an id, a tool name). */
  nameChars: 200,
  /**
   * Characters of text one run may put on the page in all; once they are spent, every further
   * field is cut to `cutChars`.
   */
  pageChars: 8_000_000,
  /** What a field is cut to once `pageChars` are spent. */
  cutChars: 1_000,
  /** Turns shown per run (frames of later turns are counted). */
  turns: 1_000,
  /** Output items and tool calls shown per run. */
  items: 3_000,
  /** Tool spans, timeline markers, notes and findings shown per run, each. */
  marks: 2_000,
  /** Fields shown per note, parts per reasoning item, names per list. */
  listEntries: 200,
  /** File contents remembered for write diffs (characters per file, files per run). */
  knownFileChars: 100_000,
  knownFiles: 200,
  /**
   * Raw frame lines kept: the first `rawHead` (at most `rawHeadChars` characters) and the last
   * `rawTail` (at most `rawTailChars`); the others are counted.
   */
  rawHead: 50_000,
  rawHeadChars: 9_000_000,
  rawTail: 10_000,
  rawTailChars: 3_000_000,
  /** A raw frame line longer than this is shown re-serialized with its long values cut. */
  rawLineChars: 2_000,
  /** Sub-runs (`agentTool`) shown nested in one another at most this deep; deeper ones are counted. */
  subrunDepth: 4,
  /** Frames of one sub-run read (the rest are counted); the run's text and item budgets are shared. */
  subrunFrames: 20_000,
  /** A tape line longer than this (bytes) is not read at all: it is reported by size. */
  lineBytes: 32 * 1024 * 1024,
  /** Tasks of a batch folder shown in its table (the first ones of `results.jsonl`; the rest are counted). */
  batchRows: 20_000,
  /** Problems a batch folder lists (bad lines of `results.jsonl`, …; the rest are counted). */
  batchProblems: 200,
  /**
   * Bad lines of `results.jsonl` read before the rest of it is left unread: each costs a failed
   * parse (~20 µs), and eddy writes at most one per crash.
   */
  batchBadLines: 1_000,
} as const;

/** `text` cut to `max` characters, saying how much there was (`total`: when `text` is already a part). */
export function cutText(text: string, max: number, total: number = text.length): string {
  if (text.length <= max && total <= text.length) return text;
  const shown = Math.min(text.length, max);
  return `${text.slice(0, shown)}… [cut: ${shown.toLocaleString("en-US")} of ${total.toLocaleString("en-US")} characters shown]`;
}

/**
 * The text budget of one run's page: each field is cut to its own maximum, and once the run's
 * `pageChars` are spent, to `cutChars`.
 */
export class TextBudget {
  private remaining: number = VIEW_LIMITS.pageChars;

  /** `text` as the page may hold it (`total`: its full length, when `text` is already a part). */
  take(text: string, max: number = VIEW_LIMITS.fieldChars, total: number = text.length): string {
    const limit = Math.min(max, Math.max(VIEW_LIMITS.cutChars, this.remaining));
    const out = cutText(text, limit, total);
    this.remaining -= out.length;
    return out;
  }

  /** Counts `chars` characters the page holds besides the fields `take` returned (a parsed copy). */
  charge(chars: number): void {
    this.remaining -= chars;
  }

  /** Whether a field of `chars` characters still fits whole. */
  fits(chars: number): boolean {
    return chars <= this.remaining;
  }
}

/** Text that streams in pieces, kept up to `max` characters (its full length counted). */
export class TextPieces {
  text = "";
  total = 0;

  constructor(private readonly max: number = VIEW_LIMITS.answerChars) {}

  append(piece: string): void {
    this.total += piece.length;
    if (this.text.length < this.max) this.text += piece.slice(0, this.max - this.text.length);
  }

  /** The text as the page may hold it. */
  shown(budget: TextBudget, max?: number): string {
    return budget.take(this.text, max, this.total);
  }
}

/** A string field as text: strings as they are, anything else as JSON (`""` when absent). */
export function textOf(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === undefined) return "";
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** A short string field (a name, a code, an id): text, cut to `VIEW_LIMITS.nameChars`. */
export function nameOf(value: unknown): string {
  return cutText(textOf(value), VIEW_LIMITS.nameChars);
}

/** A string field that may be absent: undefined unless it is a string. */
export function optionalString(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

/** A finite number, else undefined. */
export function numberOf(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

/** A non-negative integer (an index, a turn, a count), else undefined. */
export function intOf(value: unknown): number | undefined {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}

/** A list of short names: strings as they are, objects by their `name`, at most `listEntries`. */
export function namesOf(value: unknown): string[] {
  const list = Array.isArray(value) ? value : isJsonObject(value) ? Object.keys(value) : [];
  return list
    .slice(0, VIEW_LIMITS.listEntries)
    .map((v) => (isJsonObject(v) && typeof v.name === "string" ? nameOf(v.name) : nameOf(v)));
}

/** Counts what a bounded list left out. */
export class Omitted {
  readonly counts = new Map<string, number>();

  /** Adds `item` to `list` unless it holds `max` already (then counts it under `what`). */
  push<T>(list: T[], item: T, max: number, what: string): boolean {
    if (list.length < max) {
      list.push(item);
      return true;
    }
    this.count(what);
    return false;
  }

  count(what: string, n = 1): void {
    this.counts.set(what, (this.counts.get(what) ?? 0) + n);
  }

  /** One line per kind of thing left out. */
  lines(): string[] {
    return [...this.counts].map(([what, n]) => `${n.toLocaleString("en-US")} ${what} not shown`);
  }
}
