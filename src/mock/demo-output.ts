/**
 * Reading a tool output as the demo model does: eddy's stable JSON `{tool, ok, exit_code, stdout,
 * stderr, artifacts?, error?}` (any other string is not parsed), plus the small text helpers its
 * replies share.
 */

/** A tool output in eddy's JSON shape. */
export interface ParsedOutput {
  ok: boolean;
  exitCode?: number;
  stdout: string;
  stderr: string;
  artifacts: Record<string, unknown>;
  error?: string;
}

/** The output read as eddy's JSON, or undefined when it is another tool's own text. */
export function parseOutput(output: string): ParsedOutput | undefined {
  let value: unknown;
  try {
    value = JSON.parse(output);
  } catch {
    return undefined;
  }
  if (value === null || typeof value !== "object" || typeof (value as { ok?: unknown }).ok !== "boolean")
    return undefined;
  const o = value as Record<string, unknown>;
  const parsed: ParsedOutput = {
    ok: o.ok === true,
    stdout: typeof o.stdout === "string" ? o.stdout : "",
    stderr: typeof o.stderr === "string" ? o.stderr : "",
    artifacts:
      o.artifacts !== null && typeof o.artifacts === "object" ? (o.artifacts as Record<string, unknown>) : {},
  };
  if (typeof o.exit_code === "number") parsed.exitCode = o.exit_code;
  const error = o.error as { message?: unknown; code?: unknown } | undefined;
  if (error !== null && typeof error === "object") {
    parsed.error = typeof error.message === "string" ? error.message : String(error.code ?? "unknown error");
  }
  return parsed;
}

/** The first `n` lines of `text`, with `…` when there were more. */
export function firstLines(text: string, n: number): string {
  const lines = text.split("\n");
  return lines.length > n ? `${lines.slice(0, n).join("\n")}\n…` : text;
}

/** `text` in a fenced code block (a longer fence when the text holds one). */
export function codeBlock(text: string, lang: string): string {
  const fence = text.includes("```") ? "````" : "```";
  return `${fence}${lang}\n${text}\n${fence}`;
}

/** `text` cut to `max` characters (code points), with `…`. */
export function clip(text: string, max: number): string {
  const points = Array.from(text);
  return points.length > max ? `${points.slice(0, max - 1).join("")}…` : text;
}

/** `3 files`, `1 file`. */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
