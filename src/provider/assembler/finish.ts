/**
 * Turning an assembly into the response the loop works with. The final items are the terminal
 * response's `output` when it has any; when it is empty (Codex and many proxies send
 * `output: []`, docs/pitfalls.md #29) or there was no terminal event, the items are rebuilt from the
 * stream: the `output_item.done` item where one came, else a reconstruction marked `incomplete`.
 */
import type { JsonObject, Usage } from "../../protocol/types.js";
import { str } from "./item-lookup.js";
import { resolveArguments } from "./items.js";
import type { AssembledCall, Assembly, ItemState, StreamError, TerminalKind } from "./state.js";

/**
 * A response as assembled from its stream: id, status, output items, text, complete calls, usage.
 */
export interface AssembledResponse {
  id: string | null;
  model: string | null;
  /** `completed`, `incomplete`, `failed`, or the last status seen when the stream had no terminal event. */
  status: string;
  terminal: TerminalKind | null;
  /** Output items in `output_index` order, as received (see module comment). */
  items: JsonObject[];
  /** The `output_text` of the message items, messages joined by a blank line (partial when cut off). */
  outputText: string;
  /** Complete function calls, in promotion order. */
  calls: AssembledCall[];
  usage: Usage | null;
  incompleteReason: string | null;
  error: StreamError | null;
}

export function finishAssembly(state: Assembly): AssembledResponse {
  const items = finalItems(state).map((e) => e.item);
  return {
    id: state.responseId,
    model: state.model,
    status: state.terminal === "error" ? "failed" : (state.status ?? "in_progress"),
    terminal: state.terminal,
    items,
    outputText: outputTextOf(items),
    calls: state.calls,
    usage: state.usage,
    incompleteReason: state.incompleteReason,
    error: state.error,
  };
}

/** One output item of the response as `finishAssembly` takes it, with where it streamed. */
export interface FinalItem {
  /** The output index it streamed at; for an item only the terminal `output` lists, its position there. */
  outputIndex: number;
  item: JsonObject;
  /** False for an item only the terminal `output` lists (no event of the stream showed it). */
  streamed: boolean;
}

/** The response's output items in order (see the module comment), each with its output index. */
export function finalItems(state: Assembly): FinalItem[] {
  const terminalOutput = state.terminalResponse?.output;
  return Array.isArray(terminalOutput) && terminalOutput.length > 0
    ? mergedItems(state, terminalOutput)
    : [...streamedByIndex(state)].map(([outputIndex, e]) => ({ outputIndex, item: e.item, streamed: true }));
}

/**
 * The terminal `output`, position by position, except that an item whose `output_item.done` came
 * is taken from that event (the rule for `encrypted_content`, which providers re-encrypt
 * per serialization) and streamed items the terminal output lacks are kept.
 */
function mergedItems(state: Assembly, terminalOutput: unknown[]): FinalItem[] {
  const streamed = streamedByIndex(state);
  const byId = new Map<string, number>();
  for (const [index, entry] of streamed) {
    const id = str(entry.item.id);
    if (id !== undefined) byId.set(id, index);
  }
  const terminalIds = new Set(
    terminalOutput.map((i) => (i !== null && typeof i === "object" ? str((i as JsonObject).id) : undefined)),
  );
  const used = new Set<number>();
  const out: FinalItem[] = [];
  terminalOutput.forEach((raw, position) => {
    if (raw === null || typeof raw !== "object") return;
    const item = raw as JsonObject;
    const id = str(item.id);
    let index = id === undefined ? undefined : byId.get(id);
    if (index === undefined) {
      // Ids that rotate between events (GitHub Copilot): fall back to the same position.
      const candidate = streamed.get(position);
      const candidateId = candidate === undefined ? undefined : str(candidate.item.id);
      if (
        candidate !== undefined &&
        candidate.item.type === item.type &&
        (candidateId === undefined || !terminalIds.has(candidateId))
      ) {
        index = position;
      }
    }
    const free = index !== undefined && !used.has(index);
    const entry = free && index !== undefined ? streamed.get(index) : undefined;
    if (index !== undefined && free) used.add(index);
    if (entry?.done && index !== undefined)
      out.push({ outputIndex: index, item: entry.item, streamed: true });
    else if (free && index !== undefined)
      out.push({ outputIndex: index, item: patchCall(state, item), streamed: true });
    else out.push({ outputIndex: position, item: patchCall(state, item), streamed: false });
  });
  for (const [index, entry] of streamed)
    if (!used.has(index) && entry.done && !terminalIds.has(str(entry.item.id)))
      out.push({ outputIndex: index, item: entry.item, streamed: true });
  return out;
}

/** A terminal `function_call` item with empty arguments keeps the ones that were streamed. */
function patchCall(state: Assembly, item: JsonObject): JsonObject {
  if (item.type !== "function_call" || (str(item.arguments) ?? "") !== "") return item;
  const id = str(item.id);
  const index = id === undefined ? undefined : state.itemIndexById.get(id);
  const st = index === undefined ? undefined : state.items.get(index);
  if (st === undefined) return item;
  const args = resolveArguments(st);
  return args === "" ? item : { ...item, arguments: args };
}

/** Each streamed item by output index: the promoted call, the done item, or a reconstruction. */
function streamedByIndex(state: Assembly): Map<number, { item: JsonObject; done: boolean }> {
  const promotedByIndex = new Map(state.calls.map((c) => [c.outputIndex, c.item]));
  const out = new Map<number, { item: JsonObject; done: boolean }>();
  for (const index of [...state.items.keys()].sort((a, b) => a - b)) {
    const st = state.items.get(index) as ItemState;
    const call = promotedByIndex.get(index);
    if (call !== undefined) out.set(index, { item: call, done: st.done !== undefined });
    else if (st.done !== undefined) out.set(index, { item: st.done, done: true });
    else out.set(index, { item: rebuild(st), done: false });
  }
  return out;
}

/** An item that never got its `output_item.done`: what the stream showed of it, marked incomplete. */
function rebuild(st: ItemState): JsonObject {
  const base: JsonObject = { ...(st.added ?? {}), type: st.type };
  if (st.id !== undefined) base.id = st.id;
  switch (st.type) {
    case "message": {
      const content = [...st.parts.entries()]
        .sort(([a], [b]) => a - b)
        .map(([, p]) =>
          p.type === "refusal"
            ? { type: "refusal", refusal: p.final ?? p.streamed }
            : { type: p.type, text: p.final ?? p.streamed, annotations: p.annotations },
        );
      return { ...base, role: base.role ?? "assistant", content, status: "incomplete" };
    }
    case "function_call":
      return {
        ...base,
        call_id: st.callId ?? st.id ?? "",
        name: st.name ?? "",
        arguments: resolveArguments(st),
        status: "incomplete",
      };
    case "reasoning": {
      const summary = [...st.summary.entries()]
        .sort(([a], [b]) => a - b)
        .map(([, s]) => ({ type: "summary_text", text: s.final ?? s.streamed }));
      const out: JsonObject = { ...base, summary };
      if (st.reasoningText.size > 0) {
        out.content = [...st.reasoningText.entries()]
          .sort(([a], [b]) => a - b)
          .map(([, s]) => ({ type: "reasoning_text", text: s.final ?? s.streamed }));
      }
      return out;
    }
    default:
      return { ...base, status: "incomplete" };
  }
}

/**
 * The `output_text` parts of assistant message items: parts of one message are concatenated,
 * separate messages (e.g. a `commentary` then a `final_answer`) are joined with a blank line.
 */
export function outputTextOf(items: readonly JsonObject[]): string {
  const messages: string[] = [];
  for (const item of items) {
    if (item.type !== "message" || (item.role !== undefined && item.role !== "assistant")) continue;
    const content = item.content;
    let text = "";
    if (typeof content === "string") text = content;
    else if (Array.isArray(content)) {
      for (const part of content) {
        if (part !== null && typeof part === "object" && (part as JsonObject).type === "output_text") {
          text += str((part as JsonObject).text) ?? "";
        }
      }
    }
    if (text !== "") messages.push(text);
  }
  return messages.join("\n\n");
}
