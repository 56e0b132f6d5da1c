/**
 * Any AI SDK language model as an eddy provider: a `LanguageModelV3` (`@ai-sdk/provider` 3, the
 * contract every AI SDK 6 provider package implements — Anthropic, Google, Bedrock, Mistral, Ollama
 * community providers, OpenAI-compatible servers) behind the same `Provider` contract as the Open
 * Responses and Chat Completions providers, on the one assembling stream
 * (docs/architecture.md, "The provider contract"):
 *
 * - requests: the Open Responses body the loop built → the model's call options (call-options.ts,
 *   prompt.ts), recorded as `request_started.wire_body`; always stateless — the history, rendered
 *   by the run's `ToolHistoryManager`, is the prompt;
 * - responses: every stream part kept verbatim in a `provider_event` (wire.ts; with the provider's
 *   raw chunks too), translated to Open Responses events for the assembler (translator.ts), so the
 *   derived frames (`output_text_delta`, calls, usage, the terminal status) are those of a
 *   Responses stream, and a replay re-derives them from the tape alone (`wire: {api: "ai-sdk"}`);
 * - attempts, retries with backoff and `Retry-After`, timeouts and cancellation as for HTTP
 *   providers (attempt.ts, attempts.ts).
 *
 * The AI SDK packages are not dependencies of eddy: this module uses `@ai-sdk/provider`'s types
 * only, and the caller passes the model.
 */
import { EddyError } from "../../errors.js";
import type { JsonObject } from "../../protocol/types.js";
import { abortableSleep } from "../../util/abort.js";
import { createAssemblingStream } from "../assembling-stream.js";
import { retryingSource } from "../attempts.js";
import { type ProviderCapabilities, withCapabilities } from "../capabilities.js";
import { PROVIDER_DEFAULTS } from "../defaults.js";
import { ProviderError } from "../errors.js";
import type { Provider } from "../provider.js";
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from "../retry.js";
import type { WatchdogLimits } from "../watchdog.js";
import type { WireApi } from "../wire-api.js";
import { createAiSdkAttempt } from "./attempt.js";
import { type AiSdkCallSettings, toCallOptions } from "./call-options.js";
import { unsupported } from "./prompt.js";
import { createAiSdkTranslator } from "./translator.js";

/**
 * An AI SDK language model, as this adapter uses it: the `LanguageModelV3` contract of
 * `@ai-sdk/provider` 3 (AI SDK 6), written out structurally so eddy's types do not need that
 * package. Every model an AI SDK 6 provider package makes fits it; the adapter calls `doStream`
 * with `LanguageModelV3CallOptions` and reads `LanguageModelV3StreamPart`s.
 */
export interface AiSdkLanguageModel {
  readonly specificationVersion: "v3";
  /** The provider's name, e.g. `anthropic.messages`. */
  readonly provider: string;
  readonly modelId: string;
  /** Streams one call: the AI SDK's `doStream(options)`. */
  doStream(options: unknown): PromiseLike<{ stream: ReadableStream<unknown> }>;
}

/** A model, or a function that gives the model for a request's `model` (e.g. an AI SDK provider's `languageModel`). */
export type AiSdkModelSource = AiSdkLanguageModel | ((modelId: string) => AiSdkLanguageModel);

/** Options of `createAiSdkProvider`. */
export interface AiSdkProviderOptions extends AiSdkCallSettings {
  /**
   * The AI SDK language model (`anthropic("claude-sonnet-4-5")`), or a function from the request's
   * `model` to one (`anthropic.languageModel`), so the run's model name picks it.
   */
  model: AiSdkModelSource;
  /** Name for frames, tapes and messages. @defaultValue the model's `provider` (e.g. "anthropic.messages") */
  name?: string;
  /** Capabilities beyond the stateless ones the adapter fixes (see `aiSdkCapabilities`). @defaultValue none */
  capabilities?: Partial<ProviderCapabilities>;
  /** @defaultValue DEFAULT_RETRY_POLICY (2 retries) */
  retry?: Partial<RetryPolicy>;
  /** Timeouts in ms: `connectMs` until the model's stream opens, `firstByteMs` until its first part, `idleMs` between parts. @defaultValue PROVIDER_DEFAULTS */
  timeouts?: Partial<WatchdogLimits>;
  /** Check each stream part's shape and record problems in `provider_event.errors`. @defaultValue true */
  validate?: boolean;
  /**
   * Largest response read, in characters of its parts as JSON; past it the request fails
   * `response_too_large`, as over HTTP. @defaultValue `PROVIDER_DEFAULTS.maxResponseBytes` (64 MiB)
   */
  maxResponseBytes?: number;
  /**
   * Values that must never be shown or recorded (the key the model's provider was made with): every
   * frame of a run masks them. @defaultValue none
   */
  secrets?: readonly string[];
  /** Jitter source in [0, 1) for retry delays. @defaultValue Math.random */
  random?: () => number;
  /** Waits between retries. @defaultValue setTimeout, cancelled by the request's signal */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Clock for `Retry-After` dates (unix ms). @defaultValue Date.now */
  now?: () => number;
}

/**
 * What no AI SDK model can do through this adapter, whatever the options say: chain on a stored
 * response, return encrypted reasoning, take `max_tool_calls` or `parallel_tool_calls` (provider
 * options, not call options), keep item ids, compact on the server, or take OpenAI's native tools.
 */
const STATELESS: Partial<ProviderCapabilities> = {
  previousResponseId: false,
  encryptedReasoning: false,
  maxToolCalls: false,
  parallelToolCalls: false,
  keepItemIds: false,
  compaction: false,
  nativeTools: false,
};

/**
 * The capabilities of an AI SDK model: `overrides` within what the adapter allows. Native tool
 * history is on (the prompt has tool-call and tool-result parts); set `nativeToolHistory: false`
 * for a model that takes none, and the run's history manager embeds calls as text.
 */
export function aiSdkCapabilities(overrides: Partial<ProviderCapabilities> = {}): ProviderCapabilities {
  return withCapabilities({ strictTools: false, ...overrides, ...STATELESS });
}

/**
 * A provider for any AI SDK language model.
 *
 * @example
 * ```ts
 * import { createAnthropic } from "@ai-sdk/anthropic";
 * import { runAgent } from "eddy";
 * import { createAiSdkProvider } from "eddy/ai-sdk";
 *
 * const anthropic = createAnthropic({ apiKey: process.env.ANTHROPIC_API_KEY });
 * const provider = createAiSdkProvider({ model: anthropic.languageModel });
 * const run = runAgent({ model: "claude-sonnet-4-5", input: "What is in package.json?" }, { provider, tools });
 * ```
 */
export function createAiSdkProvider(options: AiSdkProviderOptions): Provider {
  const fixed = typeof options.model === "function" ? undefined : checkModel(options.model);
  const settings: AiSdkCallSettings = {};
  if (options.providerOptions !== undefined) settings.providerOptions = options.providerOptions;
  settings.includeRawChunks = options.includeRawChunks ?? true;
  const retry = { ...DEFAULT_RETRY_POLICY, ...options.retry };
  const limits: WatchdogLimits = {
    connectMs: options.timeouts?.connectMs ?? PROVIDER_DEFAULTS.connectTimeoutMs,
    firstByteMs: options.timeouts?.firstByteMs ?? PROVIDER_DEFAULTS.firstByteTimeoutMs,
    idleMs: options.timeouts?.idleMs ?? PROVIDER_DEFAULTS.idleTimeoutMs,
    drainMs: options.timeouts?.drainMs ?? PROVIDER_DEFAULTS.drainTimeoutMs,
  };
  const wire: WireApi = { api: "ai-sdk", aiSdk: settings };
  return {
    name: options.name ?? fixed?.provider ?? "ai-sdk",
    capabilities: aiSdkCapabilities(options.capabilities),
    secrets: [...(options.secrets ?? [])],
    wire,
    stream(request, streamOptions = {}) {
      let callOptions: JsonObject | undefined;
      let model: AiSdkLanguageModel | undefined;
      let refused: ProviderError | undefined;
      try {
        callOptions = toCallOptions(request.body, settings);
        model = fixed ?? resolveModel(options.model, request.body.model);
      } catch (err) {
        if (!(err instanceof ProviderError)) throw err;
        refused = err;
      }
      const config = {
        label: model === undefined ? "the AI SDK model" : `${model.provider} model ${model.modelId}`,
        limits,
        validate: options.validate ?? PROVIDER_DEFAULTS.validate,
        secrets: options.secrets ?? [],
        now: options.now ?? Date.now,
        maxResponseBytes: options.maxResponseBytes ?? PROVIDER_DEFAULTS.maxResponseBytes,
      };
      const source = retryingSource({
        retry,
        random: options.random ?? Math.random,
        sleep: options.sleep ?? abortableSleep,
        ...(callOptions === undefined ? {} : { wireBody: callOptions }),
        openAttempt: () =>
          refused !== undefined || model === undefined || callOptions === undefined
            ? refusedAttempt(refused ?? unsupported("no model"))
            : createAiSdkAttempt({ config, model, callOptions, turn: request.turn, stream: streamOptions }),
      });
      return createAssemblingStream({
        request,
        options: streamOptions,
        source,
        translator: () => createAiSdkTranslator(request),
      });
    },
  };
}

/** The model a function gives for `modelId` (a request must name one); failures are `unsupported` errors. */
function resolveModel(source: AiSdkModelSource, modelId: string | null | undefined): AiSdkLanguageModel {
  if (typeof source !== "function") return source;
  if (typeof modelId !== "string" || modelId === "")
    throw unsupported("the request names no model, and the AI SDK provider needs a model id");
  let model: AiSdkLanguageModel;
  try {
    model = source(modelId);
  } catch (err) {
    throw unsupported(
      `the AI SDK provider has no model "${modelId}": ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  const problem = modelProblem(model);
  if (problem !== undefined) throw unsupported(problem);
  return model;
}

/** The model, if it implements the contract this adapter speaks (LanguageModelV3); else a user error. */
function checkModel(model: AiSdkLanguageModel): AiSdkLanguageModel {
  const problem = modelProblem(model);
  if (problem === undefined) return model;
  throw new EddyError("invalid_config", problem, { fault: "user" });
}

/** Why `model` is not a LanguageModelV3, if it is not. */
function modelProblem(model: unknown): string | undefined {
  const version = (model as { specificationVersion?: unknown } | undefined)?.specificationVersion;
  if (version === "v3" && typeof (model as { doStream?: unknown }).doStream === "function") return undefined;
  return `eddy/ai-sdk takes AI SDK language models of specification v3 (AI SDK 6, @ai-sdk/provider 3); this model's is ${JSON.stringify(version ?? null)}: install a provider package made for AI SDK 6`;
}

/** An attempt that fails before anything is sent (a request the adapter cannot express). */
function refusedAttempt(error: ProviderError) {
  return {
    open: async () => ({ type: "failed" as const, error }),
    next: async () => ({ type: "failed" as const, error }),
    startDrain: () => {},
    close: () => {},
  };
}
