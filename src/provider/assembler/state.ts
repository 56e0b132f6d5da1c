/**
 * The response assembler's state: what has been learned so far about one response from its
 * streaming events. Built by `step()` (step.ts), read by the loop between events, turned into an
 * `AssembledResponse` by `finishAssembly()` (finish.ts).
 *
 * Items are keyed by `output_index`, the one identifier every item event carries and no provider
 * rotates (the GitHub Copilot capture changes `item_id` on every event); `item_id` is a fallback
 * for events that lack an index.
 */
import type { JsonObject, Usage } from "../../protocol/types.js";
import type { CallItemType } from "./native-calls.js";

/** How a response ended, as far as the stream told. */
export type TerminalKind = "completed" | "incomplete" | "failed" | "error";

/** An error reported inside the stream (`error` event or `response.failed`). */
export interface StreamError {
  code: string | null;
  message: string;
  type?: string;
  param?: string | null;
}

/** One content part of a message item (output_text or refusal), as streamed. */
export interface PartState {
  type: string;
  /** Text accumulated from deltas. */
  streamed: string;
  /** Text from the part's `.done` event (authoritative when present). */
  final?: string;
  annotations: unknown[];
  /** A difference between the final text and the deltas was already noted. */
  noted?: boolean;
  closed: boolean;
}

/** Everything known about one output item. */
export interface ItemState {
  outputIndex: number;
  /** Latest item id seen (ids may rotate); the done item's id wins. */
  id: string | undefined;
  type: string;
  /** The item as first announced by `output_item.added` (provisional). */
  added: JsonObject | undefined;
  /** The item from `output_item.done` (final: the source of truth). */
  done: JsonObject | undefined;
  // message
  parts: Map<number, PartState>;
  // function_call
  name: string | undefined;
  callId: string | undefined;
  argumentsStreamed: string;
  argumentsDone: string | undefined;
  // reasoning
  summary: Map<number, { streamed: string; final?: string }>;
  reasoningText: Map<number, { streamed: string; final?: string }>;
}

/**
 * A call that is complete and may be executed (promotion point: docs/decisions.md #3): a `function_call`, or
 * a native call item (native-calls.ts) with the tool name and arguments it runs with.
 */
export interface AssembledCall {
  outputIndex: number;
  itemId: string;
  callId: string;
  name: string;
  /**
   * The arguments string exactly as finally produced (done item > arguments.done > deltas); for a
   * native item, the arguments of the tool that answers it (`nativeCallInput`).
   */
  arguments: string;
  /** The final call item (a `function_call` with resolved arguments / call_id, or the native item as received). */
  item: JsonObject;
  /** Which item type the call came from (its answer is the matching output item). */
  itemType: CallItemType;
}

export interface Assembly {
  /**
   * Notes on the event just stepped (a final text that differs from the streamed deltas), taken by
   * the stream and recorded in that event's `provider_event.errors`.
   */
  notes: string[];
  /**
   * Output indexes of the items the event just stepped closed (`output_item.done`), taken by the
   * assembling stream to derive their `item_done` frames (src/provider/derive.ts).
   */
  closed: number[];
  /** Native call items are promoted too (`ProviderStreamOptions.nativeCalls`). */
  nativeCalls: boolean;
  /** The response id (the latest lifecycle event's; ids can change between events). */
  responseId: string | null;
  model: string | null;
  /** Latest response status seen (`in_progress`, `completed`, …). */
  status: string | null;
  items: Map<number, ItemState>;
  /** The highest key of `items` (-1 when empty): an event with neither index nor id opens the next item. */
  maxIndex: number;
  itemIndexById: Map<string, number>;
  /** Complete function calls in promotion order. Append-only: the loop keeps a cursor into it. */
  calls: AssembledCall[];
  /** Output indexes already promoted to `calls`. */
  promoted: Set<number>;
  /** Function-call items that ended `incomplete` (never executed). */
  incompleteCalls: number[];
  usage: Usage | null;
  terminal: TerminalKind | null;
  /** The terminal `response` snapshot (completed/incomplete/failed). */
  terminalResponse: JsonObject | null;
  incompleteReason: string | null;
  error: StreamError | null;
  /** True once a text or refusal delta (visible output) was seen. */
  outputEmitted: boolean;
  /** Number of provider events stepped. */
  events: number;
}

/** Options of `createAssembly`. */
export interface AssemblyOptions {
  /** Promote native call items (native-calls.ts) as well as function calls. @defaultValue false */
  nativeCalls?: boolean;
}

export function createAssembly(options: AssemblyOptions = {}): Assembly {
  return {
    nativeCalls: options.nativeCalls === true,
    responseId: null,
    model: null,
    status: null,
    items: new Map(),
    maxIndex: -1,
    itemIndexById: new Map(),
    calls: [],
    promoted: new Set(),
    incompleteCalls: [],
    usage: null,
    terminal: null,
    terminalResponse: null,
    incompleteReason: null,
    error: null,
    outputEmitted: false,
    notes: [],
    closed: [],
    events: 0,
  };
}

/** Adds an item's state under its output index. */
export function putItem(state: Assembly, item: ItemState): void {
  state.items.set(item.outputIndex, item);
  if (item.outputIndex > state.maxIndex) state.maxIndex = item.outputIndex;
}

export function createItemState(outputIndex: number, type: string, id: string | undefined): ItemState {
  return {
    outputIndex,
    id,
    type,
    added: undefined,
    done: undefined,
    parts: new Map(),
    name: undefined,
    callId: undefined,
    argumentsStreamed: "",
    argumentsDone: undefined,
    summary: new Map(),
    reasoningText: new Map(),
  };
}
