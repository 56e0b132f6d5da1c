/**
 * The run's conversation: the history as input items (the truth stateless requests are built
 * from), the continuation mode, the response to chain on and the outputs waiting to be sent. One
 * question in, one answer out: `nextInput()` says what the next request carries; `record()`
 * takes a finished turn (docs/decisions.md #4 chained vs stateless).
 *
 * Outputs are sent in `output_index` order whatever order the calls ran in (docs/decisions.md #3).
 * A request that carries the history renders it through the run's `ToolHistoryManager` (pairing
 * check, threshold folding, the strategy), whose repairs and fold are returned for the
 * `history_repaired` and `context_compacted` frames; a chained follow-up's outputs pass the
 * chained pairing check (history/pairing.ts).
 */
import type { ContextCompaction, ContinuationMode, HistoryRepair } from "../frames/frame.js";
import { toInputItem, userMessageItem } from "../history/items.js";
import { type PendingCall, repairChainedOutputs } from "../history/pairing.js";
import type { ToolHistoryManager } from "../history/tool-history.js";
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
  /** Set when older calls were folded into a summary for this request (threshold). */
  compaction?: ContextCompaction;
}

export interface ConversationOptions {
  input: string | readonly ItemParam[];
  /** Items before the input (a rendered context bundle). @defaultValue none */
  context?: readonly ItemParam[] | undefined;
  mode: ContinuationMode;
  /** Keep server item ids on resent items (a provider capability). */
  keepItemIds: boolean;
  /** Renders every request that carries the history. */
  history: ToolHistoryManager;
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
    const context = (options.context ?? []) as readonly JsonObject[];
    this.history = [
      ...context,
      ...(typeof options.input === "string"
        ? [userMessageItem(options.input)]
        : (options.input as readonly JsonObject[])),
    ];
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

  /** What the next request sends: the whole (rendered) history, or the new outputs after a chain. */
  nextInput(signal?: AbortSignal): NextInput | Promise<NextInput> {
    if (this.isChaining) {
      // A chained follow-up is known at once: no promise (bench/README.md, "The turn").
      const repaired = repairChainedOutputs(this.pendingCallIds, this.pendingOutputs);
      return {
        input: repaired.items,
        previousResponseId: this.previousResponseId,
        repairs: repaired.repairs,
      };
    }
    return this.renderedInput(signal);
  }

  /** The next input of a stateless request (or a first one): the history, rendered. */
  private async renderedInput(signal: AbortSignal | undefined): Promise<NextInput> {
    // A first prompt goes as a message item in both modes, never as a plain string: one server
    // (a third-party bridge) iterates a string input per character.
    const rendered = await this.options.history.render(
      { items: this.history },
      {
        ...(signal === undefined ? {} : { signal }),
        ...(this.options.nativeCalls === true ? { callTypes: ["function_call", ...NATIVE_CALL_TYPES] } : {}),
      },
    );
    // The repaired (and folded) history is the conversation from now on: repairs are made once.
    this.history = rendered.history;
    // A copy: the body is recorded in frames and must not change when the history grows.
    const input = [...rendered.items] as JsonObject[];
    const next: NextInput = { input, previousResponseId: undefined, repairs: rendered.repairs };
    if (rendered.compaction !== undefined) next.compaction = rendered.compaction;
    return next;
  }

  /**
   * The history becomes `items` (a compaction's result) and the next request starts from it
   * without `previous_response_id`; in chained mode later follow-ups chain on from that request.
   */
  replaceHistory(items: readonly JsonObject[]): void {
    this.history = [...items];
    this.previousResponseId = undefined;
    this.pendingOutputs = [];
    this.pendingCallIds = [];
  }

  /** Takes a finished turn: its output items and its answered calls (in output order) join the history. */
  record(response: AssembledResponse, answered: readonly AnsweredCall[]): void {
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
   * one to continue; returns false when it cannot be (it had no id, or an empty one), so the
   * caller switches to stateless.
   */
  followUp(): boolean {
    if (this.currentMode !== "chained") return true;
    // An empty id names no response: `previous_response_id: ""` is refused by servers, confusingly
    // (docs/pitfalls.md #94).
    if (this.lastResponseId === null || this.lastResponseId === "") return false;
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
