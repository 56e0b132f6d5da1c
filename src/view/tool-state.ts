/**
 * Tool calls as the view shows them: arguments, outcome, and for file writes a diff against what
 * the run itself last saw of the file. The run's own frames are the only source: a full
 * `read_file` (lines 1..total, not cut) or an earlier `write_file` tells the content; an
 * `apply_patch` or a partial read leaves it unknown, and the diff then shows the new content alone.
 */
import { posix } from "node:path";
import type { ToolCallFrame, ToolEndedFrame } from "../frames/frame.js";
import { isJsonObject as isObject } from "../util/json.js";
import type { ToolCallView } from "./view-data.js";

/** What the run knows of the workspace's files, by normalized path. */
export type KnownFiles = Map<string, string>;

/** A `tool_call` frame as a view (its outcome is filled in by `endToolCall`). */
export function startToolCall(frame: ToolCallFrame, known: KnownFiles): ToolCallView {
  const call: ToolCallView = {
    seq: frame.seq,
    call_id: frame.call_id,
    name: frame.name,
    arguments: frame.arguments,
  };
  const args = parseJson(frame.arguments);
  if (args !== undefined) call.args = args;
  const a = isObject(args) ? args : {};
  if (frame.name === "write_file" && typeof a.path === "string" && typeof a.content === "string") {
    const path = normalize(a.path);
    const append = a.append === true;
    const before = known.get(path) ?? null;
    call.file_diff = {
      path: a.path,
      before,
      after: append && before !== null ? before + a.content : a.content,
      append,
    };
  } else if (frame.name === "apply_patch" && typeof a.patch === "string") {
    call.patch = a.patch;
  }
  return call;
}

/** Records a `tool_ended` frame on its call and updates what the run knows of the files. */
export function endToolCall(call: ToolCallView, frame: ToolEndedFrame, known: KnownFiles): void {
  call.ended = frame.ts;
  call.ended_seq = frame.seq;
  call.ok = frame.ok;
  call.output = frame.output;
  call.duration_ms = frame.duration_ms;
  const json = parseJson(frame.output);
  if (json !== undefined) call.output_json = json;
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
    if (whole) known.set(normalize(art.path as string), output.stdout as string);
  } else if (call.name === "write_file" && call.file_diff !== undefined) {
    const path = normalize(call.file_diff.path);
    if (call.file_diff.append && call.file_diff.before === null) known.delete(path);
    else known.set(path, call.file_diff.after);
  } else if (call.name === "apply_patch" && typeof args.patch === "string") {
    for (const m of args.patch.matchAll(
      /^\*\*\* (?:Add|Delete|Update) File: (.+)$|^\*\*\* Move to: (.+)$/gm,
    )) {
      known.delete(normalize((m[1] ?? m[2] ?? "").trim()));
    }
  }
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
