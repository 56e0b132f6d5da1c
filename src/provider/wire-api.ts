/**
 * The APIs eddy speaks to providers, and what a replay or a fallback chain needs to know of
 * one to reproduce its frames: how an SSE message becomes frames, how events become Open
 * Responses events (a translator, for APIs whose events are not), and what body was really sent.
 * Everything above the provider layer looks an API up here by name; nothing else of the provider
 * implementations is imported.
 */
import type { SseFrameMapping } from "../frames/frame-decoder.js";
import { framesFromSse } from "../frames/from-sse.js";
import type { CreateResponseBody, JsonObject, Usage } from "../protocol/types.js";
import { type AiSdkCallSettings, toCallOptions } from "./ai-sdk/call-options.js";
import { createAiSdkTranslator } from "./ai-sdk/translator.js";
import { aiSdkFramesFromSse } from "./ai-sdk/wire.js";
import type { ApiName } from "./api-names.js";
import type { EventTranslator } from "./assembling-stream.js";
import { type ChatDialect, chatDialect } from "./chat-completions/dialect.js";
import { toChatRequest } from "./chat-completions/request.js";
import { createChatTranslator } from "./chat-completions/translator.js";
import { chatFramesFromSse } from "./chat-completions/wire.js";
import type { ProviderRequest } from "./provider.js";

export { API_NAMES, type ApiName, STREAM_TRANSPORTS, type StreamTransport } from "./api-names.js";

/** Which API a provider speaks, with the settings that shape what it sends (tapes record it). */
export interface WireApi {
  api: ApiName;
  /** The request settings of a Chat Completions server (api `chat-completions` only). */
  chat?: ChatDialect;
  /** The adapter settings that shape an AI SDK model's call options (api `ai-sdk` only). */
  aiSdk?: AiSdkCallSettings;
  /**
   * A fallback chain's later candidates, in order, when they do not all speak Open Responses: a
   * replay follows the chain's `fallback:<name>` retries from one to the next. @defaultValue none
   */
  fallbacks?: WireApi[];
}

/** The APIs of a provider and its fallback candidates, in the order a request tries them. */
export function wireChain(wire: WireApi | undefined): WireApi[] {
  if (wire === undefined) return [{ api: "responses" }];
  const { fallbacks, ...first } = wire;
  return [first, ...(fallbacks ?? [])];
}

/**
 * The wire of a chain of providers: undefined when every one speaks Open Responses (the default),
 * else the first's with the others as `fallbacks`.
 */
export function chainWire(wires: readonly (WireApi | undefined)[]): WireApi | undefined {
  const all = wires.map((w) => w ?? { api: "responses" as const });
  if (all.every((w) => w.api === "responses" && w.fallbacks === undefined)) return undefined;
  const [first, ...rest] = all;
  return rest.length === 0 ? first : { ...(first as WireApi), fallbacks: rest };
}

/** How a provider's recorded frames are reproduced (see the module comment). */
export interface WireCodec {
  /** One SSE message → its frames, as the live decoder maps it. */
  readonly framesFromSse: SseFrameMapping;
  /**
   * A fresh translator per attempt, for APIs whose events are not Open Responses events; a replay
   * gives the usage the recorded attempt estimated (`createChatTranslator`).
   */
  readonly createTranslator:
    | ((request: ProviderRequest, recordedUsage?: Usage) => EventTranslator)
    | undefined;
  /**
   * The body the API is really sent for an Open Responses body (`request_started.wire_body`);
   * throws a `ProviderError` of kind `unsupported` when the request cannot be expressed.
   */
  readonly wireBody: ((body: CreateResponseBody) => JsonObject) | undefined;
}

const RESPONSES_CODEC: WireCodec = {
  framesFromSse,
  createTranslator: undefined,
  wireBody: undefined,
};

/** The codec of `wire` (Open Responses when it is undefined). */
export function wireCodec(wire: WireApi | undefined): WireCodec {
  if (wire === undefined || wire.api === "responses") return RESPONSES_CODEC;
  if (wire.api === "ai-sdk") {
    const settings = wire.aiSdk ?? {};
    return {
      framesFromSse: aiSdkFramesFromSse,
      createTranslator: createAiSdkTranslator,
      wireBody: (body) => toCallOptions(body, settings),
    };
  }
  const dialect = chatDialect(wire.chat);
  return {
    framesFromSse: chatFramesFromSse,
    createTranslator: createChatTranslator,
    wireBody: (body) => toChatRequest(body, dialect),
  };
}
