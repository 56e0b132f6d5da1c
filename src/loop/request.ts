/**
 * Building each request body. Instructions and tools go on every request (docs/decisions.md #10; the spec
 * does not carry them over `previous_response_id`), `parallel_tool_calls: false` and the remaining
 * tool-call budget bound each response (docs/decisions.md #6), and the continuation mode decides `store`,
 * `include` and `previous_response_id` (docs/decisions.md #4). Key order is fixed, so the same
 * run always produces byte-identical bodies (replay compares them exactly).
 */
import type { ContinuationMode } from "../frames/frame.js";
import type { CreateResponseBody, JsonObject, ToolChoiceParam } from "../protocol/types.js";
import type { ProviderCapabilities } from "../provider/capabilities.js";

/** Fields the loop owns; a user's extra request fields never override them. */
const LOOP_FIELDS: ReadonlySet<string> = new Set([
  "model",
  "instructions",
  "input",
  "previous_response_id",
  "tools",
  "tool_choice",
  "parallel_tool_calls",
  "max_tool_calls",
  "store",
  "include",
  "stream",
]);

export interface RequestPlan {
  model: string | null;
  instructions: string | undefined;
  input: string | JsonObject[];
  mode: ContinuationMode;
  previousResponseId: string | undefined;
  /** Function tools, native tool types and hosted tools (tool-declarations.ts). */
  tools: JsonObject[];
  /**
   * Whether `tools` goes on this request (`toolsOnFollowUp: "first_request"` leaves it off
   * follow-ups). The other tool fields — `tool_choice`, `parallel_tool_calls`, `max_tool_calls` —
   * go whenever the run has tools: they bound this response whatever the server remembers.
   */
  sendTools: boolean;
  toolChoice: ToolChoiceParam | null | undefined;
  parallelToolCalls: boolean;
  /** The run's remaining tool-call budget (sent as `max_tool_calls`, never below 1). */
  remainingToolCalls: number;
  capabilities: ProviderCapabilities;
  /** `text.format` for structured output. */
  textFormat: JsonObject | undefined;
  extra: Partial<CreateResponseBody> | undefined;
}

export function buildRequestBody(plan: RequestPlan): CreateResponseBody {
  const body: JsonObject = {};
  if (plan.model !== null) body.model = plan.model;
  if (plan.instructions !== undefined) body.instructions = plan.instructions;
  body.input = plan.input;
  if (plan.previousResponseId !== undefined) body.previous_response_id = plan.previousResponseId;
  if (plan.tools.length > 0) {
    if (plan.sendTools) body.tools = plan.tools;
    if (plan.toolChoice !== undefined && plan.toolChoice !== null) body.tool_choice = plan.toolChoice;
    if (plan.capabilities.parallelToolCalls) body.parallel_tool_calls = plan.parallelToolCalls;
    if (plan.capabilities.maxToolCalls) body.max_tool_calls = Math.max(1, plan.remainingToolCalls);
  }
  const extra = plan.extra ?? {};
  const text =
    plan.textFormat !== undefined ? { ...(extra.text ?? {}), format: plan.textFormat } : extra.text;
  if (text !== undefined && text !== null) body.text = text;
  if (plan.mode === "stateless") {
    body.store = false;
    if (plan.capabilities.encryptedReasoning) body.include = mergeInclude(extra.include);
  } else {
    // `store: false` asked for in chained mode chains on the connection's memory in WebSocket mode
    // (src/provider/websocket/pool.ts); where nothing remembers the response, the follow-up gets
    // previous_response_not_found and the run goes stateless (docs/decisions.md #5).
    body.store = extra.store !== false;
    if (extra.include !== undefined && extra.include !== null) body.include = extra.include;
  }
  for (const [key, value] of Object.entries(extra)) {
    if (!LOOP_FIELDS.has(key) && key !== "text" && value !== undefined) body[key] = value;
  }
  body.stream = true;
  return body as CreateResponseBody;
}

function mergeInclude(
  extra: CreateResponseBody["include"] | undefined,
): NonNullable<CreateResponseBody["include"]> {
  const out: NonNullable<CreateResponseBody["include"]> = ["reasoning.encrypted_content"];
  for (const v of extra ?? []) if (!out.includes(v)) out.push(v);
  return out;
}
