/**
 * A Chat Completions request → the mock's own model input: an Open Responses request body and its
 * `input` items. The demo model, the tool policy and a scenario's `expect` then work on it as on a
 * `/responses` request, so one scenario turn serves both APIs:
 *
 * - `system` and `developer` messages → `instructions` (joined with a blank line, in order);
 * - `user` → a user message (`text` → `input_text`, `image_url` → `input_image`, `file` →
 *   `input_file`); `assistant` → an assistant message (text and refusal) followed by one
 *   `function_call` item per `tool_calls` entry (`id` → `call_id`); `tool` →
 *   `function_call_output` (`tool_call_id` → `call_id`);
 * - `tools[].function` → function tools; `tool_choice` → the same choice in Responses shape;
 *   `max_completion_tokens`/`max_tokens` → `max_output_tokens`; `response_format` → `text.format`;
 *   `reasoning_effort` → `reasoning: {effort, summary: "auto"}` (chat has no summary switch, and
 *   its `reasoning_content` is what the summary becomes; `minimal` → `low`, which the spec has);
 *   `json_object` → a `json_schema` format with the schema `{type: "object"}`; `stream_options.include_obfuscation`
 *   is kept. Every request is stateless (`store: false`): chat has no `previous_response_id`.
 */
import type { FunctionToolParam, ItemParam, TextParam, ToolChoiceParam } from "../../protocol/types.js";
import { invalidRequest } from "../http-error.js";
import type { MockRequestBody } from "../request.js";
import type { ChatMessage, ChatRequestBody, ChatUserPart } from "./request.js";

type UserContent = Extract<ItemParam, { role: "user" }>["content"];

/** The chat request as the mock's model input. */
export function translateChatBody(chat: ChatRequestBody): MockRequestBody {
  const instructions: string[] = [];
  const input: ItemParam[] = [];
  chat.messages.forEach((message, index) => {
    if (message.role === "system" || message.role === "developer") {
      instructions.push(textOf(message.content));
    } else {
      input.push(...items(message, index));
    }
  });
  const body: MockRequestBody = { model: chat.model, input, store: false };
  if (instructions.length > 0) body.instructions = instructions.join("\n\n");
  if (chat.stream === true) body.stream = true;
  if (chat.stream_options?.include_obfuscation !== undefined) {
    body.stream_options = { include_obfuscation: chat.stream_options.include_obfuscation };
  }
  if (chat.tools !== undefined) body.tools = chat.tools.map(functionTool);
  if (chat.tool_choice !== undefined) body.tool_choice = toolChoice(chat.tool_choice);
  if (chat.parallel_tool_calls !== undefined) body.parallel_tool_calls = chat.parallel_tool_calls;
  const limit = chat.max_completion_tokens ?? chat.max_tokens;
  if (limit != null) body.max_output_tokens = limit;
  if (chat.response_format !== undefined) body.text = { format: textFormat(chat.response_format) };
  if (chat.reasoning_effort != null) {
    // The spec's effort enum has no "minimal"; it is the lowest effort above "none".
    const effort = chat.reasoning_effort === "minimal" ? "low" : chat.reasoning_effort;
    body.reasoning = { effort, summary: "auto" };
  }
  if (chat.temperature != null) body.temperature = chat.temperature;
  if (chat.top_p != null) body.top_p = chat.top_p;
  return body;
}

function items(message: Exclude<ChatMessage, { role: "system" | "developer" }>, index: number): ItemParam[] {
  switch (message.role) {
    case "user":
      return [
        {
          type: "message",
          role: "user",
          content:
            typeof message.content === "string"
              ? message.content
              : message.content.map((part, j) => userPart(part, `messages[${index}].content[${j}]`)),
        },
      ];
    case "assistant": {
      const out: ItemParam[] = [];
      const parts: Array<{ type: "output_text"; text: string } | { type: "refusal"; refusal: string }> = [];
      const content = message.content ?? "";
      if (typeof content === "string") {
        if (content !== "") parts.push({ type: "output_text", text: content });
      } else {
        for (const part of content) {
          parts.push(part.type === "text" ? { type: "output_text", text: part.text } : part);
        }
      }
      if (message.refusal != null && message.refusal !== "") {
        parts.push({ type: "refusal", refusal: message.refusal });
      }
      if (parts.length > 0) out.push({ type: "message", role: "assistant", content: parts });
      for (const call of message.tool_calls ?? []) {
        out.push({
          type: "function_call",
          call_id: call.id,
          name: call.function.name,
          arguments: call.function.arguments,
        });
      }
      return out;
    }
    case "tool":
      return [
        { type: "function_call_output", call_id: message.tool_call_id, output: textOf(message.content) },
      ];
  }
}

function userPart(part: ChatUserPart, param: string): Exclude<UserContent, string>[number] {
  switch (part.type) {
    case "text":
      return { type: "input_text", text: part.text };
    case "image_url":
      return { type: "input_image", image_url: part.image_url.url, detail: part.image_url.detail ?? "auto" };
    case "file": {
      const { file_data, file_id, filename } = part.file;
      if (file_data === undefined) {
        throw invalidRequest(
          `The mock server has no Files API${file_id === undefined ? "" : ` (file_id '${file_id}')`}: send the file inline as 'file_data' (a base64 data URL).`,
          `${param}.file.file_data`,
          "unsupported_value",
        );
      }
      return {
        type: "input_file",
        file_data,
        ...(filename === undefined ? {} : { filename }),
      };
    }
    case "input_audio":
      throw invalidRequest(
        "The mock server does not accept audio input.",
        `${param}.input_audio`,
        "unsupported_value",
      );
  }
}

function functionTool(tool: NonNullable<ChatRequestBody["tools"]>[number]): FunctionToolParam {
  const { name, description, parameters, strict } = tool.function;
  const out: FunctionToolParam = { type: "function", name };
  if (description !== undefined) out.description = description;
  // The generated type of `parameters` is too narrow (`Record<string, never>`); any JSON Schema object is valid.
  if (parameters !== undefined) out.parameters = parameters as FunctionToolParam["parameters"];
  if (strict != null) out.strict = strict;
  return out;
}

function toolChoice(choice: NonNullable<ChatRequestBody["tool_choice"]>): ToolChoiceParam {
  if (typeof choice === "string") return choice;
  if (choice.type === "function") return { type: "function", name: choice.function.name };
  return {
    type: "allowed_tools",
    mode: choice.allowed_tools.mode,
    tools: choice.allowed_tools.tools.map((t) => ({ type: "function", name: t.function.name })),
  };
}

function textFormat(
  format: NonNullable<ChatRequestBody["response_format"]>,
): NonNullable<TextParam["format"]> {
  if (format.type === "text") return { type: "text" };
  // The spec's formats are text and json_schema; "any JSON object" is the schema {type: object}.
  if (format.type === "json_object")
    return { type: "json_schema", name: "json_object", schema: { type: "object" } };
  const { name, description, schema, strict } = format.json_schema;
  return {
    type: "json_schema",
    name,
    schema: schema ?? {},
    ...(description === undefined ? {} : { description }),
    ...(strict == null ? {} : { strict }),
  };
}

function textOf(content: string | Array<{ text: string }>): string {
  return typeof content === "string" ? content : content.map((p) => p.text).join("");
}
