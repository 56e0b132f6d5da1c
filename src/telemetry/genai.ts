/**
 * OpenTelemetry GenAI semantic conventions (development status, as of v1.37–1.41): the attribute
 * names eddy sets, the finish-reason mapping, and the conversion of Open Responses items to the
 * conventions' message JSON (`gen_ai.input.messages` / `gen_ai.output.messages`, recorded only when
 * content capture is on).
 */
import { isJsonObject as isObject } from "../util/json.js";

/** Attribute names from the GenAI conventions (and `error.type` from the general ones). */
export const GENAI = {
  operation: "gen_ai.operation.name",
  providerName: "gen_ai.provider.name",
  /** The pre-1.37 name of `gen_ai.provider.name`, still read by many backends. */
  system: "gen_ai.system",
  agentName: "gen_ai.agent.name",
  requestModel: "gen_ai.request.model",
  requestMaxTokens: "gen_ai.request.max_tokens",
  requestTemperature: "gen_ai.request.temperature",
  requestTopP: "gen_ai.request.top_p",
  responseId: "gen_ai.response.id",
  responseModel: "gen_ai.response.model",
  finishReasons: "gen_ai.response.finish_reasons",
  timeToFirstChunk: "gen_ai.response.time_to_first_chunk",
  inputTokens: "gen_ai.usage.input_tokens",
  outputTokens: "gen_ai.usage.output_tokens",
  cachedInputTokens: "gen_ai.usage.cache_read.input_tokens",
  reasoningTokens: "gen_ai.usage.reasoning.output_tokens",
  inputMessages: "gen_ai.input.messages",
  outputMessages: "gen_ai.output.messages",
  systemInstructions: "gen_ai.system_instructions",
  toolName: "gen_ai.tool.name",
  toolCallId: "gen_ai.tool.call.id",
  toolType: "gen_ai.tool.type",
  toolArguments: "gen_ai.tool.call.arguments",
  toolResult: "gen_ai.tool.call.result",
  errorType: "error.type",
} as const;

/**
 * The conventions' finish reason for a response: `stop`, `tool_calls`, `length`,
 * `content_filter`, `error`, or the provider's own incomplete reason.
 */
export function finishReason(
  status: string,
  incompleteReason: string | undefined,
  calledTools: boolean,
): string {
  switch (status) {
    case "completed":
      return calledTools ? "tool_calls" : "stop";
    case "incomplete":
      return incompleteReason === "max_output_tokens"
        ? "length"
        : incompleteReason === "content_filter"
          ? "content_filter"
          : (incompleteReason ?? "incomplete");
    default:
      return "error";
  }
}

/** One message in the conventions' shape. */
export interface GenAiMessage {
  role: string;
  parts: Array<Record<string, unknown>>;
  finish_reason?: string;
}

/** An Open Responses `input` (a string or items) as conventions messages. */
export function inputMessages(input: unknown): GenAiMessage[] {
  if (typeof input === "string") return [{ role: "user", parts: [{ type: "text", content: input }] }];
  if (!Array.isArray(input)) return [];
  return input.filter(isObject).map(itemMessage);
}

function itemMessage(item: Record<string, unknown>): GenAiMessage {
  switch (item.type) {
    case "function_call":
      return {
        role: "assistant",
        parts: [
          { type: "tool_call", id: item.call_id ?? item.id, name: item.name, arguments: item.arguments },
        ],
      };
    case "function_call_output":
      return {
        role: "tool",
        parts: [{ type: "tool_call_response", id: item.call_id, response: item.output }],
      };
    case "reasoning":
      return {
        role: "assistant",
        parts: (Array.isArray(item.summary) ? item.summary : [])
          .filter(isObject)
          .map((s) => ({ type: "reasoning", content: s.text })),
      };
    case "message":
    case undefined: {
      const role = typeof item.role === "string" ? item.role : "user";
      if (typeof item.content === "string") return { role, parts: [{ type: "text", content: item.content }] };
      const parts = (Array.isArray(item.content) ? item.content : [])
        .filter(isObject)
        .map((p) =>
          typeof p.text === "string"
            ? { type: "text", content: p.text }
            : { type: String(p.type ?? "unknown") },
        );
      return { role, parts };
    }
    default:
      return { role: "assistant", parts: [{ type: String(item.type) }] };
  }
}
