/** Message content: content parts, output text, refusals and annotations. */
import type { JsonObject } from "../../protocol/types.js";
import { isClosed, itemFor, num, str } from "./item-lookup.js";
import type { Assembly, ItemState, PartState } from "./state.js";

function partFor(item: ItemState, index: number, type: string): PartState {
  let part = item.parts.get(index);
  if (part === undefined) {
    part = { type, streamed: "", annotations: [], closed: false };
    item.parts.set(index, part);
  }
  return part;
}

export function onContentPartEvent(state: Assembly, event: JsonObject): void {
  const item = itemFor(state, event, "message");
  if (isClosed(item)) return;
  const raw = event.part;
  const p = raw !== null && typeof raw === "object" ? (raw as JsonObject) : {};
  const part = partFor(item, num(event.content_index) ?? 0, str(p.type) ?? "output_text");
  if (event.type === "response.content_part.done") {
    const text = str(p.text) ?? str(p.refusal);
    if (text !== undefined) setFinal(state, item, part, text);
    part.closed = true;
  }
}

export function onOutputTextEvent(state: Assembly, event: JsonObject): void {
  const item = itemFor(state, event, "message");
  if (isClosed(item)) return;
  const part = partFor(item, num(event.content_index) ?? 0, "output_text");
  if (part.closed) return;
  switch (event.type) {
    case "response.output_text.delta": {
      const delta = str(event.delta);
      if (delta !== undefined && delta !== "") {
        part.streamed += delta;
        state.outputEmitted = true;
      }
      break;
    }
    case "response.output_text.done": {
      const text = str(event.text);
      if (text !== undefined) setFinal(state, item, part, text);
      break;
    }
    default:
      if (event.annotation !== undefined && event.annotation !== null)
        part.annotations.push(event.annotation);
  }
}

export function onRefusalEvent(state: Assembly, event: JsonObject): void {
  const item = itemFor(state, event, "message");
  if (isClosed(item)) return;
  const part = partFor(item, num(event.content_index) ?? 0, "refusal");
  if (part.closed) return;
  if (event.type === "response.refusal.delta") {
    const delta = str(event.delta);
    if (delta !== undefined && delta !== "") {
      part.streamed += delta;
      state.outputEmitted = true;
    }
  } else {
    const refusal = str(event.refusal);
    if (refusal !== undefined) part.final = refusal;
  }
}

/**
 * Takes a part's final text (authoritative: the history keeps it). When it differs from what the
 * deltas streamed, the user saw one text and the model will be shown another: that is noted once
 * per part, on the event that brought it.
 */
export function setFinal(state: Assembly, item: ItemState, part: PartState, text: string): void {
  part.final = text;
  if (part.noted === true || part.streamed === "" || text === part.streamed) return;
  part.noted = true;
  state.notes.push(
    `the final text of ${item.id ?? "a message"} differs from its streamed deltas (${text.length} vs ${part.streamed.length} characters); the history keeps the final text`,
  );
}

/** Compares a message's final item (`output_item.done`) with its streamed parts. */
export function noteFinalMessage(state: Assembly, item: ItemState, done: JsonObject): void {
  if (!Array.isArray(done.content)) return;
  done.content.forEach((raw, index) => {
    const part = item.parts.get(index);
    if (part === undefined || raw === null || typeof raw !== "object") return;
    const text = str((raw as JsonObject).text) ?? str((raw as JsonObject).refusal);
    if (text !== undefined) setFinal(state, item, part, text);
  });
}
