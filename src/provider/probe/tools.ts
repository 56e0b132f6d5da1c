/**
 * The tool probes. `function_call_input`: a stateless request whose input holds a `function_call`
 * item and its `function_call_output` — whether the server takes tool history as native items
 * (the `nativeToolHistory` capability; docs/decisions.md #17). `tool_call`: the round trip a run
 * makes — a function tool forced with `tool_choice`, its output sent back, an answer after it —
 * sending the output the first way the earlier probes allow (chained, stateless with native items,
 * or in the text form the caller gives — eddy's text-embed strategy) and falling back to the next
 * when the server refuses it.
 */
import type { JsonObject } from "../../protocol/types.js";
import { baseBody, inconclusive, type ProbeContext, quoted, type Verdict, verdict } from "./context.js";
import { type Exchange, exchange, failureOf, userMessage } from "./exchange.js";
import type { ToolFollowUp } from "./types.js";

const TOOL = "eddy_probe_echo";
const ECHO_TOOL: JsonObject = {
  type: "function",
  name: TOOL,
  description: "Echoes the value it is given.",
  parameters: {
    type: "object",
    properties: { value: { type: "string", description: "the value to echo" } },
    required: ["value"],
  },
  strict: false,
};
const PROMPT = `Call the ${TOOL} tool with the value "ping", then tell me what it echoed.`;

/** The `function_call_input` verdict (one stateless request). */
export async function probeNativeHistory(ctx: ProbeContext): Promise<Verdict[]> {
  const callId = "call_eddy_probe_1";
  const input = [
    userMessage(PROMPT),
    { type: "function_call", call_id: callId, name: TOOL, arguments: '{"value":"ping"}' },
    { type: "function_call_output", call_id: callId, output: '{"echo":"ping"}' },
  ];
  const ex = await exchange(
    ctx.provider("main"),
    { ...baseBody(ctx), tools: [ECHO_TOOL], input },
    ctx.signal,
  );
  if (ex.outcome.ok)
    return [
      verdict(
        "function_call_input",
        "ok",
        "function_call and function_call_output input items were accepted",
      ),
    ];
  const failure = failureOf(ex.outcome.error);
  if (failure.kind !== "rejected") return [inconclusive(ctx, "function_call_input", failure)];
  return [
    verdict(
      "function_call_input",
      "unsupported",
      `a request with function_call / function_call_output input items was refused: ${failure.message}`,
      "runs with --history-strategy auto send tool history as text (text-embed); set nativeToolHistory: false in the profile's capabilities to make it permanent",
    ),
  ];
}

/** The `tool_call` verdict (two requests, more when a way of sending the output back is refused). */
export async function probeToolCall(ctx: ProbeContext): Promise<Verdict[]> {
  const tools = { tools: [ECHO_TOOL] };
  const first = await exchange(
    ctx.provider("main"),
    {
      ...baseBody(ctx),
      ...tools,
      tool_choice: { type: "function", name: TOOL },
      input: [userMessage(PROMPT)],
    },
    ctx.signal,
  );
  if (!first.outcome.ok) {
    const failure = failureOf(first.outcome.error);
    if (failure.kind !== "rejected") return [inconclusive(ctx, "tool_call", failure)];
    return [
      verdict(
        "tool_call",
        "failed",
        `a request with a function tool and tool_choice was refused: ${failure.message}`,
        "the server may not support function tools or a forced tool_choice: runs with tools will fail",
      ),
    ];
  }
  const call = first.outcome.response.calls[0];
  if (call === undefined)
    return [
      verdict(
        "tool_call",
        "failed",
        "the model answered without calling the tool although tool_choice required it",
        "the server ignores tool_choice, or the model cannot call tools: pick a model that supports function calling",
      ),
    ];
  const sent = { call_id: call.callId, output: JSON.stringify({ echo: echoedValue(call.arguments) }) };
  const ways = followUps(ctx, first);
  if (ways.length === 0)
    return [
      verdict(
        "tool_call",
        "skipped",
        `called ${TOOL}(${call.arguments}), but the server takes its output neither chained nor as items, and no text form was given`,
      ),
    ];
  const refused: string[] = [];
  for (const via of ways) {
    const ex = await exchange(ctx.provider("main"), followUpBody(ctx, via, first, sent), ctx.signal);
    if (ex.outcome.ok) {
      const answer = ex.outcome.response.outputText;
      const detail = `called ${TOOL}(${call.arguments}); after its output (sent ${VIA[via]}) answered ${answer === "" ? "with no text" : quoted(answer)}`;
      return [{ ...verdict("tool_call", "ok", detail), follow_up: via }];
    }
    const failure = failureOf(ex.outcome.error);
    if (failure.kind !== "rejected" && failure.kind !== "missing")
      return [inconclusive(ctx, "tool_call", failure)];
    refused.push(`${VIA[via]}: ${failure.message}`);
  }
  return [
    verdict(
      "tool_call",
      "failed",
      `the tool's output was refused every way it can be sent (${refused.join("; ")})`,
      "runs with tools will fail on this server",
    ),
  ];
}

const VIA: Record<ToolFollowUp, string> = {
  chained: "chained with previous_response_id",
  stateless: "statelessly as function_call items",
  text: "as text (text-embed)",
};

/** The ways to send the output back, in the order a run would use them, minus those a probe found refused. */
function followUps(ctx: ProbeContext, first: Exchange): ToolFollowUp[] {
  const out: ToolFollowUp[] = [];
  const chain = ctx.results.get("previous_response_id")?.status;
  const canChain = chain === "ok" || (chain !== "unsupported" && ctx.capabilities.previousResponseId);
  const id = first.outcome.response.id;
  if (ctx.api === "responses" && canChain && id !== null && id !== "") out.push("chained");
  if (ctx.results.get("function_call_input")?.status !== "unsupported") out.push("stateless");
  if (ctx.renderToolResult !== undefined) out.push("text");
  return out;
}

function followUpBody(
  ctx: ProbeContext,
  via: ToolFollowUp,
  first: Exchange,
  sent: { call_id: string; output: string },
): JsonObject {
  const base = { ...baseBody(ctx), tools: [ECHO_TOOL], tool_choice: "none" };
  const output = { type: "function_call_output", ...sent };
  const call = first.outcome.response.calls[0];
  switch (via) {
    case "chained":
      return { ...base, previous_response_id: first.outcome.response.id, input: [output] };
    case "stateless":
      return {
        ...base,
        input: [
          userMessage(PROMPT),
          { type: "function_call", call_id: sent.call_id, name: TOOL, arguments: call?.arguments ?? "{}" },
          output,
        ],
      };
    case "text": {
      const record = {
        callId: sent.call_id,
        name: TOOL,
        arguments: call?.arguments ?? "{}",
        output: sent.output,
      };
      const rendered = ctx.renderToolResult?.(output, { ...record, failed: false }) ?? [];
      return { ...baseBody(ctx), input: [userMessage(PROMPT), ...rendered] };
    }
  }
}

/** The `value` argument of the call, or "ping" when the arguments do not parse. */
function echoedValue(args: string): string {
  try {
    const parsed: unknown = JSON.parse(args);
    if (parsed !== null && typeof parsed === "object" && "value" in parsed) return String(parsed.value);
  } catch {
    // Not JSON: echo the value asked for.
  }
  return "ping";
}
