/**
 * Foreign chat histories → Open Responses items, before pairing and rendering (the manager does
 * those). Two message shapes are accepted, message by message, without depending on either
 * package:
 *
 * - VS Code's `LanguageModelChatMessage`: `role` 1 (User), 2 (Assistant) or 3 (System, proposed
 *   API) or the strings; `content` a string or parts — `LanguageModelTextPart {value}`,
 *   `LanguageModelToolCallPart {callId, name, input}`, `LanguageModelToolResultPart {callId,
 *   content: (TextPart | PromptTsxPart {value} | DataPart {mimeType, data})[]}`, `DataPart`.
 *   Tool results travel in User messages there.
 * - The AI SDK's `ModelMessage`: `role` `system` | `user` | `assistant` | `tool`; `content` a
 *   string or parts — `{type:"text", text}`, `{type:"image", image}`, `{type:"file", data,
 *   mediaType}`, `{type:"reasoning", text, providerOptions?.openai?.reasoningEncryptedContent}`,
 *   `{type:"tool-call", toolCallId, toolName, input}` (v4: `args`), `{type:"tool-result",
 *   toolCallId, toolName, output}` with v5/v6 outputs `{type: "text"|"json"|"error-text"|
 *   "error-json"|"execution-denied"|"content", …}` (v4: `result`).
 *
 * Item ids are never carried over (a foreign history's ids name nothing the target server stored).
 * Reasoning is kept only with its `encrypted_content` and only when produced by the target model
 * (an optional `model` on a message, else `sourceModel`); whatever is dropped or changed is
 * reported as a `HistoryNote`.
 */
import { createHash } from "node:crypto";
import type { JsonObject } from "../protocol/types.js";
import { failedResultText } from "./tool-text.js";

/** One foreign chat message (VS Code `LanguageModelChatMessage` or AI SDK `ModelMessage`). */
export interface ForeignChatMessage {
  role: number | string;
  content: string | readonly unknown[];
  /** The model that produced an assistant message (an eddy extension; neither shape has it). */
  model?: string;
}

/** Something a translation or repair dropped or changed (besides pairing repairs). */
export interface HistoryNote {
  kind:
    | "reasoning_dropped"
    | "ids_stripped"
    | "tool_renamed"
    | "call_id_renamed"
    | "part_ignored"
    | "outputs_reordered";
  detail: string;
  /** Index of the foreign message concerned. */
  message?: number;
  call_id?: string;
}

export interface ParseOptions {
  /** The model the history will be sent to. */
  model?: string | null | undefined;
  /** The model that produced the history's assistant messages, when they do not say. */
  sourceModel?: string | undefined;
}

/** Parses foreign messages into input items (unpaired: the manager pairs and repairs them). */
export function parseForeignMessages(
  messages: readonly ForeignChatMessage[],
  options: ParseOptions = {},
): { items: JsonObject[]; notes: HistoryNote[] } {
  const parser = new Parser(options);
  for (const [i, m] of messages.entries()) parser.message(m, i);
  return { items: parser.items, notes: parser.notes };
}

const NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

class Parser {
  readonly items: JsonObject[] = [];
  readonly notes: HistoryNote[] = [];
  private readonly renamedTools = new Set<string>();
  private readonly renamedIds = new Set<string>();
  private missingIds = 0;
  private index = 0;
  private text: JsonObject[] = [];

  constructor(private readonly options: ParseOptions) {}

  message(m: ForeignChatMessage, index: number): void {
    this.index = index;
    const role = roleOf(m.role);
    if (role === undefined) {
      this.note(
        "part_ignored",
        `message ${index} has an unknown role ${JSON.stringify(m.role)}; it was left out`,
      );
      return;
    }
    const parts: readonly unknown[] =
      typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content;
    const model = m.model ?? this.options.sourceModel;
    for (const part of parts) this.part(role, part, model);
    this.flush(role);
  }

  private part(role: Role, raw: unknown, model: string | undefined): void {
    if (raw === null || typeof raw !== "object") {
      if (typeof raw === "string") this.text.push(textPart(role, raw));
      else this.ignore(raw);
      return;
    }
    const part = raw as JsonObject;
    const type = typeof part.type === "string" ? part.type : vsCodeKind(part);
    switch (type) {
      case "text":
        if (typeof part.text === "string") this.text.push(textPart(role, part.text));
        else if (typeof part.value === "string") this.text.push(textPart(role, part.value));
        else this.ignore(part);
        return;
      case "image":
      case "file":
      case "data": {
        const media = role === "user" ? mediaPart(part) : undefined;
        if (media === undefined) this.ignore(part);
        else if (media.type === "input_text") this.text.push(textPart(role, String(media.text)));
        else this.text.push(media);
        return;
      }
      case "reasoning":
      case "thinking":
        this.flush(role);
        this.reasoning(part, model);
        return;
      case "tool-call":
        this.flush(role);
        this.call(part);
        return;
      case "tool-result":
        this.flush(role);
        this.result(part);
        return;
      default:
        this.ignore(part);
    }
  }

  private reasoning(part: JsonObject, model: string | undefined): void {
    const openai = (part.providerOptions as { openai?: JsonObject } | undefined)?.openai;
    const encrypted = openai?.reasoningEncryptedContent ?? openai?.encryptedContent;
    const target = this.options.model ?? undefined;
    if (typeof encrypted !== "string" || encrypted === "") {
      this.note(
        "reasoning_dropped",
        `a reasoning part of message ${this.index} has no encrypted content to replay`,
      );
      return;
    }
    if (model !== undefined && target !== undefined && model !== target) {
      this.note(
        "reasoning_dropped",
        `a reasoning part of message ${this.index} came from ${model}, not ${target}; encrypted reasoning only replays to its own model`,
      );
      return;
    }
    const text = typeof part.text === "string" ? part.text : "";
    this.items.push({
      type: "reasoning",
      summary: text === "" ? [] : [{ type: "summary_text", text }],
      encrypted_content: encrypted,
    });
  }

  private call(part: JsonObject): void {
    if (part.providerExecuted === true) {
      this.note(
        "part_ignored",
        `a provider-executed tool call in message ${this.index} cannot be replayed as a function call`,
      );
      return;
    }
    const rawName = String(part.toolName ?? part.name ?? "");
    const input = "input" in part ? part.input : part.args;
    this.items.push({
      type: "function_call",
      call_id: this.callId(part.toolCallId ?? part.callId),
      name: this.toolName(rawName),
      arguments: typeof input === "string" ? input : JSON.stringify(input ?? {}),
    });
  }

  private result(part: JsonObject): void {
    if (part.providerExecuted === true) return; // its call was left out too
    const output =
      "output" in part
        ? aiSdkOutput(part.output)
        : "result" in part
          ? stringify(part.result)
          : vsCodeOutput(part.content);
    this.items.push({
      type: "function_call_output",
      call_id: this.callId(part.toolCallId ?? part.callId),
      output,
    });
  }

  /** A valid call id: 1–64 characters (the spec's bounds); longer ones are shortened by hash, missing ones made up. */
  private callId(raw: unknown): string {
    const id = typeof raw === "string" ? raw : "";
    if (id !== "" && id.length <= 64) return id;
    const made =
      id === ""
        ? `call_missing_${++this.missingIds}`
        : `call_${createHash("sha256").update(id).digest("hex").slice(0, 40)}`;
    if (!this.renamedIds.has(id) || id === "") {
      this.renamedIds.add(id);
      this.note(
        "call_id_renamed",
        id === ""
          ? `a tool call or result without an id got "${made}"`
          : `call id longer than 64 characters renamed to "${made}"`,
        made,
      );
    }
    return made;
  }

  /** A valid function name (`^[a-zA-Z0-9_-]{1,64}$`): other characters become `_`. */
  private toolName(raw: string): string {
    if (NAME_PATTERN.test(raw)) return raw;
    const name = raw.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, 64) || "tool";
    if (!this.renamedTools.has(raw)) {
      this.renamedTools.add(raw);
      this.note(
        "tool_renamed",
        `tool name ${JSON.stringify(raw)} is not a valid function name; sent as "${name}"`,
      );
    }
    return name;
  }

  private flush(role: Role): void {
    if (this.text.length === 0) return;
    const content = this.text;
    this.text = [];
    if (role === "assistant") this.items.push({ type: "message", role, content });
    else this.items.push({ type: "message", role: role === "tool" ? "user" : role, content });
  }

  private ignore(part: unknown): void {
    const what =
      part !== null && typeof part === "object" && typeof (part as JsonObject).type === "string"
        ? `"${String((part as JsonObject).type)}" part`
        : "part of an unknown shape";
    this.note(
      "part_ignored",
      `a ${what} in message ${this.index} has no Open Responses input form; it was left out`,
    );
  }

  private note(kind: HistoryNote["kind"], detail: string, callId?: string): void {
    const note: HistoryNote = { kind, detail, message: this.index };
    if (callId !== undefined) note.call_id = callId;
    this.notes.push(note);
  }
}

type Role = "system" | "user" | "assistant" | "tool";

function roleOf(role: number | string): Role | undefined {
  if (role === 1 || role === "user") return "user";
  if (role === 2 || role === "assistant") return "assistant";
  if (role === 3 || role === "system") return "system";
  if (role === "tool") return "tool";
  return undefined;
}

/** The kind of a VS Code part (they have no `type`): by class name, else by shape. */
function vsCodeKind(part: JsonObject): string {
  const cls = (part as { constructor?: { name?: string } }).constructor?.name ?? "";
  if (/Thinking/.test(cls)) return "thinking";
  if ("callId" in part && "name" in part) return "tool-call";
  if ("callId" in part && "content" in part) return "tool-result";
  if ("mimeType" in part && "data" in part) return "data";
  if ("value" in part) return "text";
  return "";
}

function textPart(role: Role, text: string): JsonObject {
  return role === "assistant" ? { type: "output_text", text, annotations: [] } : { type: "input_text", text };
}

/** An image or file part as an input part (data as a data URL), or text for textual data. */
function mediaPart(part: JsonObject): JsonObject | undefined {
  const mediaType = String(
    part.mediaType ?? part.mimeType ?? (part.type === "image" ? "image/png" : "application/octet-stream"),
  );
  const data = part.image ?? part.data;
  let url: string | undefined;
  if (data instanceof URL) url = data.href;
  else if (typeof data === "string")
    url = /^(https?|data):/.test(data) ? data : `data:${mediaType};base64,${data}`;
  else if (data instanceof Uint8Array) {
    if (/^text\/|json/.test(mediaType))
      return { type: "input_text", text: Buffer.from(data).toString("utf8") };
    url = `data:${mediaType};base64,${Buffer.from(data).toString("base64")}`;
  }
  if (url === undefined) return undefined;
  if (mediaType.startsWith("image/")) return { type: "input_image", image_url: url };
  const file: JsonObject = url.startsWith("data:")
    ? { type: "input_file", file_data: url }
    : { type: "input_file", file_url: url };
  if (typeof part.filename === "string") file.filename = part.filename;
  return file;
}

/** An AI SDK `ToolResultOutput` (v5+) as a `function_call_output.output`. */
function aiSdkOutput(output: unknown): string | JsonObject[] {
  if (output === null || typeof output !== "object" || !("type" in output)) return stringify(output);
  const o = output as JsonObject;
  switch (o.type) {
    case "text":
      return String(o.value ?? "");
    case "json":
      return stringify(o.value);
    case "error-text":
      return failedResultText(String(o.value ?? ""));
    case "error-json":
      return failedResultText(stringify(o.value));
    case "execution-denied":
      return failedResultText(
        `the user denied this tool call${typeof o.reason === "string" ? ` (${o.reason})` : ""}.`,
      );
    case "content": {
      const parts: JsonObject[] = [];
      for (const p of (Array.isArray(o.value) ? o.value : []) as JsonObject[]) {
        if (p.type === "text") parts.push({ type: "input_text", text: String(p.text ?? "") });
        else if (p.type === "media" || p.type === "image-data" || p.type === "file-data")
          pushMedia(parts, { data: p.data, mediaType: p.mediaType, filename: p.filename });
        else if (p.type === "image-url") parts.push({ type: "input_image", image_url: String(p.url) });
        else if (p.type === "file-url") parts.push({ type: "input_file", file_url: String(p.url) });
      }
      return parts.length === 0
        ? ""
        : parts.every((p) => p.type === "input_text")
          ? parts.map((p) => p.text).join("\n")
          : parts;
    }
    default:
      return stringify(o);
  }
}

/** A VS Code tool result's content (text parts joined; data parts as media). */
function vsCodeOutput(content: unknown): string | JsonObject[] {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return stringify(content);
  const parts: JsonObject[] = [];
  for (const p of content as unknown[]) {
    if (p !== null && typeof p === "object" && "mimeType" in p && "data" in p)
      pushMedia(parts, p as JsonObject);
    else if (p !== null && typeof p === "object" && "value" in p) {
      const value = (p as { value: unknown }).value;
      parts.push({ type: "input_text", text: typeof value === "string" ? value : stringify(value) });
    } else parts.push({ type: "input_text", text: stringify(p) });
  }
  return parts.every((p) => p.type === "input_text") ? parts.map((p) => p.text).join("") : parts;
}

function pushMedia(parts: JsonObject[], part: JsonObject): void {
  const media = mediaPart(part);
  if (media !== undefined) parts.push(media);
}

function stringify(value: unknown): string {
  if (typeof value === "string") return value;
  return JSON.stringify(value ?? null);
}
