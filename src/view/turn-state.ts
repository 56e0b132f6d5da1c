/**
 * One turn's state while its frames are read: the HTTP attempts (request → first byte → first
 * event → first token → end), and the output items rebuilt from the provider events (the done item
 * wins over the deltas, as the loop itself decides, docs in src/provider/assembler/). Message text
 * comes from the `output_text_delta` frames, which every provider path emits (on the Chat
 * Completions path the provider events are chunks, not Responses events).
 */

import type {
  OutputTextDeltaFrame,
  ProviderEventFrame,
  RequestFailedFrame,
  RequestStartedFrame,
  ResponseHeadersFrame,
  RetryFrame,
  TurnEndedFrame,
} from "../frames/frame.js";
import { isJsonObject as isObject } from "../util/json.js";
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

interface ItemState {
  index: number;
  item: Record<string, unknown>;
  summary: string[];
  content: string[];
  refusal?: string;
}

/** A turn being read. */
export class TurnState {
  readonly attempts: AttemptView[] = [];
  readonly findings: FindingView[] = [];
  readonly notes: NoteView[] = [];
  readonly calls: ToolCallView[] = [];
  private items = new Map<number, ItemState>();
  private readonly text = new Map<string, string>();
  private responseId: string | null = null;
  private model: string | undefined;
  private status: string | undefined;
  private usage: TokenCounts | undefined;
  private end: number | undefined;

  constructor(
    readonly turn: number,
    readonly seq: number,
  ) {}

  private get attempt(): AttemptView | undefined {
    return this.attempts[this.attempts.length - 1];
  }

  requestStarted(frame: RequestStartedFrame): void {
    const attempt: AttemptView = { attempt: frame.attempt, start: frame.ts };
    const model = (frame.body as { model?: unknown }).model;
    if (typeof model === "string") attempt.model = model;
    this.attempts.push(attempt);
    // A retry starts the response over: what a failed attempt streamed is not the turn's output.
    this.items = new Map();
  }

  responseHeaders(frame: ResponseHeadersFrame): void {
    const a = this.attempt;
    if (a === undefined) return;
    a.headers = frame.ts;
    a.http_status = frame.status;
    if (frame.request_id !== undefined) a.request_id = frame.request_id;
  }

  requestFailed(frame: RequestFailedFrame): void {
    const a = this.attempt;
    if (a === undefined) return;
    a.end = frame.ts;
    a.failed = { code: frame.code, message: frame.message, kind: frame.kind };
    if (frame.status !== undefined) a.failed.http_status = frame.status;
  }

  retry(frame: RetryFrame): void {
    const a = this.attempt;
    if (a === undefined) return;
    a.retry = { delay_ms: frame.delay_ms, reason: frame.reason, ts: frame.ts };
    if (frame.reason.startsWith("fallback:")) a.retry.fallback = frame.reason.slice("fallback:".length);
  }

  textDelta(frame: OutputTextDeltaFrame): void {
    this.firstToken(frame.ts);
    this.text.set(frame.item_id, (this.text.get(frame.item_id) ?? "") + frame.delta);
  }

  providerEvent(frame: ProviderEventFrame): void {
    const a = this.attempt;
    if (a !== undefined) {
      a.first_event ??= frame.ts;
      a.end = frame.ts;
    }
    if (frame.errors !== undefined && frame.errors.length > 0) {
      this.findings.push({
        seq: frame.seq,
        turn: this.turn,
        event: eventName(frame),
        messages: frame.errors,
      });
    } else if (frame.status === "invalid_json") {
      this.findings.push({
        seq: frame.seq,
        turn: this.turn,
        event: "invalid_json",
        messages: [`not JSON: ${shortValue(frame.raw ?? "", 200)}`],
      });
    }
    if (!isObject(frame.data)) return;
    this.applyEvent(frame.data, frame.ts);
  }

  turnEnded(frame: TurnEndedFrame): void {
    this.responseId = frame.response_id;
    this.status = frame.status;
    this.end = frame.ts;
    if (frame.usage !== null) this.usage = tokenCounts(frame.usage);
    const a = this.attempt;
    if (a !== undefined && a.failed === undefined) a.end ??= frame.ts;
  }

  /** The turn's view: items in output order, then calls and messages no provider event placed. */
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
    for (const [id, text] of this.text) {
      if (!placedText.has(id)) items.push({ kind: "message", item_id: id, text });
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

  private firstToken(ts: number): void {
    const a = this.attempt;
    if (a !== undefined) a.first_token ??= ts;
  }

  private applyEvent(data: Record<string, unknown>, ts: number): void {
    const type = typeof data.type === "string" ? data.type : "";
    if (type.endsWith(".delta")) this.firstToken(ts);
    const index = typeof data.output_index === "number" ? data.output_index : undefined;
    if (isObject(data.response)) {
      const r = data.response;
      if (typeof r.id === "string") this.responseId = r.id;
      if (typeof r.model === "string") this.model = r.model;
      // A response that arrives whole (no item events) still shows its output.
      if (type !== "response.created" && this.items.size === 0 && Array.isArray(r.output)) {
        r.output.forEach((item, i) => {
          if (isObject(item)) this.items.set(i, { index: i, item, summary: [], content: [] });
        });
      }
      return;
    }
    if (index === undefined) return;
    if (
      (type === "response.output_item.added" || type === "response.output_item.done") &&
      isObject(data.item)
    ) {
      const state = this.items.get(index);
      if (state === undefined) this.items.set(index, { index, item: data.item, summary: [], content: [] });
      else state.item = data.item;
      return;
    }
    const state = this.items.get(index);
    if (state === undefined) return;
    const part = (key: string) => (typeof data[key] === "number" ? (data[key] as number) : 0);
    const delta = typeof data.delta === "string" ? data.delta : "";
    switch (type) {
      case "response.reasoning_summary_text.delta":
        state.summary[part("summary_index")] = (state.summary[part("summary_index")] ?? "") + delta;
        break;
      case "response.reasoning_summary_text.done":
        if (typeof data.text === "string") state.summary[part("summary_index")] = data.text;
        break;
      case "response.reasoning_text.delta":
        state.content[part("content_index")] = (state.content[part("content_index")] ?? "") + delta;
        break;
      case "response.reasoning_text.done":
        if (typeof data.text === "string") state.content[part("content_index")] = data.text;
        break;
      case "response.refusal.delta":
        state.refusal = (state.refusal ?? "") + delta;
        break;
      case "response.refusal.done":
        if (typeof data.refusal === "string") state.refusal = data.refusal;
        break;
    }
  }

  private itemView(state: ItemState, calls: Map<string, ToolCallView>): OutputItemView {
    const item = state.item;
    const id = typeof item.id === "string" ? item.id : `#${state.index}`;
    const type = typeof item.type === "string" ? item.type : "unknown";
    if (type === "message") {
      const parts = Array.isArray(item.content) ? item.content.filter(isObject) : [];
      const done = parts.map((p) => (typeof p.text === "string" ? p.text : "")).join("");
      const refused = parts.map((p) => (typeof p.refusal === "string" ? p.refusal : "")).join("");
      const view: OutputItemView = { kind: "message", item_id: id, text: this.text.get(id) ?? done };
      const refusal = state.refusal ?? refused;
      if (refusal !== "") view.refusal = refusal;
      if (typeof item.phase === "string") view.phase = item.phase;
      return view;
    }
    if (type === "reasoning") {
      const texts = (v: unknown) =>
        Array.isArray(v) ? v.filter(isObject).map((p) => (typeof p.text === "string" ? p.text : "")) : [];
      const summary = texts(item.summary);
      const content = texts(item.content);
      return {
        kind: "reasoning",
        item_id: id,
        summary: summary.length > 0 ? summary : state.summary.filter((s) => s !== undefined),
        content: content.length > 0 ? content : state.content.filter((s) => s !== undefined),
        encrypted: typeof item.encrypted_content === "string",
      };
    }
    if (type === "function_call") {
      const callId = typeof item.call_id === "string" ? item.call_id : id;
      const call = calls.get(callId) ?? calls.get(id);
      if (call !== undefined) return { kind: "tool", call };
      return {
        kind: "unrun_call",
        item_id: id,
        name: typeof item.name === "string" ? item.name : "?",
        arguments: typeof item.arguments === "string" ? item.arguments : "",
        status: typeof item.status === "string" ? item.status : "unknown",
      };
    }
    return { kind: "other", item_id: id, type, json: shortValue(item, OTHER_ITEM_MAX) };
  }
}

function eventName(frame: ProviderEventFrame): string {
  if (isObject(frame.data) && typeof frame.data.type === "string") return frame.data.type;
  return frame.event_name ?? frame.status;
}

/** A usage object as token counts (the cached and reasoning details only when reported). */
export function tokenCounts(usage: unknown): TokenCounts {
  const u = isObject(usage) ? usage : {};
  const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : 0);
  const counts: TokenCounts = { input: num(u.input_tokens), output: num(u.output_tokens) };
  const cached = isObject(u.input_tokens_details) ? u.input_tokens_details.cached_tokens : undefined;
  const reasoning = isObject(u.output_tokens_details) ? u.output_tokens_details.reasoning_tokens : undefined;
  if (typeof cached === "number") counts.cached = cached;
  if (typeof reasoning === "number") counts.reasoning = reasoning;
  return counts;
}
