/**
 * One try at a request through an AI SDK model (an `Attempt`, see attempts.ts): `doStream` with the
 * request's call options, then its stream parts one at a time, each framed as a `provider_event`
 * (wire.ts). The timeouts of docs/decisions.md #8 are the HTTP provider's, enforced by the same
 * `Watchdog` through the abort signal the model's fetch takes: connect (until `doStream` returns,
 * which is when the provider has the response headers), first part, idle between parts (paused
 * while a tool runs).
 *
 * Failures come back as steps, never as exceptions: an `APICallError` (the AI SDK's HTTP error) as
 * an `http` error with its status, the provider's error body and `Retry-After` (retryable as the
 * status says, or as the error says); a failed connection as `connection`; the AI SDK refusing the
 * call (`AI_UnsupportedFunctionalityError`, `AI_InvalidPromptError`, …) as `unsupported`.
 */
import type { LanguageModelV3, LanguageModelV3StreamPart } from "@ai-sdk/provider";
import type { ProviderFrame } from "../../frames/frame.js";
import type { JsonObject } from "../../protocol/types.js";
import { onAbort, untilAborted } from "../../util/abort.js";
import { redactSecrets } from "../../util/redact.js";
import type { Attempt, AttemptOpening, AttemptStep } from "../attempts.js";
import { PROVIDER_DEFAULTS } from "../defaults.js";
import { cancelledError, ProviderError, responseTooLarge } from "../errors.js";
import { timeoutError } from "../http-attempt.js";
import { providerErrorFromHttp } from "../http-error.js";
import type { ProviderStreamOptions } from "../provider.js";
import { parseRetryAfter, parseShouldRetry } from "../retry.js";
import { Watchdog, WatchdogFired, type WatchdogLimits } from "../watchdog.js";
import { liveCallOptions } from "./call-options.js";
import type { AiSdkLanguageModel } from "./provider.js";
import { aiSdkFramesFromSse, errorFields, partText } from "./wire.js";

/** What every attempt of an AI SDK provider shares. */
export interface AiSdkAttemptConfig {
  /** Where requests go, for messages (the model's provider and id). */
  label: string;
  limits: WatchdogLimits;
  validate: boolean;
  /** Values never to show in messages. */
  secrets: readonly (string | undefined)[];
  now: () => number;
  /**
   * Largest response read, in characters of its parts as JSON: past it the request fails
   * (`response_too_large`), as over HTTP and WebSocket. @defaultValue `PROVIDER_DEFAULTS.maxResponseBytes`
   */
  maxResponseBytes?: number;
}

export interface AiSdkAttemptOptions {
  config: AiSdkAttemptConfig;
  model: AiSdkLanguageModel;
  /** The call options as JSON (call-options.ts). */
  callOptions: JsonObject;
  turn: number;
  stream: ProviderStreamOptions;
}

/** Opens an attempt (see the module comment). */
export function createAiSdkAttempt(options: AiSdkAttemptOptions): Attempt {
  return new AiSdkAttempt(options);
}

class AiSdkAttempt implements Attempt {
  private readonly controller = new AbortController();
  private readonly watchdog: Watchdog;
  private readonly onUserAbort: () => void;
  /** Ends the subscription to the user's signal (`onAbort`). */
  private unsubscribe: () => void = () => {};
  private reader: ReadableStreamDefaultReader<LanguageModelV3StreamPart> | undefined;
  private started = false;
  private done = false;
  /** Characters of the parts read so far (`maxResponseBytes`). */
  private received = 0;

  constructor(private readonly options: AiSdkAttemptOptions) {
    const { stream, config } = options;
    this.watchdog = new Watchdog(this.controller, config.limits, stream.isBusy ?? (() => false));
    this.onUserAbort = () => this.controller.abort(stream.signal?.reason ?? new Error("aborted"));
  }

  async open(): Promise<AttemptOpening> {
    const userSignal = this.options.stream.signal;
    if (userSignal?.aborted) return { type: "failed", error: cancelledError() };
    if (userSignal !== undefined) this.unsubscribe = onAbort(userSignal, this.onUserAbort);
    this.watchdog.start("connect");
    try {
      const call = liveCallOptions(this.options.callOptions, this.controller.signal);
      // The structural model is a LanguageModelV3 (provider.ts): its call options and stream parts are the spec's.
      const model = this.options.model as unknown as LanguageModelV3;
      const pending = Promise.resolve(
        model.doStream(call as unknown as Parameters<LanguageModelV3["doStream"]>[0]),
      );
      // A model that does not honour the signal is still cut off by a timeout or a cancel.
      const result = await untilAborted(pending, this.controller.signal);
      this.reader = result.stream.getReader();
    } catch (err) {
      return { type: "failed", error: this.failure(err, "connect") };
    }
    this.watchdog.start("first_byte");
    return { type: "opened", headers: undefined };
  }

  async next(): Promise<AttemptStep> {
    const reader = this.reader;
    if (reader === undefined || this.done) return { type: "end", sawDone: false };
    let next: Awaited<ReturnType<ReadableStreamDefaultReader<LanguageModelV3StreamPart>["read"]>>;
    try {
      next = await untilAborted(reader.read(), this.controller.signal);
    } catch (err) {
      const reason: unknown = this.controller.signal.reason;
      if (reason instanceof WatchdogFired && reason.phase === "drain") {
        this.done = true; // the finished stream did not close in time: it simply ended
        return { type: "end", sawDone: false };
      }
      return { type: "failed", error: this.failure(err, "stream") };
    }
    if (next.done) {
      this.done = true;
      return { type: "end", sawDone: false };
    }
    if (!this.started) {
      this.started = true;
      this.watchdog.start("idle");
    } else this.watchdog.touch();
    const frames: ProviderFrame[] = [];
    const options = { turn: this.options.turn, validate: this.options.config.validate };
    const data = partText(next.value);
    // A model's stream is bounded like a socket's (a server streaming gigabytes filled the heap).
    this.received += data.length;
    const max = this.options.config.maxResponseBytes ?? PROVIDER_DEFAULTS.maxResponseBytes;
    if (this.received > max) return { type: "failed", error: responseTooLarge(max) };
    aiSdkFramesFromSse({ data, raw: "" }, options, (f) => frames.push(f));
    return { type: "frames", frames };
  }

  startDrain(): void {
    this.watchdog.start("drain");
  }

  close(): void {
    this.watchdog.stop();
    this.unsubscribe();
    if (this.done) return;
    if (!this.controller.signal.aborted) this.controller.abort(new Error("attempt abandoned"));
    this.reader?.cancel().catch(() => {});
  }

  /** A thrown error as the attempt's failure (see the module comment). */
  private failure(err: unknown, phase: "connect" | "stream"): ProviderError {
    const reason: unknown = this.controller.signal.aborted ? this.controller.signal.reason : undefined;
    if (reason instanceof WatchdogFired) return timeoutError(reason, this.options.config.label, err);
    if (this.options.stream.signal?.aborted) return cancelledError();
    const { config } = this.options;
    const e = err instanceof Error ? (err as Error & Record<string, unknown>) : undefined;
    if (typeof e?.statusCode === "number") return httpFailure(e, config);
    if (e?.name.startsWith("AI_") && e.name !== "AI_APICallError") {
      return new ProviderError({
        kind: "unsupported",
        code: "unsupported_request",
        message: redactSecrets(`the AI SDK refused the call (${e.name}): ${e.message}`, config.secrets),
        retryable: false,
        cause: err,
      });
    }
    const detail = e === undefined ? String(err) : describeCause(e);
    return new ProviderError({
      kind: "connection",
      code: "provider_connection",
      message: redactSecrets(
        phase === "connect"
          ? `cannot reach ${config.label}: ${detail}`
          : `the stream from ${config.label} broke: ${detail}`,
        config.secrets,
      ),
      retryable: e?.isRetryable !== false,
      cause: err,
    });
  }
}

/** An `APICallError`: the HTTP answer the provider package got. */
function httpFailure(e: Error & Record<string, unknown>, config: AiSdkAttemptConfig): ProviderError {
  const headers = new Headers(
    typeof e.responseHeaders === "object" && e.responseHeaders !== null
      ? (e.responseHeaders as Record<string, string>)
      : {},
  );
  const body = typeof e.responseBody === "string" ? e.responseBody : JSON.stringify(errorFields(e));
  return providerErrorFromHttp({
    status: e.statusCode as number,
    bodyText: body,
    url: typeof e.url === "string" ? e.url : config.label,
    requestId: headers.get("x-request-id") ?? headers.get("request-id") ?? undefined,
    retryAfterMs: parseRetryAfter(headers, config.now()),
    shouldRetry:
      parseShouldRetry(headers) ?? (typeof e.isRetryable === "boolean" ? e.isRetryable : undefined),
    secrets: config.secrets,
  });
}

/** An error's message with its cause's (a fetch failure says why in `cause`). */
function describeCause(e: Error): string {
  const cause = (e as { cause?: unknown }).cause;
  const code = (cause as { code?: unknown } | undefined)?.code;
  const inner = cause instanceof Error ? cause.message : undefined;
  const parts = [e.message, typeof code === "string" ? code : undefined, inner].filter(
    (p, i, all): p is string => p !== undefined && p !== "" && all.indexOf(p) === i,
  );
  return parts.join(": ");
}
