/** Number and time formatting for the page. */
import { durationText } from "../labels.js";

/** `345 ms`, `1.23 s`, `2 min 03 s` (or `—`). */
export function ms(value: number | null | undefined): string {
  return value === null || value === undefined ? "—" : durationText(value);
}

/** `12,345` (or `—`). */
export function count(value: number | null | undefined): string {
  return value === null || value === undefined ? "—" : value.toLocaleString("en-US");
}

/** Pretty JSON when the text is JSON, else the text itself. */
export function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/** The first line of a text, cut at `max` characters. */
export function firstLine(text: string, max = 120): string {
  const line = text.split("\n").find((l) => l.trim() !== "") ?? "";
  return line.length > max ? `${line.slice(0, max)}…` : line;
}

/** Whether a run end reason is a success. */
export function isSuccess(reason: string): boolean {
  return reason === "completed" || reason === "terminal_tool";
}
