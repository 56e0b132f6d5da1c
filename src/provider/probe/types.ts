/**
 * What a provider probe finds (`runProbes`, run-probes.ts; the CLI's `eddy doctor`): one result per
 * feature eddy relies on, each ok, failed, unsupported or skipped, with a short detail and a hint
 * for what to do when it is not ok. A `DoctorReport` is the results of one probe of one endpoint
 * and model; `capabilitiesWithEvidence` (evidence.ts) turns it into capabilities.
 */
import type { JsonObject } from "../../protocol/types.js";
import type { HttpProviderOptions } from "../profiles.js";
import type { ApiName, StreamTransport } from "../wire-api.js";

/** The probes, in the order they run. */
export const PROBE_NAMES = [
  "auth",
  "model",
  "streaming",
  "previous_response_id",
  "function_call_input",
  "tool_call",
  "encrypted_reasoning",
  "websocket",
  "compaction",
  "chat_completions",
] as const;

/** The name of one probe. */
export type ProbeName = (typeof PROBE_NAMES)[number];

/**
 * How a probe came out. `ok`: the feature works. `failed`: it should work and did not, or the
 * answer was inconclusive (a timeout, a 5xx). `unsupported`: the server said no (the feature is
 * missing or refused). `skipped`: not probed (an earlier probe failed, or it does not apply).
 */
export type ProbeStatus = "ok" | "failed" | "unsupported" | "skipped";

/** How the tool round trip sent the tool's output back (which continuation works with tools). */
export type ToolFollowUp = "chained" | "stateless" | "text";

/** One probe's result. */
export interface ProbeResult {
  name: ProbeName;
  status: ProbeStatus;
  /** One line: what was seen. */
  detail: string;
  /** One line: what to do about it (for results that are not ok, and ok ones with a caveat). */
  hint?: string;
  /** How long the probe took, in milliseconds (0 for one derived from another probe's request). */
  ms: number;
  /** `tool_call` only: how the tool's output went back. */
  follow_up?: ToolFollowUp;
}

/** The probes that must pass for a run to work at all (`eddy doctor` exits 1 otherwise). */
export const ESSENTIAL_PROBES: readonly ProbeName[] = ["auth", "streaming"];

/** The essential probes for a target: `ESSENTIAL_PROBES`, and `websocket` when runs stream over it. */
export function essentialProbes(target: Pick<ProbeTarget, "transport">): ProbeName[] {
  return target.transport === "websocket" ? [...ESSENTIAL_PROBES, "websocket"] : [...ESSENTIAL_PROBES];
}

/** The results of probing one endpoint and model (what `eddy doctor --json` prints and caches). */
export interface DoctorReport {
  /** The provider's name (its profile, or `mock`). */
  provider: string;
  /** The base URL probed, without credentials. */
  base_url: string;
  /** The model probed; null when the server chose its default. */
  model: string | null;
  /** The API the endpoint was probed with. */
  api: ApiName;
  probes: ProbeResult[];
  /** When the probes ran (ISO 8601). */
  cached_at: string;
}

/** The endpoint a probe talks to. */
export interface ProbeTarget {
  /** The HTTP provider options of the endpoint: base URL, key, headers, dialect, name. */
  endpoint: HttpProviderOptions;
  /** The API a run speaks to it. @defaultValue "responses" */
  api?: ApiName;
  /** The model; null lets the server choose. */
  model: string | null;
  /**
   * The transport a run uses: with `websocket`, the WebSocket probe is essential too.
   * @defaultValue "sse"
   */
  transport?: StreamTransport;
  /** Where the key comes from, for the hint of a 401/403 (e.g. "set OPENAI_API_KEY"). @defaultValue a generic hint */
  keyHint?: string;
}

/** A tool call and its output, as a text form of tool history needs it (`ToolCallRecord` of src/history/). */
export interface ProbeToolRecord {
  callId: string;
  name: string;
  arguments: string;
  output: string;
  failed: boolean;
}

/**
 * How a run that cannot send tool items sends a tool's output: the input items standing for it
 * (eddy's text-embed strategy: pass `textEmbedStrategy.renderResult`). The provider layer does not
 * format tool history itself, so the caller hands the form in.
 */
export type RenderToolResult = (output: JsonObject, record: ProbeToolRecord) => readonly unknown[];

/** Defaults of `runProbes`. */
export const PROBE_DEFAULTS = {
  /** Longest a probe may take (all its requests), in milliseconds. */
  timeoutMs: 30_000,
  /** `max_output_tokens` of every probe request: enough for a short answer or one call, little else. */
  maxOutputTokens: 256,
} as const;
