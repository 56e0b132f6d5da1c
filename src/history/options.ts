/**
 * The tool-history settings, their defaults, and the config-file fragment that sets them
 * (`history: {recent_calls_to_keep, truncation_threshold, summarization_model, strategy}`).
 *
 * The defaults leave an ordinary run untouched: nothing is folded until the history passes
 * 100,000 tokens (a run of 20 turns whose tool outputs average 4 KiB is about 25,000), and the
 * strategy follows the provider's capability, which is native for every built-in profile.
 */
import { z } from "zod";
import { EddyError } from "../errors.js";
import { HISTORY_DEFAULTS, HISTORY_STRATEGIES } from "./defaults.js";
import type { ToolHistoryStrategySetting } from "./strategies.js";

/**
 * Settings of the tool history (defaults in `HISTORY_DEFAULTS`; the config file's `history` section).
 */
export interface ToolHistoryOptions {
  /**
   * Tool calls kept verbatim (with their outputs) when older ones are folded into a summary.
   * @defaultValue 6
   */
  recentCallsToKeep?: number;
  /**
   * History size, in tokens of the target model, above which calls older than the recent ones are
   * folded into one summary.
   * @defaultValue 100_000
   */
  truncationThreshold?: number;
  /**
   * The model that writes summaries (asked through the same provider). Unset: summaries are
   * extractive (rule-based, no model call); also the fallback when the model call fails.
   * @defaultValue undefined
   */
  summarizationModel?: string;
  /**
   * `native` (function_call items), `text-embed` (results as user text, calls omitted), or `auto`
   * (by the provider's `nativeToolHistory` capability).
   * @defaultValue "auto"
   */
  strategy?: ToolHistoryStrategySetting;
}

// The defaults live apart from the zod schema below, so the CLI's help (which prints them) does not load zod.
export { HISTORY_DEFAULTS, HISTORY_STRATEGIES };

/**
 * The config file's `history` object (snake_case, like the rest of the file). A new schema per
 * call: the config file's schema (cli/config-file.ts) builds it once, on the first file read.
 */
export function historyConfigSchema() {
  return z
    .object({
      recent_calls_to_keep: z.number().int().min(0).optional(),
      truncation_threshold: z.number().int().min(1).optional(),
      summarization_model: z.string().min(1).optional(),
      strategy: z.enum(HISTORY_STRATEGIES).optional(),
    })
    .strict();
}

/** The config file's `history` object, parsed. */
export type HistoryConfig = z.infer<ReturnType<typeof historyConfigSchema>>;

/** The library options a parsed config `history` object stands for (absent keys stay absent). */
export function historyOptionsFromConfig(config: HistoryConfig): ToolHistoryOptions {
  const out: ToolHistoryOptions = {};
  if (config.recent_calls_to_keep !== undefined) out.recentCallsToKeep = config.recent_calls_to_keep;
  if (config.truncation_threshold !== undefined) out.truncationThreshold = config.truncation_threshold;
  if (config.summarization_model !== undefined) out.summarizationModel = config.summarization_model;
  if (config.strategy !== undefined) out.strategy = config.strategy;
  return out;
}

/** `ToolHistoryOptions` with the defaults filled in (`summarizationModel` stays undefined when unset). */
export type ResolvedToolHistoryOptions = Required<Omit<ToolHistoryOptions, "summarizationModel">> & {
  summarizationModel: string | undefined;
};

/** The options with defaults filled in, checked; a bad value throws a one-line `invalid_config` error. */
export function resolveHistoryOptions(options: ToolHistoryOptions = {}): ResolvedToolHistoryOptions {
  const recentCallsToKeep = options.recentCallsToKeep ?? HISTORY_DEFAULTS.recentCallsToKeep;
  const truncationThreshold = options.truncationThreshold ?? HISTORY_DEFAULTS.truncationThreshold;
  const strategy = options.strategy ?? HISTORY_DEFAULTS.strategy;
  if (!Number.isInteger(recentCallsToKeep) || recentCallsToKeep < 0)
    throw invalid(`recentCallsToKeep must be an integer ≥ 0 (got ${String(recentCallsToKeep)})`);
  if (!Number.isInteger(truncationThreshold) || truncationThreshold < 1)
    throw invalid(`truncationThreshold must be a number of tokens ≥ 1 (got ${String(truncationThreshold)})`);
  if (!(HISTORY_STRATEGIES as readonly string[]).includes(strategy))
    throw invalid(
      `history strategy must be one of ${HISTORY_STRATEGIES.join(", ")} (got ${JSON.stringify(strategy)})`,
    );
  if (options.summarizationModel !== undefined && options.summarizationModel.trim() === "")
    throw invalid("summarizationModel must name a model (got an empty string)");
  return { recentCallsToKeep, truncationThreshold, strategy, summarizationModel: options.summarizationModel };
}

function invalid(message: string): EddyError {
  return new EddyError("invalid_config", message, { fault: "user" });
}
