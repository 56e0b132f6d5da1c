/**
 * `runProbes`: probes one endpoint and model, one probe at a time in `PROBE_NAMES` order, each
 * bounded by its own timeout, and returns one result per probe. Later probes use what earlier ones
 * found (the tool round trip sends its output back the way `previous_response_id` and
 * `function_call_input` allow); when `auth` or `model` fails, the rest are skipped. Cancelling the
 * signal ends it promptly (a `cancelled` `ProviderError`); nothing secret is in the results.
 */

import { untilAborted } from "../../util/abort.js";
import { redactSecrets } from "../../util/redact.js";
import type { ProviderCapabilities } from "../capabilities.js";
import { cancelledError } from "../errors.js";
import { probeBasics } from "./basic.js";
import { probeChain } from "./chain.js";
import {
  assumedCapabilities,
  type ProbeContext,
  ProbeProviders,
  timedOut,
  type Verdict,
  verdict,
} from "./context.js";
import { probeChatCompletions, probeCompaction, probeWebSocket } from "./endpoints.js";
import { probeEncryptedReasoning } from "./reasoning.js";
import { probeNativeHistory, probeToolCall } from "./tools.js";
import {
  PROBE_DEFAULTS,
  type ProbeName,
  type ProbeResult,
  type ProbeTarget,
  type RenderToolResult,
} from "./types.js";

/** Options of `runProbes`. */
export interface RunProbesOptions {
  /** Cancels the probes (the promise rejects with a `cancelled` `ProviderError`). @defaultValue none */
  signal?: AbortSignal;
  /** Longest one probe may take, in milliseconds. @defaultValue PROBE_DEFAULTS.timeoutMs (30 000) */
  timeoutMs?: number;
  /** `max_output_tokens` of every probe request. @defaultValue PROBE_DEFAULTS.maxOutputTokens (256) */
  maxOutputTokens?: number;
  /**
   * What the target is assumed to support where no probe has said yet (e.g. whether the tool
   * round trip tries a chained follow-up when `previous_response_id` was skipped).
   * @defaultValue GENERIC_CAPABILITIES
   */
  capabilities?: ProviderCapabilities;
  /**
   * The text form of a tool's output (`textEmbedStrategy.renderResult`): the tool round trip sends
   * the output this way when the server takes it neither chained nor as items.
   * @defaultValue none (that way is not tried)
   */
  renderToolResult?: RenderToolResult;
  /** Called with each result as soon as it is known (for progress). @defaultValue none */
  onResult?: (result: ProbeResult) => void;
  /** Millisecond clock for the probes' times. @defaultValue performance.now */
  now?: () => number;
}

/** One step: a probe function and the names it answers for. */
interface Step {
  names: readonly ProbeName[];
  run(ctx: ProbeContext): Promise<Verdict[]>;
}

const STEPS: readonly Step[] = [
  { names: ["auth", "model", "streaming"], run: probeBasics },
  { names: ["previous_response_id"], run: probeChain },
  { names: ["function_call_input"], run: probeNativeHistory },
  { names: ["tool_call"], run: probeToolCall },
  { names: ["encrypted_reasoning"], run: probeEncryptedReasoning },
  { names: ["websocket"], run: probeWebSocket },
  { names: ["compaction"], run: probeCompaction },
  { names: ["chat_completions"], run: probeChatCompletions },
];

/**
 * Probes `target` and returns one result per probe, in `PROBE_NAMES` order.
 *
 * @example
 * ```ts
 * const results = await runProbes({ endpoint: { baseURL: "http://localhost:1234/v1" }, model: "qwen3" });
 * const capabilities = capabilitiesWithEvidence(GENERIC_CAPABILITIES, { probes: results });
 * ```
 */
export async function runProbes(target: ProbeTarget, options: RunProbesOptions = {}): Promise<ProbeResult[]> {
  const timeoutMs = options.timeoutMs ?? PROBE_DEFAULTS.timeoutMs;
  const now = options.now ?? (() => performance.now());
  const outer = options.signal ?? new AbortController().signal;
  const providers = new ProbeProviders(target, timeoutMs);
  const results = new Map<ProbeName, ProbeResult>();
  const secrets = () => [target.endpoint.apiKey, ...providers.secrets];
  try {
    for (const step of STEPS) {
      if (outer.aborted) throw cancelledError();
      const blocker = blockingFailure(results);
      const started = now();
      const verdicts =
        blocker === undefined
          ? await runStep(step, { target, timeoutMs, outer, options, results, providers })
          : step.names.map((name) => verdict(name, "skipped", `needs ${blocker} to pass`));
      if (outer.aborted) throw cancelledError();
      const ms = blocker === undefined ? Math.round(now() - started) : 0;
      for (const v of verdicts) {
        const result = masked({ ...v, ms }, secrets());
        results.set(result.name, result);
        options.onResult?.(result);
      }
    }
  } finally {
    await providers.close();
  }
  return [...results.values()];
}

/** Runs one step under its own timeout; a step that outlives it (or throws) becomes a failed verdict. */
async function runStep(
  step: Step,
  run: {
    target: ProbeTarget;
    timeoutMs: number;
    outer: AbortSignal;
    options: RunProbesOptions;
    results: ReadonlyMap<ProbeName, ProbeResult>;
    providers: ProbeProviders;
  },
): Promise<Verdict[]> {
  const signal = AbortSignal.any([run.outer, AbortSignal.timeout(run.timeoutMs)]);
  const ctx: ProbeContext = {
    target: run.target,
    api: run.target.api ?? "responses",
    signal,
    timeoutMs: run.timeoutMs,
    maxOutputTokens: run.options.maxOutputTokens ?? PROBE_DEFAULTS.maxOutputTokens,
    capabilities: assumedCapabilities(run.options.capabilities),
    results: run.results,
    renderToolResult: run.options.renderToolResult,
    provider: (channel) => run.providers.get(channel),
  };
  try {
    // The requests stop at the signal; untilAborted makes sure nothing inside can hold the step past it.
    return await untilAborted(step.run(ctx), signal);
  } catch (err) {
    const [first, ...rest] = step.names as [ProbeName, ...ProbeName[]];
    const failed = signal.aborted
      ? timedOut(first, run.timeoutMs)
      : verdict(first, "failed", `probe error: ${err instanceof Error ? err.message : String(err)}`);
    return [failed, ...rest.map((name) => verdict(name, "skipped", `${first} did not finish`))];
  }
}

/** The probe whose failure makes the rest pointless: `auth`, then `model`. */
function blockingFailure(results: ReadonlyMap<ProbeName, ProbeResult>): ProbeName | undefined {
  for (const name of ["auth", "model"] as const) {
    const result = results.get(name);
    if (result !== undefined && result.status !== "ok") return name;
  }
  return undefined;
}

function masked(result: ProbeResult, secrets: readonly (string | undefined)[]): ProbeResult {
  const out = { ...result, detail: redactSecrets(result.detail, secrets) };
  if (result.hint !== undefined) out.hint = redactSecrets(result.hint, secrets);
  return out;
}
