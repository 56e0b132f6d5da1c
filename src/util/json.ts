/** Small JSON helpers shared across layers. */

/** A JSON object: a plain `{…}` value, not null and not an array. */
export type JsonRecord = { [key: string]: unknown };

/** True for a JSON object (not null, not an array, not a primitive). */
export function isJsonObject(value: unknown): value is JsonRecord {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** Whether `text` is JSON (any value). */
export function isJsonText(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** `text` parsed, when it is a JSON object; undefined for invalid JSON or any other JSON value. */
export function parseJsonObject(text: string): JsonRecord | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return isJsonObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** Lone UTF-16 surrogates (half a pair): JSON may carry them, RFC 8785 and UTF-8 cannot. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * `value` with every lone surrogate in its strings and keys replaced by U+FFFD (as
 * `String.prototype.toWellFormed` does). Copy on write: a clean value comes back as it is.
 */
export function wellFormed<T>(value: T): T {
  return wellFormedValue(value) as T;
}

function wellFormedValue(value: unknown): unknown {
  if (typeof value === "string") return value.replace(LONE_SURROGATE, "\ufffd");
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) {
    const mapped = value.map(wellFormedValue);
    return mapped.some((v, i) => v !== value[i]) ? mapped : value;
  }
  let changed = false;
  const entries = Object.entries(value).map(([k, v]) => {
    const key = k.replace(LONE_SURROGATE, "\ufffd");
    const fixed = wellFormedValue(v);
    if (key !== k || fixed !== v) changed = true;
    return [key, fixed] as const;
  });
  return changed ? Object.fromEntries(entries) : value;
}

/**
 * Why `JSON.parse` refused a text, safe to show anywhere: V8's message quotes the start of the text
 * it failed on, so its control characters (an escape sequence a hostile file carries) are written
 * as `\uXXXX`, and it is cut to 200 characters (docs/pitfalls.md #66).
 */
export function jsonErrorReason(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const safe = message.replace(CONTROL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
  return safe.length > 200 ? `${safe.slice(0, 199)}…` : safe;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: these are the characters it escapes
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;

/** A byte order mark at the start of a text (an editor's; `JSON.parse` refuses it): dropped. */
export function withoutBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** The deepest nesting eddy accepts in a JSON value it takes in (requests, tasks, configs, provider events). */
export const JSON_MAX_DEPTH = 1000;

/**
 * The deepest nesting eddy accepts in a record it writes itself (tapes, thread logs, a served run's
 * events, queue jobs): a value it took in, up to `JSON_MAX_DEPTH`, wrapped in the few levels of the
 * record around it (a tape header's `spec.context.items`, a frame's `data`). Without the margin a
 * request eddy accepted made a tape eddy refused to read back.
 */
export const RECORD_MAX_DEPTH = JSON_MAX_DEPTH + 32;

/**
 * True when `value`'s arrays and objects nest more than `limit` levels deep. Checked after
 * `JSON.parse` on what eddy reads from files: `JSON.parse` takes any depth, but the recursive code
 * after it (validation, comparison, `JSON.stringify`) overflows the stack near 10,000 levels. It
 * visits only arrays and objects and stops at the limit: ~3% of the parse's time.
 */
export function nestsDeeperThan(value: unknown, limit = JSON_MAX_DEPTH): boolean {
  if (value === null || typeof value !== "object") return false;
  if (limit === 0) return true;
  if (Array.isArray(value)) {
    for (const item of value) if (typeof item === "object" && nestsDeeperThan(item, limit - 1)) return true;
    return false;
  }
  for (const key in value) {
    const item = (value as JsonRecord)[key];
    if (typeof item === "object" && nestsDeeperThan(item, limit - 1)) return true;
  }
  return false;
}

/**
 * `nestsDeeperThan(value)` for a `value` just parsed from `text`, without the walk when `text` is
 * too short to nest that deep (each level takes two characters): the events of a normal stream are
 * never walked.
 */
export function parsedNestsTooDeep(text: string, value: unknown, limit = JSON_MAX_DEPTH): boolean {
  return text.length > 2 * limit && nestsDeeperThan(value, limit);
}

/**
 * Calls `visit` with each line of `text` (without its "\n"; a CR before it kept), its 0-based index
 * and whether it is the part after the last "\n" (empty when the text ends with one); stops when
 * `visit` returns false. Unlike `text.split("\n")`, it holds one line at a time: a file of tens of
 * millions of short lines does not become as many strings at once.
 */
export function forEachLine(
  text: string,
  visit: (line: string, index: number, last: boolean) => unknown,
): void {
  let start = 0;
  for (let index = 0; ; index++) {
    const end = text.indexOf("\n", start);
    const last = end < 0;
    if (visit(text.slice(start, last ? text.length : end), index, last) === false || last) return;
    start = end + 1;
  }
}
