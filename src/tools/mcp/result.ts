/**
 * A `tools/call` result → eddy's tool result (then the stable output object of `../output.ts`).
 * Everything the model can use goes into `stdout`, in content order, so the output cap cuts it
 * like any other tool's text: text blocks as they are, embedded text resources with their URI,
 * images, audio and binary resources as a one-line note (kind, MIME type, size: the model cannot
 * see them through a function call output), resource links listed with their URI, and
 * `structuredContent` as JSON unless a text block already carries the same JSON (servers are asked
 * to send both). `isError: true` makes the call `ok:false` with the first text line as the message.
 */
import type { CallToolResult, ContentBlock } from "@modelcontextprotocol/sdk/types.js";
import { isJsonObject } from "../../util/json.js";
import { TOOL_DEFAULTS } from "../defaults.js";
import { exitCodeFor } from "../execute.js";
import { type ToolResult, toolResult } from "../tool.js";
import { shortenText } from "../utf8.js";

/** What `Client.callTool` resolves to: a result, or a pre-2024-11-05 server's `{toolResult}`. */
export type McpCallResult = CallToolResult | { toolResult: unknown };

/** Converts a call's result. `tool` is the model-facing name (for the error message). */
export function mcpResultToToolResult(tool: string, result: McpCallResult): ToolResult {
  if (!("content" in result)) {
    // The legacy shape: an arbitrary JSON value.
    return toolResult({
      ok: true,
      stdout: JSON.stringify((result as { toolResult: unknown }).toolResult) ?? "",
    });
  }
  const blocks = result.content ?? [];
  const lines = blocks.map(renderBlock);
  const structured = result.structuredContent;
  if (structured !== undefined && !blocks.some((b) => b.type === "text" && sameJson(b.text, structured))) {
    lines.push(JSON.stringify(structured));
  }
  const stdout = lines.join("\n");
  if (result.isError !== true) return toolResult({ ok: true, stdout });
  const firstText = blocks
    .find((b) => b.type === "text")
    ?.text.split("\n", 1)[0]
    ?.trim();
  const reason = firstText === undefined || firstText === "" ? "no details given" : firstText;
  return toolResult({
    ok: false,
    exitCode: exitCodeFor("tool_failed"),
    stdout,
    error: {
      code: "tool_failed",
      message: shortenText(`${tool} reported an error: ${reason}`, TOOL_DEFAULTS.errorMessageMaxChars),
    },
  });
}

function renderBlock(block: ContentBlock): string {
  switch (block.type) {
    case "text":
      return block.text;
    case "image":
    case "audio":
      return `[${block.type}: ${block.mimeType}, ${base64Bytes(block.data)} bytes, not shown]`;
    case "resource_link": {
      const facts = [block.mimeType, block.size === undefined ? undefined : `${block.size} bytes`].filter(
        (f) => f !== undefined,
      );
      const about = block.description === undefined ? "" : `: ${block.description}`;
      return `[resource link: ${block.name} <${block.uri}>${facts.length > 0 ? ` (${facts.join(", ")})` : ""}${about}]`;
    }
    case "resource": {
      const r = block.resource;
      const mime = r.mimeType === undefined ? "" : ` (${r.mimeType})`;
      if ("text" in r) return `[resource <${r.uri}>${mime}]\n${r.text}`;
      return `[resource <${r.uri}>${mime}: ${base64Bytes(r.blob)} bytes of binary data, not shown]`;
    }
    default: {
      // A content type newer than this SDK: say it was there rather than drop it silently.
      const type = (block as { type?: unknown }).type;
      return `[${typeof type === "string" ? type : "unknown"} content, not shown]`;
    }
  }
}

/** Decoded size of base64 text, without decoding it. */
function base64Bytes(data: string): number {
  const clean = data.replace(/\s/g, "");
  const padding = clean.endsWith("==") ? 2 : clean.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((clean.length * 3) / 4) - padding);
}

function sameJson(text: string, value: unknown): boolean {
  try {
    return canonical(JSON.parse(text)) === canonical(value);
  } catch {
    return false;
  }
}

/** JSON with object keys sorted, so key order does not make two equal values differ. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    isJsonObject(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)))
      : v,
  );
}
