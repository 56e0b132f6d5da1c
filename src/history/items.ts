/**
 * Conversation items: turning a response's output items into input items for a stateless resend
 * (DESIGN.md §8.3), and building `function_call_output` items.
 *
 * Output items go back as received, normalized only where the input schema demands:
 * - a reasoning item keeps `encrypted_content` and its summary; its raw `content` is dropped
 *   (`ReasoningItemParam.content` must be null); one without `encrypted_content` is dropped
 *   (replaying it by id fails when nothing is stored: pain point 9);
 * - a function call without `call_id` gets its item id as `call_id`;
 * - item ids are kept or stripped as the provider's capabilities say (`keepItemIds`).
 * Assistant messages keep their `phase` (pain point 13); unknown item types are kept opaque.
 */
import type { JsonObject } from "../protocol/types.js";

export interface InputNormalization {
  /** Keep server item ids on resent items. */
  keepItemIds: boolean;
}

/** The input form of an output item, or undefined when it must not be resent. */
export function toInputItem(item: JsonObject, options: InputNormalization): JsonObject | undefined {
  let out: JsonObject;
  switch (item.type) {
    case "reasoning": {
      if (typeof item.encrypted_content !== "string" || item.encrypted_content === "") return undefined;
      out = { ...item };
      delete out.content;
      if (!Array.isArray(out.summary)) out.summary = [];
      break;
    }
    case "function_call":
      out = { ...item };
      if (typeof out.call_id !== "string" || out.call_id === "") out.call_id = item.id;
      break;
    default:
      out = item;
  }
  if (!options.keepItemIds && "id" in out) {
    if (out === item) out = { ...item };
    delete out.id;
  }
  return out;
}

/** A `function_call` input item. */
export function functionCallItem(callId: string, name: string, args: string): JsonObject {
  return { type: "function_call", call_id: callId, name, arguments: args };
}

/** A `function_call_output` input item. */
export function functionCallOutputItem(callId: string, output: string): JsonObject {
  return { type: "function_call_output", call_id: callId, output };
}

/** The input items of a user prompt. */
export function userMessageItem(text: string): JsonObject {
  return { type: "message", role: "user", content: [{ type: "input_text", text }] };
}
