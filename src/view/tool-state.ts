/**
 * Tool calls as the view shows them: arguments, outcome, and for file writes a diff against what
 * the run itself last saw of the file. The run's own frames are the only source: a full
 * `read_file` (lines 1..total, not cut) or an earlier `write_file` tells the content; an
 * `apply_patch` or a partial read leaves it unknown, and the diff then shows the new content alone.
 * Every field is untrusted and bounded (limits.ts): arguments and outputs too long for the page are
 * cut (their size shown) and then neither parsed nor diffed.
 */
import { posix } from "node:path";
import type { ToolCallFrame, ToolEndedFrame } from "../frames/frame.js";
import { isJsonObject as isObject } from "../util/json.js";
import { nameOf, numberOf, type TextBudget, textOf, VIEW_LIMITS } from "./limits.js";
import type { ToolCallView } from "./view-data.js";

/** What the run knows of the workspace's files, by normalized path (bounded: limits.ts). */
export type KnownFiles = Map<string, string>;

/** A `tool_call` frame as a view (its outcome is filled in by `endToolCall`). */
export function startToolCall(frame: ToolCallFrame, known: KnownFiles, budget: TextBudget): ToolCallView {
  const name = nameOf(frame.name);
  const raw = textOf(frame.arguments);
  const call: ToolCallView = {
    seq: frame.seq,
    call_id: nameOf(frame.call_id),
    name,
    arguments: budget.take(raw),
  };
  // The parsed arguments are a second copy on the page: only when they fit whole.
  const args = call.arguments === raw && budget.fits(raw.length) ? parseJson(raw) : undefined;
  if (args !== undefined) budget.charge(raw.length);
  if (args !== undefined) call.args = args;
  const a = isObject(args) ? args : {};
  if (name === "write_file" && typeof a.path === "string" && typeof a.content === "string") {
    const path = normalize(a.path);
    const append = a.append === true;
    const before = known.get(path) ?? null;
    const after = append && before !== null ? before + a.content : a.content;
    if (after.length <= VIEW_LIMITS.knownFileChars && budget.fits(after.length + (before?.length ?? 0))) {
      budget.charge(before?.length ?? 0);
      call.file_diff = { path: nameOf(a.path), before, after: budget.take(after), append };
    }
  } else if (name === "apply_patch" && typeof a.patch === "string") {
    call.patch = budget.take(a.patch);
  }
  return call;
}

/** Records a `tool_ended` frame on its call and updates what the run knows of the files. */
export function endToolCall(
  call: ToolCallView,
  frame: ToolEndedFrame,
  known: KnownFiles,
  budget: TextBudget,
): void {
  call.ended = frame.ts;
  call.ended_seq = frame.seq;
  call.ok = frame.ok === true;
  const raw = textOf(frame.output);
  call.output = budget.take(raw);
  const duration = numberOf(frame.duration_ms);
  if (duration !== undefined) call.duration_ms = duration;
  const json = call.output === raw && budget.fits(raw.length) ? parseJson(raw) : undefined;
  if (json !== undefined) {
    call.output_json = json;
    budget.charge(raw.length);
  }
  if (call.output !== raw) call.output_cut = raw.length;
  if (frame.truncated === true) {
    call.truncated = true;
    if (typeof frame.full_output === "string") call.full_output_chars = frame.full_output.length;
  }
  learnFiles(call, json, known);
}

function learnFiles(call: ToolCallView, output: unknown, known: KnownFiles): void {
  if (call.ok !== true) return;
  const args = isObject(call.args) ? call.args : {};
  if (call.name === "read_file" && isObject(output) && isObject(output.artifacts)) {
    const art = output.artifacts;
    const whole =
      art.truncated === false &&
      art.start_line === 1 &&
      art.end_line === art.total_lines &&
      call.truncated !== true &&
      typeof art.path === "string" &&
      typeof output.stdout === "string";
    if (whole) remember(known, normalize(art.path as string), output.stdout as string);
  } else if (call.name === "write_file" && call.file_diff !== undefined) {
    const path = normalize(call.file_diff.path);
    if (call.file_diff.append && call.file_diff.before === null) known.delete(path);
    else remember(known, path, call.file_diff.after);
  } else if (call.name === "write_file" && typeof args.path === "string") {
    known.delete(normalize(args.path)); // written, but too large to remember
  } else if (call.name === "apply_patch" && typeof args.patch === "string") {
    for (const m of args.patch.matchAll(
      /^\*\*\* (?:Add|Delete|Update) File: (.+)$|^\*\*\* Move to: (.+)$/gm,
    )) {
      known.delete(normalize((m[1] ?? m[2] ?? "").trim()));
    }
  }
}

/** Remembers a file's content, if it is small enough and the run has room for one more file. */
function remember(known: KnownFiles, path: string, content: string): void {
  if (
    content.length > VIEW_LIMITS.knownFileChars ||
    (known.size >= VIEW_LIMITS.knownFiles && !known.has(path))
  ) {
    known.delete(path);
    return;
  }
  known.set(path, content);
}

function normalize(path: string): string {
  return posix.normalize(path.replace(/\\/g, "/")).replace(/^\.\//, "");
}

function parseJson(text: string): unknown {
  const t = text.trimStart();
  if (!t.startsWith("{") && !t.startsWith("[")) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
