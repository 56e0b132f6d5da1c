/**
 * The contenders of the provider benchmark: each POSTs to the replay server, reads the streamed
 * body to its end and returns the assembled response (message text and function-call arguments).
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import OpenAI from "openai";
import type { Frame } from "../../src/frames/frame.js";
import type * as OpenResponsesModule from "../../src/provider/open-responses.js";
import { importBuilt } from "../built.js";
import { fetchPoster, floorAssembler, floorParser, nodeHttpPoster, type Poster } from "./floor.js";

// eddy from its build, as users run it (bench/built.ts), typed by its sources.
const { createOpenResponsesProvider } = await importBuilt<typeof OpenResponsesModule>(
  "provider/open-responses.js",
);

/** What every contender hands back: the response as assembled. */
export interface Assembled {
  text: string;
  arguments: string | undefined;
}

/** Sees every item a contender delivers (an event, or eddy's frame), for the correctness check. */
export type Observer = (item: unknown) => void;

export interface ProviderContender {
  name: string;
  /** Package version, or "-" for code of this repo. */
  version: string;
  transport: "fetch" | "node:http";
  /** What it does, in one line. */
  what: string;
  /** Requests the stream named `key` (the request's `model`) and assembles it. */
  request: (key: string, observe?: Observer) => Promise<Assembled>;
}

export const FLOOR_HTTP = "floor-http";
export const FLOOR_NODE = "floor node:http";
export const EDDY_ON = "eddy (validate on)";
export const EDDY_OFF = "eddy (validate off)";
export const EDDY_FETCH = "eddy fetch (validate on)";
export const OPENAI_STREAM = "openai responses.stream";
export const OPENAI_CREATE = "openai responses.create";

function floor(post: Poster) {
  return async (key: string, observe?: Observer): Promise<Assembled> => {
    const { sink, response } = floorAssembler();
    const feed = floorParser(
      observe === undefined
        ? sink
        : (event) => {
            observe(event);
            sink(event);
          },
    );
    await post(JSON.stringify({ model: key, input: "go", stream: true }), feed);
    return { text: response.text, arguments: response.calls[0]?.arguments };
  };
}

function eddy(baseURL: string, options: { validate: boolean; fetch?: typeof fetch }) {
  const provider = createOpenResponsesProvider({ baseURL, retry: { maxRetries: 0 }, ...options });
  return async (key: string, observe?: Observer): Promise<Assembled> => {
    const stream = provider.stream({ body: { model: key, input: "go", stream: true }, turn: 0 });
    if (observe === undefined) for await (const _ of stream);
    else for await (const frame of stream) observe(frame);
    const outcome = await stream.result;
    if (!outcome.ok) throw outcome.error;
    return { text: outcome.response.outputText, arguments: outcome.response.calls[0]?.arguments };
  };
}

function openaiClient(origin: string): OpenAI {
  return new OpenAI({ baseURL: `${origin}/v1`, apiKey: "bench", maxRetries: 0 });
}

function callArguments(output: readonly { type: string }[]): string | undefined {
  const call = output.find((item) => item.type === "function_call") as { arguments: string } | undefined;
  return call?.arguments;
}

function openaiStream(origin: string) {
  const client = openaiClient(origin);
  return async (key: string, observe?: Observer): Promise<Assembled> => {
    const stream = client.responses.stream({ model: key, input: "go" });
    if (observe === undefined) for await (const _ of stream);
    else for await (const event of stream) observe(event);
    const final = await stream.finalResponse();
    return { text: final.output_text, arguments: callArguments(final.output) };
  };
}

function openaiCreate(origin: string) {
  const client = openaiClient(origin);
  return async (key: string, observe?: Observer): Promise<Assembled> => {
    const stream = await client.responses.create({ model: key, input: "go", stream: true });
    let text = "";
    let args: string | undefined;
    for await (const event of stream) {
      observe?.(event);
      if (event.type === "response.output_text.delta") text += event.delta;
      else if (event.type === "response.completed") args = callArguments(event.response.output);
    }
    return { text, arguments: args };
  };
}

/** The installed version of a package (found from its resolved entry point). */
export function packageVersion(name: string): string {
  const require = createRequire(import.meta.url);
  const entry = require.resolve(name);
  const marker = `/node_modules/${name}/`;
  const root = entry.slice(0, entry.lastIndexOf(marker) + marker.length);
  return (JSON.parse(readFileSync(`${root}package.json`, "utf8")) as { version: string }).version;
}

export function providerContenders(origin: string): ProviderContender[] {
  const url = `${origin}/v1/responses`;
  const openai = packageVersion("openai");
  return [
    {
      name: FLOOR_HTTP,
      version: "-",
      transport: "fetch",
      what: 'global fetch + the floor parser (streaming TextDecoder + indexOf("\\n\\n") + JSON.parse); text from the deltas, the call from response.completed',
      request: floor(fetchPoster(url)),
    },
    {
      name: FLOOR_NODE,
      version: "-",
      transport: "node:http",
      what: "the same over node:http with a keep-alive Agent ('data' events): what the transport alone costs",
      request: floor(nodeHttpPoster(url)),
    },
    {
      name: EDDY_ON,
      version: "-",
      transport: "node:http",
      what: "createOpenResponsesProvider({baseURL}) (default node:http keep-alive transport, validation on): iterate every frame, await stream.result → outputText, calls",
      request: eddy(origin, { validate: true }),
    },
    {
      name: EDDY_OFF,
      version: "-",
      transport: "node:http",
      what: "the same with validate: false",
      request: eddy(origin, { validate: false }),
    },
    {
      name: EDDY_FETCH,
      version: "-",
      transport: "fetch",
      what: "the default provider with fetch: globalThis.fetch (fetchTransport), validation on",
      request: eddy(origin, { validate: true, fetch: globalThis.fetch }),
    },
    {
      name: OPENAI_STREAM,
      version: openai,
      transport: "fetch",
      what: "client.responses.stream({model, input}) iterated with for-await, then finalResponse() → output_text, the function_call",
      request: openaiStream(origin),
    },
    {
      name: OPENAI_CREATE,
      version: openai,
      transport: "fetch",
      what: "client.responses.create({stream: true}) iterated; text from the deltas, the call from response.completed",
      request: openaiCreate(origin),
    },
  ];
}

/** True for one of eddy's frames (the correctness check reads their validation errors). */
export function isFrame(item: unknown): item is Frame {
  return typeof item === "object" && item !== null && "seq" in item && "run_id" in item;
}
