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

/**
 * A `function_call_output` input item; with `imageUrl`, its output is the spec's content parts:
 * the text, then the image.
 */
export function functionCallOutputItem(callId: string, output: string, imageUrl?: string): JsonObject {
  if (imageUrl === undefined) return { type: "function_call_output", call_id: callId, output };
  return {
    type: "function_call_output",
    call_id: callId,
    output: [
      { type: "input_text", text: output },
      { type: "input_image", image_url: imageUrl },
    ],
  };
}

/**
 * Call item types and the output item type that answers each (OpenAI's native tool items; shapes
 * in test/fixtures/captures/openai/). `function_call` is the spec's; the others are paired only
 * where a run answers them (`PairingOptions.callTypes`).
 */
export const OUTPUT_TYPE_OF: Readonly<Record<string, string>> = {
  function_call: "function_call_output",
  apply_patch_call: "apply_patch_call_output",
  shell_call: "shell_call_output",
  local_shell_call: "local_shell_call_output",
  custom_tool_call: "custom_tool_call_output",
  mcp_approval_request: "mcp_approval_response",
};

/** The field that pairs a call or output item with its partner (`call_id`; MCP approvals pair by request id). */
export function pairingField(type: unknown): "call_id" | "id" | "approval_request_id" {
  if (type === "mcp_approval_request") return "id";
  if (type === "mcp_approval_response") return "approval_request_id";
  return "call_id";
}

/** The value that pairs a call or output item with its partner, "" when it has none. */
export function pairingKey(item: JsonObject): string {
  const value = item[pairingField(item.type)];
  return typeof value === "string" ? value : "";
}

/**
 * The answer to a call of type `callType` that carries only a text (a refusal, a lost output):
 * the output item of the right type, with the text where that type keeps it.
 */
export function textOutputItem(callType: string, callId: string, text: string, ok: boolean): JsonObject {
  switch (callType) {
    case "apply_patch_call":
      return {
        type: "apply_patch_call_output",
        call_id: callId,
        status: ok ? "completed" : "failed",
        output: text,
      };
    case "shell_call":
      return {
        type: "shell_call_output",
        call_id: callId,
        output: [{ stdout: "", stderr: text, outcome: { type: "exit", exit_code: ok ? 0 : 1 } }],
      };
    case "local_shell_call":
      return { type: "local_shell_call_output", call_id: callId, output: text };
    case "custom_tool_call":
      return { type: "custom_tool_call_output", call_id: callId, output: text };
    case "mcp_approval_request":
      return ok
        ? { type: "mcp_approval_response", approval_request_id: callId, approve: true }
        : { type: "mcp_approval_response", approval_request_id: callId, approve: false, reason: text };
    default:
      return functionCallOutputItem(callId, text);
  }
}

/** The input items of a user prompt. */
export function userMessageItem(text: string): JsonObject {
  return { type: "message", role: "user", content: [{ type: "input_text", text }] };
}
