/**
 * What every probe works with: the target, the providers it sends through (made once, lazily, with
 * no retries and timeouts bounded by the probe's own), the probe's signal, the results so far, and
 * the small pieces every probe body shares.
 */
import type { JsonObject } from "../../protocol/types.js";
import { type ProviderCapabilities, withCapabilities } from "../capabilities.js";
import { createHttpProvider } from "../profiles.js";
import type { Provider } from "../provider.js";
import type { ApiName } from "../wire-api.js";
import type { Failure } from "./exchange.js";
import type { ProbeName, ProbeResult, ProbeStatus, ProbeTarget, RenderToolResult } from "./types.js";

/** The providers a probe may send through: the run's API over SSE, WebSocket mode, Chat Completions. */
export type ProbeChannel = "main" | "websocket" | "chat-completions";

/** A probe's verdict before it is timed. */
export type Verdict = Omit<ProbeResult, "ms">;

/** What a probe is given. */
export interface ProbeContext {
  readonly target: ProbeTarget;
  readonly api: ApiName;
  /** Aborts when the run of probes is cancelled or this probe's time is up. */
  readonly signal: AbortSignal;
  /** This probe's time limit, in milliseconds (for messages). */
  readonly timeoutMs: number;
  readonly maxOutputTokens: number;
  /** What the target is assumed to support where no probe has said (the profile's capabilities). */
  readonly capabilities: ProviderCapabilities;
  /** The results of the probes that ran before. */
  readonly results: ReadonlyMap<ProbeName, ProbeResult>;
  /** The text form of a tool's output, for the tool round trip's last resort; none: not tried. */
  readonly renderToolResult: RenderToolResult | undefined;
  provider(channel: ProbeChannel): Provider;
}

/** Makes each channel's provider once; `close` releases them (WebSocket connections). */
export class ProbeProviders {
  private readonly made = new Map<ProbeChannel, Provider>();

  constructor(
    private readonly target: ProbeTarget,
    private readonly timeoutMs: number,
  ) {}

  get(channel: ProbeChannel): Provider {
    let provider = this.made.get(channel);
    if (provider === undefined) {
      provider = this.create(channel);
      this.made.set(channel, provider);
    }
    return provider;
  }

  /** Every secret the providers send (to mask in the results). */
  get secrets(): string[] {
    return [...this.made.values()].flatMap((p) => [...(p.secrets ?? [])]);
  }

  async close(): Promise<void> {
    await Promise.all([...this.made.values()].map((p) => p.close?.()));
  }

  private create(channel: ProbeChannel): Provider {
    const t = this.timeoutMs;
    // Probes report what they see: no retries, and no transport wait longer than the probe's.
    const options = {
      ...this.target.endpoint,
      retry: { maxRetries: 0 },
      timeouts: { connectMs: t, firstByteMs: t, idleMs: t, drainMs: Math.min(t, 2_000) },
    };
    if (channel === "chat-completions") return createHttpProvider("chat-completions", options);
    const api = this.target.api ?? "responses";
    if (channel === "websocket")
      return createHttpProvider("responses", { ...options, streamTransport: "websocket" });
    const { streamTransport: _run, ...sse } = options;
    return createHttpProvider(api, sse);
  }
}

/** The fields every probe request starts with: the model (unless the server picks it) and the token cap. */
export function baseBody(ctx: ProbeContext): JsonObject {
  return {
    ...(ctx.target.model === null ? {} : { model: ctx.target.model }),
    max_output_tokens: ctx.maxOutputTokens,
  };
}

/** A verdict. */
export function verdict(name: ProbeName, status: ProbeStatus, detail: string, hint?: string): Verdict {
  return hint === undefined ? { name, status, detail } : { name, status, detail, hint };
}

/**
 * The verdict of a request that failed in a way that says nothing about the feature (a timeout, a
 * refused connection, a 5xx): `failed`, with a hint to look at the server or try again.
 */
export function inconclusive(ctx: ProbeContext, name: ProbeName, failure: Failure): Verdict {
  if (failure.kind === "cancelled") return timedOut(name, ctx.timeoutMs);
  if (failure.kind === "auth")
    return verdict(name, "failed", failure.message, ctx.target.keyHint ?? "check the API key");
  return verdict(
    name,
    "failed",
    failure.message,
    "try again; if it persists, the server has a problem with this request",
  );
}

/** The verdict of a probe that got no answer in time. */
export function timedOut(name: ProbeName, timeoutMs: number): Verdict {
  return verdict(
    name,
    "failed",
    `no answer within ${timeoutMs / 1000} s`,
    "the server is slow or not answering: check --base-url and that it is running, or raise --probe-timeout",
  );
}

/** Capabilities to assume: the target's own, else the generic ones. */
export function assumedCapabilities(capabilities: ProviderCapabilities | undefined): ProviderCapabilities {
  return capabilities ?? withCapabilities();
}

/** The first `max` characters of a model's answer, on one line, quoted. */
export function quoted(text: string, max = 60): string {
  const line = text.replace(/\s+/g, " ").trim();
  return JSON.stringify(line.length > max ? `${line.slice(0, max - 1)}…` : line);
}
