/**
 * Output items and function calls. A `function_call` item is promoted to an executable call at its
 * `output_item.done` (docs/decisions.md #3), with:
 * - arguments from the done item when non-empty (the source of truth), else from
 *   `function_call_arguments.done`, else the accumulated deltas — so a provider that sends *less*
 *   in `done` than it streamed (docs/pitfalls.md #30) does not lose them;
 * - `call_id` falling back to the item id;
 * - an item that ends `incomplete` never promoted.
 * A response that *completes* completes every item in it (spec §7.5), so at `response.completed`
 * function calls whose `output_item.done` never came (vLLM, sglang: docs/pitfalls.md #26, #28) are
 * promoted then, in `output_index` order. Nothing is promoted from an incomplete or failed response.
 * Native call items (`apply_patch_call`, `shell_call`, …: native-calls.ts) are promoted the same
 * way at their `output_item.done`, with the input of the tool that answers them.
 */
import type { JsonObject } from "../../protocol/types.js";
import { isJsonObject } from "../../util/json.js";
import { noteFinalMessage } from "./content.js";
import { isClosed, itemFor, str } from "./item-lookup.js";
import { answeredLocally, isNativeCallType, nativeCallId, nativeCallInput } from "./native-calls.js";
import { type AssembledCall, type Assembly, createItemState, type ItemState, putItem } from "./state.js";

export function onOutputItemEvent(state: Assembly, event: JsonObject): void {
  const item = event.item;
  if (!isJsonObject(item)) return;
  const it = item as JsonObject;
  const itemType = str(it.type) ?? "unknown";
  const starts = event.type === "response.output_item.added";
  const st = itemFor(state, { output_index: event.output_index, item_id: it.id }, itemType, starts);
  if (isClosed(st)) return; // a repeated done, or an added after done: the first done wins
  st.type = itemType;
  const id = str(it.id);
  if (event.type === "response.output_item.added") {
    st.added ??= it;
    if (id !== undefined && st.id === undefined) st.id = id;
    if (itemType === "function_call") {
      st.name ??= str(it.name);
      st.callId ??= nonEmpty(it.call_id);
    }
    return;
  }
  // output_item.done: the final item.
  st.done = it;
  state.closed.push(st.outputIndex);
  if (id !== undefined) st.id = id;
  if (itemType === "message") noteFinalMessage(state, st, it);
  if (state.nativeCalls && isNativeCallType(itemType)) {
    if (it.status === "incomplete") state.incompleteCalls.push(st.outputIndex);
    else if (answeredLocally(it)) promoteNative(state, st, it);
    return;
  }
  if (itemType !== "function_call") return;
  st.name = str(it.name) ?? st.name;
  st.callId = nonEmpty(it.call_id) ?? st.callId;
  if (it.status === "incomplete") state.incompleteCalls.push(st.outputIndex);
  else promote(state, st);
}

export function onFunctionCallArgumentsEvent(state: Assembly, event: JsonObject): void {
  const st = itemFor(state, event, "function_call");
  if (isClosed(st)) return;
  if (event.type === "response.function_call_arguments.delta") {
    const delta = str(event.delta);
    if (delta !== undefined) st.argumentsStreamed += delta;
  } else {
    const args = str(event.arguments);
    if (args !== undefined) st.argumentsDone = args;
  }
}

/** The arguments of a function-call item, by the precedence in the module comment. */
export function resolveArguments(st: ItemState): string {
  const fromDone = st.done === undefined ? undefined : str(st.done.arguments);
  if (fromDone !== undefined && fromDone !== "") return fromDone;
  if (st.argumentsDone !== undefined && st.argumentsDone !== "") return st.argumentsDone;
  if (st.argumentsStreamed !== "") return st.argumentsStreamed;
  return fromDone ?? st.argumentsDone ?? "";
}

/** Makes a function-call item an executable call (once). */
export function promote(state: Assembly, st: ItemState): void {
  promoteOnce(state, st.outputIndex, () => {
    const args = resolveArguments(st);
    const callId = st.callId ?? st.id ?? `call_${st.outputIndex}`;
    const itemId = st.id ?? callId;
    const name = st.name ?? "";
    const base: JsonObject = st.done ?? { type: "function_call", id: itemId, status: "completed" };
    const item: JsonObject = { ...base, call_id: callId, name, arguments: args };
    return { itemId, callId, name, arguments: args, item, itemType: "function_call" };
  });
}

/** Makes a done native call item an executable call (once); the item is kept as received. */
function promoteNative(state: Assembly, st: ItemState, item: JsonObject): void {
  promoteOnce(state, st.outputIndex, () => {
    const itemId = st.id ?? nativeCallId(item) ?? `call_${st.outputIndex}`;
    const callId = nativeCallId(item) ?? itemId;
    const { name, arguments: args } = nativeCallInput(item);
    return { itemId, callId, name, arguments: args, item, itemType: item.type as AssembledCall["itemType"] };
  });
}

/** Adds the call of the item at `outputIndex`, unless it was promoted already. */
function promoteOnce(
  state: Assembly,
  outputIndex: number,
  call: () => Omit<AssembledCall, "outputIndex">,
): void {
  if (state.promoted.has(outputIndex)) return;
  state.promoted.add(outputIndex);
  state.calls.push({ outputIndex, ...call() });
}

/**
 * At `response.completed`: adopts function calls that only the terminal `output` reports and
 * promotes every call not promoted yet, in `output_index` order.
 */
export function promoteRemainingCalls(state: Assembly, output: unknown): void {
  if (Array.isArray(output)) {
    output.forEach((raw, position) => {
      if (raw === null || typeof raw !== "object") return;
      const it = raw as JsonObject;
      if (state.nativeCalls && isNativeCallType(it.type)) {
        adoptNative(state, it, position);
        return;
      }
      if (it.type !== "function_call") return;
      const id = str(it.id);
      const index = (id === undefined ? undefined : state.itemIndexById.get(id)) ?? position;
      let st = state.items.get(index);
      if (st === undefined) {
        st = createItemState(index, "function_call", id);
        putItem(state, st);
        if (id !== undefined) state.itemIndexById.set(id, index);
      }
      if (st.type !== "function_call" || st.done !== undefined) return;
      st.done = it;
      st.name = str(it.name) ?? st.name;
      st.callId = nonEmpty(it.call_id) ?? st.callId;
      if (it.status === "incomplete") state.incompleteCalls.push(index);
    });
  }
  const indexes = [...state.items.keys()].sort((a, b) => a - b);
  const incomplete = new Set(state.incompleteCalls); // a lookup per item: a response with many stays linear
  for (const index of indexes) {
    const st = state.items.get(index);
    if (st === undefined || state.promoted.has(index) || incomplete.has(index)) continue;
    if (st.type === "function_call") promote(state, st);
    else if (
      state.nativeCalls &&
      isNativeCallType(st.type) &&
      st.done !== undefined &&
      answeredLocally(st.done)
    )
      promoteNative(state, st, st.done);
  }
}

/** A native call item only the terminal `output` reports (its `output_item.done` never came). */
function adoptNative(state: Assembly, it: JsonObject, position: number): void {
  const id = str(it.id);
  const index = (id === undefined ? undefined : state.itemIndexById.get(id)) ?? position;
  let st = state.items.get(index);
  if (st === undefined) {
    st = createItemState(index, String(it.type), id);
    putItem(state, st);
    if (id !== undefined) state.itemIndexById.set(id, index);
  }
  if (st.type !== it.type || st.done !== undefined) return;
  st.done = it;
  if (it.status === "incomplete") state.incompleteCalls.push(index);
}

function nonEmpty(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}
