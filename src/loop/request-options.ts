/**
 * The request options a user sets (reasoning effort and summary, verbosity, output token limit,
 * sampling, service tier, prompt cache key, `include`, `metadata`): checked against the vendored
 * spec before anything is sent — enum values from its `*Enum` schemas (protocol/generated/
 * enums.ts), bounds from `CreateResponseBody` — and turned into request fields
 * (`RunOptions.request`). The CLI flags and config-file keys of each are listed here, so every
 * message names what the user typed.
 */
import { EddyError } from "../errors.js";
import { SPEC_ENUMS, type SpecEnumName } from "../protocol/generated/enums.js";
import type { CreateResponseBody, JsonObject } from "../protocol/types.js";

/** Request options as a user sets them (CLI flags, config-file keys, profile defaults). */
export interface RequestOptions {
  /** `reasoning.effort` (spec `ReasoningEffortEnum`). @defaultValue none (the server's default) */
  reasoningEffort?: string;
  /** `reasoning.summary` (spec `ReasoningSummaryEnum`). @defaultValue none (the server's default) */
  reasoningSummary?: string;
  /** `text.verbosity` (spec `VerbosityEnum`). @defaultValue none (the server's default) */
  verbosity?: string;
  /** `max_output_tokens` (an integer ≥ 16). @defaultValue none (the server's default) */
  maxOutputTokens?: number;
  /** `temperature` (0 to 2). @defaultValue none (the server's default) */
  temperature?: number;
  /** `top_p` (0 to 1). @defaultValue none (the server's default) */
  topP?: number;
  /** `service_tier` (spec `ServiceTierEnum`). @defaultValue none (the server's default) */
  serviceTier?: string;
  /** `prompt_cache_key` (at most 64 characters). @defaultValue none (the server's default) */
  promptCacheKey?: string;
  /** `include` (spec `IncludeEnum` values). @defaultValue none (the server's default) */
  include?: readonly string[];
  /** `metadata` (at most 16 pairs; keys ≤ 64, values ≤ 512 characters). @defaultValue none (the server's default) */
  metadata?: Readonly<Record<string, string>>;
}

/** How each option is named on the command line and in the config file. */
export const REQUEST_OPTION_NAMES: Readonly<Record<keyof RequestOptions, { flag: string; key: string }>> = {
  reasoningEffort: { flag: "--reasoning-effort", key: "reasoning_effort" },
  reasoningSummary: { flag: "--reasoning-summary", key: "reasoning_summary" },
  verbosity: { flag: "--verbosity", key: "verbosity" },
  maxOutputTokens: { flag: "--max-output-tokens", key: "max_output_tokens" },
  temperature: { flag: "--temperature", key: "temperature" },
  topP: { flag: "--top-p", key: "top_p" },
  serviceTier: { flag: "--service-tier", key: "service_tier" },
  promptCacheKey: { flag: "--prompt-cache-key", key: "prompt_cache_key" },
  include: { flag: "--include", key: "include" },
  metadata: { flag: "--metadata", key: "metadata" },
};

/** The spec enum each string option takes its values from. */
const ENUM_OF: Partial<Record<keyof RequestOptions, SpecEnumName>> = {
  reasoningEffort: "ReasoningEffortEnum",
  reasoningSummary: "ReasoningSummaryEnum",
  verbosity: "VerbosityEnum",
  serviceTier: "ServiceTierEnum",
  include: "IncludeEnum",
};

/** The allowed values of an enum option, from the spec. */
export function allowedValues(option: keyof RequestOptions): readonly string[] | undefined {
  const name = ENUM_OF[option];
  return name === undefined ? undefined : SPEC_ENUMS[name];
}

/**
 * What is wrong with one value of `option` ("must be one of none, low, … (got "x")"), or
 * undefined when it is fine. For `include` and `metadata`, one entry.
 */
export function requestOptionProblem(option: keyof RequestOptions, value: unknown): string | undefined {
  const allowed = allowedValues(option);
  if (allowed !== undefined) {
    return typeof value === "string" && allowed.includes(value)
      ? undefined
      : `must be one of ${allowed.join(", ")} (got ${JSON.stringify(value)})`;
  }
  switch (option) {
    case "maxOutputTokens":
      return Number.isInteger(value) && (value as number) >= 16
        ? undefined
        : `must be an integer ≥ 16 (got ${shown(value)})`;
    case "temperature":
      return inRange(value, 0, 2);
    case "topP":
      return inRange(value, 0, 1);
    case "promptCacheKey":
      return typeof value === "string" && value.length >= 1 && value.length <= 64
        ? undefined
        : `must be 1 to 64 characters (got ${JSON.stringify(value)})`;
    default:
      return undefined;
  }
}

function inRange(value: unknown, min: number, max: number): string | undefined {
  return typeof value === "number" && Number.isFinite(value) && value >= min && value <= max
    ? undefined
    : `must be a number from ${min} to ${max} (got ${shown(value)})`;
}

function shown(value: unknown): string {
  return typeof value === "number" ? String(value) : JSON.stringify(value);
}

/**
 * The first problem of a request-fields object (a spec's `request`, body-shaped: `reasoning.effort`,
 * `temperature`, …): its path and what is wrong, or undefined. Only the options eddy knows are
 * checked; other fields pass through to the provider as given.
 */
export function requestProblem(
  request: Record<string, unknown>,
): { path: (string | number)[]; message: string } | undefined {
  const reasoning = isObject(request.reasoning) ? request.reasoning : {};
  const text = isObject(request.text) ? request.text : {};
  const checks: [string[], keyof RequestOptions, unknown][] = [
    [["reasoning", "effort"], "reasoningEffort", reasoning.effort],
    [["reasoning", "summary"], "reasoningSummary", reasoning.summary],
    [["text", "verbosity"], "verbosity", text.verbosity],
    [["max_output_tokens"], "maxOutputTokens", request.max_output_tokens],
    [["temperature"], "temperature", request.temperature],
    [["top_p"], "topP", request.top_p],
    [["service_tier"], "serviceTier", request.service_tier],
    [["prompt_cache_key"], "promptCacheKey", request.prompt_cache_key],
  ];
  for (const [path, option, value] of checks) {
    if (value === undefined || value === null) continue;
    const problem = requestOptionProblem(option, value);
    if (problem !== undefined) return { path, message: problem.replace(/ \(got .*\)$/, "") };
  }
  if (request.include !== undefined && request.include !== null) {
    if (!Array.isArray(request.include)) return { path: ["include"], message: "must be an array" };
    for (const [i, entry] of request.include.entries()) {
      const problem = requestOptionProblem("include", entry);
      if (problem !== undefined)
        return { path: ["include", i], message: problem.replace(/ \(got .*\)$/, "") };
    }
  }
  return undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** `k=v` → `[k, v]` for `--metadata`; a problem message when it is not one. */
export function parseMetadataPair(text: string): [string, string] | string {
  const eq = text.indexOf("=");
  if (eq <= 0) return `must be KEY=VALUE (got ${JSON.stringify(text)})`;
  const key = text.slice(0, eq);
  const value = text.slice(eq + 1);
  if (key.length > 64) return `keys must be at most 64 characters (got ${JSON.stringify(key)})`;
  if (value.length > 512)
    return `values must be at most 512 characters (the value of ${key} has ${value.length})`;
  return [key, value];
}

/**
 * The request fields of `options`, checked. Throws `invalid_argument` (a usage error) naming the
 * option as `label` says (`flag` for the CLI, `key` for the config file) and the allowed values.
 */
export function requestFields(
  options: RequestOptions,
  label: (option: keyof RequestOptions) => string = (o) => o,
): Partial<CreateResponseBody> {
  for (const [option, value] of Object.entries(options) as [keyof RequestOptions, unknown][]) {
    if (value === undefined) continue;
    const entries = option === "include" ? (value as unknown[]) : option === "metadata" ? [] : [value];
    for (const entry of entries) {
      const problem = requestOptionProblem(option, entry);
      if (problem !== undefined) throw usage(`${label(option)} ${problem}`);
    }
  }
  const metadata = options.metadata ?? {};
  if (Object.keys(metadata).length > 16)
    throw usage(`${label("metadata")} takes at most 16 pairs (got ${Object.keys(metadata).length})`);
  const body: JsonObject = {};
  const reasoning: JsonObject = {};
  if (options.reasoningEffort !== undefined) reasoning.effort = options.reasoningEffort;
  if (options.reasoningSummary !== undefined) reasoning.summary = options.reasoningSummary;
  if (Object.keys(reasoning).length > 0) body.reasoning = reasoning;
  if (options.verbosity !== undefined) body.text = { verbosity: options.verbosity };
  if (options.maxOutputTokens !== undefined) body.max_output_tokens = options.maxOutputTokens;
  if (options.temperature !== undefined) body.temperature = options.temperature;
  if (options.topP !== undefined) body.top_p = options.topP;
  if (options.serviceTier !== undefined) body.service_tier = options.serviceTier;
  if (options.promptCacheKey !== undefined) body.prompt_cache_key = options.promptCacheKey;
  if (options.include !== undefined && options.include.length > 0) body.include = [...options.include];
  if (Object.keys(metadata).length > 0) body.metadata = { ...metadata };
  return body as Partial<CreateResponseBody>;
}

function usage(message: string): EddyError {
  return new EddyError("invalid_argument", message, { fault: "user" });
}
