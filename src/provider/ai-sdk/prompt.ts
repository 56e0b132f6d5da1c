/**
 * Conversation items → an AI SDK prompt (`LanguageModelV3Prompt` of `@ai-sdk/provider` 3, as JSON:
 * file data and URLs are strings; `call-options.ts` makes the live values). The loop has already
 * rendered the history through the run's `ToolHistoryManager` (pairing checked; native items, or
 * text for a model whose capabilities say `nativeToolHistory: false`), so this is a translation,
 * one item at a time:
 *
 * - `instructions` → the first `system` message; system and developer messages → `system`
 *   messages (the AI SDK has one role for both; a provider maps it as its API wants);
 * - a user message → `user` with `text` and `file` parts (`input_image`, `input_file`; a `data:`
 *   URL becomes base64 data with its media type, an http(s) URL stays a URL);
 * - an assistant message → `assistant` with its text (refusals as text; an empty one is left out);
 * - `function_call` items → `tool-call` parts of the assistant message before them (one assistant
 *   turn, as the model produced it), the arguments parsed as JSON (kept as the raw string when they
 *   do not parse);
 * - `function_call_output` items → `tool-result` parts of one `tool` message, the output as text
 *   (exactly the string the loop sent: docs/decisions.md #7), or content parts with images;
 * - reasoning items are dropped, as on Chat Completions: a model-neutral prompt has no way to take
 *   another model's reasoning back, and it must never come back as text.
 *
 * Anything else (item references, compaction items) cannot be expressed: the request fails before
 * anything is sent (`unsupported`).
 */
import type { ItemParam, JsonObject } from "../../protocol/types.js";
import { isJsonObject } from "../../util/json.js";
import { assistantText } from "../chat-completions/messages.js";
import { ProviderError } from "../errors.js";

/** The error of a request the AI SDK prompt cannot express; nothing is sent. */
export function unsupported(what: string): ProviderError {
  return new ProviderError({
    kind: "unsupported",
    code: "unsupported_request",
    message: `cannot send this request through the AI SDK adapter: ${what}`,
    retryable: false,
  });
}

/** The prompt of a request: the instructions first, then the input items in order. */
export function toPrompt(
  instructions: string | undefined,
  input: string | readonly ItemParam[],
): JsonObject[] {
  const prompt: JsonObject[] = [];
  if (instructions !== undefined && instructions !== "")
    prompt.push({ role: "system", content: instructions });
  if (typeof input === "string") {
    prompt.push({ role: "user", content: [{ type: "text", text: input }] });
    return prompt;
  }
  const names = new Map<string, string>();
  for (const raw of input) {
    const item = raw as JsonObject;
    switch (item.type ?? (typeof item.role === "string" ? "message" : undefined)) {
      case "message":
        addMessage(prompt, item);
        break;
      case "function_call":
        names.set(str(item.call_id), str(item.name));
        addToolCall(prompt, item);
        break;
      case "function_call_output":
        addToolResult(prompt, item, names);
        break;
      case "reasoning":
        break;
      default:
        throw unsupported(`an input item of type ${JSON.stringify(item.type ?? null)}`);
    }
  }
  return prompt;
}

function addMessage(prompt: JsonObject[], item: JsonObject): void {
  switch (item.role) {
    case "user":
      prompt.push({ role: "user", content: userParts(item.content) });
      return;
    case "system":
    case "developer":
      prompt.push({ role: "system", content: plainText(item.content) });
      return;
    case "assistant": {
      // An empty assistant message says nothing (and APIs refuse empty content): calls after it start their own.
      const text = assistantText(item.content);
      if (text !== "") prompt.push({ role: "assistant", content: [{ type: "text", text }] });
      return;
    }
    default:
      throw unsupported(`a message with role ${JSON.stringify(item.role)}`);
  }
}

/** A function call joins the assistant message right before it, or starts one. */
function addToolCall(prompt: JsonObject[], item: JsonObject): void {
  const part: JsonObject = {
    type: "tool-call",
    toolCallId: str(item.call_id),
    toolName: str(item.name),
    input: parseArguments(str(item.arguments)),
  };
  const last = prompt.at(-1);
  if (last?.role === "assistant" && Array.isArray(last.content)) last.content.push(part);
  else prompt.push({ role: "assistant", content: [part] });
}

/** A function call output joins the tool message right before it, or starts one. */
function addToolResult(prompt: JsonObject[], item: JsonObject, names: ReadonlyMap<string, string>): void {
  const callId = str(item.call_id);
  const part: JsonObject = {
    type: "tool-result",
    toolCallId: callId,
    toolName: names.get(callId) ?? "",
    output: toolOutput(item.output),
  };
  const last = prompt.at(-1);
  if (last?.role === "tool" && Array.isArray(last.content)) last.content.push(part);
  else prompt.push({ role: "tool", content: [part] });
}

/** `""` means `{}` (docs/decisions.md #10); arguments that do not parse go as the string. */
function parseArguments(text: string): unknown {
  if (text === "") return {};
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function userParts(content: unknown): JsonObject[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  if (!Array.isArray(content)) return [];
  return content.map(userPart);
}

function userPart(part: unknown): JsonObject {
  if (!isJsonObject(part)) throw unsupported("a content part that is not an object");
  switch (part.type) {
    case "input_text":
      return { type: "text", text: str(part.text) };
    case "input_image":
      if (typeof part.image_url !== "string")
        throw unsupported("an input_image without image_url (give a URL or a data: URL)");
      return filePart(part.image_url, "image/*");
    case "input_file": {
      const source = typeof part.file_data === "string" ? part.file_data : part.file_url;
      if (typeof source !== "string") throw unsupported("an input_file without file_data or file_url");
      const file = filePart(source, "application/octet-stream");
      if (typeof part.filename === "string") file.filename = part.filename;
      return file;
    }
    default:
      throw unsupported(`a content part of type ${JSON.stringify(part.type)}`);
  }
}

/**
 * A `file` part from a URL: a `data:` URL becomes base64 data with its media type; another URL
 * stays a string with `://` in it (base64 never has a colon), made a `URL` for the live call.
 */
function filePart(url: string, fallbackType: string): JsonObject {
  const data = /^data:([^;,]*)(;base64)?,(.*)$/s.exec(url);
  if (data === null) return { type: "file", mediaType: fallbackType, data: url };
  const mediaType = data[1] === "" || data[1] === undefined ? fallbackType : data[1];
  const payload = data[3] ?? "";
  const base64 =
    data[2] === undefined ? Buffer.from(decodeURIComponent(payload)).toString("base64") : payload;
  return { type: "file", mediaType, data: base64 };
}

/** A tool output as the AI SDK's `tool-result` output: text, or content parts with images. */
function toolOutput(output: unknown): JsonObject {
  if (typeof output === "string") return { type: "text", value: output };
  if (!Array.isArray(output)) return { type: "text", value: "" };
  return { type: "content", value: output.map(outputPart) };
}

function outputPart(part: unknown): JsonObject {
  if (!isJsonObject(part)) throw unsupported("a function_call_output part that is not an object");
  if (part.type === "input_text") return { type: "text", text: str(part.text) };
  if (part.type === "input_image" && typeof part.image_url === "string") {
    const file = filePart(part.image_url, "image/*");
    return typeof file.data === "string" && file.data.includes("://")
      ? { type: "image-url", url: file.data }
      : { type: "image-data", data: file.data ?? "", mediaType: file.mediaType ?? "image/*" };
  }
  if (part.type === "input_file" && typeof part.file_data === "string") {
    const file = filePart(part.file_data, "application/octet-stream");
    const out: JsonObject = { type: "file-data", data: file.data ?? "", mediaType: file.mediaType ?? "" };
    if (typeof part.filename === "string") out.filename = part.filename;
    return out;
  }
  throw unsupported(`a function_call_output part of type ${JSON.stringify(part.type)}`);
}

/** The text of a system or developer message (its text parts joined). */
function plainText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((p) => (isJsonObject(p) && typeof p.text === "string" ? p.text : "")).join("");
}

function str(value: unknown): string {
  return typeof value === "string" ? value : "";
}
