/**
 * Loads the real provider captures in test/fixtures/captures (one JSON event per line, see its
 * README) and frames them as SSE the way a provider would.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const CAPTURES_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "fixtures", "captures");

/** Capture names relative to the folder, without `.chunks.txt`: `openai/openai-phase.1`. */
export function listCaptures(): string[] {
  const out: string[] = [];
  for (const provider of readdirSync(CAPTURES_DIR, { withFileTypes: true })) {
    if (!provider.isDirectory()) continue;
    for (const file of readdirSync(join(CAPTURES_DIR, provider.name))) {
      if (file.endsWith(".chunks.txt")) out.push(`${provider.name}/${file.slice(0, -".chunks.txt".length)}`);
    }
  }
  return out.sort();
}

/** The capture's event lines (raw JSON text, exactly as recorded). */
export function captureLines(name: string): string[] {
  return readFileSync(join(CAPTURES_DIR, `${name}.chunks.txt`), "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "");
}

export interface SseFramingOptions {
  /** Write an `event:` line equal to the data's `type` (default true). */
  eventLines?: boolean;
  /** Append `data: [DONE]` (default true). */
  done?: boolean;
  lineEnding?: "\n" | "\r\n" | "\r";
}

/** Frames event lines as an SSE body. */
export function toSse(lines: string[], options: SseFramingOptions = {}): string {
  const nl = options.lineEnding ?? "\n";
  let out = "";
  for (const line of lines) {
    if (options.eventLines !== false) {
      const type = eventTypeOf(line);
      if (type !== undefined) out += `event: ${type}${nl}`;
    }
    out += `data: ${line}${nl}${nl}`;
  }
  if (options.done !== false) out += `data: [DONE]${nl}${nl}`;
  return out;
}

/** Splits a multi-response capture at each `response.created`. */
export function splitResponses(lines: string[]): string[][] {
  const out: string[][] = [];
  for (const line of lines) {
    const type = eventTypeOf(line);
    if (type === "response.created" || out.length === 0) out.push([]);
    out[out.length - 1]?.push(line);
  }
  return out;
}

/**
 * The `type` of an event line. One capture (openai/parallel-tool-call-wrapper.1) has lines that are
 * not valid JSON (a closing brace is missing), so fall back to the first `"type":"…"` in the text.
 */
export function eventTypeOf(line: string): string | undefined {
  try {
    const type = (JSON.parse(line) as { type?: unknown }).type;
    return typeof type === "string" ? type : undefined;
  } catch {
    return /"type":"([^"]+)"/.exec(line)?.[1];
  }
}
