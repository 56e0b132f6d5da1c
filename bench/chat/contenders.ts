/**
 * The contenders of the chat benchmark.
 *
 * Per event (HTTP to the replay server): the floor reading the chat stream, eddy's Chat
 * Completions provider (validation on and off), eddy's Open Responses provider on the same content
 * as a Responses stream, and the AI SDK's openai-compatible chat model (`doStream`, the provider
 * level, as eddy's `provider.stream`).
 *
 * Per turn (in-process, no socket): one agent turn (2 requests + 1 tool call) over pre-generated
 * chat chunks: a hand-written chat loop, `runAgent` over the Chat Completions provider, `runAgent`
 * over the Responses provider on the Responses version of the turn, and the AI SDK's `streamText`
 * with a tool and `stopWhen: stepCountIs(2)`.
 */
import { tmpdir } from "node:os";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { stepCountIs, streamText, tool } from "ai";
import { z } from "zod";
import type * as RunModule from "../../src/loop/run.js";
import type * as ChatProviderModule from "../../src/provider/chat-completions/provider.js";
import type * as OpenResponsesModule from "../../src/provider/open-responses.js";
import type { Transport } from "../../src/provider/transport.js";
import { importBuilt } from "../built.js";
import { EDDY_ON, eddyNoop, type LoopContender, noopLog } from "../loop/contenders.js";
import { chunksOf, inProcessContenders, memoryTransport } from "../loop/in-process.js";
import { PROMPT } from "../loop/responses.js";
import type { Assembled, Observer, ProviderContender } from "../provider/contenders.js";
import { packageVersion } from "../provider/contenders.js";
import { fetchPoster, floorParser, type Poster } from "../provider/floor.js";
import type { Reply } from "../provider/responder.js";
import {
  chatAnswerReply,
  chatCallReply,
  floorChatAssembler,
  followUpMessages,
  MODEL,
  NOOP_CHAT_TOOL,
} from "./streams.js";

// eddy from its build, as users run it (bench/built.ts), typed by its sources.
const { runAgent } = await importBuilt<typeof RunModule>("loop/run.js");
const { createChatCompletionsProvider } = await importBuilt<typeof ChatProviderModule>(
  "provider/chat-completions/provider.js",
);
const { createOpenResponsesProvider } = await importBuilt<typeof OpenResponsesModule>(
  "provider/open-responses.js",
);

export const FLOOR_CHAT = "floor-chat";
export const EDDY_CHAT_ON = "eddy chat (validate on)";
export const EDDY_CHAT_OFF = "eddy chat (validate off)";
export const EDDY_RESPONSES = "eddy responses (validate on)";
export const AI_SDK = "ai-sdk openai-compatible";

/** The key of the Responses stream with the same content as chat stream `key`. */
export const responsesKey = (key: string) => `responses-${key}`;

function floorChat(post: Poster) {
  return async (key: string, observe?: Observer): Promise<Assembled> => {
    const { sink, response } = floorChatAssembler();
    const feed = floorParser(
      observe === undefined
        ? sink
        : (c) => {
            observe(c);
            sink(c);
          },
    );
    await post(
      JSON.stringify({ model: key, messages: [{ role: "user", content: "go" }], stream: true }),
      feed,
    );
    return { text: response.text, arguments: response.calls[0]?.arguments };
  };
}

function eddyChat(origin: string, validate: boolean) {
  const provider = createChatCompletionsProvider({ baseURL: origin, retry: { maxRetries: 0 }, validate });
  return async (key: string, observe?: Observer): Promise<Assembled> => {
    const stream = provider.stream({ body: { model: key, input: "go", stream: true }, turn: 0 });
    if (observe === undefined) for await (const _ of stream);
    else for await (const frame of stream) observe(frame);
    const outcome = await stream.result;
    if (!outcome.ok) throw outcome.error;
    return { text: outcome.response.outputText, arguments: outcome.response.calls[0]?.arguments };
  };
}

function eddyResponses(origin: string) {
  const provider = createOpenResponsesProvider({ baseURL: origin, retry: { maxRetries: 0 } });
  return async (key: string, observe?: Observer): Promise<Assembled> => {
    const stream = provider.stream({
      body: { model: responsesKey(key), input: "go", stream: true },
      turn: 0,
    });
    if (observe === undefined) for await (const _ of stream);
    else for await (const frame of stream) observe(frame);
    const outcome = await stream.result;
    if (!outcome.ok) throw outcome.error;
    return { text: outcome.response.outputText, arguments: outcome.response.calls[0]?.arguments };
  };
}

function aiSdkDoStream(origin: string) {
  const provider = createOpenAICompatible({ name: "bench", baseURL: `${origin}/v1`, includeUsage: true });
  return async (key: string, observe?: Observer): Promise<Assembled> => {
    const { stream } = await provider.chatModel(key).doStream({
      prompt: [{ role: "user", content: [{ type: "text", text: "go" }] }],
      includeRawChunks: observe !== undefined,
    });
    const reader = stream.getReader();
    let text = "";
    let args: string | undefined;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (value.type === "raw") observe?.(value.rawValue);
      else if (value.type === "text-delta") text += value.delta;
      else if (value.type === "tool-call") args = value.input;
      else if (value.type === "error") throw value.error;
    }
    return { text, arguments: args };
  };
}

/** The per-event contenders over HTTP to the replay server at `origin`. */
export function chatEventContenders(origin: string): ProviderContender[] {
  return [
    {
      name: FLOOR_CHAT,
      version: "-",
      transport: "fetch",
      what: "global fetch + the floor parser (bench/provider/floor.ts) + the least chat assembly: text from content deltas, call arguments concatenated by index",
      request: floorChat(fetchPoster(`${origin}/v1/chat/completions`)),
    },
    {
      name: EDDY_CHAT_ON,
      version: "-",
      transport: "node:http",
      what: "createChatCompletionsProvider({baseURL}) (default node:http transport): every chunk a provider_event (light shape check), translated to Open Responses events, assembled; every frame iterated, result awaited",
      request: eddyChat(origin, true),
    },
    {
      name: EDDY_CHAT_OFF,
      version: "-",
      transport: "node:http",
      what: "the same with validate: false",
      request: eddyChat(origin, false),
    },
    {
      name: EDDY_RESPONSES,
      version: "-",
      transport: "node:http",
      what: "createOpenResponsesProvider({baseURL}) on the same content as an Open Responses stream (more events per delta: the .done events and full snapshots), schema validation on",
      request: eddyResponses(origin),
    },
    {
      name: AI_SDK,
      version: `${packageVersion("@ai-sdk/openai-compatible")} (ai ${packageVersion("ai")})`,
      transport: "fetch",
      what: "createOpenAICompatible({baseURL}).chatModel(key).doStream({prompt}) read to its end: text-delta parts, the tool-call part's input (the provider level, like eddy's provider.stream)",
      request: aiSdkDoStream(origin),
    },
  ];
}

// ── per turn, in-process ────────────────────────────────────────────────────────────────────

const ORIGIN = "http://in-process.invalid";

/** Picks the chat reply by a cheap look at the request body: a tool message means the follow-up. */
function chatReplies(): (body: string) => Reply {
  const call = chatCallReply();
  const answer = chatAnswerReply();
  return (body) => (body.includes('"role":"tool"') ? answer : call);
}

/** A fetch answering from the pre-generated chunks, one per pull (each behind an await, like a socket read). */
function memoryFetch(pick: (body: string) => Reply): typeof fetch {
  return async (_url, init) => {
    const chunks = pick(String(init?.body)).chunks;
    let i = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        const chunk = chunks[i++];
        if (chunk === undefined) controller.close();
        else controller.enqueue(chunk);
      },
    });
    return new Response(body, { status: 200, headers: { "content-type": "text/event-stream" } });
  };
}

function noop(args: unknown): string {
  if (noopLog.recording) noopLog.calls.push(args);
  return "ok";
}

function floorChatLoop(pick: (body: string) => Reply) {
  const post: Poster = async (body, onChunk) => {
    for await (const chunk of chunksOf(pick(body).chunks)) onChunk(chunk);
  };
  return async (onDelta: (delta: string) => void): Promise<string> => {
    const first = floorChatAssembler();
    await post(
      JSON.stringify({
        model: MODEL,
        messages: [{ role: "user", content: PROMPT }],
        tools: [NOOP_CHAT_TOOL],
        stream: true,
      }),
      floorParser(first.sink),
    );
    const call = first.response.calls[0];
    if (call === undefined) throw new Error("floor-chat-loop: response #1 has no tool call");
    const output = noop(JSON.parse(call.arguments));
    const second = floorChatAssembler(onDelta);
    await post(
      JSON.stringify({
        model: MODEL,
        messages: followUpMessages(PROMPT, output),
        tools: [NOOP_CHAT_TOOL],
        stream: true,
      }),
      floorParser(second.sink),
    );
    return second.response.text;
  };
}

function eddyChatLoop(transport: Transport, validate: boolean) {
  const provider = createChatCompletionsProvider({ baseURL: ORIGIN, transport, validate });
  const workspace = tmpdir();
  return async (onDelta: (delta: string) => void): Promise<string> => {
    const handle = runAgent({ model: MODEL, input: PROMPT }, { provider, tools: [eddyNoop], workspace });
    for await (const frame of handle) if (frame.type === "output_text_delta") onDelta(frame.delta);
    const result = await handle.result;
    if (result.reason !== "completed") throw new Error(`eddy chat: run ended ${result.reason}`);
    return result.outputText;
  };
}

function aiSdkLoop(fetchImpl: typeof fetch) {
  const provider = createOpenAICompatible({
    name: "bench",
    baseURL: `${ORIGIN}/v1`,
    includeUsage: true,
    fetch: fetchImpl,
  });
  const tools = {
    noop: tool({
      description: "Does nothing and answers ok.",
      inputSchema: z.object({ n: z.number() }),
      execute: async (args) => noop(args),
    }),
  };
  return async (onDelta: (delta: string) => void): Promise<string> => {
    const result = streamText({
      model: provider.chatModel(MODEL),
      prompt: PROMPT,
      tools,
      stopWhen: stepCountIs(2),
    });
    for await (const delta of result.textStream) onDelta(delta);
    return await result.text;
  };
}

/** The per-turn contenders, in-process. */
export function chatTurnContenders(): LoopContender[] {
  const pick = chatReplies();
  const transport = memoryTransport(pick);
  const responses = inProcessContenders().contenders.find((c) => c.name === EDDY_ON);
  if (responses === undefined) throw new Error("no in-process eddy contender");
  return [
    {
      name: FLOOR_CHAT,
      version: "-",
      what: "hand-written chat loop: the floor parser and chat assembly over the in-memory chunks; the call from its fragments; JSON.stringify of both requests (the follow-up with the assistant tool_calls and the tool message)",
      run: floorChatLoop(pick),
    },
    {
      name: EDDY_CHAT_ON,
      version: "-",
      what: "runAgent({  }, { provider: createChatCompletionsProvider({baseURL, transport}), tools: [noop (zod)] }) (stateless: the follow-up resends the history), every frame consumed, result awaited",
      run: eddyChatLoop(transport, true),
    },
    {
      name: EDDY_CHAT_OFF,
      version: "-",
      what: "the same with validate: false",
      run: eddyChatLoop(transport, false),
    },
    {
      name: EDDY_RESPONSES,
      version: "-",
      what: "runAgent over createOpenResponsesProvider on the same turn as Open Responses events (bench/loop's in-process eddy row: chained, validation on)",
      run: responses.run,
    },
    {
      name: AI_SDK,
      version: `${packageVersion("@ai-sdk/openai-compatible")} (ai ${packageVersion("ai")})`,
      what: "streamText({model: createOpenAICompatible({fetch}).chatModel(m), tools: {noop: tool({inputSchema: zod})}, stopWhen: stepCountIs(2)}); textStream consumed, text awaited; fetch answers from the same in-memory chunks",
      run: aiSdkLoop(memoryFetch(pick)),
    },
  ];
}
