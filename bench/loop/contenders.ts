/**
 * The contenders of the loop benchmark. One run = one agent turn: request #1 → the model calls
 * `noop({"n":1})` → the tool runs → request #2 with its output → the streamed 160-character answer.
 * Each contender consumes everything it streams and reports every text delta of the answer to
 * `onDelta` (the time of the first one is the TTFT).
 */
import { tmpdir } from "node:os";
import { Agent, OpenAIProvider, Runner, tool } from "@openai/agents";
import OpenAI from "openai";
import { z } from "zod";
import type { RunDeps } from "../../src/loop/options.js";
import type * as RunModule from "../../src/loop/run.js";
import type * as OpenResponsesModule from "../../src/provider/open-responses.js";
import type { OpenResponsesProviderOptions } from "../../src/provider/open-responses.js";
import type * as TransportModule from "../../src/provider/transport.js";
import type * as ToolModule from "../../src/tools/tool.js";
import type { ToolDefinition } from "../../src/tools/tool.js";
import { importBuilt } from "../built.js";
import { packageVersion } from "../provider/contenders.js";
import {
  type EventSink,
  fetchPoster,
  floorAssembler,
  floorParser,
  nodeHttpPoster,
  type Poster,
} from "../provider/floor.js";
import { MODEL, PROMPT } from "./responses.js";
import { webSocketExchange } from "./websocket.js";

// eddy from its build (bench/built.ts), typed by its sources.
const { runAgent } = await importBuilt<typeof RunModule>("loop/run.js");
const { createOpenResponsesProvider } = await importBuilt<typeof OpenResponsesModule>(
  "provider/open-responses.js",
);
const { nodeHttpTransport } = await importBuilt<typeof TransportModule>("provider/transport.js");
const { defineTool } = await importBuilt<typeof ToolModule>("tools/tool.js");

export interface LoopContender {
  name: string;
  version: string;
  what: string;
  /** Called before each run, outside the timed part. */
  prepare?: () => void;
  /** One full run; resolves to the final answer's text. */
  run: (onDelta: (delta: string) => void) => Promise<string>;
}

/**
 * The arguments of every noop call while `recording` (the correctness check counts them); off
 * while timing, so nothing accumulates across thousands of runs.
 */
export const noopLog = { recording: false, calls: [] as unknown[] };

/** The tool's work: nothing (recorded during the correctness check). */
function noop(args: unknown): string {
  if (noopLog.recording) noopLog.calls.push(args);
  return "ok";
}

const NOOP_DESCRIPTION = "Does nothing and answers ok.";
const NOOP_PARAMETERS = {
  type: "object",
  properties: { n: { type: "number" } },
  required: ["n"],
  additionalProperties: false,
};
/** The `tools` entry the hand-written loops send. */
export const NOOP_DECLARATION = {
  type: "function",
  name: "noop",
  description: NOOP_DESCRIPTION,
  parameters: NOOP_PARAMETERS,
  strict: true,
};

/** eddy's noop with a zod schema (as the @openai/agents contender's). */
export const eddyNoop = defineTool({
  name: "noop",
  description: NOOP_DESCRIPTION,
  parameters: z.object({ n: z.number() }),
  execute: (args) => noop(args),
});

/** The same tool with a JSON Schema (ajv-compiled when a registry is built). */
export const eddyNoopJsonSchema: ToolDefinition = {
  name: "noop",
  description: NOOP_DESCRIPTION,
  parameters: NOOP_PARAMETERS,
  execute: (args) => noop(args),
};

export const FLOOR_LOOP = "floor-loop";
export const FLOOR_LOOP_NODE = "floor-loop node:http";
export const FLOOR_LOOP_EDDY_TRANSPORT = "floor-loop eddy transport";
export const EDDY_ON = "eddy (validate on)";
export const EDDY_OFF = "eddy (validate off)";
export const FLOOR_LOOP_WS = "floor-loop websocket";
export const EDDY_WS = "eddy websocket (validate on)";
export const AGENTS = "@openai/agents";
export const SDK_LOOP = "openai-sdk-loop";

/**
 * One request of the hand-written loop: sends `request` (the body without `stream`) and hands each
 * event of its response to `sink`, resolving when the response is over.
 */
export type Exchange = (request: Record<string, unknown>, sink: EventSink) => Promise<void>;

/** An exchange as a streamed POST: the body with `stream: true`, the reply through the floor SSE parser. */
export function sseExchange(post: Poster): Exchange {
  return (request, sink) => post(JSON.stringify({ ...request, stream: true }), floorParser(sink));
}

/** The hand-written loop over any way of POSTing. */
export function floorLoop(post: Poster) {
  return floorLoopOver(sseExchange(post));
}

/** The hand-written loop over any exchange (HTTP or one WebSocket). */
export function floorLoopOver(exchange: Exchange) {
  return async (onDelta: (delta: string) => void): Promise<string> => {
    const first = floorAssembler();
    await exchange({ model: MODEL, input: PROMPT, tools: [NOOP_DECLARATION] }, first.sink);
    const call = first.response.calls[0];
    if (call === undefined) throw new Error("floor-loop: response #1 has no function call");
    const output = noop(JSON.parse(call.arguments));
    const second = floorAssembler(onDelta);
    await exchange(
      {
        model: MODEL,
        previous_response_id: first.response.responseId,
        input: [{ type: "function_call_output", call_id: call.call_id, output }],
        tools: [NOOP_DECLARATION],
      },
      second.sink,
    );
    return second.response.text;
  };
}

/**
 * POST through eddy's default transport (`nodeHttpTransport`), as its provider does: the same
 * headers, an AbortController per request, the body read with for-await.
 */
function eddyTransportPoster(url: string): Poster {
  const transport = nodeHttpTransport();
  const headers = {
    "content-type": "application/json",
    accept: "text/event-stream, application/json",
    "user-agent": "eddy",
  };
  return async (body, onChunk) => {
    const controller = new AbortController();
    const res = await transport({ url, headers, body, signal: controller.signal });
    if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
    for await (const chunk of res.body) onChunk(chunk);
  };
}

/** runAgent over `provider` options; everything streamed is consumed, `result` awaited. */
export function eddyLoop(
  options: OpenResponsesProviderOptions,
  tools: readonly ToolDefinition[] = [eddyNoop],
  extra: Pick<RunDeps, "onFrame"> = {},
) {
  const provider = createOpenResponsesProvider(options);
  const workspace = tmpdir();
  return async (onDelta: (delta: string) => void): Promise<string> => {
    const handle = runAgent({ model: MODEL, input: PROMPT }, { provider, tools, workspace, ...extra });
    for await (const frame of handle) if (frame.type === "output_text_delta") onDelta(frame.delta);
    const result = await handle.result;
    if (result.reason !== "completed") throw new Error(`eddy: run ended ${result.reason}`);
    return result.outputText;
  };
}

function sdkLoop(client: OpenAI) {
  const tools = [{ ...NOOP_DECLARATION, type: "function" as const }];
  return async (onDelta: (delta: string) => void): Promise<string> => {
    let call: { call_id: string; arguments: string } | undefined;
    let id = "";
    const first = await client.responses.create({ model: MODEL, input: PROMPT, tools, stream: true });
    for await (const event of first) {
      if (event.type !== "response.completed") continue;
      id = event.response.id;
      call = event.response.output.find((i) => i.type === "function_call");
    }
    if (call === undefined) throw new Error("openai-sdk-loop: response #1 has no function call");
    const output = noop(JSON.parse(call.arguments));
    const second = await client.responses.create({
      model: MODEL,
      previous_response_id: id,
      input: [{ type: "function_call_output", call_id: call.call_id, output }],
      tools,
      stream: true,
    });
    let text = "";
    for await (const event of second) {
      if (event.type === "response.output_text.delta") {
        text += event.delta;
        onDelta(event.delta);
      }
    }
    return text;
  };
}

/**
 * A runner with its own model provider bound to `client`: the SDK's default provider (what
 * `setDefaultOpenAIClient` feeds) keeps the first client it was given, for the whole process.
 */
function agentsLoop(client: OpenAI) {
  const runner = new Runner({
    modelProvider: new OpenAIProvider({ openAIClient: client }),
    tracingDisabled: true,
  });
  const agent = new Agent({
    name: "bench",
    model: MODEL,
    tools: [
      tool({
        name: "noop",
        description: NOOP_DESCRIPTION,
        parameters: z.object({ n: z.number() }),
        execute: async (args) => noop(args),
      }),
    ],
  });
  return async (onDelta: (delta: string) => void): Promise<string> => {
    const result = await runner.run(agent, PROMPT, { stream: true });
    for await (const event of result) {
      if (event.type === "raw_model_stream_event" && event.data.type === "output_text_delta") {
        onDelta(event.data.delta);
      }
    }
    await result.completed;
    return String(result.finalOutput);
  };
}

/** The contenders over HTTP to the replay server at `origin`. */
export function loopContenders(origin: string): LoopContender[] {
  const url = `${origin}/v1/responses`;
  const wsUrl = url.replace(/^http/, "ws");
  const client = new OpenAI({ baseURL: `${origin}/v1`, apiKey: "bench", maxRetries: 0 });
  const openai = packageVersion("openai");
  const agents = packageVersion("@openai/agents");
  return [
    {
      name: FLOOR_LOOP,
      version: "-",
      what: "hand-written: global fetch + the floor SSE parser; the call from response.completed; follow-up with previous_response_id + function_call_output",
      run: floorLoop(fetchPoster(url)),
    },
    {
      name: FLOOR_LOOP_NODE,
      version: "-",
      what: "floor-loop over node:http (keep-alive Agent) instead of fetch: the cost of fetch itself, and the floor eddy's own transport is compared with",
      run: floorLoop(nodeHttpPoster(url)),
    },
    {
      name: FLOOR_LOOP_EDDY_TRANSPORT,
      version: "-",
      what: "floor-loop through eddy's default transport (nodeHttpTransport from src/provider/transport.ts, an AbortController per request, body read with for-await): what eddy's transport adds to the minimal node:http client",
      run: floorLoop(eddyTransportPoster(url)),
    },
    {
      name: FLOOR_LOOP_WS,
      version: "-",
      what: "floor-loop over one WebSocket (ws package, kept across runs) in WebSocket mode: each request one response.create message, each event one JSON message parsed with JSON.parse; the floor of WebSocket mode",
      run: floorLoopOver(webSocketExchange(wsUrl)),
    },
    {
      name: EDDY_ON,
      version: "-",
      what: "runAgent({ model, input }, { provider: createOpenResponsesProvider({baseURL}), tools: [noop (zod)], workspace }) in chained mode, every frame consumed, result awaited; validation on (default)",
      run: eddyLoop({ baseURL: origin }),
    },
    {
      name: EDDY_OFF,
      version: "-",
      what: "the same with validate: false",
      run: eddyLoop({ baseURL: origin, validate: false }),
    },
    {
      name: EDDY_WS,
      version: "-",
      what: 'eddy (validate on) with streamTransport: "websocket": the same run over one WebSocket connection (the provider\'s pool keeps it across turns and runs), each request one response.create message',
      run: eddyLoop({ baseURL: origin, streamTransport: "websocket" }),
    },
    {
      name: SDK_LOOP,
      version: openai,
      what: "openai client.responses.create({stream:true}) for-await ×2; the call from response.completed; previous_response_id + function_call_output",
      run: sdkLoop(client),
    },
    {
      name: AGENTS,
      version: `${agents} (openai ${openai})`,
      what: "Agent{tools:[tool({parameters: zod})]} + run(agent, prompt, {stream:true}) consumed fully; a Runner whose OpenAIProvider is bound to the client; tracing disabled",
      run: agentsLoop(client),
    },
  ];
}
