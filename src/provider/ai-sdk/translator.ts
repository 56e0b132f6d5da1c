/**
 * AI SDK stream parts (`LanguageModelV3StreamPart` of `@ai-sdk/provider` 3, as the JSON a
 * `provider_event` keeps) → Open Responses streaming events, one attempt at a time (an
 * `EventTranslator` for the assembling stream). The assembler then treats the model's stream like
 * a Responses stream: the same items, calls, promotion and terminal rules.
 *
 * Output items in order of first appearance, keyed by the part ids: `text-start`/`-delta`/`-end` →
 * a `message` item (one per text id), `reasoning-*` → a `reasoning` item (its text as
 * `reasoning_text`, never as output text), `tool-input-start`/`-delta` → a `function_call` item
 * whose arguments stream, closed (its `output_item.done`, so the loop may run it at once) by the
 * `tool-call` part, whose `input` is the source of truth. A `tool-call` without a preceding
 * `tool-input-start` (providers that do not stream arguments) opens and closes its item at once.
 * Calls the provider executed itself (`providerExecuted`), their results, files, sources, approval
 * requests, `stream-start` and `raw` parts stay in their frames and make no event.
 *
 * `finish` closes every open item and decides the terminal event from `finishReason.unified`:
 * `stop`, `tool-calls`, `other` → `response.completed`; `length` → `response.incomplete` (open calls
 * end `incomplete` and never run); `content-filter` and `error` → `response.failed` (code
 * `content_filter` / `server_error`, the raw reason in the message). Usage comes from the `finish`
 * part (`inputTokens.total`, `outputTokens.total`, cache reads, reasoning tokens); a model that
 * reports none gets an estimate marked `estimated: true`. An `error` part fails the response like
 * an `error` event; a stream that ends without `finish` stays without a terminal event (truncated).
 */
import type { ProviderEventFrame } from "../../frames/frame.js";
import type { JsonObject, Usage } from "../../protocol/types.js";
import { isJsonObject } from "../../util/json.js";
import type { EventTranslator } from "../assembling-stream.js";
import { estimatedUsage, requestChars } from "../chat-completions/chunk.js";
import type { ProviderRequest } from "../provider.js";

interface ItemState {
  outputIndex: number;
  id: string;
  text: string;
  done: boolean;
}
interface CallState extends ItemState {
  callId: string;
  name: string;
}

/**
 * Makes the translator of one attempt of `request`; `recordedUsage` as `createChatTranslator`'s
 * (src/provider/chat-completions/translator.ts).
 */
export function createAiSdkTranslator(request: ProviderRequest, recordedUsage?: Usage): EventTranslator {
  return new AiSdkTranslator(request, recordedUsage);
}

class AiSdkTranslator implements EventTranslator {
  private started = false;
  private responseId: string | null = null;
  private model: string | null = null;
  private nextIndex = 0;
  private readonly texts = new Map<string, ItemState>();
  private readonly reasonings = new Map<string, ItemState>();
  /** Calls by tool call id, in order of appearance. */
  private readonly calls = new Map<string, CallState>();
  /** Ids of tool inputs the provider executes itself (their deltas make no event). */
  private readonly providerExecuted = new Set<string>();
  private ended = false;
  private out: JsonObject[] = [];

  constructor(
    private readonly request: ProviderRequest,
    private readonly recordedUsage: Usage | undefined,
  ) {}

  translate(frame: ProviderEventFrame): readonly JsonObject[] {
    if (frame.status !== "event" || !isJsonObject(frame.data) || this.ended) return [];
    this.out = [];
    this.part(frame.data);
    return this.out;
  }

  /** Nothing: a stream that ended without `finish` has no terminal event (it was truncated). */
  end(): readonly JsonObject[] {
    return [];
  }

  private part(part: JsonObject): void {
    switch (part.type) {
      case "response-metadata":
        // Items opened before it keep their ids; the response takes the provider's id.
        if (typeof part.id === "string" && part.id !== "") this.responseId = part.id;
        if (typeof part.modelId === "string") this.model = part.modelId;
        this.start();
        return;
      case "text-start":
      case "text-delta":
      case "text-end":
        this.text(part);
        return;
      case "reasoning-start":
      case "reasoning-delta":
      case "reasoning-end":
        this.reasoning(part);
        return;
      case "tool-input-start":
      case "tool-input-delta":
        this.toolInput(part);
        return;
      case "tool-call":
        this.toolCall(part);
        return;
      case "finish":
        this.finish(part);
        return;
      case "error":
        this.fail(part.error);
        return;
      default:
        // stream-start, raw, tool-input-end, tool-result, file, source, tool-approval-request.
        return;
    }
  }

  private start(): void {
    if (this.started) return;
    this.started = true;
    this.emit({ type: "response.created", response: this.snapshot("in_progress") });
  }

  private text(part: JsonObject): void {
    const id = str(part.id);
    let item = this.texts.get(id);
    if (item === undefined) {
      if (part.type === "text-end") return;
      item = this.open(this.texts, id, "msg", {
        type: "message",
        role: "assistant",
        status: "in_progress",
        content: [],
      });
    }
    if (item.done) return;
    if (part.type === "text-delta" && typeof part.delta === "string" && part.delta !== "") {
      item.text += part.delta;
      this.emit({
        type: "response.output_text.delta",
        item_id: item.id,
        output_index: item.outputIndex,
        content_index: 0,
        delta: part.delta,
      });
    }
    if (part.type === "text-end") this.closeText(item, "completed");
  }

  private reasoning(part: JsonObject): void {
    const id = str(part.id);
    let item = this.reasonings.get(id);
    if (item === undefined) {
      if (part.type === "reasoning-end") return;
      item = this.open(this.reasonings, id, "rs", { type: "reasoning", summary: [] });
    }
    if (item.done) return;
    if (part.type === "reasoning-delta" && typeof part.delta === "string" && part.delta !== "") {
      item.text += part.delta;
      this.emit({
        type: "response.reasoning.delta",
        item_id: item.id,
        output_index: item.outputIndex,
        content_index: 0,
        delta: part.delta,
      });
    }
    if (part.type === "reasoning-end") this.closeReasoning(item);
  }

  private toolInput(part: JsonObject): void {
    const id = str(part.id);
    if (part.providerExecuted === true) this.providerExecuted.add(id);
    if (this.providerExecuted.has(id)) return;
    const call = this.calls.get(id) ?? this.openCall(id, str(part.toolName));
    if (part.type !== "tool-input-delta" || typeof part.delta !== "string" || part.delta === "" || call.done)
      return;
    call.text += part.delta;
    this.emit({
      type: "response.function_call_arguments.delta",
      item_id: call.id,
      output_index: call.outputIndex,
      delta: part.delta,
    });
  }

  /** The complete call: its `input` is the arguments (the source of truth), and it is done. */
  private toolCall(part: JsonObject): void {
    const id = str(part.toolCallId);
    if (part.providerExecuted === true || this.providerExecuted.has(id)) return;
    const call = this.calls.get(id) ?? this.openCall(id, str(part.toolName));
    if (call.done) return;
    if (typeof part.toolName === "string" && part.toolName !== "") call.name = part.toolName;
    if (typeof part.input === "string") call.text = part.input;
    this.closeCall(call, "completed");
  }

  private openCall(callId: string, name: string): CallState {
    this.start();
    const call: CallState = {
      outputIndex: this.nextIndex++,
      id: `fc_${this.base()}_${this.nextIndex - 1}`,
      text: "",
      done: false,
      callId,
      name,
    };
    this.calls.set(callId, call);
    this.emit({
      type: "response.output_item.added",
      output_index: call.outputIndex,
      item: callItem(call, "in_progress"),
    });
    return call;
  }

  /** Opens an item (ids `msg_…`, `rs_…` by `prefix`) under the part id `id`. */
  private open(items: Map<string, ItemState>, id: string, prefix: string, item: JsonObject): ItemState {
    this.start();
    const state: ItemState = {
      outputIndex: this.nextIndex++,
      id: `${prefix}_${this.base()}_${this.nextIndex - 1}`,
      text: "",
      done: false,
    };
    items.set(id, state);
    this.emit({
      type: "response.output_item.added",
      output_index: state.outputIndex,
      item: { ...item, id: state.id },
    });
    return state;
  }

  private closeText(item: ItemState, status: string): void {
    item.done = true;
    this.emit({
      type: "response.output_item.done",
      output_index: item.outputIndex,
      item: {
        type: "message",
        id: item.id,
        role: "assistant",
        status,
        content: [{ type: "output_text", text: item.text, annotations: [] }],
      },
    });
  }

  private closeReasoning(item: ItemState): void {
    item.done = true;
    this.emit({
      type: "response.output_item.done",
      output_index: item.outputIndex,
      item: {
        type: "reasoning",
        id: item.id,
        summary: [],
        content: [{ type: "reasoning_text", text: item.text }],
      },
    });
  }

  private closeCall(call: CallState, status: string): void {
    call.done = true;
    this.emit({
      type: "response.output_item.done",
      output_index: call.outputIndex,
      item: callItem(call, status),
    });
  }

  /** The model finished: every open item is done, then the terminal event (see the module comment). */
  private finish(part: JsonObject): void {
    this.start();
    this.ended = true;
    const reason = isJsonObject(part.finishReason) ? part.finishReason : {};
    const unified = str(reason.unified);
    const status = statusOf(unified);
    const itemStatus = status === "completed" ? "completed" : "incomplete";
    for (const item of this.reasonings.values()) if (!item.done) this.closeReasoning(item);
    for (const item of this.texts.values()) if (!item.done) this.closeText(item, itemStatus);
    for (const call of this.calls.values()) if (!call.done) this.closeCall(call, itemStatus);
    const response = this.snapshot(status);
    response.usage = toUsage(part.usage) ?? this.estimate();
    if (status === "incomplete") response.incomplete_details = { reason: "max_output_tokens" };
    if (status === "failed") {
      const raw = typeof reason.raw === "string" ? ` (${reason.raw})` : "";
      response.error = {
        code: unified === "content-filter" ? "content_filter" : "server_error",
        message: `the model stopped the response: finish reason "${unified}"${raw}`,
      };
    }
    this.emit({ type: `response.${status}`, response });
  }

  /** An `error` part: the response fails, with what the error says. */
  private fail(error: unknown): void {
    this.ended = true;
    const e = isJsonObject(error) ? error : { message: typeof error === "string" ? error : "error" };
    // An APICallError keeps the provider's error body in `data`; a vendor's error event nests its `error`.
    const data = isJsonObject(e.data) ? e.data : undefined;
    const nested = isJsonObject(e.error) ? e.error : e;
    const inner = data !== undefined && isJsonObject(data.error) ? data.error : nested;
    const message = str(inner.message) || str(e.message) || "the model sent an error part";
    const code = str(inner.code) || str(inner.type) || null;
    this.emit({
      type: "error",
      error: { type: str(inner.type) || "server_error", code, message, param: null },
    });
  }

  /** Usage from character counts when the model reported none. */
  private estimate(): Usage {
    if (this.recordedUsage !== undefined) return this.recordedUsage;
    let outputChars = 0;
    for (const items of [this.texts, this.reasonings, this.calls])
      for (const item of items.values()) outputChars += item.text.length;
    return estimatedUsage(requestChars(this.request.body), outputChars);
  }

  private snapshot(status: string): JsonObject {
    return { id: this.responseId, object: "response", model: this.model, status, output: [] };
  }

  /** The base of item ids: the response id, else the turn (ids must differ across turns). */
  private base(): string {
    return this.responseId ?? `t${this.request.turn}`;
  }

  private emit(event: JsonObject): void {
    this.out.push(event);
  }
}

/** The `function_call` item of a call as it stands. */
function callItem(call: CallState, status: string): JsonObject {
  return {
    type: "function_call",
    id: call.id,
    call_id: call.callId,
    name: call.name,
    arguments: call.text,
    status,
  };
}

/** How a unified finish reason ends the response. */
function statusOf(unified: string): "completed" | "incomplete" | "failed" {
  switch (unified) {
    case "length":
      return "incomplete";
    case "content-filter":
    case "error":
      return "failed";
    default:
      // stop, tool-calls, other, and anything new: the model finished.
      return "completed";
  }
}

/** `LanguageModelV3Usage` → the spec's `Usage`; undefined when the model reported no counts. */
function toUsage(raw: unknown): Usage | undefined {
  if (!isJsonObject(raw)) return undefined;
  const input = isJsonObject(raw.inputTokens) ? raw.inputTokens : {};
  const output = isJsonObject(raw.outputTokens) ? raw.outputTokens : {};
  const inputTotal = num(input.total);
  const outputTotal = num(output.total);
  if (inputTotal === undefined && outputTotal === undefined) return undefined;
  const inputTokens = inputTotal ?? 0;
  const outputTokens = outputTotal ?? 0;
  return {
    input_tokens: inputTokens,
    output_tokens: outputTokens,
    total_tokens: inputTokens + outputTokens,
    input_tokens_details: { cached_tokens: num(input.cacheRead) ?? 0 },
    output_tokens_details: { reasoning_tokens: num(output.reasoning) ?? 0 },
  };
}

function num(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

function str(value: unknown): string {
  return typeof value === "string" ? value : "";
}
