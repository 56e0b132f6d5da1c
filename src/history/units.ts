/**
 * Turns as atomic units. A history is cut into units that are kept or removed whole, so compaction
 * never splits a call from its output or a reasoning item from what follows it
 * (docs: "Item 'rs_…' was provided without its required following item" is a 400 on OpenAI):
 *
 * - `input`: one user, system or developer message;
 * - `model`: what one model response produced (reasoning, assistant messages, calls, unknown item
 *   types) together with the outputs answering its calls. A model item starts a new unit only once
 *   every call of the current unit has its output;
 * - `compaction`: a server `compaction` item (it stands for everything before it).
 */
import type { JsonObject } from "../protocol/types.js";
import {
  FAILED_PREFIX,
  isCompactionText,
  SUMMARY_HEADING,
  type SummaryEntry,
  type ToolCallRecord,
} from "./tool-text.js";

export interface HistoryUnit {
  kind: "input" | "model" | "compaction";
  /** Index of the first item. */
  start: number;
  /** Index after the last item. */
  end: number;
  /** `function_call` items in the unit. */
  calls: number;
  /** For `input` units: the message role. */
  role?: string;
}

/** Cuts `items` into units (see the module comment). Every item belongs to exactly one unit, in order. */
export function splitUnits(items: readonly JsonObject[]): HistoryUnit[] {
  const units: HistoryUnit[] = [];
  let current: (HistoryUnit & { open: Set<unknown>; sawOutput: boolean }) | undefined;
  const close = () => {
    if (current !== undefined)
      units.push({ kind: current.kind, start: current.start, end: current.end, calls: current.calls });
    current = undefined;
  };
  items.forEach((item, i) => {
    if (isInputMessage(item) || item.type === "compaction") {
      close();
      const unit: HistoryUnit = {
        kind: item.type === "compaction" ? "compaction" : "input",
        start: i,
        end: i + 1,
        calls: 0,
      };
      if (item.type === "message") unit.role = String(item.role);
      units.push(unit);
      return;
    }
    if (item.type === "function_call_output") {
      if (current === undefined)
        current = { kind: "model", start: i, end: i, calls: 0, open: new Set(), sawOutput: false };
      current.end = i + 1;
      current.open.delete(item.call_id);
      current.sawOutput = true;
      return;
    }
    if (current?.sawOutput && current.open.size === 0) close();
    if (current === undefined)
      current = { kind: "model", start: i, end: i, calls: 0, open: new Set(), sawOutput: false };
    current.end = i + 1;
    if (item.type === "function_call") {
      current.calls++;
      current.open.add(item.call_id);
    }
  });
  close();
  return units;
}

/** A user, system or developer message (not an assistant one). */
export function isInputMessage(item: JsonObject): boolean {
  return item.type === "message" && item.role !== "assistant";
}

/**
 * Drops every reasoning item — encrypted reasoning is bound to the model that produced it, so it
 * must not reach another one — and strips the server `id` of the items that followed a dropped one
 * in its unit (they were stored as its pair; sent with their id and without it they are rejected).
 * Items without changes are returned as they are.
 */
export function dropReasoning(items: readonly JsonObject[]): {
  items: JsonObject[];
  dropped: number;
  stripped: number;
} {
  const out: JsonObject[] = [];
  let dropped = 0;
  let stripped = 0;
  for (const unit of splitUnits(items)) {
    let afterReasoning = false;
    for (let i = unit.start; i < unit.end; i++) {
      const item = items[i] as JsonObject;
      if (item.type === "reasoning") {
        dropped++;
        afterReasoning = true;
        continue;
      }
      if (afterReasoning && "id" in item && item.type !== "function_call_output") {
        const { id: _id, ...rest } = item;
        out.push(rest);
        stripped++;
      } else out.push(item);
    }
  }
  return { items: dropped === 0 ? [...items] : out, dropped, stripped };
}

/** A tool output's text form (strings as they are, content parts kept). */
export function outputOf(item: JsonObject): string | readonly JsonObject[] {
  if (typeof item.output === "string") return item.output;
  if (Array.isArray(item.output)) return item.output as JsonObject[];
  return JSON.stringify(item.output ?? "");
}

/**
 * Whether an output reports a failure: eddy's tool output object with `ok: false`, or a result
 * that starts with `Error:` (how foreign histories' error results are carried).
 */
export function isFailedOutput(output: string | readonly JsonObject[]): boolean {
  if (typeof output !== "string") return false;
  if (output.startsWith(FAILED_PREFIX)) return true;
  if (!output.startsWith("{") || !output.includes('"ok":false')) return false;
  try {
    return (JSON.parse(output) as { ok?: unknown }).ok === false;
  } catch {
    return false;
  }
}

/** The call each output answers (by `call_id`, the most recent call with that id before it). */
export function callRecords(items: readonly JsonObject[]): Map<JsonObject, ToolCallRecord> {
  const calls = new Map<unknown, JsonObject>();
  const records = new Map<JsonObject, ToolCallRecord>();
  for (const item of items) {
    if (item.type === "function_call") calls.set(item.call_id, item);
    else if (item.type === "function_call_output") {
      const call = calls.get(item.call_id);
      const output = outputOf(item);
      records.set(item, {
        callId: String(item.call_id ?? ""),
        name: typeof call?.name === "string" ? call.name : "tool",
        arguments: typeof call?.arguments === "string" ? call.arguments : "{}",
        output,
        failed: isFailedOutput(output),
      });
    }
  }
  return records;
}

/** The material a summary of `items` is written from, in order (see tool-text.ts). */
export function summaryMaterial(items: readonly JsonObject[]): SummaryEntry[] {
  const records = callRecords(items);
  const out: SummaryEntry[] = [];
  for (const item of items) {
    if (item.type === "function_call_output") {
      const record = records.get(item);
      if (record !== undefined) out.push({ kind: "call", record });
    } else if (item.type === "message") {
      const text = messageText(item);
      if (text === "") continue;
      if (item.role === "assistant") out.push({ kind: "answer", text });
      else if (isCompactionText(text))
        out.push({ kind: "previous", text: text.replace(SUMMARY_HEADING, "").trim() });
      else out.push({ kind: "request", text });
    }
  }
  return out;
}

/** The text of a message item (string content, or its text parts joined). */
export function messageText(item: JsonObject): string {
  if (typeof item.content === "string") return item.content;
  if (!Array.isArray(item.content)) return "";
  const texts: string[] = [];
  for (const part of item.content as JsonObject[]) if (typeof part.text === "string") texts.push(part.text);
  return texts.join("\n");
}

/**
 * Drops reasoning items that nothing follows: a reasoning item must be followed (after any further
 * reasoning items) by an assistant message or a call of the same response, else servers reject it
 * (an incomplete response can end in reasoning alone).
 */
export function dropDanglingReasoning(items: readonly JsonObject[]): {
  items: JsonObject[];
  dropped: number;
} {
  const out: JsonObject[] = [];
  let dropped = 0;
  for (let i = 0; i < items.length; i++) {
    const item = items[i] as JsonObject;
    if (item.type === "reasoning") {
      let j = i + 1;
      while (j < items.length && (items[j] as JsonObject).type === "reasoning") j++;
      const next = items[j];
      if (next === undefined || isInputMessage(next) || next.type === "function_call_output") {
        dropped++;
        continue;
      }
    }
    out.push(item);
  }
  return { items: dropped === 0 ? [...items] : out, dropped };
}
