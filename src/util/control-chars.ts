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
