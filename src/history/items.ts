/**
 * Conversation items: turning a response's output items into input items for a stateless resend
 * (docs/decisions.md), and building `function_call_output` items.
 *
 * An output item goes back in the form of its input-item schema (`ItemParam` in
 * schemas/openresponses/openapi.json), field by field, so whatever a server added or got wrong in
 * its output (a `status: "ready"` on a call, `logprobs` on a text part, extension fields) is not
 * sent back to a server that may reject it:
 * - a function call becomes `{type, id?, call_id, name, arguments}` (a missing `call_id` is filled
 *   from the item id), as the AI SDK's Open Responses provider rebuilds it;
 * - an assistant message becomes `{type, role, id?, content, phase?}`, its parts `output_text`
 *   `{type, text, annotations?}` (URL citations only, the one annotation the input schema has) and
 *   `refusal` `{type, refusal}`; other parts are dropped, and a message left with none is dropped;
 *   `phase` is kept (a model that set it expects it back);
 * - a reasoning item keeps `encrypted_content` and its summary texts; its raw `content` is dropped
 *   (`ReasoningItemParam.content` must be null); one without `encrypted_content` is dropped
 *   (replaying it by id fails when nothing is stored);
 * - a compaction item keeps `encrypted_content`;
 * - item ids are kept or stripped as the provider's capabilities say (`keepItemIds`).
 * Item types the spec has no input item for (hosted tool calls such as `web_search_call`) go back
 * as received: only the provider that made them can read them, and it defines their input form.
 */
import type { JsonObject } from "../protocol/types.js";

export interface InputNormalization {
  /** Keep server item ids on resent items. */
  keepItemIds: boolean;
}

/** The input form of an output item, or undefined when it must not be resent. */
export function toInputItem(item: JsonObject, options: InputNormalization): JsonObject | undefined {
  const out = inputForm(item);
  if (out === undefined) return undefined;
  if (typeof item.id === "string" && options.keepItemIds) return { type: out.type, id: item.id, ...out };
  if (out === item && "id" in out) {
    const copy = { ...item };
    delete copy.id;
    return copy;
  }
  return out;
}

/** The item in its input schema's form, without its id; the item itself for types with no input schema. */
function inputForm(item: JsonObject): JsonObject | undefined {
  switch (item.type) {
    case "function_call": {
      const callId = typeof item.call_id === "string" && item.call_id !== "" ? item.call_id : item.id;
      return { type: "function_call", call_id: callId, name: item.name, arguments: item.arguments };
    }
    case "message":
      return item.role === "assistant" || item.role === undefined ? assistantMessage(item) : item;
    case "reasoning": {
      if (typeof item.encrypted_content !== "string" || item.encrypted_content === "") return undefined;
      const summary = Array.isArray(item.summary) ? item.summary.flatMap(summaryPart) : [];
      return { type: "reasoning", summary, encrypted_content: item.encrypted_content };
    }
    case "compaction":
      return { type: "compaction", encrypted_content: item.encrypted_content };
    default:
      return item;
  }
}

function assistantMessage(item: JsonObject): JsonObject | undefined {
  const content = typeof item.content === "string" ? item.content : contentParts(item.content);
  if (content.length === 0) return undefined;
  const out: JsonObject = { type: "message", role: "assistant", content };
  if (item.phase === "commentary" || item.phase === "final_answer") out.phase = item.phase;
  return out;
}

function contentParts(content: unknown): JsonObject[] {
  if (!Array.isArray(content)) return [];
  const out: JsonObject[] = [];
  for (const part of content) {
    if (part === null || typeof part !== "object") continue;
    const p = part as JsonObject;
    if (p.type === "output_text" && typeof p.text === "string") {
      const text: JsonObject = { type: "output_text", text: p.text };
      const citations = Array.isArray(p.annotations) ? p.annotations.flatMap(urlCitation) : [];
      if (citations.length > 0) text.annotations = citations;
      out.push(text);
    } else if (p.type === "refusal" && typeof p.refusal === "string") {
      out.push({ type: "refusal", refusal: p.refusal });
    }
  }
  return out;
}

function urlCitation(annotation: unknown): JsonObject[] {
  if (annotation === null || typeof annotation !== "object") return [];
  const a = annotation as JsonObject;
  if (a.type !== "url_citation") return [];
  const { start_index, end_index, url, title } = a;
  if (typeof start_index !== "number" || typeof end_index !== "number" || typeof url !== "string") return [];
  return [
    { type: "url_citation", start_index, end_index, url, title: typeof title === "string" ? title : "" },
  ];
}

function summaryPart(part: unknown): JsonObject[] {
  if (part === null || typeof part !== "object") return [];
  const text = (part as JsonObject).text;
  return typeof text === "string" ? [{ type: "summary_text", text }] : [];
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
