/**
 * Text that reaches a terminal or names something must not steer it: C0 and C1 controls, DEL, and
 * the bidirectional formatting characters (which reorder what a terminal shows).
 */

/** Text without control or direction characters (anchored: for a schema's `pattern`). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
export const NO_CONTROL_CHARS = /^[^\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]*$/;

/** Whether `text` holds a control or direction character. */
export function hasControlChars(text: string): boolean {
  return !NO_CONTROL_CHARS.test(text);
}

/**
 * `value` as JSON that steers nothing where it is shown: what `JSON.stringify` leaves raw and a
 * terminal acts on — DEL, the C1 controls (U+0080–U+009F: U+009B is CSI), the direction marks and
 * controls, the line and paragraph separators — written as `\uXXXX`. It is the same JSON (C0
 * controls and lone surrogates `JSON.stringify` escapes itself). Every `--json` writer of the CLI
 * writes through it (docs/pitfalls.md #112); `space` indents as `JSON.stringify`'s does.
 */
export function safeJson(value: unknown, space?: number): string {
  return (JSON.stringify(value, null, space) ?? "undefined").replace(
    STEERING,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

const STEERING = /[\u007f-\u009f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
