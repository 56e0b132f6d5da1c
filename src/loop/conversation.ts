/**
 * The run's conversation: the history as input items (the truth stateless requests are built
 * from), the continuation mode, the response to chain on and the outputs waiting to be sent. One
 * question in, one answer out: `nextInput()` says what the next request carries; `record()`
 * takes a finished turn (docs/decisions.md #4 chained vs stateless).
 *
 * Outputs are sent in `output_index` order whatever order the calls ran in (docs/decisions.md #3),
 * and every request's input passes the pre-send pairing check (history/pairing.ts), whose repairs
 * are returned for a `history_repaired` frame.
 */
import type { ContinuationMode, HistoryRepair } from "../frames/frame.js";
import { toInputItem, userMessageItem } from "../history/items.js";
import { type PendingCall, repairChainedOutputs, repairHistory } from "../history/pairing.js";
import type { ItemParam, JsonObject } from "../protocol/types.js";
import { type AssembledResponse, NATIVE_CALL_TYPES } from "../provider/assembler/index.js";
import { answerItem } from "./call-outputs.js";
import type { AnsweredCall } from "./tool-runner.js";

/** What the next request carries. */
export interface NextInput {
  input: string | JsonObject[];
  /** Set in chained mode once a response can be continued. */
  previousResponseId: string | undefined;
  /** Repairs the pairing check made (empty when none). */
  repairs: HistoryRepair[];
}

export interface ConversationOptions {
  input: string | readonly ItemParam[];
  mode: ContinuationMode;
  /** Keep server item ids on resent items (a provider capability). */
  keepItemIds: boolean;
  /**
   * The run answers native call items (`apply_patch_call`, …), so the pairing check pairs them too.
   * @defaultValue false
   */
  nativeCalls?: boolean;
}

export class Conversation {
  private currentMode: ContinuationMode;
  /** The conversation as input items. */
  private history: JsonObject[];
  /** The first request's prompt, while it can still be sent as a plain string. */
  private prompt: string | undefined;
  private previousResponseId: string | undefined;
  /** Outputs of the last turn's calls, for a chained follow-up (in output order). */
  private pendingOutputs: JsonObject[] = [];
  /** Calls of the last response, which the chained follow-up must answer. */
  private pendingCallIds: PendingCall[] = [];
  /** The last recorded turn: its response id, call ids and outputs. */
  private lastResponseId: string | null = null;
  private lastCallIds: PendingCall[] = [];
  private lastOutputs: JsonObject[] = [];

  constructor(private readonly options: ConversationOptions) {
    this.currentMode = options.mode;
    this.prompt = typeof options.input === "string" ? options.input : undefined;
    this.history =
      typeof options.input === "string"
        ? [userMessageItem(options.input)]
        : [...(options.input as readonly JsonObject[])];
  }

  get mode(): ContinuationMode {
    return this.currentMode;
  }

  /** True once a chained follow-up has a response to continue. */
  get isChaining(): boolean {
    return this.currentMode === "chained" && this.previousResponseId !== undefined;
  }

  /** The history as input items: feed them to a later run's `input` to continue statelessly. */
  get items(): ItemParam[] {
    return this.history as ItemParam[];
  }

  /** What the next request sends: the whole (checked) history, or the new outputs after a chain. */
  nextInput(): NextInput {
    if (this.isChaining) {
      const repaired = repairChainedOutputs(this.pendingCallIds, this.pendingOutputs);
      return {
        input: repaired.items,
        previousResponseId: this.previousResponseId,
        repairs: repaired.repairs,
      };
    }
    // A first prompt goes as a plain string in chained mode; stateless history needs items.
    if (this.prompt !== undefined && this.currentMode === "chained")
      return { input: this.prompt, previousResponseId: undefined, repairs: [] };
    const repaired = repairHistory(
      this.history,
      this.options.nativeCalls === true ? { callTypes: ["function_call", ...NATIVE_CALL_TYPES] } : {},
    );
    this.history = repaired.items;
    // A copy: the body is recorded in frames and must not change when the history grows.
    return { input: [...this.history], previousResponseId: undefined, repairs: repaired.repairs };
  }

  /** Takes a finished turn: its output items and its answered calls (in output order) join the history. */
  record(response: AssembledResponse, answered: readonly AnsweredCall[]): void {
    this.prompt = undefined;
    const normalization = { keepItemIds: this.options.keepItemIds };
    for (const item of response.items) {
      const input = toInputItem(item, normalization);
      if (input !== undefined) this.history.push(input);
    }
    this.lastOutputs = inOutputOrder(answered).map(answerItem);
    this.history.push(...this.lastOutputs);
    this.lastCallIds = response.calls.map((c) => ({ callId: c.callId, itemType: c.itemType }));
    this.lastResponseId = response.id;
  }

  /** Adds a user message after the recorded turn (it goes with the next follow-up, e.g. "continue"). */
  addUserMessage(text: string): void {
    const message = userMessageItem(text);
    this.history.push(message);
    this.lastOutputs = [...this.lastOutputs, message];
  }

  /**
   * The next request follows up on the recorded turn. In chained mode that response becomes the
   * one to continue; returns false when it cannot be (it had no id), so the caller switches to
   * stateless.
   */
  followUp(): boolean {
    if (this.currentMode !== "chained") return true;
    if (this.lastResponseId === null) return false;
    this.previousResponseId = this.lastResponseId;
    this.pendingOutputs = this.lastOutputs;
    this.pendingCallIds = this.lastCallIds;
    return true;
  }

  /** From now on every request resends the whole history (`store: false`). */
  becomeStateless(): void {
    this.currentMode = "stateless";
    this.previousResponseId = undefined;
  }
}

/** Answered calls sorted by `output_index` (a stable sort keeps completion order for ties). */
function inOutputOrder(answered: readonly AnsweredCall[]): AnsweredCall[] {
  return [...answered].sort((a, b) => a.call.outputIndex - b.call.outputIndex);
}
