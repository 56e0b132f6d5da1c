/**
 * Chat Completions chunks → Open Responses streaming events, one attempt at a time (an
 * `EventTranslator` for the assembling stream). The assembler then treats a chat stream exactly
 * like a Responses stream: the same items, calls, promotion and terminal rules.
 *
 * Output items in order of first appearance: a `reasoning` item (from `reasoning_content` or
 * `reasoning` deltas, never text: test/fixtures/chat-captures/deepseek/), a `message` (from
 * `content` and `refusal` deltas), and one `function_call` per `delta.tool_calls[index]`.
 * Tool-call fragments carry the id and name on the first fragment and argument pieces after it;
 * the id repeated on every fragment (alibaba/alibaba-tool-call), fragments without `index`
 * (mistral/mistral-tool-call), calls interleaved by index and arguments in one piece
 * (groq/groq-tool-call) are all taken. A call is promoted (its
 * `output_item.done`) as soon as a later index starts and its arguments are complete JSON — so a
 * tool can start while the model still streams the next call, and interleaved calls are never cut
 * short — and otherwise when the choice finishes.
 *
 * `finish_reason` closes every item and decides the terminal event: `stop`/`tool_calls` →
 * `response.completed`, `length` → `response.incomplete` (open calls end `incomplete` and never
 * run), `content_filter` → `response.failed` with that code. The terminal event waits for the
 * usage chunk that follows the finish (`stream_options.include_usage`), for `[DONE]` or for the
 * end of the body, whichever comes first — or ends at once when the finish chunk carries usage
 * itself (DeepSeek, Groq's `x_groq.usage`, vLLM's usage on every chunk:
 * vllm/vllm-tool-call-trailing-fragment); without reported usage it carries an estimate marked
 * `estimated: true`. An `{"error": …}` chunk fails the response like an `error` event; a stream
 * that ends without a `finish_reason` stays without a terminal event (truncated).
 */
import type { ProviderEventFrame } from "../../frames/frame.js";
import type { JsonObject, Usage } from "../../protocol/types.js";
import { isJsonObject } from "../../util/json.js";
import type { EventTranslator } from "../assembling-stream.js";
import type { ProviderRequest } from "../provider.js";
import {
  type ChatChoice,
  type ChatChunk,
  type ChatDelta,
  chunkUsage,
  estimatedUsage,
  requestChars,
  type ToolCallDelta,
  toUsage,
} from "./chunk.js";
import { JsonEnd } from "./json-end.js";

interface ItemBase {
  outputIndex: number;
  id: string;
  done: boolean;
}
interface ReasoningState extends ItemBase {
  text: string;
}
/** A content part of the message: its content index (in order of appearance) and its text. */
interface PartState {
  index: number;
  text: string;
}
interface MessageState extends ItemBase {
  parts: { output_text?: PartState; refusal?: PartState };
  partCount: number;
}
interface CallState extends ItemBase {
  callId: string;
  /** The call id came from the server (not made up here for a server that sent none). */
  serverId: boolean;
  name: string;
  arguments: string;
  /** Whether `arguments` is whole JSON yet (scanned piece by piece). */
  end: JsonEnd;
}

/**
 * Makes the translator of one attempt of `request`. `recordedUsage`: the estimate a recorded run
 * made for this attempt (a replay), used instead of estimating again — the estimate counts
 * characters, and a tape has a secret's characters masked.
 */
export function createChatTranslator(request: ProviderRequest, recordedUsage?: Usage): EventTranslator {
  return new ChatTranslator(request, recordedUsage);
}

class ChatTranslator implements EventTranslator {
  private started = false;
  private responseId: string | null = null;
  private model: string | null = null;
  private nextIndex = 0;
  private reasoning: ReasoningState | undefined;
  private message: MessageState | undefined;
  /** Calls by their chat `index`, in order of appearance. */
  private readonly calls = new Map<number, CallState>();
  /** Open calls that got argument pieces since the last new call (the only ones that can have become whole). */
  private readonly grown = new Set<CallState>();
  /** The chat index of each call id (the first call with that id), for fragments without `index`. */
  private readonly keyById = new Map<string, number>();
  /** The highest and the latest chat index seen (fragments without `index` or id continue the latest). */
  private maxKey = -1;
  private lastKey: number | undefined;
  private finishReason: string | null = null;
  private usage: Usage | null = null;
  private ended = false;
  private out: JsonObject[] = [];

  constructor(
    private readonly request: ProviderRequest,
    private readonly recordedUsage: Usage | undefined,
  ) {}

  translate(frame: ProviderEventFrame): readonly JsonObject[] {
    if (frame.status === "done") return this.end();
    if (frame.status !== "event" || !isJsonObject(frame.data) || this.ended) return [];
    this.out = [];
    const chunk = frame.data as ChatChunk;
    if (chunk.error !== undefined && chunk.error !== null) this.fail(chunk.error);
    else if (chunk.object === "chat.completion") this.whole(chunk);
    else this.chunk(chunk);
    return this.out;
  }

  /** A finished choice waits only for its usage chunk or `[DONE]`: the attempt drains (briefly) for them. */
  get finishing(): boolean {
    return this.finishReason !== null && !this.ended;
  }

  /** The terminal event a finished choice is still waiting for, at `[DONE]` or the end of the body. */
  end(): readonly JsonObject[] {
    if (this.ended || this.finishReason === null) return [];
    this.out = [];
    this.terminal();
    return this.out;
  }

  private chunk(chunk: ChatChunk): void {
    this.start(chunk);
    const usage = chunkUsage(chunk);
    if (usage !== undefined) this.usage = toUsage(usage);
    const choice = firstChoice(chunk.choices);
    if (choice !== undefined && this.finishReason === null) {
      const delta = choice.delta ?? choice.message;
      if (isJsonObject(delta)) this.delta(delta);
      if (typeof choice.finish_reason === "string") this.finish(choice.finish_reason);
    }
    if (this.finishReason !== null && this.usage !== null) this.terminal();
  }

  /** A server that ignored `stream: true`: the whole completion is one chunk that ends at once. */
  private whole(completion: ChatChunk): void {
    const choice = firstChoice(completion.choices);
    const message = choice?.message;
    const calls = message?.tool_calls;
    const finish =
      choice?.finish_reason ?? (Array.isArray(calls) && calls.length > 0 ? "tool_calls" : "stop");
    const delta: ChatDelta | undefined =
      message === undefined
        ? undefined
        : {
            ...message,
            tool_calls: Array.isArray(calls) ? calls.map((c, index) => ({ ...c, index })) : null,
          };
    this.chunk({
      ...completion,
      choices: [{ index: 0, ...(delta ? { delta } : {}), finish_reason: finish }],
    });
    this.terminal();
  }

  private start(chunk: ChatChunk): void {
    if (this.started) return;
    this.started = true;
    if (typeof chunk.id === "string" && chunk.id !== "") this.responseId = chunk.id;
    if (typeof chunk.model === "string") this.model = chunk.model;
    this.emit({ type: "response.created", response: this.snapshot("in_progress") });
  }

  private delta(delta: ChatDelta): void {
    const reasoning = typeof delta.reasoning_content === "string" ? delta.reasoning_content : delta.reasoning;
    if (typeof reasoning === "string" && reasoning !== "") this.reasoningDelta(reasoning);
    if (typeof delta.content === "string" && delta.content !== "")
      this.partDelta("output_text", delta.content);
    if (typeof delta.refusal === "string" && delta.refusal !== "") this.partDelta("refusal", delta.refusal);
    if (Array.isArray(delta.tool_calls))
      for (const fragment of delta.tool_calls) if (isJsonObject(fragment)) this.toolCallDelta(fragment);
  }

  private reasoningDelta(text: string): void {
    let r = this.reasoning;
    if (r === undefined) {
      r = { outputIndex: this.nextIndex++, id: `rs_${this.base()}`, done: false, text: "" };
      this.reasoning = r;
      this.emit({
        type: "response.output_item.added",
        output_index: r.outputIndex,
        item: { type: "reasoning", id: r.id, summary: [] },
      });
    }
    r.text += text;
    this.emit({
      type: "response.reasoning.delta",
      item_id: r.id,
      output_index: r.outputIndex,
      content_index: 0,
      delta: text,
    });
  }

  private openMessage(): MessageState {
    let m = this.message;
    if (m === undefined) {
      m = {
        outputIndex: this.nextIndex++,
        id: `msg_${this.base()}`,
        done: false,
        parts: {},
        partCount: 0,
      };
      this.message = m;
      this.emit({
        type: "response.output_item.added",
        output_index: m.outputIndex,
        item: { type: "message", id: m.id, role: "assistant", status: "in_progress", content: [] },
      });
    }
    return m;
  }

  /** A `content` (output_text) or `refusal` delta: the part is opened on its first delta. */
  private partDelta(kind: "output_text" | "refusal", text: string): void {
    const m = this.openMessage();
    let part = m.parts[kind];
    if (part === undefined) {
      part = { index: m.partCount++, text: "" };
      m.parts[kind] = part;
    }
    part.text += text;
    this.emit({
      type: kind === "output_text" ? "response.output_text.delta" : "response.refusal.delta",
      item_id: m.id,
      output_index: m.outputIndex,
      content_index: part.index,
      delta: text,
    });
  }

  private toolCallDelta(fragment: ToolCallDelta): void {
    const key = this.callKey(fragment);
    const id = typeof fragment.id === "string" && fragment.id !== "" ? fragment.id : undefined;
    const name = fragment.function?.name;
    let call = this.calls.get(key);
    if (call === undefined) call = this.openCall(key, id, typeof name === "string" ? name : "");
    else {
      // The id on a later fragment only when the first had none (it then reaches the done item).
      if (id !== undefined && !call.serverId) {
        if (this.keyById.get(call.callId) === key) this.keyById.delete(call.callId);
        call.callId = id;
        call.serverId = true;
        if (!this.keyById.has(id)) this.keyById.set(id, key);
      }
      if (call.name === "" && typeof name === "string") call.name = name;
    }
    const args = fragment.function?.arguments;
    const piece = typeof args === "string" ? args : isJsonObject(args) ? JSON.stringify(args) : "";
    if (piece === "" || call.done) return;
    call.arguments += piece;
    call.end.feed(piece);
    this.grown.add(call);
    this.emit({
      type: "response.function_call_arguments.delta",
      item_id: call.id,
      output_index: call.outputIndex,
      delta: piece,
    });
  }

  /**
   * A new call starts: the earlier ones are done if their arguments are whole JSON. Only calls
   * that grew since the last new call can have become whole, so only those are looked at (in
   * output order): a response with many calls stays linear (docs/pitfalls.md #64).
   */
  private openCall(key: number, id: string | undefined, name: string): CallState {
    const grown = [...this.grown].sort((a, b) => a.outputIndex - b.outputIndex);
    this.grown.clear();
    for (const open of grown)
      if (!open.done && open.end.complete(open.arguments)) this.closeCall(open, "completed");
    const call: CallState = {
      outputIndex: this.nextIndex++,
      id: `fc_${this.base()}_${key}`,
      done: false,
      callId: id ?? `call_${this.base()}_${key}`,
      serverId: id !== undefined,
      name,
      arguments: "",
      end: new JsonEnd(),
    };
    this.calls.set(key, call);
    this.lastKey = key;
    if (key > this.maxKey) this.maxKey = key;
    if (!this.keyById.has(call.callId)) this.keyById.set(call.callId, key);
    this.emit({
      type: "response.output_item.added",
      output_index: call.outputIndex,
      item: callItem(call, "in_progress"),
    });
    return call;
  }

  /** The chat index a fragment belongs to; servers that leave `index` out are matched by id. */
  private callKey(fragment: ToolCallDelta): number {
    if (typeof fragment.index === "number") return fragment.index;
    const id = fragment.id;
    if (typeof id === "string" && id !== "") return this.keyById.get(id) ?? this.maxKey + 1;
    return this.lastKey ?? 0;
  }

  private closeCall(call: CallState, status: "completed" | "incomplete"): void {
    call.done = true;
    this.grown.delete(call);
    this.emit({
      type: "response.output_item.done",
      output_index: call.outputIndex,
      item: callItem(call, status),
    });
  }

  /** The choice finished: every item is done (calls cut by a limit or a filter end incomplete). */
  private finish(reason: string): void {
    this.finishReason = reason;
    const status = statusOf(reason) === "completed" ? "completed" : "incomplete";
    const r = this.reasoning;
    if (r !== undefined && !r.done) {
      r.done = true;
      this.emit({
        type: "response.output_item.done",
        output_index: r.outputIndex,
        item: {
          type: "reasoning",
          id: r.id,
          summary: [],
          content: [{ type: "reasoning_text", text: r.text }],
        },
      });
    }
    const m = this.message;
    if (m !== undefined && !m.done) {
      m.done = true;
      const content: JsonObject[] = [];
      const { output_text: text, refusal } = m.parts;
      if (text !== undefined) content[text.index] = { type: "output_text", text: text.text, annotations: [] };
      if (refusal !== undefined) content[refusal.index] = { type: "refusal", refusal: refusal.text };
      this.emit({
        type: "response.output_item.done",
        output_index: m.outputIndex,
        item: { type: "message", id: m.id, role: "assistant", status, content },
      });
    }
    for (const call of this.calls.values()) if (!call.done) this.closeCall(call, status);
  }

  /** The terminal event, once, from the finish reason (see the module comment). */
  private terminal(): void {
    if (this.ended || this.finishReason === null) return;
    this.ended = true;
    const reason = this.finishReason;
    const status = statusOf(reason);
    const response = this.snapshot(status);
    response.usage = this.usage ?? this.estimate();
    if (status === "incomplete") response.incomplete_details = { reason: "max_output_tokens" };
    if (status === "failed")
      response.error = {
        code: reason === "content_filter" ? "content_filter" : "server_error",
        message: `the provider stopped the response (finish_reason "${reason}")`,
      };
    this.emit({ type: `response.${status}`, response });
  }

  private fail(error: unknown): void {
    this.ended = true;
    const e = isJsonObject(error) ? error : { message: typeof error === "string" ? error : "error" };
    const payload: JsonObject = {
      type: typeof e.type === "string" ? e.type : "server_error",
      code: typeof e.code === "string" ? e.code : typeof e.code === "number" ? String(e.code) : null,
      message: typeof e.message === "string" ? e.message : "the provider sent an error chunk",
      param: typeof e.param === "string" ? e.param : null,
    };
    this.emit({ type: "error", error: payload });
  }

  /** Usage from character counts when the server reported none. */
  private estimate(): Usage {
    if (this.recordedUsage !== undefined) return this.recordedUsage;
    const parts = this.message?.parts;
    let outputChars = this.reasoning?.text.length ?? 0;
    outputChars += (parts?.output_text?.text.length ?? 0) + (parts?.refusal?.text.length ?? 0);
    for (const call of this.calls.values()) outputChars += call.name.length + call.arguments.length;
    return estimatedUsage(requestChars(this.request.body), outputChars);
  }

  private snapshot(status: string): JsonObject {
    return { id: this.responseId, object: "response", model: this.model, status, output: [] };
  }

  /** The base of item ids: the completion id, else the turn (ids must differ across turns). */
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
    arguments: call.arguments,
    status,
  };
}

function firstChoice(choices: ChatChoice[] | undefined): ChatChoice | undefined {
  if (!Array.isArray(choices) || choices.length === 0) return undefined;
  // We never ask for n > 1; a server that sends more choices is read for choice 0 only.
  const zero = choices.find((c) => isJsonObject(c) && (c.index === 0 || c.index === undefined));
  return isJsonObject(zero) ? zero : undefined;
}

/** How a finish reason ends the response. */
function statusOf(reason: string): "completed" | "incomplete" | "failed" {
  switch (reason) {
    case "length":
    case "max_tokens":
      return "incomplete";
    case "content_filter":
    case "error":
      return "failed";
    default:
      // stop, tool_calls, function_call (legacy), eos, and anything new: the model finished.
      return "completed";
  }
}
