/**
 * The spans of one run, from its frames: `invoke_agent` (the run), `chat {model}` (a model request
 * and all its attempts), `execute_tool {name}` (a tool call), with the GenAI attributes
 * (src/telemetry/genai.ts). Frame times become span times, so the trace lines up with the tape.
 * What a response was (its id, model, why it is incomplete, its first output) comes from the frames
 * the assembling stream derives (`response_ended`, `reasoning_delta`, `item_done`), so Chat
 * Completions runs are traced as fully as Open Responses ones.
 */
import type { Attributes, Context, Span, Tracer } from "@opentelemetry/api";
import type {
  Frame,
  FrameOf,
  ProviderEventFrame,
  RequestStartedFrame,
  ResponseEndedFrame,
  RunEndedFrame,
  RunStartedFrame,
  ToolEndedFrame,
  TurnEndedFrame,
} from "../frames/frame.js";
import { isJsonObject as isObject, parseJsonObject } from "../util/json.js";
import { finishReason, GENAI, type GenAiMessage, inputMessages } from "./genai.js";
import { type AttributeLimits, capJsonOrText, startLimitedSpan } from "./limits.js";
import type { OtelApi, OtelObserverOptions } from "./otel-observer.js";

/** What every span of the observer shares. */
export interface TraceShared {
  api: OtelApi;
  tracer: Tracer;
  /** `gen_ai.provider.name` and `gen_ai.system`. */
  provider: string;
  content: boolean;
  options: OtelObserverOptions;
  /** What a span may hold (src/telemetry/limits.ts): every span is started through them. */
  limits: AttributeLimits;
}

/** Starts the `invoke_agent` span of a run. */
export function startRun(s: TraceShared, frame: RunStartedFrame): RunTrace {
  const parent = s.options.parentContext ?? s.api.context.active();
  // Attributes are built as one literal: spreading a shared object and adding keys afterwards
  // costs microseconds per span (V8 falls back to slow objects), paid even by no-op tracers.
  const attributes: Attributes = {
    [GENAI.operation]: "invoke_agent",
    [GENAI.providerName]: s.provider,
    [GENAI.system]: s.provider,
    "eddy.run.id": frame.run_id,
    "eddy.run.mode": frame.mode,
    "eddy.tools": frame.tools,
  };
  if (frame.model !== null) attributes[GENAI.requestModel] = frame.model;
  if (s.options.agentName !== undefined) attributes[GENAI.agentName] = s.options.agentName;
  if (s.content) {
    attributes[GENAI.inputMessages] = JSON.stringify(inputMessages(frame.input));
    if (frame.instructions !== undefined) {
      attributes[GENAI.systemInstructions] = JSON.stringify([{ type: "text", content: frame.instructions }]);
    }
  }
  const name = s.options.agentName !== undefined ? `invoke_agent ${s.options.agentName}` : "invoke_agent";
  const span = startLimitedSpan(
    s.tracer,
    s.limits,
    name,
    { kind: s.api.SpanKind.INTERNAL, attributes, ...at(frame.ts) },
    parent,
  );
  return new RunTrace(s, span, s.api.trace.setSpan(parent, span), frame);
}

/** The spans of one run while its frames arrive. */
export class RunTrace {
  private chat: ChatSpan | undefined;
  private readonly toolCalls = new Map<string, { name: string; arguments: string; span?: Span }>();

  constructor(
    private readonly s: TraceShared,
    readonly span: Span,
    private readonly context: Context,
    private readonly started: RunStartedFrame,
  ) {}

  observe(frame: Frame): void {
    switch (frame.type) {
      case "request_started":
        this.request(frame);
        return;
      case "response_headers":
        this.chat?.span.setAttribute("http.response.status_code", frame.status);
        return;
      case "provider_event":
        this.chat?.event(frame);
        return;
      case "output_text_delta":
        this.chat?.firstToken(frame.ts);
        if (this.chat !== undefined && this.s.content) this.chat.addText(frame.delta);
        return;
      case "reasoning_delta":
      case "item_done":
        this.chat?.firstToken(frame.ts);
        return;
      case "response_ended":
        this.chat?.responseEnded(frame);
        return;
      case "request_failed":
        this.requestFailed(frame);
        return;
      case "retry":
        this.retry(frame);
        return;
      case "turn_ended":
        this.turnEnded(frame);
        return;
      case "tool_call":
        this.toolCall(frame);
        return;
      case "tool_started":
        this.toolStarted(frame.call_id, frame.name, frame.turn, frame.ts);
        return;
      case "tool_ended":
        this.toolEnded(frame);
        return;
      case "run_ended":
        this.runEnded(frame);
        return;
      case "mode_changed":
      case "cancel_requested":
      case "history_repaired":
        this.note(frame as unknown as Record<string, unknown>);
        return;
      default:
        // Frame types added after this observer (context, approvals, …) become events on the run.
        this.note(frame as unknown as Record<string, unknown>);
        return;
    }
  }

  /**
   * A call: kept for its tool span and the response's output message, its arguments no longer than
   * a span may hold (a 1 MB argument was kept, and sent, whole).
   */
  private toolCall(frame: FrameOf<"tool_call">): void {
    const args = this.s.content ? capJsonOrText(frame.arguments, this.s.limits.valueLength) : "";
    this.toolCalls.set(frame.call_id, { name: frame.name, arguments: args });
    const chat = this.chat;
    // The output message is cut to the same bound: calls past what it could show are not kept.
    if (chat !== undefined && chat.calls.length < this.s.limits.arrayLength)
      chat.calls.push({ id: frame.call_id, name: frame.name, arguments: args });
  }

  private requestFailed(frame: FrameOf<"request_failed">): void {
    this.chat?.span.addEvent(
      "request_failed",
      {
        [GENAI.errorType]: frame.code,
        "eddy.attempt": frame.attempt,
        "eddy.failure.kind": frame.kind,
        "eddy.failure.retryable": frame.retryable,
        ...(frame.status !== undefined ? { "http.response.status_code": frame.status } : {}),
      },
      time(frame.ts),
    );
    if (this.chat !== undefined) this.chat.failure = { code: frame.code, message: frame.message };
  }

  private retry(frame: FrameOf<"retry">): void {
    const chat = this.chat;
    if (chat === undefined) return;
    chat.retries++;
    const fallback = frame.reason.startsWith("fallback:")
      ? frame.reason.slice("fallback:".length)
      : undefined;
    chat.span.addEvent(
      fallback !== undefined ? "fallback" : "retry",
      {
        "eddy.attempt": frame.attempt,
        "eddy.retry.delay_ms": frame.delay_ms,
        "eddy.retry.reason": frame.reason,
        ...(fallback !== undefined ? { "eddy.fallback.provider": fallback } : {}),
      },
      time(frame.ts),
    );
  }

  private request(frame: RequestStartedFrame): void {
    const body = frame.body as Record<string, unknown>;
    const model = typeof body.model === "string" ? body.model : (this.started.model ?? undefined);
    if (this.chat !== undefined && this.chat.turn === frame.turn) {
      // A retry (or a fallback) of the same model request: one span covers all attempts.
      this.chat.span.addEvent(
        "attempt",
        { "eddy.attempt": frame.attempt, ...modelAttr(model) },
        time(frame.ts),
      );
      this.chat.span.setAttribute("eddy.attempts", frame.attempt);
      this.chat.attemptStart = frame.ts;
      return;
    }
    this.chat?.end(frame.ts, "superseded");
    const attributes: Attributes = {
      [GENAI.operation]: "chat",
      [GENAI.providerName]: this.s.provider,
      [GENAI.system]: this.s.provider,
      "eddy.turn": frame.turn,
    };
    if (model !== undefined) attributes[GENAI.requestModel] = model;
    if (typeof body.max_output_tokens === "number")
      attributes[GENAI.requestMaxTokens] = body.max_output_tokens;
    if (typeof body.temperature === "number") attributes[GENAI.requestTemperature] = body.temperature;
    if (typeof body.top_p === "number") attributes[GENAI.requestTopP] = body.top_p;
    if (this.s.content) attributes[GENAI.inputMessages] = JSON.stringify(inputMessages(body.input));
    const name = model !== undefined ? `chat ${model}` : "chat";
    const span = startLimitedSpan(
      this.s.tracer,
      this.s.limits,
      name,
      { kind: this.s.api.SpanKind.CLIENT, attributes, ...at(frame.ts) },
      this.context,
    );
    this.chat = new ChatSpan(this.s, span, frame.turn, frame.ts);
  }

  private turnEnded(frame: TurnEndedFrame): void {
    const chat = this.chat;
    if (chat === undefined || chat.turn !== frame.turn) return;
    if (frame.response_id !== null) chat.span.setAttribute(GENAI.responseId, frame.response_id);
    if (frame.usage !== null) chat.span.setAttributes(usageAttributes(frame.usage));
    const reason = finishReason(frame.status, chat.incompleteReason, chat.calls.length > 0);
    chat.span.setAttribute(GENAI.finishReasons, [reason]);
    if (this.s.content) chat.span.setAttribute(GENAI.outputMessages, JSON.stringify([chat.output(reason)]));
    this.chat = undefined;
    if (frame.status === "completed" || frame.status === "incomplete") chat.end(frame.ts);
    else chat.end(frame.ts, chat.failure?.code ?? frame.status, chat.failure?.message);
  }

  private toolStarted(callId: string, name: string, turn: number, ts: number): void {
    const call = this.toolCalls.get(callId) ?? { name, arguments: "" };
    const attributes: Attributes = {
      [GENAI.operation]: "execute_tool",
      [GENAI.toolName]: name,
      [GENAI.toolCallId]: callId,
      [GENAI.toolType]: "function",
      "eddy.turn": turn,
    };
    if (this.s.content) attributes[GENAI.toolArguments] = call.arguments;
    call.span = startLimitedSpan(
      this.s.tracer,
      this.s.limits,
      `execute_tool ${name}`,
      { kind: this.s.api.SpanKind.INTERNAL, attributes, ...at(ts) },
      this.context,
    );
    this.toolCalls.set(callId, call);
  }

  private toolEnded(frame: ToolEndedFrame): void {
    const span = this.toolCalls.get(frame.call_id)?.span;
    this.toolCalls.delete(frame.call_id);
    if (span === undefined) return;
    if (this.s.content) span.setAttribute(GENAI.toolResult, frame.output);
    if (frame.truncated === true) span.setAttribute("eddy.tool.output_truncated", true);
    if (!frame.ok) {
      const error = toolError(frame.output);
      span.setAttribute(GENAI.errorType, error.code);
      span.setStatus({ code: this.s.api.SpanStatusCode.ERROR, message: error.message });
    }
    span.end(time(frame.ts));
  }

  private runEnded(frame: RunEndedFrame): void {
    this.chat?.end(frame.ts, "run_ended");
    for (const call of this.toolCalls.values()) {
      call.span?.setStatus({
        code: this.s.api.SpanStatusCode.ERROR,
        message: "the run ended before the tool did",
      });
      call.span?.end(time(frame.ts));
    }
    const span = this.span;
    span.setAttributes({
      "eddy.run.reason": frame.reason,
      "eddy.turns": frame.turns,
      "eddy.tool_calls": frame.tool_calls,
      ...usageAttributes(frame.usage),
    });
    if (frame.response_id !== null) span.setAttribute(GENAI.responseId, frame.response_id);
    if (this.s.content) {
      const answer: GenAiMessage = {
        role: "assistant",
        parts: [{ type: "text", content: frame.output_text }],
      };
      span.setAttribute(GENAI.outputMessages, JSON.stringify([answer]));
    }
    if (frame.error !== undefined && frame.reason !== "completed" && frame.reason !== "terminal_tool") {
      span.setAttribute(GENAI.errorType, frame.error.code);
      span.setStatus({
        code: this.s.api.SpanStatusCode.ERROR,
        message: `${frame.reason}: ${frame.error.message}`,
      });
    }
    span.end(time(frame.ts));
  }

  /** A frame of note as an event on the run span: its numbers and flags, and its short ids and names. */
  private note(frame: Record<string, unknown>): void {
    const attributes: Attributes = {};
    for (const [key, value] of Object.entries(frame)) {
      if (key === "run_id" || key === "seq" || key === "ts" || key === "type") continue;
      if (typeof value === "number" || typeof value === "boolean") attributes[`eddy.${key}`] = value;
      else if (typeof value === "string" && value.length <= 200 && (this.s.content || SAFE_KEY.test(key))) {
        attributes[`eddy.${key}`] = value;
      }
    }
    this.span.addEvent(String(frame.type), attributes, time(frame.ts as number));
  }
}

/** One model request's span, across its attempts. */
class ChatSpan {
  retries = 0;
  text = "";
  calls: Array<{ id: string; name: string; arguments: string }> = [];
  incompleteReason: string | undefined;
  failure: { code: string; message: string } | undefined;
  private tokenSeen = false;

  constructor(
    private readonly s: TraceShared,
    readonly span: Span,
    readonly turn: number,
    public attemptStart: number,
  ) {}

  /** A provider event: its validation findings (what the response was is read from derived frames). */
  event(frame: ProviderEventFrame): void {
    if (frame.errors === undefined || frame.errors.length === 0) return;
    const data = isObject(frame.data) ? frame.data : undefined;
    this.span.addEvent(
      "validation_finding",
      { "eddy.event": String(data?.type ?? frame.event_name ?? "") },
      time(frame.ts),
    );
  }

  /** A piece of the answer, kept while the output message could still show it (`limits.valueLength`). */
  addText(delta: string): void {
    const max = this.s.limits.valueLength;
    if (this.text.length <= max) this.text = (this.text + delta).slice(0, max + 1);
  }

  /** The response's end, as the assembling stream derived it (every provider API alike). */
  responseEnded(frame: ResponseEndedFrame): void {
    if (frame.response_id !== null) this.span.setAttribute(GENAI.responseId, frame.response_id);
    if (frame.model !== null) this.span.setAttribute(GENAI.responseModel, frame.model);
    if (frame.incomplete_reason !== undefined) this.incompleteReason = frame.incomplete_reason;
  }

  firstToken(ts: number): void {
    if (this.tokenSeen) return;
    this.tokenSeen = true;
    const seconds = Math.max(0, ts - this.attemptStart) / 1000;
    this.span.setAttribute(GENAI.timeToFirstChunk, seconds);
    this.span.addEvent("first_token", { [GENAI.timeToFirstChunk]: seconds }, time(ts));
  }

  output(reason: string): GenAiMessage {
    const parts: Array<Record<string, unknown>> = [];
    if (this.text !== "") parts.push({ type: "text", content: this.text });
    for (const c of this.calls)
      parts.push({ type: "tool_call", id: c.id, name: c.name, arguments: c.arguments });
    return { role: "assistant", parts, finish_reason: reason };
  }

  end(ts: number, errorType?: string, message?: string): void {
    if (this.retries > 0) this.span.setAttribute("eddy.retries", this.retries);
    if (errorType !== undefined) {
      this.span.setAttribute(GENAI.errorType, errorType);
      this.span.setStatus({ code: this.s.api.SpanStatusCode.ERROR, message: message ?? errorType });
    }
    this.span.end(time(ts));
  }
}

/** Keys whose short string values are ids, names or reasons (never content). */
const SAFE_KEY = /(^|_)(id|reason|from|to|strategy|decision|name|mode|kind|code|status|by)$/;

function modelAttr(model: string | undefined): Attributes {
  return model === undefined ? {} : { [GENAI.requestModel]: model };
}

function usageAttributes(usage: unknown): Attributes {
  const u = isObject(usage) ? usage : {};
  const attributes: Attributes = {};
  if (typeof u.input_tokens === "number") attributes[GENAI.inputTokens] = u.input_tokens;
  if (typeof u.output_tokens === "number") attributes[GENAI.outputTokens] = u.output_tokens;
  const cached = isObject(u.input_tokens_details) ? u.input_tokens_details.cached_tokens : undefined;
  const reasoning = isObject(u.output_tokens_details) ? u.output_tokens_details.reasoning_tokens : undefined;
  if (typeof cached === "number") attributes[GENAI.cachedInputTokens] = cached;
  if (typeof reasoning === "number") attributes[GENAI.reasoningTokens] = reasoning;
  return attributes;
}

/** The `error` of an eddy tool output (`{code, message}`), else a generic one. */
function toolError(output: string): { code: string; message: string } {
  const error = parseJsonObject(output)?.error;
  if (isObject(error) && typeof error.code === "string") {
    return {
      code: error.code,
      message: typeof error.message === "string" ? error.message.slice(0, 300) : error.code,
    };
  }
  return { code: "tool_error", message: "the tool call ended with ok: false" };
}

/**
 * Frame times are unix milliseconds from the run's clock; spans take them as start and end times so
 * the trace lines up with the tape. A clock that is not wall time (an injected test clock) is left
 * out, and the tracer uses its own.
 */
function time(ts: number): number | undefined {
  return ts > 1e12 ? ts : undefined;
}

function at(ts: number): { startTime?: number } {
  const t = time(ts);
  return t === undefined ? {} : { startTime: t };
}
