/**
 * The demo model's answers after tools ran: it reads each `function_call_output` (eddy's stable
 * JSON `{tool, ok, exit_code, stdout, stderr, artifacts?, error?}`; any other string is used raw)
 * and writes a reply that uses it: a file's first lines and, for JSON, its top-level keys and
 * notable values; a folder's entry count and some names; a search's match and file counts; a
 * failed call's error. Another tool's own output (not eddy's JSON) is read as JSON (its fields
 * and values) or as text.
 */
import { isJsonObject } from "../util/json.js";
import { describeShell } from "./demo-act.js";
import { clip, codeBlock, firstLines, type ParsedOutput, parseOutput, plural } from "./demo-output.js";
import { EDDY_TOOLS } from "./demo-tools.js";

/** One answered call: what was called and what came back. */
export interface AnsweredCall {
  name: string;
  /** The call's arguments, parsed (`{}` when they were not JSON). */
  args: Record<string, unknown>;
  /** The `function_call_output.output`, as text. */
  output: string;
}

const PREVIEW_LINES = 12;

/** The reply for all answered calls of a turn, in call order. */
export function answerCalls(calls: AnsweredCall[]): string {
  return calls.map(answerOne).join("\n\n");
}

function answerOne(call: AnsweredCall): string {
  if (call.name === "shell" || call.name === "bash")
    return describeShell(String(call.args.command ?? ""), call.output);
  const parsed = parseOutput(call.output);
  const path = typeof call.args.path === "string" ? call.args.path : undefined;
  if (parsed === undefined && !EDDY_TOOLS.has(call.name)) return describeForeign(call);
  if (parsed === undefined)
    return `\`${call.name}\` returned:\n\n${codeBlock(firstLines(call.output, PREVIEW_LINES), "")}`;
  if (!parsed.ok) {
    const why = parsed.error ?? (parsed.stderr.trim() || `exit code ${parsed.exitCode ?? "unknown"}`);
    return `The \`${call.name}\` call${path === undefined ? "" : ` on \`${path}\``} failed: ${why.trim()}. I can't tell you more without a successful result; try another path or argument.`;
  }
  switch (call.name) {
    case "read_file":
      return describeFile(path ?? "the file", parsed);
    case "list_dir":
      return describeListing(path ?? ".", parsed);
    case "grep":
      return describeMatches(String(call.args.pattern ?? ""), parsed);
    default: {
      // Another tool (an MCP server's `SERVER__TOOL`) in eddy's wrapper: read what it returned.
      if (!EDDY_TOOLS.has(call.name)) return describeForeign({ ...call, output: parsed.stdout });
      const out = parsed.stdout.trim();
      const head = `\`${call.name}\` finished successfully${parsed.exitCode === undefined ? "" : ` (exit code ${parsed.exitCode})`}`;
      return out === ""
        ? `${head} with no output.`
        : `${head}. Its output:\n\n${codeBlock(firstLines(out, PREVIEW_LINES), "")}`;
    }
  }
}

function describeFile(path: string, out: ParsedOutput): string {
  const content = stripLineNumbers(out.stdout);
  const lines = content.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  if (lines.length === 0) return `\`${path}\` is empty.`;
  const shown = lines.slice(0, PREVIEW_LINES).join("\n");
  const more =
    lines.length > PREVIEW_LINES ? `\n\n(${lines.length - PREVIEW_LINES} more lines not shown.)` : "";
  const parts = [
    `Here is the start of \`${path}\` (${plural(lines.length, "line")}):\n\n${codeBlock(shown, language(path))}${more}`,
  ];
  const json = describeJson(content);
  if (json !== undefined) parts.push(json);
  return parts.join("\n\n");
}

/** What another tool returned, by its arguments: a JSON object's fields and values, an array's size, or the text. */
function describeForeign(call: AnsweredCall): string {
  const args = Object.entries(call.args)
    .map(([k, v]) => `${k}: ${brief(v)}`)
    .join(", ");
  const head = `According to \`${call.name}\`${args === "" ? "" : ` (${args})`}`;
  let value: unknown;
  try {
    value = JSON.parse(call.output);
  } catch {
    const text = call.output.trim();
    if (text === "") return `${head}, there is nothing: it returned no output.`;
    return text.includes("\n")
      ? `${head}:\n\n${codeBlock(firstLines(text, PREVIEW_LINES), "")}`
      : `${head}: ${clip(text, 300)}`;
  }
  if (Array.isArray(value))
    return `${head}, there are ${plural(value.length, "result")}${value.length > 0 ? `: ${list(value.map(brief), 8)}` : ""}.`;
  if (value !== null && typeof value === "object") {
    const fields = Object.entries(value as Record<string, unknown>).map(([k, v]) => `${k} ${brief(v)}`);
    return fields.length === 0
      ? `${head}, there is nothing to report (an empty object).`
      : `${head}: ${list(fields, 12)}.`;
  }
  return `${head}: ${brief(value)}.`;
}

function brief(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(clip(value, 80));
  const json = JSON.stringify(value) ?? String(value);
  return json.length > 80 ? `${json.slice(0, 79)}…` : json;
}

/** Top-level keys and notable values of a JSON document (a package.json gets name, version, scripts, dependencies). */
function describeJson(text: string): string | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (Array.isArray(value)) return `It is a JSON array with ${plural(value.length, "element")}.`;
  if (value === null || typeof value !== "object") return undefined;
  const doc = value as Record<string, unknown>;
  const keys = Object.keys(doc);
  const facts = [
    `It is a JSON object with ${plural(keys.length, "top-level key")}: ${list(
      keys.map((k) => `\`${k}\``),
      12,
    )}.`,
  ];
  const named = ["name", "version", "description", "license", "type"].filter(
    (k) => typeof doc[k] === "string",
  );
  if (named.length > 0)
    facts.push(named.map((k) => `${k}: ${JSON.stringify(clip(String(doc[k]), 80))}`).join(", "));
  const scripts = doc.scripts;
  if (isJsonObject(scripts)) {
    const entries = Object.entries(scripts).filter(([, v]) => typeof v === "string");
    facts.push(
      `Scripts (${entries.length}): ${list(
        entries.map(([k, v]) => `\`${k}\` → \`${v}\``),
        6,
      )}.`,
    );
  }
  for (const key of ["dependencies", "devDependencies"]) {
    const deps = doc[key];
    if (isJsonObject(deps)) {
      const names = Object.keys(deps);
      facts.push(`${key}: ${names.length}${names.length > 0 ? ` (${list(names, 6)})` : ""}.`);
    }
  }
  return facts.join("\n");
}

function describeListing(path: string, out: ParsedOutput): string {
  const entries = listEntries(out.stdout);
  const count = numberIn(out.artifacts, ["entries", "count", "total"]) ?? entries.length;
  if (count === 0) return `\`${path}\` has no entries.`;
  const dirs = entries.filter((e) => e.endsWith("/")).length;
  const kinds =
    dirs > 0
      ? ` (${plural(dirs, "directory", "directories")}, ${plural(entries.length - dirs, "file")})`
      : "";
  return `\`${path}\` has ${plural(count, "entry", "entries")}${kinds}: ${list(
    entries.map((e) => `\`${e}\``),
    15,
  )}.`;
}

function describeMatches(pattern: string, out: ParsedOutput): string {
  const lines = out.stdout.split("\n").filter((l) => l.trim() !== "" && !/^no matches/i.test(l.trim()));
  const count = numberIn(out.artifacts, ["matches", "match_count", "count", "total"]) ?? lines.length;
  if (count === 0) return `No matches for \`${pattern}\`.`;
  const files = new Map<string, number>();
  for (const line of lines) {
    const file = /^(.+?):\d+[:-]/.exec(line)?.[1];
    if (file !== undefined) files.set(file, (files.get(file) ?? 0) + 1);
  }
  const where =
    files.size > 0
      ? ` in ${plural(files.size, "file")}: ${list(
          [...files].map(([f, n]) => `\`${f}\` (${n})`),
          8,
        )}`
      : "";
  const first = lines.length > 0 ? `\n\n${codeBlock(lines.slice(0, 5).join("\n"), "")}` : "";
  return `Found ${plural(count, "match", "matches")} for \`${pattern}\`${where}.${first}`;
}

function listEntries(stdout: string): string[] {
  try {
    const value: unknown = JSON.parse(stdout);
    if (Array.isArray(value)) return value.map((v) => (typeof v === "string" ? v : JSON.stringify(v)));
  } catch {
    // not JSON: one entry per line
  }
  return stdout
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "");
}

/** Removes `  12\t` / `12: ` / `12 | ` prefixes when every non-empty line has one. */
function stripLineNumbers(text: string): string {
  const lines = text.split("\n");
  const prefix = /^\s*\d+(?:\t|: |\s\|\s?)/;
  if (!lines.every((l) => l === "" || prefix.test(l)) || !lines.some((l) => l !== "")) return text;
  return lines.map((l) => l.replace(prefix, "")).join("\n");
}

function numberIn(o: Record<string, unknown>, keys: string[]): number | undefined {
  for (const k of keys) if (typeof o[k] === "number") return o[k] as number;
  return undefined;
}

function language(path: string): string {
  const ext = /\.([A-Za-z0-9]+)$/.exec(path)?.[1]?.toLowerCase() ?? "";
  const known: Record<string, string> = {
    ts: "ts",
    tsx: "tsx",
    js: "js",
    mjs: "js",
    json: "json",
    md: "md",
    yml: "yaml",
    yaml: "yaml",
    py: "python",
    sh: "sh",
  };
  return known[ext] ?? "";
}

function list(items: string[], max: number): string {
  return items.length > max
    ? `${items.slice(0, max).join(", ")} and ${items.length - max} more`
    : items.join(", ");
}
