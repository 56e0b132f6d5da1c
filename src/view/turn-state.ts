/**
 * One turn's state while its frames are read: the HTTP attempts (request → first byte → first
 * event → first token → end), and the output items as the run assembled them — each `item_done`
 * frame carries the final item (src/provider/derive.ts), on every provider path. Text and
 * reasoning that streamed come from `output_text_delta` and `reasoning_delta`, so a response cut
 * off before its items finished still shows what streamed. Every field is untrusted (limits.ts).
 */

import type {
  ItemDoneFrame,
  OutputTextDeltaFrame,
  ProviderEventFrame,
  ReasoningDeltaFrame,
  RequestFailedFrame,
  RequestStartedFrame,
  ResponseEndedFrame,
  ResponseHeadersFrame,
  RetryFrame,
  TurnEndedFrame,
} from "../frames/frame.js";
import { isJsonObject as isObject } from "../util/json.js";
import {
  intOf,
  nameOf,
  numberOf,
  type Omitted,
  optionalString,
  type TextBudget,
  TextPieces,
  textOf,
  VIEW_LIMITS,
} from "./limits.js";
import { shortValue } from "./notes.js";
import type {
  AttemptView,
  FindingView,
  NoteView,
  OutputItemView,
  TokenCounts,
  ToolCallView,
  TurnView,
} from "./view-data.js";

/** Longest JSON shown for an item the view has no section for. */
const OTHER_ITEM_MAX = 20_000;
/** Messages kept per validation finding. */
const FINDING_MESSAGES = 20;

interface ItemState {
  index: number;
  item: Record<string, unknown>;
  summary: TextPieces[];
  content: TextPieces[];
}

/** What the turns of one run share: the page's text budget and the count of what was left out. */
export interface RunLimits {
  budget: TextBudget;
  omitted: Omitted;
  /** Items (and calls) still allowed on the page. */
  items: { left: number };
  /** Findings still allowed on the page. */
  findings: { left: number };
}

/** A turn being read. */
export class TurnState {
  readonly attempts: AttemptView[] = [];
  readonly findings: FindingView[] = [];
  readonly notes: NoteView[] = [];
  readonly calls: ToolCallView[] = [];
  private items = new Map<number, ItemState>();
  private readonly text = new Map<string, TextPieces>();
  private responseId: string | null = null;
  private model: string | undefined;
  private status: string | undefined;
  private usage: TokenCounts | undefined;
  private end: number | undefined;

  constructor(
    readonly turn: number,
    readonly seq: number,
    private readonly limits: RunLimits,
  ) {}

  private get attempt(): AttemptView | undefined {
    return this.attempts[this.attempts.length - 1];
  }

  requestStarted(frame: RequestStartedFrame): void {
    const attempt: AttemptView = {
      attempt: intOf(frame.attempt) ?? this.attempts.length + 1,
      start: frame.ts,
    };
    const model = isObject(frame.body) ? frame.body.model : undefined;
    if (typeof model === "string") attempt.model = nameOf(model);
    if (!this.limits.omitted.push(this.attempts, attempt, VIEW_LIMITS.marks, "attempts")) return;
    // A retry starts the response over: what a failed attempt streamed is not the turn's output.
    this.items = new Map();
  }

  responseHeaders(frame: ResponseHeadersFrame): void {
    const a = this.attempt;
    if (a === undefined) return;
    a.headers = frame.ts;
    const status = numberOf(frame.status);
    if (status !== undefined) a.http_status = status;
    if (frame.request_id !== undefined) a.request_id = nameOf(frame.request_id);
  }

  requestFailed(frame: RequestFailedFrame): void {
    const a = this.attempt;
    if (a === undefined) return;
    a.end = frame.ts;
    const { budget } = this.limits;
    a.failed = {
      code: nameOf(frame.code),
      message: budget.take(textOf(frame.message), 2_000),
      kind: nameOf(frame.kind),
    };
    const status = numberOf(frame.status);
    if (status !== undefined) a.failed.http_status = status;
  }

  retry(frame: RetryFrame): void {
    const a = this.attempt;
    if (a === undefined) return;
    const reason = nameOf(frame.reason);
    a.retry = { delay_ms: numberOf(frame.delay_ms) ?? 0, reason, ts: frame.ts };
    if (reason.startsWith("fallback:")) a.retry.fallback = reason.slice("fallback:".length);
  }

  textDelta(frame: OutputTextDeltaFrame): void {
    this.firstToken(frame.ts);
    if (typeof frame.delta !== "string") return;
    const id = nameOf(frame.item_id);
    let pieces = this.text.get(id);
    if (pieces === undefined) {
      if (this.text.size >= VIEW_LIMITS.listEntries) return;
      pieces = new TextPieces();
      this.text.set(id, pieces);
    }
    pieces.append(frame.delta);
  }

  providerEvent(frame: ProviderEventFrame): void {
    const a = this.attempt;
    if (a !== undefined) {
      a.first_event ??= frame.ts;
      a.end = frame.ts;
    }
    const errors = Array.isArray(frame.errors) ? frame.errors : [];
    const messages =
      errors.length > 0
        ? errors.slice(0, FINDING_MESSAGES).map((e) => shortValue(e))
        : frame.status === "invalid_json"
          ? [`not JSON: ${shortValue(frame.raw ?? "", 200)}`]
          : [];
    if (messages.length === 0) return;
    if (this.limits.findings.left <= 0) {
      this.limits.omitted.count("validation findings");
      return;
    }
    this.limits.findings.left--;
    if (errors.length > FINDING_MESSAGES) messages.push(`… ${errors.length - FINDING_MESSAGES} more`);
    this.findings.push({ seq: frame.seq, turn: this.turn, event: eventName(frame), messages });
  }

  /** Reasoning text as it streamed: shown when the item never finished (or finished without it). */
  reasoningDelta(frame: ReasoningDeltaFrame): void {
    this.firstToken(frame.ts);
    const index = intOf(frame.output_index);
    const part = intOf(frame.index);
    if (index === undefined || part === undefined || typeof frame.delta !== "string") return;
    let state = this.items.get(index);
    if (state === undefined) {
      const item: Record<string, unknown> = { type: "reasoning" };
      if (typeof frame.item_id === "string" && frame.item_id !== "") item.id = frame.item_id;
      state = this.newItem(index, item);
      if (state === undefined) return;
    }
    const parts = frame.channel === "summary" ? state.summary : state.content;
    if (part >= VIEW_LIMITS.listEntries) return;
    for (let i = parts.length; i <= part; i++) parts.push(new TextPieces(VIEW_LIMITS.fieldChars));
    parts[part]?.append(frame.delta);
  }

  /** A finished output item: the item as the run assembled it. */
  itemDone(frame: ItemDoneFrame): void {
    this.firstToken(frame.ts);
    const index = intOf(frame.output_index);
    if (index === undefined || !isObject(frame.item)) return;
    const state = this.items.get(index);
    if (state === undefined) this.newItem(index, frame.item);
    else state.item = frame.item;
  }

  /** The response's end: which model answered, and its id. */
  responseEnded(frame: ResponseEndedFrame): void {
    if (typeof frame.model === "string") this.model = nameOf(frame.model);
    if (typeof frame.response_id === "string") this.responseId = nameOf(frame.response_id);
  }

  turnEnded(frame: TurnEndedFrame): void {
    this.responseId = typeof frame.response_id === "string" ? nameOf(frame.response_id) : this.responseId;
    this.status = nameOf(frame.status);
    this.end = frame.ts;
    if (isObject(frame.usage)) this.usage = tokenCounts(frame.usage);
    const a = this.attempt;
    if (a !== undefined && a.failed === undefined) a.end ??= frame.ts;
  }

  /** The turn's view: items in output order, then calls and messages no item placed. */
  finish(): TurnView {
    const items: OutputItemView[] = [];
    const placedCalls = new Set<string>();
    const placedText = new Set<string>();
    const callsById = new Map(this.calls.map((c) => [c.call_id, c]));
    for (const state of [...this.items.values()].sort((x, y) => x.index - y.index)) {
      const view = this.itemView(state, callsById);
      if (view.kind === "tool") placedCalls.add(view.call.call_id);
      if (view.kind === "message") placedText.add(view.item_id);
      items.push(view);
    }
    const { budget } = this.limits;
    for (const [id, text] of this.text) {
      if (!placedText.has(id))
        items.push({ kind: "message", item_id: id, text: text.shown(budget, VIEW_LIMITS.answerChars) });
    }
    for (const call of this.calls) if (!placedCalls.has(call.call_id)) items.push({ kind: "tool", call });
    const view: TurnView = {
      turn: this.turn,
      seq: this.seq,
      attempts: this.attempts,
      response_id: this.responseId,
      items,
      findings: this.findings,
      notes: this.notes,
    };
    if (this.model !== undefined) view.model = this.model;
    if (this.status !== undefined) view.status = this.status;
    if (this.usage !== undefined) view.usage = this.usage;
    if (this.end !== undefined) view.end = this.end;
    return view;
  }

  private newItem(index: number, item: Record<string, unknown>): ItemState | undefined {
    if (this.limits.items.left <= 0) {
      this.limits.omitted.count("output items");
      return undefined;
    }
    this.limits.items.left--;
    const state: ItemState = { index, item, summary: [], content: [] };
    this.items.set(index, state);
    return state;
  }

  private firstToken(ts: number): void {
    const a = this.attempt;
    if (a !== undefined) a.first_token ??= ts;
  }

  private itemView(state: ItemState, calls: Map<string, ToolCallView>): OutputItemView {
    const { budget } = this.limits;
    const item = state.item;
    const id = typeof item.id === "string" ? nameOf(item.id) : `#${state.index}`;
    const type = typeof item.type === "string" ? nameOf(item.type) : "unknown";
    if (type === "message") {
      const parts = Array.isArray(item.content) ? item.content.filter(isObject) : [];
      const done = parts.map((p) => optionalString(p.text) ?? "").join("");
      const refused = parts.map((p) => optionalString(p.refusal) ?? "").join("");
      const streamed = this.text.get(id);
      const text =
        streamed !== undefined
          ? streamed.shown(budget, VIEW_LIMITS.answerChars)
          : budget.take(done, VIEW_LIMITS.answerChars);
      const view: OutputItemView = { kind: "message", item_id: id, text };
      if (refused !== "") view.refusal = budget.take(refused);
      if (typeof item.phase === "string") view.phase = nameOf(item.phase);
      return view;
    }
    if (type === "reasoning") {
      const texts = (v: unknown) =>
        Array.isArray(v)
          ? v
              .slice(0, VIEW_LIMITS.listEntries)
              .filter(isObject)
              .map((p) => budget.take(optionalString(p.text) ?? ""))
          : [];
      const summary = texts(item.summary);
      const content = texts(item.content);
      const streamed = (parts: TextPieces[]) => parts.map((p) => p.shown(budget));
      return {
        kind: "reasoning",
        item_id: id,
        summary: summary.length > 0 ? summary : streamed(state.summary),
        content: content.length > 0 ? content : streamed(state.content),
        encrypted: typeof item.encrypted_content === "string",
      };
    }
    if (type === "function_call") {
      const callId = typeof item.call_id === "string" ? nameOf(item.call_id) : id;
      const call = calls.get(callId) ?? calls.get(id);
      if (call !== undefined) return { kind: "tool", call };
      return {
        kind: "unrun_call",
        item_id: id,
        name: typeof item.name === "string" ? nameOf(item.name) : "?",
        arguments: budget.take(textOf(item.arguments), 2_000),
        status: typeof item.status === "string" ? nameOf(item.status) : "unknown",
      };
    }
    return { kind: "other", item_id: id, type, json: budget.take(shortValue(item, OTHER_ITEM_MAX)) };
  }
}

function eventName(frame: ProviderEventFrame): string {
  if (isObject(frame.data) && typeof frame.data.type === "string") return nameOf(frame.data.type);
  return nameOf(frame.event_name ?? frame.status);
}

/** A usage object as token counts (the cached and reasoning details only when reported). */
export function tokenCounts(usage: unknown): TokenCounts {
  const u = isObject(usage) ? usage : {};
  const num = (v: unknown) => numberOf(v) ?? 0;
  const counts: TokenCounts = { input: num(u.input_tokens), output: num(u.output_tokens) };
  const cached = isObject(u.input_tokens_details)
    ? numberOf(u.input_tokens_details.cached_tokens)
    : undefined;
  const reasoning = isObject(u.output_tokens_details)
    ? numberOf(u.output_tokens_details.reasoning_tokens)
    : undefined;
  if (cached !== undefined) counts.cached = cached;
  if (reasoning !== undefined) counts.reasoning = reasoning;
  return counts;
}
