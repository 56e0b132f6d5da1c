/**
 * The pure mapping from one SSE message to frames (docs/decisions.md #1): exactly one `provider_event`
 * per message, plus an `output_text_delta` right after each `response.output_text.delta`.
 * No I/O and no clock: frames come out unstamped.
 */
import { validateStreamingEvent, validateWebSocketMessage } from "../protocol/validate.js";
import type { SseMessage } from "../sse/decoder.js";
import { JSON_MAX_DEPTH, jsonErrorReason, parsedNestsTooDeep } from "../util/json.js";
import type { OutputTextDeltaFrame, ProviderEventFrame } from "./frame.js";

/** Options of the SSE → frame mapping. */
export interface SseFrameOptions {
  turn: number;
  /** Validate each event against the schema and record the messages in `errors`. @defaultValue true */
  validate?: boolean;
  /**
   * How the message came: an SSE message, or one WebSocket text message (its text as `data`, no
   * event name). Over WebSocket an `error` with a `status` is validated as a `WebSocketErrorEvent`
   * (schemas/openresponses/openapi.json, `x-openresponses-websocket`). @defaultValue "sse"
   */
  transport?: "sse" | "websocket";
}

/** The frames one SSE message maps to. */
export type SseFrame = ProviderEventFrame | OutputTextDeltaFrame;

const DONE = "[DONE]";
const OUTPUT_TEXT_DELTA = "response.output_text.delta";

/** What `sseData` returns for a message it framed itself (`[DONE]`, a ping, undecodable JSON). */
export const FRAMED: unique symbol = Symbol("framed");

/**
 * The part of the SSE → frame mapping every wire format shares: `[DONE]`, empty data (a ping) and
 * data that is not JSON each become their `provider_event` here (`FRAMED` is returned); any other
 * message's data comes back parsed, for the wire format to frame.
 */
export function sseData(
  message: SseMessage,
  turn: number,
  emit: (frame: ProviderEventFrame) => void,
): unknown {
  const text = message.data;
  if (text === DONE) {
    emit(providerFrame(turn, "done", message.event, undefined, text, undefined));
    return FRAMED;
  }
  if (isBlank(text)) {
    emit(providerFrame(turn, "empty", message.event, undefined, text, undefined));
    return FRAMED;
  }
  try {
    const data: unknown = JSON.parse(text);
    // Deeper data would overflow the stack of whatever walks it next (validation, redaction, the
    // tape's JSON.stringify): it is kept as text (docs/pitfalls.md #74).
    if (parsedNestsTooDeep(text, data)) {
      emit(
        providerFrame(turn, "invalid_json", message.event, undefined, text, [
          `data nests deeper than ${JSON_MAX_DEPTH} levels of arrays and objects`,
        ]),
      );
      return FRAMED;
    }
    return data;
  } catch (err) {
    const reason = jsonErrorReason(err);
    emit(
      providerFrame(turn, "invalid_json", message.event, undefined, text, [
        `data is not valid JSON: ${reason}`,
      ]),
    );
    return FRAMED;
  }
}

/** Maps one SSE message to its frames, calling `emit` for each, in order. */
export function framesFromSse(
  message: SseMessage,
  options: SseFrameOptions,
  emit: (frame: SseFrame) => void,
): void {
  const { turn } = options;
  const data = sseData(message, turn, emit);
  if (data === FRAMED) return;
  let errors =
    options.validate === false
      ? undefined
      : options.transport === "websocket"
        ? validateWebSocketMessage(data)
        : validateStreamingEvent(data);
  const type = data !== null && typeof data === "object" ? (data as { type?: unknown }).type : undefined;
  if (message.event !== undefined && message.event !== type) {
    const mismatch = `SSE event name "${message.event}" differs from data.type ${JSON.stringify(type)}`;
    errors = errors === undefined ? [mismatch] : [...errors, mismatch];
  }
  emit(providerFrame(turn, "event", message.event, data, undefined, errors));
  if (type === OUTPUT_TEXT_DELTA) {
    const d = data as { item_id?: unknown; output_index?: unknown; content_index?: unknown; delta?: unknown };
    if (typeof d.delta === "string") {
      const derived: OutputTextDeltaFrame = {
        run_id: "",
        seq: -1,
        ts: 0,
        type: "output_text_delta",
        turn,
        item_id: typeof d.item_id === "string" ? d.item_id : "",
        output_index: typeof d.output_index === "number" ? d.output_index : 0,
        content_index: typeof d.content_index === "number" ? d.content_index : 0,
        delta: d.delta,
      };
      emit(derived);
    }
  }
}

/** Convenience: the frames of one message as an array. */
export function sseMessageToFrames(message: SseMessage, options: SseFrameOptions): SseFrame[] {
  const out: SseFrame[] = [];
  framesFromSse(message, options, (f) => out.push(f));
  return out;
}

/** An unstamped `provider_event` frame (shared by every wire format's SSE mapping). */
export function providerFrame(
  turn: number,
  status: ProviderEventFrame["status"],
  eventName: string | undefined,
  data: unknown,
  raw: string | undefined,
  errors: string[] | undefined,
): ProviderEventFrame {
  // Built as one literal (envelope first) so every provider_event has the same hidden class.
  const f: ProviderEventFrame = { run_id: "", seq: -1, ts: 0, type: "provider_event", turn, status };
  if (eventName !== undefined) f.event_name = eventName;
  if (data !== undefined) f.data = data;
  if (raw !== undefined) f.raw = raw;
  if (errors !== undefined) f.errors = errors;
  return f;
}

function isBlank(text: string): boolean {
  if (text.length === 0) return true;
  const c = text.charCodeAt(0);
  // JSON events start with "{" — skip the trim for the common case.
  if (c === 123) return false;
  return text.trim().length === 0;
}
