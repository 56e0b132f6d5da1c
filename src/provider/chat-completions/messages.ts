/**
 * Conversation items → Chat Completions `messages`. The rules:
 *
 * - user / system / developer messages keep their text; a single text part is sent as a string
 *   (the only form several local servers accept), anything else as content parts (`text`,
 *   `image_url`, `file`). `system` and `developer` both go in the dialect's instructions role.
 * - an assistant message becomes `{role: "assistant", content}` (its text and refusal parts).
 * - consecutive `function_call` items become ONE assistant message with `tool_calls`, joined to
 *   the assistant message right before them when there is one: that is how the model produced
 *   them, and servers that check the history expect it so.
 * - a `function_call_output` becomes `{role: "tool", tool_call_id, content}`.
 * - reasoning items are dropped: the API has no way to take reasoning back (DeepSeek refuses
 *   `reasoning_content` in input messages), and it must never come back as text.
 * Anything else (item references, compaction items, images in tool outputs) cannot be expressed
 * and fails the request before it is sent.
 */
import type { ItemParam, JsonObject } from "../../protocol/types.js";
import { isJsonObject } from "../../util/json.js";
import { ProviderError } from "../errors.js";

/** The error of a request the Chat Completions API cannot express; nothing is sent. */
export function unsupported(what: string): ProviderError {
  return new ProviderError({
    kind: "unsupported",
    code: "unsupported_request",
    message: `cannot send this request over the Chat Completions API: ${what}`,
    retryable: false,
  });
}

/**
 * The error of a chained follow-up: the API stores no responses, which is what
 * `previous_response_not_found` says, so the loop resends the turn with the whole history and
 * stays stateless (docs/decisions.md #5) — e.g. after a fallback from a Responses provider.
 */
export function noStoredResponses(): ProviderError {
  return new ProviderError({
    kind: "unsupported",
    code: "previous_response_not_found",
    message:
      "cannot send previous_response_id over the Chat Completions API: it keeps no responses, so the history must be resent (stateless mode)",
    retryable: false,
    providerCode: "previous_response_not_found",
  });
}

type Role = "system" | "developer";

/** The `messages` of a request: the instructions first, then the input items in order. */
export function toChatMessages(
  instructions: string | undefined,
  input: string | readonly ItemParam[],
  role: Role,
): JsonObject[] {
  const messages: JsonObject[] = [];
  if (instructions !== undefined && instructions !== "") messages.push({ role, content: instructions });
  if (typeof input === "string") {
    messages.push({ role: "user", content: input });
    return messages;
  }
  for (const raw of input) {
    const item = raw as JsonObject;
    switch (item.type ?? (typeof item.role === "string" ? "message" : undefined)) {
      case "message":
        messages.push(messageOf(item, role));
        break;
      case "function_call":
        addToolCall(messages, item);
        break;
      case "function_call_output":
        messages.push({
          role: "tool",
          tool_call_id: str(item.call_id),
          content: toolOutput(item.output),
        });
        break;
      case "reasoning":
        break;
      default:
        throw unsupported(`an input item of type ${JSON.stringify(item.type)}`);
    }
  }
  return messages;
}

function messageOf(item: JsonObject, role: Role): JsonObject {
  switch (item.role) {
    case "user":
      return { role: "user", content: userContent(item.content) };
    case "system":
    case "developer":
      return { role, content: userContent(item.content) };
    case "assistant":
      return { role: "assistant", content: assistantText(item.content) };
    default:
      throw unsupported(`a message with role ${JSON.stringify(item.role)}`);
  }
}

/** A function call joins the assistant message before it, or starts one. */
function addToolCall(messages: JsonObject[], item: JsonObject): void {
  const call = {
    id: str(item.call_id) || str(item.id),
    type: "function",
    // Some servers parse the arguments of past calls; "" is not JSON (and means {}).
    function: { name: str(item.name), arguments: str(item.arguments) || "{}" },
  };
  const last = messages.at(-1);
  if (last !== undefined && last.role === "assistant") {
    const calls = last.tool_calls;
    if (Array.isArray(calls)) calls.push(call);
    else last.tool_calls = [call];
    return;
  }
  messages.push({ role: "assistant", content: null, tool_calls: [call] });
}

/** A single text part as a string; otherwise content parts. */
function userContent(content: unknown): string | JsonObject[] {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  const first = content[0];
  if (content.length === 1 && isJsonObject(first) && first.type === "input_text") return str(first.text);
  return content.map(userPart);
}

function userPart(part: unknown): JsonObject {
  if (!isJsonObject(part)) throw unsupported("a content part that is not an object");
  switch (part.type) {
    case "input_text":
      return { type: "text", text: str(part.text) };
    case "input_image": {
      if (typeof part.image_url !== "string")
        throw unsupported("an input_image without image_url (give a URL or a data: URL)");
      const image: JsonObject = { url: part.image_url };
      if (typeof part.detail === "string") image.detail = part.detail;
      return { type: "image_url", image_url: image };
    }
    case "input_file": {
      if (typeof part.file_data !== "string")
        throw unsupported("an input_file without file_data (the API takes files inline, not by URL)");
      const file: JsonObject = { file_data: part.file_data };
      if (typeof part.filename === "string") file.filename = part.filename;
      return { type: "file", file };
    }
    default:
      throw unsupported(`a content part of type ${JSON.stringify(part.type)}`);
  }
}

/** The text of an assistant message: its output_text parts, then its refusals. */
export function assistantText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  let text = "";
  for (const part of content) {
    if (!isJsonObject(part)) continue;
    if (part.type === "output_text") text += str(part.text);
    else if (part.type === "refusal") text += str(part.refusal);
  }
  return text;
}

/** A tool output: a string, or its text parts joined (the API takes no images from tools). */
function toolOutput(output: unknown): string {
  if (typeof output === "string") return output;
  if (!Array.isArray(output)) return "";
  let text = "";
  for (const part of output) {
    if (isJsonObject(part) && part.type === "input_text") text += str(part.text);
    else throw unsupported("a function_call_output with non-text parts");
  }
  return text;
}

function str(value: unknown): string {
  return typeof value === "string" ? value : "";
}
