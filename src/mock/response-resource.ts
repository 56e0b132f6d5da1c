/**
 * The `ResponseResource` the mock returns and embeds in lifecycle events (spec §5): all 31 keys,
 * every request setting echoed, defaults (`MOCK_DEFAULTS.response`) for what the request left out.
 * Where the response-side schema differs from the request side the echo takes the form that
 * validates (docs/decisions.md #13): function tools get `description`/`parameters`/`strict` (nullable)
 * filled in, `allowed_tools` gets its required `mode`, and a `json_schema` text format is echoed
 * with `schema: null` (the response schema types it `null`) and `description`/`strict` filled in.
 */
import type {
  FunctionTool,
  FunctionToolParam,
  ItemField,
  ResponseError,
  ResponseResource,
  TextParam,
  ToolChoiceParam,
  Usage,
} from "../protocol/types.js";
import { MOCK_DEFAULTS } from "./defaults.js";
import type { MockRequestBody } from "./request.js";

const D = MOCK_DEFAULTS.response;

/** The parts of a resource that change while it streams. */
export interface ResourceState {
  id: string;
  /** Unix seconds. */
  createdAt: number;
  status: "in_progress" | "completed" | "incomplete" | "failed";
  output: ItemField[];
  usage: Usage | null;
  error: ResponseError | null;
  incompleteReason?: string;
  /** Unix seconds; set on the terminal snapshot. */
  completedAt: number | null;
}

/** Builds the resource for `body` in `state`. */
export function buildResource(body: MockRequestBody, state: ResourceState): ResponseResource {
  return {
    id: state.id,
    object: "response",
    created_at: state.createdAt,
    completed_at: state.completedAt,
    status: state.status,
    incomplete_details: state.incompleteReason === undefined ? null : { reason: state.incompleteReason },
    model: body.model,
    previous_response_id: body.previous_response_id ?? null,
    instructions: body.instructions ?? null,
    output: state.output,
    error: state.error,
    tools: (body.tools ?? []).map(echoTool),
    tool_choice: echoToolChoice(body.tool_choice),
    truncation: body.truncation ?? D.truncation,
    parallel_tool_calls: body.parallel_tool_calls ?? D.parallel_tool_calls,
    text: echoText(body.text),
    top_p: body.top_p ?? D.top_p,
    presence_penalty: body.presence_penalty ?? D.presence_penalty,
    frequency_penalty: body.frequency_penalty ?? D.frequency_penalty,
    top_logprobs: body.top_logprobs ?? D.top_logprobs,
    temperature: body.temperature ?? D.temperature,
    reasoning:
      body.reasoning === undefined || body.reasoning === null
        ? null
        : { effort: body.reasoning.effort ?? null, summary: body.reasoning.summary ?? null },
    usage: state.usage,
    max_output_tokens: body.max_output_tokens ?? null,
    max_tool_calls: body.max_tool_calls ?? null,
    store: body.store ?? D.store,
    background: body.background ?? D.background,
    service_tier: body.service_tier ?? D.service_tier,
    metadata: body.metadata ?? {},
    safety_identifier: body.safety_identifier ?? null,
    prompt_cache_key: body.prompt_cache_key ?? null,
  };
}

/** A request tool in its response form. */
export function echoTool(tool: FunctionToolParam): FunctionTool {
  return {
    type: "function",
    name: tool.name,
    description: tool.description ?? null,
    parameters: tool.parameters ?? null,
    strict: tool.strict ?? D.strict,
  };
}

/** A request `tool_choice` in its response form (`allowed_tools` needs `mode` there). */
export function echoToolChoice(choice: ToolChoiceParam | null | undefined): ResponseResource["tool_choice"] {
  if (choice === undefined || choice === null) return "auto";
  if (typeof choice === "string") return choice;
  if (choice.type === "allowed_tools") {
    return {
      type: "allowed_tools",
      tools: choice.tools.map((t) => ({ type: "function", name: t.name })),
      mode: choice.mode ?? "auto",
    };
  }
  return { type: "function", name: choice.name };
}

/** A request `text` in its response form. */
export function echoText(text: TextParam | null | undefined): ResponseResource["text"] {
  const verbosity = text?.verbosity ?? D.verbosity;
  const format = text?.format;
  if (format === undefined || format === null || format.type === "text") {
    return { format: { type: "text" }, verbosity };
  }
  return {
    format: {
      type: "json_schema",
      name: format.name ?? "response",
      description: format.description ?? null,
      schema: null,
      strict: format.strict ?? false,
    },
    verbosity,
  };
}
