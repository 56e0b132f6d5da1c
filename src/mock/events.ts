/**
 * A planned response → the spec's event sequence (spec §6–7), as a lazy generator so a long
 * response costs no memory up front and the writer can stop it at any event (faults):
 *
 * `response.created` → `response.in_progress` → for each item: `response.output_item.added` →
 * (message parts: `content_part.added` → `output_text.delta`* / `refusal.delta`* → `.done` →
 * `content_part.done`; function calls: `function_call_arguments.delta`* → `.done`; reasoning: raw
 * `content_part.added` → `reasoning.delta`* → `reasoning.done` → `content_part.done`, then summary
 * `reasoning_summary_part.added` → `reasoning_summary_text.delta`* → `.done` →
 * `reasoning_summary_part.done`) → `response.output_item.done` → exactly one terminal
 * `response.completed` | `response.incomplete` | `response.failed` with the full resource.
 *
 * `sequence_number` starts at 0 and grows by 1 per event. The generator's return value is the
 * terminal resource (also what a non-streaming request gets).
 */
import type { ItemField, MessageItem, ResponseResource, StreamingEvent } from "../protocol/types.js";
import { MOCK_DEFAULTS } from "./defaults.js";
import type { ReadyItem, ReadyPlan } from "./plan.js";
import type { MockRequestBody } from "./request.js";
import { buildResource, type ResourceState } from "./response-resource.js";
import { fragments, obfuscation, textDeltas } from "./text-split.js";
import { computeUsage } from "./usage.js";

/** An event before its `sequence_number` is stamped. */
type Unsequenced<E> = E extends unknown ? Omit<E, "sequence_number"> : never;
type Draft = Unsequenced<StreamingEvent>;

/** Everything the event sequence depends on. */
export interface ResponseEventsOptions {
  plan: ReadyPlan;
  body: MockRequestBody;
  responseId: string;
  /** Unix seconds. */
  createdAt: number;
  /** Unix seconds, read when the terminal event is built. */
  now: () => number;
  /** The conversation the model saw (for the usage estimate). */
  context: readonly unknown[];
}

/** The full event sequence of one response; returns the terminal resource. */
export function* responseEvents(options: ResponseEventsOptions): Generator<StreamingEvent, ResponseResource> {
  const { plan } = options;
  const writer = createEventWriter(options);
  yield* writer.open();
  for (const [index, item] of plan.items.entries()) {
    const incomplete = plan.status === "incomplete" && index === plan.items.length - 1;
    yield* writer.item(item, incomplete);
  }
  const terminal = terminalResource(options, writer.output);
  yield writer.end(terminal);
  return terminal;
}

/**
 * Writes a response's events one piece at a time, for a model whose items arrive over time (the
 * agent behind `eddy serve`): `open()` (created, in_progress), then `item()` per planned item or
 * `finished()` per item that is complete as it is announced, then `end()` with the terminal
 * resource. `sequence_number` and `output_index` are counted here; `output` collects the finished
 * items for the terminal resource.
 */
export interface EventWriter {
  readonly output: ItemField[];
  open(): StreamingEvent[];
  /** A planned item's events (added, its deltas, done). */
  item(item: ReadyItem, incomplete?: boolean): StreamingEvent[];
  /** An item complete as it is announced: `output_item.added` (status `in_progress`) and `output_item.done`. */
  finished(item: ItemField): StreamingEvent[];
  /** The terminal event for `terminal` (its status picks the type). */
  end(terminal: ResponseResource): StreamingEvent;
  /**
   * A message streamed as its text arrives instead of planned whole (`eddy serve`'s agent face):
   * it takes its output index when its first delta comes.
   */
  liveMessage(id: string): LiveMessage;
  /** A reasoning item streamed as its text (summary or raw) arrives, as `liveMessage`. */
  liveReasoning(id: string): LiveReasoning;
  /** A function call streamed as its arguments arrive; `start` announces it before the first piece. */
  liveFunctionCall(call: { id: string; call_id: string; name: string }): LiveFunctionCall;
}

type FunctionCallItem = Extract<ReadyItem, { type: "function_call" }>;

/** A function call of `EventWriter.liveFunctionCall`. */
export interface LiveFunctionCall {
  /** Announces the call (`output_item.added`, its arguments still empty) unless a piece already did. */
  start(): StreamingEvent[];
  /** A piece of the arguments (announcing the call if `start` did not). */
  args(delta: string): StreamingEvent[];
  /** The call's final form ends it: `function_call_arguments.done` with its arguments, then the item. */
  done(item: FunctionCallItem): StreamingEvent[];
  /** Ends it `incomplete` with the arguments streamed so far (the response ends before the call did). */
  abandon(): StreamingEvent[];
}

/** A reasoning item of `EventWriter.liveReasoning`. */
export interface LiveReasoning {
  /** A piece of a summary part or of a raw text part (numbered as `LiveMessage.text` numbers parts). */
  text(channel: "summary" | "text", index: number, delta: string): StreamingEvent[];
  /** The item's final form ends it. */
  done(item: Extract<ReadyItem, { type: "reasoning" }>): StreamingEvent[];
  /** Ends it with what was streamed (the response ends before the item did). */
  abandon(): StreamingEvent[];
}

/** A message of `EventWriter.liveMessage`. */
export interface LiveMessage {
  /**
   * A piece of the text of the part the upstream numbers `content_index` (announcing the item, and
   * the part, on their first piece). A different index begins the next part: parts are numbered
   * 0, 1, … here in the order they begin, whatever the upstream sent.
   */
  text(content_index: number, delta: string): StreamingEvent[];
  /** The message's final form ends it (parts that streamed nothing are sent whole). */
  done(item: Extract<ReadyItem, { type: "message" }>, incomplete?: boolean): StreamingEvent[];
  /** Ends it `incomplete` with the text streamed so far (the response ends before the message did). */
  abandon(): StreamingEvent[];
}

/** Creates the writer of one response (see `EventWriter`). */
export function createEventWriter(
  options: Pick<ResponseEventsOptions, "body" | "responseId" | "createdAt">,
): EventWriter {
  const { body } = options;
  let seq = 0;
  const stamp = (draft: Draft) => ({ ...draft, sequence_number: seq++ }) as StreamingEvent;
  const style: ItemStyle = {
    includeEncrypted: body.include?.includes("reasoning.encrypted_content") === true,
    obfuscate: body.stream_options?.include_obfuscation !== false,
  };
  const output: ItemField[] = [];
  const state = (): ResourceState => ({
    id: options.responseId,
    createdAt: options.createdAt,
    status: "in_progress",
    output: [],
    usage: null,
    error: null,
    completedAt: null,
  });
  return {
    output,
    open: () => [
      stamp({ type: "response.created", response: buildResource(body, state()) }),
      stamp({ type: "response.in_progress", response: buildResource(body, state()) }),
    ],
    item(item, incomplete = false) {
      const events = [...itemEvents(item, output.length, incomplete, style)].map(stamp);
      output.push(finalItem(item, incomplete ? "incomplete" : "completed", style));
      return events;
    },
    finished(item) {
      const output_index = output.length;
      output.push(item);
      const added = { ...item, status: "in_progress" } as ItemField;
      return [
        stamp({ type: "response.output_item.added", output_index, item: added }),
        stamp({ type: "response.output_item.done", output_index, item }),
      ];
    },
    liveMessage(id) {
      return new LiveMessageEvents(id, output, style, stamp);
    },
    liveReasoning(id) {
      return new LiveReasoningEvents(id, output, style, stamp);
    },
    liveFunctionCall(call) {
      return new LiveFunctionCallEvents(call, output, style, stamp);
    },
    end(terminal) {
      const type =
        terminal.status === "completed"
          ? "response.completed"
          : terminal.status === "incomplete"
            ? "response.incomplete"
            : "response.failed";
      return stamp({ type, response: terminal });
    },
  };
}

const EMPTY_TEXT = { type: "output_text" as const, text: "", annotations: [], logprobs: [] };

/**
 * The parts of one channel of a live item, numbered here 0, 1, … in the order they begin: a piece
 * with another index than the part being streamed begins the next part, whatever the upstream sent.
 */
class PartTrack {
  /** The part being streamed; -1 before the first. */
  current = -1;
  /** The text each part streamed. */
  readonly streamed: string[] = [];
  private upstream: unknown;

  /** True when a piece with upstream index `index` begins a part. */
  begins(index: unknown): boolean {
    return this.current < 0 || index !== this.upstream;
  }

  /** Begins the next part; returns its number. */
  begin(index: unknown): number {
    this.current++;
    this.upstream = index;
    this.streamed[this.current] = "";
    return this.current;
  }

  add(delta: string): void {
    this.streamed[this.current] += delta;
  }

  /** The final texts, unless they are fewer than the parts streamed: then what the client saw. */
  finals(given: readonly string[]): string[] {
    return given.length > this.current ? [...given] : [...this.streamed];
  }
}

/** What a live item of `EventWriter` shares: its place in the output, and its end. */
abstract class LiveItem {
  /** Its index in the output, once announced. */
  protected outputIndex = -1;
  protected ended = false;

  constructor(
    protected readonly id: string,
    protected readonly output: ItemField[],
    protected readonly style: ItemStyle,
    protected readonly stamp: (draft: Draft) => StreamingEvent,
  ) {}

  /** The item as `output_item.added` announces it (made once, when it is announced). */
  protected abstract added(): ItemField;

  /** Announces the item at its first piece (it takes the next output index). */
  protected announce(): Draft[] {
    if (this.outputIndex >= 0) return [];
    const added = this.added();
    this.outputIndex = this.output.length;
    this.output.push(added);
    return [{ type: "response.output_item.added", output_index: this.outputIndex, item: added }];
  }

  /** Sends the item whole, as a planned one (nothing of it streamed). */
  protected whole(item: ReadyItem, incomplete: boolean): StreamingEvent[] {
    this.ended = true;
    this.outputIndex = this.output.length;
    this.output.push(finalItem(item, incomplete ? "incomplete" : "completed", this.style));
    return [...itemEvents(item, this.outputIndex, incomplete, this.style)].map(this.stamp);
  }

  /** Puts the final item in its place and ends it with `output_item.done` after `drafts`. */
  protected close(drafts: Draft[], item: ReadyItem, status: "completed" | "incomplete"): StreamingEvent[] {
    const final = finalItem(item, status, this.style);
    this.output[this.outputIndex] = final;
    this.ended = true;
    drafts.push({ type: "response.output_item.done", output_index: this.outputIndex, item: final });
    return drafts.map(this.stamp);
  }
}

class LiveMessageEvents extends LiveItem implements LiveMessage {
  private readonly parts = new PartTrack();

  protected added(): ItemField {
    return addedItem({ type: "message", id: this.id, parts: [] }, this.style);
  }

  private at(content_index: number): PartAt {
    return { item_id: this.id, output_index: this.outputIndex, content_index };
  }

  text(content_index: number, delta: string): StreamingEvent[] {
    if (this.ended) return [];
    const drafts = this.announce();
    const parts = this.parts;
    if (parts.begins(content_index)) {
      if (parts.current >= 0)
        drafts.push(...outputTextDone(this.at(parts.current), parts.streamed[parts.current] ?? ""));
      const k = parts.begin(content_index);
      drafts.push({ type: "response.content_part.added", ...this.at(k), part: EMPTY_TEXT });
    }
    parts.add(delta);
    drafts.push(outputTextDelta(this.at(parts.current), delta, this.style));
    return drafts.map(this.stamp);
  }

  done(item: Extract<ReadyItem, { type: "message" }>, incomplete = false): StreamingEvent[] {
    if (this.ended) return [];
    if (this.outputIndex < 0) return this.whole(item, incomplete);
    return this.end(item, incomplete ? "incomplete" : "completed");
  }

  abandon(): StreamingEvent[] {
    if (this.outputIndex < 0 || this.ended) return [];
    const parts = this.parts.streamed.map((text) => ({ type: "output_text" as const, text }));
    return this.end({ type: "message", id: this.id, parts }, "incomplete");
  }

  /** Closes the part being streamed with its final text, sends the parts after it whole, then the item. */
  private end(given: Extract<ReadyItem, { type: "message" }>, status: "completed" | "incomplete") {
    const { current, streamed } = this.parts;
    // A final form with fewer parts than were streamed (an upstream that numbered its parts oddly)
    // gives way to the text the client saw, so every part announced is closed.
    const item =
      given.parts.length > current
        ? given
        : { ...given, parts: streamed.map((text) => ({ type: "output_text" as const, text })) };
    const drafts: Draft[] = [];
    for (const [content_index, part] of item.parts.entries()) {
      if (content_index < current) continue; // closed when the next part began
      const at = this.at(content_index);
      if (content_index > current || streamed[content_index] === undefined)
        drafts.push(
          ...(part.type === "output_text"
            ? outputTextEvents(at, part.text, this.style)
            : refusalEvents(at, part)),
        );
      else if (part.type === "output_text") drafts.push(...outputTextDone(at, part.text));
      else drafts.push({ type: "response.content_part.done", ...at, part });
    }
    return this.close(drafts, item, status);
  }
}

type ReasoningItem = Extract<ReadyItem, { type: "reasoning" }>;

class LiveReasoningEvents extends LiveItem implements LiveReasoning {
  private readonly channels = { text: new PartTrack(), summary: new PartTrack() };

  protected added(): ItemField {
    return addedItem({ type: "reasoning", id: this.id, summary: [], content: [] }, this.style);
  }

  text(channel: ReasoningChannel, index: number, delta: string): StreamingEvent[] {
    if (this.ended) return [];
    const drafts = this.announce();
    const track = this.channels[channel];
    if (track.begins(index)) {
      if (track.current >= 0)
        drafts.push(
          ...reasoningPartDone(channel, this.at, track.current, track.streamed[track.current] ?? ""),
        );
      drafts.push(reasoningPartAdded(channel, this.at, track.begin(index)));
    }
    track.add(delta);
    drafts.push(reasoningDelta(channel, this.at, track.current, delta, this.style));
    return drafts.map(this.stamp);
  }

  done(item: ReasoningItem): StreamingEvent[] {
    if (this.ended) return [];
    if (this.outputIndex < 0) return this.whole(item, false);
    return this.end(item, "completed");
  }

  abandon(): StreamingEvent[] {
    if (this.outputIndex < 0 || this.ended) return [];
    const { text, summary } = this.channels;
    return this.end(
      { type: "reasoning", id: this.id, content: text.streamed, summary: summary.streamed },
      "incomplete",
    );
  }

  private end(given: ReasoningItem, status: "completed" | "incomplete"): StreamingEvent[] {
    const content = this.channels.text.finals(given.content);
    const summary = this.channels.summary.finals(given.summary);
    const drafts = [...this.finish("text", content), ...this.finish("summary", summary)];
    return this.close(drafts, { ...given, content, summary }, status);
  }

  /** Closes the channel's part being streamed with its final text; the parts after it go out whole. */
  private finish(channel: ReasoningChannel, finals: readonly string[]): Draft[] {
    const track = this.channels[channel];
    const drafts: Draft[] = [];
    for (let k = Math.max(track.current, 0); k < finals.length; k++) {
      const text = finals[k] ?? "";
      if (k > track.current) {
        drafts.push(reasoningPartAdded(channel, this.at, k));
        if (text !== "") drafts.push(reasoningDelta(channel, this.at, k, text, this.style));
      }
      drafts.push(...reasoningPartDone(channel, this.at, k, text));
    }
    return drafts;
  }

  private get at(): ItemAt {
    return { item_id: this.id, output_index: this.outputIndex };
  }
}

class LiveFunctionCallEvents extends LiveItem implements LiveFunctionCall {
  private readonly callId: string;
  private readonly name: string;
  private streamed = "";

  constructor(
    call: { id: string; call_id: string; name: string },
    output: ItemField[],
    style: ItemStyle,
    stamp: (draft: Draft) => StreamingEvent,
  ) {
    super(call.id, output, style, stamp);
    this.callId = call.call_id;
    this.name = call.name;
  }

  /** The call as streamed so far. */
  private get current(): FunctionCallItem {
    return {
      type: "function_call",
      id: this.id,
      call_id: this.callId,
      name: this.name,
      arguments: this.streamed,
    };
  }

  protected added(): ItemField {
    return addedItem(this.current, this.style);
  }

  start(): StreamingEvent[] {
    if (this.ended) return [];
    return this.announce().map(this.stamp);
  }

  args(delta: string): StreamingEvent[] {
    if (this.ended) return [];
    const drafts = this.announce();
    this.streamed += delta;
    drafts.push(argumentsDelta(this.id, this.outputIndex, delta, this.style));
    return drafts.map(this.stamp);
  }

  done(item: FunctionCallItem): StreamingEvent[] {
    if (this.ended) return [];
    if (this.outputIndex < 0) return this.whole(item, false);
    return this.end({ ...item, id: this.id }, "completed");
  }

  abandon(): StreamingEvent[] {
    if (this.outputIndex < 0 || this.ended) return [];
    return this.end(this.current, "incomplete");
  }

  private end(item: FunctionCallItem, status: "completed" | "incomplete"): StreamingEvent[] {
    return this.close([argumentsDone(this.id, this.outputIndex, item.arguments)], item, status);
  }
}

/** The terminal resource for `output` (also used when a fault fails a response early). */
export function terminalResource(
  options: ResponseEventsOptions,
  output: ItemField[],
  failure?: ResponseResource["error"],
): ResponseResource {
  const { plan } = options;
  const status = failure ? "failed" : plan.status;
  const state: ResourceState = {
    id: options.responseId,
    createdAt: options.createdAt,
    status,
    output,
    usage: computeUsage({
      context: options.context,
      instructions: options.body.instructions,
      output,
      overrides: plan.usage,
    }),
    error:
      status === "failed"
        ? (failure ?? plan.error ?? { code: "server_error", message: "The mock response failed." })
        : null,
    completedAt: status === "completed" ? options.now() : null,
  };
  if (status === "incomplete")
    state.incompleteReason = plan.incompleteReason ?? MOCK_DEFAULTS.incompleteReason;
  return buildResource(options.body, state);
}

interface ItemStyle {
  includeEncrypted: boolean;
  obfuscate: boolean;
}

/** One output item's events: `output_item.added`, its deltas by type, `output_item.done`. */
function* itemEvents(item: ReadyItem, output_index: number, incomplete: boolean, style: ItemStyle) {
  yield { type: "response.output_item.added", output_index, item: addedItem(item, style) } satisfies Draft;
  switch (item.type) {
    case "message":
      for (const [content_index, part] of item.parts.entries()) {
        const at = { item_id: item.id, output_index, content_index };
        if (part.type === "output_text") yield* outputTextEvents(at, part.text, style);
        else yield* refusalEvents(at, part);
      }
      break;
    case "function_call":
      yield* argumentsEvents(item.id, output_index, item.arguments, style);
      break;
    case "reasoning":
      yield* reasoningEvents(item, output_index, style);
      break;
  }
  const status = incomplete ? "incomplete" : "completed";
  yield {
    type: "response.output_item.done",
    output_index,
    item: finalItem(item, status, style),
  } satisfies Draft;
}

/** Where a content part sits. */
interface PartAt {
  item_id: string;
  output_index: number;
  content_index: number;
}

/** The `obfuscation` padding of a delta, when the request asked for it. */
function pad(style: ItemStyle, delta: string): { obfuscation?: string } {
  return style.obfuscate ? { obfuscation: obfuscation(delta) } : {};
}

function* outputTextEvents(at: PartAt, text: string, style: ItemStyle) {
  yield { type: "response.content_part.added", ...at, part: EMPTY_TEXT } satisfies Draft;
  for (const delta of textDeltas(text, MOCK_DEFAULTS.textDeltaChars)) yield outputTextDelta(at, delta, style);
  yield* outputTextDone(at, text);
}

function outputTextDelta(at: PartAt, delta: string, style: ItemStyle): Draft {
  return { type: "response.output_text.delta", ...at, delta, logprobs: [], ...pad(style, delta) };
}

/** The end of an output text part: its final text, then the part. */
function outputTextDone(at: PartAt, text: string): Draft[] {
  return [
    { type: "response.output_text.done", ...at, text, logprobs: [] },
    { type: "response.content_part.done", ...at, part: { ...EMPTY_TEXT, text } },
  ];
}

function* refusalEvents(at: PartAt, part: { type: "refusal"; refusal: string }) {
  yield {
    type: "response.content_part.added",
    ...at,
    part: { type: "refusal", refusal: "" },
  } satisfies Draft;
  for (const delta of textDeltas(part.refusal, MOCK_DEFAULTS.textDeltaChars)) {
    yield { type: "response.refusal.delta", ...at, delta } satisfies Draft;
  }
  yield { type: "response.refusal.done", ...at, refusal: part.refusal } satisfies Draft;
  yield { type: "response.content_part.done", ...at, part } satisfies Draft;
}

function* argumentsEvents(item_id: string, output_index: number, args: string, style: ItemStyle) {
  for (const delta of fragments(args, MOCK_DEFAULTS.fragmentChars))
    yield argumentsDelta(item_id, output_index, delta, style);
  yield argumentsDone(item_id, output_index, args);
}

function argumentsDelta(item_id: string, output_index: number, delta: string, style: ItemStyle): Draft {
  return {
    type: "response.function_call_arguments.delta",
    item_id,
    output_index,
    delta,
    ...pad(style, delta),
  };
}

function argumentsDone(item_id: string, output_index: number, args: string): Draft {
  return { type: "response.function_call_arguments.done", item_id, output_index, arguments: args };
}

/** A reasoning item's text parts, then its summary parts, each opened, streamed and closed. */
function* reasoningEvents(
  item: Extract<ReadyItem, { type: "reasoning" }>,
  output_index: number,
  style: ItemStyle,
) {
  const at = { item_id: item.id, output_index };
  for (const [k, text] of item.content.entries()) {
    yield reasoningPartAdded("text", at, k);
    for (const delta of fragments(text, MOCK_DEFAULTS.fragmentChars))
      yield reasoningDelta("text", at, k, delta, style);
    yield* reasoningPartDone("text", at, k, text);
  }
  for (const [k, text] of item.summary.entries()) {
    yield reasoningPartAdded("summary", at, k);
    for (const delta of textDeltas(text, MOCK_DEFAULTS.textDeltaChars))
      yield reasoningDelta("summary", at, k, delta, style);
    yield* reasoningPartDone("summary", at, k, text);
  }
}

/** A reasoning item's two kinds of parts: raw text (`content_index`) and summary (`summary_index`). */
type ReasoningChannel = "summary" | "text";

/** Where a reasoning item sits (its parts' index comes with each event). */
interface ItemAt {
  item_id: string;
  output_index: number;
}

function reasoningPartAdded(channel: ReasoningChannel, at: ItemAt, k: number): Draft {
  return channel === "text"
    ? {
        type: "response.content_part.added",
        ...at,
        content_index: k,
        part: { type: "reasoning_text", text: "" },
      }
    : {
        type: "response.reasoning_summary_part.added",
        ...at,
        summary_index: k,
        part: { type: "summary_text", text: "" },
      };
}

function reasoningDelta(
  channel: ReasoningChannel,
  at: ItemAt,
  k: number,
  delta: string,
  style: ItemStyle,
): Draft {
  return channel === "text"
    ? { type: "response.reasoning.delta", ...at, content_index: k, delta, ...pad(style, delta) }
    : { type: "response.reasoning_summary_text.delta", ...at, summary_index: k, delta, ...pad(style, delta) };
}

/** The end of a reasoning part: its final text, then the part. */
function reasoningPartDone(channel: ReasoningChannel, at: ItemAt, k: number, text: string): Draft[] {
  return channel === "text"
    ? [
        { type: "response.reasoning.done", ...at, content_index: k, text },
        {
          type: "response.content_part.done",
          ...at,
          content_index: k,
          part: { type: "reasoning_text", text },
        },
      ]
    : [
        { type: "response.reasoning_summary_text.done", ...at, summary_index: k, text },
        {
          type: "response.reasoning_summary_part.done",
          ...at,
          summary_index: k,
          part: { type: "summary_text", text },
        },
      ];
}

/** The item as `output_item.added` announces it: zero values for what is still to stream. */
function addedItem(item: ReadyItem, style: ItemStyle): ItemField {
  switch (item.type) {
    case "message":
      return withPhase(
        { type: "message", id: item.id, status: "in_progress", role: "assistant", content: [] },
        item,
      );
    case "function_call":
      return {
        type: "function_call",
        id: item.id,
        call_id: item.call_id,
        name: item.name,
        arguments: "",
        status: "in_progress",
      };
    case "reasoning":
      return withReasoningExtras({ type: "reasoning", id: item.id, summary: [] }, item, style, []);
  }
}

/** The finished item, as in `output_item.done` and the terminal resource's `output`. */
export function finalItem(item: ReadyItem, status: "completed" | "incomplete", style: ItemStyle): ItemField {
  switch (item.type) {
    case "message":
      return withPhase(
        {
          type: "message",
          id: item.id,
          status,
          role: "assistant",
          content: item.parts.map((p) =>
            p.type === "output_text"
              ? { type: "output_text", text: p.text, annotations: [], logprobs: [] }
              : p,
          ),
        },
        item,
      );
    case "function_call":
      return {
        type: "function_call",
        id: item.id,
        call_id: item.call_id,
        name: item.name,
        arguments: item.arguments,
        status,
      };
    case "reasoning": {
      const summary = item.summary.map((text) => ({ type: "summary_text" as const, text }));
      const content = item.content.map((text) => ({ type: "reasoning_text" as const, text }));
      return withReasoningExtras({ type: "reasoning", id: item.id, summary }, item, style, content);
    }
  }
}

function withPhase(target: MessageItem, item: { phase?: "commentary" | "final_answer" }): MessageItem {
  if (item.phase !== undefined) target.phase = item.phase;
  return target;
}

function withReasoningExtras(
  target: Extract<ItemField, { type: "reasoning" }>,
  item: Extract<ReadyItem, { type: "reasoning" }>,
  style: ItemStyle,
  content: NonNullable<Extract<ItemField, { type: "reasoning" }>["content"]>,
): ItemField {
  if (item.content.length > 0) target.content = content;
  if (style.includeEncrypted && item.encrypted_content !== undefined)
    target.encrypted_content = item.encrypted_content;
  return target;
}
