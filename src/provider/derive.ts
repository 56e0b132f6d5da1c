/**
 * One attempt's assembly and the frames derived from its provider events (docs/architecture.md,
 * "The frame contract"). What the consumers of a run — the human view, the run viewer, telemetry —
 * need from the provider's events is assembled once, here, and handed to them as frames, instead
 * of each re-reading raw `provider_event` JSON (which on the Chat Completions path is not even an
 * Open Responses event):
 *
 * - `reasoning_delta`: each piece of reasoning text (summary or raw), like `output_text_delta`;
 * - `item_done`: each output item once it is final, as the assembler settled it;
 * - `response_ended`: the response's id, model, status, usage and error at its terminal event;
 * - with a translator (Chat Completions), `output_text_delta` too, from the translated deltas.
 *
 * The frames derived from one event come right after its `provider_event`, in the order of the
 * events they stand for. The same code serves the live stream, a replay and the upgrade of tapes
 * recorded before these frames existed (src/replay/upgrade-frames.ts), so all three agree.
 * Events the end of a body implies (`EventTranslator.end`) are stepped but derive nothing: there
 * is no provider event for their frames to follow.
 */
import {
  frame,
  type ItemDoneFrame,
  type ProviderEventFrame,
  type ProviderFrame,
  type ReasoningDeltaFrame,
} from "../frames/frame.js";
import type { JsonObject } from "../protocol/types.js";
import { isJsonObject } from "../util/json.js";
import { finalItems } from "./assembler/finish.js";
import { type Assembly, createAssembly, step } from "./assembler/index.js";
import type { EventTranslator } from "./assembling-stream.js";

/** How an attempt is assembled. */
export interface AttemptAssemblyInit {
  /** Promote native call items too (`ProviderStreamOptions.nativeCalls`). */
  nativeCalls: boolean;
  /** For a wire format whose events are not Open Responses events (Chat Completions). */
  translator?: EventTranslator | undefined;
}

/** One attempt: its assembly, its translator, and what it derived so far. */
export class AttemptAssembly {
  readonly assembly: Assembly;
  readonly translator: EventTranslator | undefined;
  /** Output indexes whose `item_done` was derived. */
  private readonly emitted = new Set<number>();
  private ended = false;
  private translationEnded = false;

  constructor(init: AttemptAssemblyInit) {
    this.assembly = createAssembly({ nativeCalls: init.nativeCalls });
    this.translator = init.translator;
  }

  /**
   * Steps the assembly with one `provider_event` and returns the frames derived from it, in order
   * (with a translator, the `output_text_delta` frames among them; without, those come from the
   * SSE mapping, src/frames/from-sse.ts, and are not repeated here).
   */
  event(f: ProviderEventFrame): readonly ProviderFrame[] {
    // One shared empty list for the many events that derive nothing (no array per event).
    let out: ProviderFrame[] = NONE as ProviderFrame[];
    if (this.translator !== undefined) {
      for (const event of this.translator.translate(f)) {
        step(this.assembly, event);
        out = this.derive(f.turn, event, out);
      }
    } else if (f.status === "event" && isJsonObject(f.data)) {
      step(this.assembly, f.data);
      out = this.derive(f.turn, f.data, out);
    }
    return out;
  }

  /** The body ended: the translator's end events are stepped (they derive no frame, see the module comment). */
  endTranslation(): void {
    if (this.translator === undefined || this.translationEnded) return;
    this.translationEnded = true;
    for (const event of this.translator.end()) step(this.assembly, event);
    this.assembly.closed.length = 0;
  }

  /** Derives the frames of one event onto `out` (a fresh list replaces the shared empty one). */
  private derive(turn: number, event: JsonObject, given: ProviderFrame[]): ProviderFrame[] {
    let out = given;
    const type = event.type;
    if (typeof type === "string" && type.endsWith(".delta")) {
      const delta = deltaFrame(turn, type, event, this.translator !== undefined);
      if (delta !== undefined) out = pushed(out, delta);
    }
    const a = this.assembly;
    if (a.closed.length > 0) {
      for (const index of a.closed.splice(0)) {
        if (this.emitted.has(index)) continue;
        this.emitted.add(index);
        out = pushed(out, itemDone(turn, index, itemAt(a, index)));
      }
    }
    if (!this.ended && a.terminal !== null) {
      this.ended = true;
      out = out === NONE ? [] : out;
      this.deriveEnd(turn, out);
    }
    return out;
  }

  /** At the response's end: every item not derived yet (in output order), then `response_ended`. */
  private deriveEnd(turn: number, out: ProviderFrame[]): void {
    const a = this.assembly;
    for (const entry of finalItems(a)) {
      if (entry.streamed) {
        if (this.emitted.has(entry.outputIndex)) continue;
        this.emitted.add(entry.outputIndex);
      }
      out.push(itemDone(turn, entry.outputIndex, entry.item));
    }
    const ended = frame("response_ended", {
      turn,
      response_id: a.responseId,
      model: a.model,
      status: a.terminal === "error" ? "failed" : (a.status ?? a.terminal ?? "failed"),
      usage: a.usage,
    });
    if (a.terminal === "incomplete" && a.incompleteReason !== null)
      ended.incomplete_reason = a.incompleteReason;
    if (a.error !== null) ended.error = { code: a.error.code ?? "response_failed", message: a.error.message };
    out.push(ended);
  }
}

const NONE: readonly ProviderFrame[] = Object.freeze([]);

/** `list` with `f` added: a fresh list in place of the shared empty one. */
function pushed(list: ProviderFrame[], f: ProviderFrame): ProviderFrame[] {
  if (list === NONE) return [f];
  list.push(f);
  return list;
}

const REASONING_DELTAS: Readonly<Record<string, ReasoningDeltaFrame["channel"]>> = {
  "response.reasoning_summary_text.delta": "summary",
  "response.reasoning.delta": "text",
  // OpenAI and LM Studio name raw reasoning `reasoning_text`; the spec says `reasoning`.
  "response.reasoning_text.delta": "text",
};

/** The delta frame an event stands for: reasoning always, output text only for translated events. */
function deltaFrame(
  turn: number,
  type: string,
  event: JsonObject,
  translated: boolean,
): ProviderFrame | undefined {
  const delta = event.delta;
  if (typeof delta !== "string") return undefined;
  const item_id = typeof event.item_id === "string" ? event.item_id : "";
  const output_index = typeof event.output_index === "number" ? event.output_index : 0;
  if (type === "response.output_text.delta") {
    if (!translated) return undefined;
    const content_index = typeof event.content_index === "number" ? event.content_index : 0;
    return frame("output_text_delta", { turn, item_id, output_index, content_index, delta });
  }
  const channel = REASONING_DELTAS[type];
  if (channel === undefined) return undefined;
  const raw = channel === "summary" ? event.summary_index : event.content_index;
  const index = typeof raw === "number" ? raw : 0;
  return frame("reasoning_delta", { turn, item_id, output_index, channel, index, delta });
}

/** The final item at `index`: the call the loop runs when it was promoted, else the done item. */
function itemAt(a: Assembly, index: number): JsonObject {
  // A call is promoted in the step that closes it, so it is found at the end of the list.
  if (a.promoted.has(index))
    for (let i = a.calls.length - 1; i >= 0; i--) {
      const call = a.calls[i];
      if (call?.outputIndex === index) return call.item;
    }
  return a.items.get(index)?.done ?? {};
}

function itemDone(turn: number, output_index: number, item: JsonObject): ItemDoneFrame {
  return frame("item_done", { turn, output_index, item });
}
