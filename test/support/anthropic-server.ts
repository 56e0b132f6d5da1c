/**
 * A scripted Anthropic Messages server (node:http on 127.0.0.1) for the AI SDK adapter's tests: it
 * plays the mock server's `Scenario` objects (src/mock/scenario.ts) as `POST /v1/messages` streams,
 * built from the events Anthropic documents for streaming Messages: `message_start` (the message
 * with empty content and the input token count), then per content block `content_block_start`,
 * `content_block_delta` (`text_delta` in small pieces for a `message` item, `input_json_delta`
 * fragments of the arguments for a `function_call` item, which becomes a `tool_use` block) and
 * `content_block_stop`, a `ping`, then `message_delta` (`stop_reason`: `tool_use`, `end_turn`, or
 * `max_tokens` for an `incomplete` turn, and the output token count) and `message_stop`. Every
 * `data:` line has its `event:` line, as Anthropic sends them.
 *
 * With `apiKey`, a request without `x-api-key: <apiKey>` gets Anthropic's 401 error body. Scenario
 * features this server does not play (`expect`, raw events, faults) throw.
 */
import type { ServerResponse } from "node:http";
import type { Scenario, ScenarioItem, ScenarioTurn } from "../../src/mock/index.js";
import type { JsonObject } from "../../src/protocol/types.js";
import { serveLocal } from "./local-http.js";

export interface AnthropicServer {
  /** The base URL the AI SDK's Anthropic provider takes (`http://127.0.0.1:PORT/v1`). */
  url: string;
  /** The parsed request bodies, in order. */
  requests: JsonObject[];
  /** The `x-api-key` of each request. */
  keys: Array<string | undefined>;
  close(): Promise<void>;
}

/** Starts a server answering request i with the scenario's turn i (the last turn repeats if it says so). */
export async function startAnthropicServer(
  scenario: Scenario,
  options: { apiKey?: string } = {},
): Promise<AnthropicServer> {
  for (const turn of scenario.turns) {
    if (turn.expect !== undefined || turn.rawEvents !== undefined || turn.faults !== undefined)
      throw new Error("the scripted Anthropic server plays items only (no expect, raw events or faults)");
  }
  const requests: JsonObject[] = [];
  const keys: Array<string | undefined> = [];
  const server = await serveLocal(async (req, res, text) => {
    const key = req.headers["x-api-key"];
    keys.push(typeof key === "string" ? key : undefined);
    if (options.apiKey !== undefined && key !== options.apiKey) {
      return error(res, 401, "authentication_error", "invalid x-api-key");
    }
    const index = requests.length;
    const turn = scenario.turns[index] ?? (scenario.turns.at(-1)?.repeat ? scenario.turns.at(-1) : undefined);
    requests.push(JSON.parse(text) as JsonObject);
    if (req.url !== "/v1/messages" || turn === undefined) {
      return error(res, 404, "not_found_error", `no turn ${index} or path ${req.url}`);
    }
    res.writeHead(200, { "content-type": "text/event-stream", "request-id": `req_test_${index + 1}` });
    for (const [event, data] of events(turn, index, requests[index] as JsonObject)) {
      res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
      await new Promise((resolve) => setImmediate(resolve));
    }
    res.end();
  });
  return { ...server, requests, keys };
}

function error(res: ServerResponse, status: number, type: string, message: string): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ type: "error", error: { type, message } }));
}

/** The documented event sequence of one turn (see the module comment). */
function events(turn: ScenarioTurn, index: number, request: JsonObject): Array<[string, JsonObject]> {
  const items = turn.items ?? [];
  const input = JSON.stringify(request.messages ?? []).length;
  const out: Array<[string, JsonObject]> = [
    [
      "message_start",
      {
        type: "message_start",
        message: {
          id: `msg_test_${index + 1}`,
          type: "message",
          role: "assistant",
          content: [],
          model: typeof request.model === "string" ? request.model : "claude-test",
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: turn.usage?.input_tokens ?? Math.ceil(input / 4), output_tokens: 1 },
        },
      },
    ],
  ];
  let outputChars = 0;
  items.forEach((item, block) => {
    outputChars += blockEvents(item, block, index, out);
    if (block === 0) out.push(["ping", { type: "ping" }]);
  });
  const stop =
    turn.status === "incomplete"
      ? "max_tokens"
      : items.some((i) => i.type === "function_call")
        ? "tool_use"
        : "end_turn";
  out.push(
    [
      "message_delta",
      {
        type: "message_delta",
        delta: { stop_reason: stop, stop_sequence: null },
        usage: { output_tokens: turn.usage?.output_tokens ?? Math.max(1, Math.ceil(outputChars / 4)) },
      },
    ],
    ["message_stop", { type: "message_stop" }],
  );
  return out;
}

/** One content block's start, deltas and stop; returns how many characters it streamed. */
function blockEvents(
  item: ScenarioItem,
  index: number,
  turn: number,
  out: Array<[string, JsonObject]>,
): number {
  const delta = (d: JsonObject): [string, JsonObject] => [
    "content_block_delta",
    { type: "content_block_delta", index, delta: d },
  ];
  let streamed = "";
  if (item.type === "message") {
    const text = [item.text ?? ""].flat().join("");
    out.push([
      "content_block_start",
      { type: "content_block_start", index, content_block: { type: "text", text: "" } },
    ]);
    for (const piece of pieces(text, 12)) out.push(delta({ type: "text_delta", text: piece }));
    streamed = text;
  } else if (item.type === "function_call") {
    const args = typeof item.arguments === "string" ? item.arguments : JSON.stringify(item.arguments ?? {});
    const id = item.call_id ?? `toolu_test_${turn + 1}_${index}`;
    out.push([
      "content_block_start",
      {
        type: "content_block_start",
        index,
        content_block: { type: "tool_use", id, name: item.name, input: {} },
      },
    ]);
    for (const piece of pieces(args, 8)) out.push(delta({ type: "input_json_delta", partial_json: piece }));
    streamed = item.name + args;
  } else {
    throw new Error("the scripted Anthropic server plays message and function_call items only");
  }
  out.push(["content_block_stop", { type: "content_block_stop", index }]);
  return streamed.length;
}

function pieces(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}
