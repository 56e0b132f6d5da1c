/**
 * Summaries of older turns. A `Summarizer` turns the items being folded away into one text and
 * says how it was written: by a model (`createModelSummarizer`, a one-shot `LLMProvider` call on
 * the provider the run already uses) or by rule (`extractiveSummarizer`, deterministic). The model
 * summarizer falls back to the extractive summary when its call fails (or answers with nothing, or
 * with more text than it was given to summarize), and says why, so the
 * `context_compacted` frame records which one was used. A replay must not ask a model again:
 * `recordedSummarizer` hands back the summaries a tape recorded, in order.
 */
import { EddyError } from "../errors.js";
import type { CompactionMethod, Frame } from "../frames/frame.js";
import type { JsonObject } from "../protocol/types.js";
import { createLLMProvider } from "../provider/llm-provider.js";
import type { Provider } from "../provider/provider.js";
import { extractiveSummaryText, summaryTranscript } from "./tool-text.js";
import { summaryMaterial } from "./units.js";

/** A summary and how it was written. */
export interface SummaryResult {
  text: string;
  method: Extract<CompactionMethod, "model_summary" | "extractive_summary">;
  /** The model that wrote it (`model_summary`). */
  model?: string;
  /** Why the configured model was not used (its call failed, or it answered nothing). */
  fallback_reason?: string;
}

/** Writes one summary of `items` (input items of the turns being folded, in order). */
export type Summarizer = (
  items: readonly JsonObject[],
  options?: { signal?: AbortSignal },
) => Promise<SummaryResult>;

/** The deterministic summary of `items` (see tool-text.ts `extractiveSummaryText`). */
export function extractiveSummary(items: readonly JsonObject[]): string {
  return extractiveSummaryText(summaryMaterial(items));
}

/** Summarizes by rule, with no model call. */
export const extractiveSummarizer: Summarizer = async (items) => ({
  text: extractiveSummary(items),
  method: "extractive_summary",
});

/** The instructions the summarization model gets. */
export const SUMMARY_INSTRUCTIONS =
  "You condense the earlier part of an agent conversation so the agent can continue without it. " +
  "Write a short factual summary: what the user asked for, what was found or changed (file names, " +
  "values, decisions, errors), and what is still open. Keep facts the user stated verbatim. Do not " +
  "address the user, do not invent anything, do not call tools.";

/** Options of `createModelSummarizer`. */
export interface ModelSummarizerOptions {
  /** The provider the summary request goes to (the run's own). */
  provider: Provider;
  /** The summarization model. */
  model: string;
  /** @defaultValue SUMMARY_INSTRUCTIONS */
  instructions?: string;
  /**
   * Characters of transcript sent at most (the newest are kept).
   * @defaultValue 60_000
   */
  maxInputChars?: number;
}

/** Summarizes with a model through `createLLMProvider(...).generateResponse`; extractive on failure. */
export function createModelSummarizer(options: ModelSummarizerOptions): Summarizer {
  const llm = createLLMProvider({ provider: options.provider, model: options.model });
  const instructions = options.instructions ?? SUMMARY_INSTRUCTIONS;
  const maxChars = options.maxInputChars ?? 60_000;
  return async (items, callOptions = {}) => {
    const transcript = summaryTranscript(summaryMaterial(items), maxChars);
    let reason: string;
    try {
      const text = (await llm.generateResponse(instructions, transcript, callOptions)).trim();
      // A "summary" longer than what it summarizes makes the history grow with every fold.
      if (text.length > transcript.length)
        reason = `${options.model} answered with ${text.length} characters, more than the ${transcript.length} it summarized`;
      else if (text !== "") return { text, method: "model_summary", model: options.model };
      else reason = `${options.model} answered with no text`;
    } catch (err) {
      if (callOptions.signal?.aborted) throw err;
      reason = `${options.model} failed: ${firstLine(err)}`;
    }
    return { text: extractiveSummary(items), method: "extractive_summary", fallback_reason: reason };
  };
}

/** Hands back recorded summaries in order (a replay must not ask a model again). */
export function recordedSummarizer(recorded: readonly SummaryResult[]): Summarizer {
  let next = 0;
  return async () => {
    const result = recorded[next++];
    if (result === undefined) {
      throw new EddyError(
        "replay_mismatch",
        `the replay needs summary ${next} but the tape recorded only ${recorded.length}`,
        { fault: "user" },
      );
    }
    return result;
  };
}

/**
 * The summaries a run asked its summarizer for, from its `context_compacted` frames, in order:
 * feed them to `recordedSummarizer` when replaying a run that had a `summarizationModel`.
 */
export function recordedSummaries(frames: readonly Frame[]): SummaryResult[] {
  const out: SummaryResult[] = [];
  for (const f of frames) {
    if (f.type !== "context_compacted" || f.summary === undefined) continue;
    if (f.method !== "model_summary" && f.fallback_reason === undefined) continue;
    const result: SummaryResult = {
      text: f.summary,
      method: f.method === "model_summary" ? "model_summary" : "extractive_summary",
    };
    if (f.model !== undefined) result.model = f.model;
    if (f.fallback_reason !== undefined) result.fallback_reason = f.fallback_reason;
    out.push(result);
  }
  return out;
}

function firstLine(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return (message.split("\n")[0] ?? "").slice(0, 300);
}
