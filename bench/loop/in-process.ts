/**
 * The loop without a socket, so eddy's own CPU per turn is visible apart from HTTP: the provider
 * gets a transport that returns pre-generated reply bytes (one chunk per SSE event, each behind an
 * `await`, like a socket read), and the floor-loop reads the same chunks the same way. One more row
 * runs eddy against the mock server's fetch-style handler (`createMockHandler`), which adds the
 * mock's own CPU (request parsing, SSE encoding) to every run. Another runs eddy with the
 * OpenTelemetry observer attached while no tracer provider is registered (the library's default
 * when a program does not set up tracing): its cost over eddy (on) is the observer's.
 */
import * as otelApi from "@opentelemetry/api";
import type * as MockModule from "../../src/mock/index.js";
import type { MockHandler } from "../../src/mock/index.js";
import type { JsonObject } from "../../src/protocol/types.js";
import type { Transport } from "../../src/provider/transport.js";
import type * as OtelModule from "../../src/telemetry/otel-observer.js";
import type * as RegistryModule from "../../src/tools/registry.js";
import { importBuilt } from "../built.js";
import type { Poster } from "../provider/floor.js";
import type { Reply } from "../provider/responder.js";
import {
  EDDY_OFF,
  EDDY_ON,
  eddyLoop,
  eddyNoop,
  eddyNoopJsonSchema,
  FLOOR_LOOP,
  floorLoop,
  type LoopContender,
} from "./contenders.js";
import { answerEvents, callEvents, MODEL, type RequestEcho, toReply } from "./responses.js";

// eddy from its build, as contenders.ts takes it (bench/built.ts).
const { createMockHandler } = await importBuilt<typeof MockModule>("mock/index.js");
const { createOtelObserverFromApi } = await importBuilt<typeof OtelModule>("telemetry/otel-observer.js");
const { createToolRegistry } = await importBuilt<typeof RegistryModule>("tools/registry.js");

export const EDDY_JSON_SCHEMA = "eddy (on, JSON Schema noop)";
export const EDDY_MOCK = "eddy (on) over createMockHandler";
export const EDDY_OTEL = "eddy (on) + OTel observer, no tracer provider";

const ORIGIN = "http://in-process.invalid";

function echoes(): { first: RequestEcho; second: RequestEcho } {
  const tools = createToolRegistry([eddyNoop]).declarations();
  const base = { model: MODEL, instructions: null, tools };
  return {
    first: { ...base, previousResponseId: null, followUp: false },
    second: { ...base, previousResponseId: "resp_bench_1", followUp: true },
  };
}

/** Request bodies seen while recording (for the correctness check), else nothing is kept. */
export interface RequestLog {
  record(on: boolean): void;
  bodies: string[];
}

function requestLog(): RequestLog & { see(body: string): void } {
  let on = false;
  const log = {
    bodies: [] as string[],
    record(value: boolean) {
      on = value;
      log.bodies = [];
    },
    see(body: string) {
      if (on) log.bodies.push(body);
    },
  };
  return log;
}

/** The two replies, chosen by a cheap look at the request body (the server's work stays out). */
function replies(log: { see(body: string): void }): (body: string) => Reply {
  const { first, second } = echoes();
  const call = toReply(callEvents(1, first), "event");
  const answer = toReply(answerEvents(2, second), "event");
  return (body) => {
    log.see(body);
    return body.includes('"function_call_output"') ? answer : call;
  };
}

/** The chunks, each behind an await (like socket reads). */
export async function* chunksOf(chunks: readonly Uint8Array[]): AsyncGenerator<Uint8Array> {
  for (const chunk of chunks) yield chunk;
}

const SSE_HEADERS = {
  get: (name: string) => (name.toLowerCase() === "content-type" ? "text/event-stream" : null),
};

/** A transport answering every request with the pre-generated reply `pick` chooses for its body. */
export function memoryTransport(pick: (body: string) => Reply): Transport {
  return async (request) => ({
    status: 200,
    headers: SSE_HEADERS,
    body: chunksOf(pick(request.body).chunks),
    cancel: () => {},
  });
}

function memoryPoster(pick: (body: string) => Reply): Poster {
  return async (body, onChunk) => {
    for await (const chunk of chunksOf(pick(body).chunks)) onChunk(chunk);
  };
}

/** eddy over a fresh mock handler per run, scripted with the same two responses as raw events. */
function overMockHandler(log: { see(body: string): void }): LoopContender {
  const { first, second } = echoes();
  const scenario = {
    turns: [
      { rawEvents: callEvents(1, first) as JsonObject[] },
      { rawEvents: answerEvents(2, second) as JsonObject[] },
    ],
  };
  let handler: MockHandler = createMockHandler({ scenario });
  return {
    name: EDDY_MOCK,
    version: "-",
    what: "eddy (validation on) with fetch: (u, i) => handler(new Request(u, i)) over createMockHandler({scenario: rawEvents}); a fresh handler per run, made before the clock starts; the mock's CPU counts",
    prepare: () => {
      handler = createMockHandler({ scenario });
    },
    run: eddyLoop({
      baseURL: ORIGIN,
      fetch: (url, init) => {
        log.see(String(init?.body));
        return handler(new Request(url, init));
      },
    }),
  };
}

export function inProcessContenders(): { contenders: LoopContender[]; log: RequestLog } {
  const log = requestLog();
  const pick = replies(log);
  const transport = memoryTransport(pick);
  const contenders: LoopContender[] = [
    {
      name: FLOOR_LOOP,
      version: "-",
      what: "the floor-loop (floor parser, call from response.completed, JSON.stringify of both requests) over the same in-memory chunks",
      run: floorLoop(memoryPoster(pick)),
    },
    {
      name: EDDY_ON,
      version: "-",
      what: "runAgent as over HTTP, the provider given a transport that returns the pre-generated replies",
      run: eddyLoop({ baseURL: ORIGIN, transport }),
    },
    {
      name: EDDY_OFF,
      version: "-",
      what: "the same with validate: false",
      run: eddyLoop({ baseURL: ORIGIN, transport, validate: false }),
    },
    {
      name: EDDY_JSON_SCHEMA,
      version: "-",
      what: "eddy (validate on) with the noop's parameters as a JSON Schema instead of zod, passed as tools: [noop] (the registry, and so ajv's compile, is rebuilt by every runAgent call)",
      run: eddyLoop({ baseURL: ORIGIN, transport }, [eddyNoopJsonSchema]),
    },
    overMockHandler(log),
    {
      name: EDDY_OTEL,
      version: "-",
      what: "eddy (validate on) with onFrame: createOtelObserverFromApi(@opentelemetry/api) and no tracer provider registered (spans are not recorded; the observer sees every frame)",
      run: eddyLoop({ baseURL: ORIGIN, transport }, [eddyNoop], {
        onFrame: createOtelObserverFromApi(otelApi),
      }),
    },
  ];
  return { contenders, log };
}
