/**
 * The run's one `ToolHistoryManager` (history/tool-history.ts): built from `RunSpec.history` for
 * the run's provider and model, or the one `RunDeps.history` shares. Every request that carries
 * the history goes through it.
 */
import { ToolHistoryManager } from "../history/tool-history.js";
import type { RunDeps } from "./options.js";
import type { RunSpec } from "./run-spec.js";

/** The manager a run renders its history with (see the module comment). */
export function createRunHistory(spec: RunSpec, deps: RunDeps): ToolHistoryManager {
  if (deps.history !== undefined) return deps.history;
  const { history } = spec;
  return new ToolHistoryManager({
    strategy: history.strategy,
    recentCallsToKeep: history.recent_calls_to_keep,
    truncationThreshold: history.truncation_threshold,
    ...(history.summarization_model === undefined ? {} : { summarizationModel: history.summarization_model }),
    ...(deps.summarizer === undefined ? {} : { summarizer: deps.summarizer }),
    provider: deps.provider,
    model: spec.model,
  });
}
