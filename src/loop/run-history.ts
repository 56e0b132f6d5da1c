/**
 * The run's one `ToolHistoryManager` (history/tool-history.ts): built from `RunOptions.history`
 * for the run's provider and model, or taken as given. Every request that carries the history goes
 * through it, and a tape header records its settings so a replay builds the same one.
 */
import {
  HISTORY_DEFAULTS,
  type ResolvedToolHistoryOptions,
  resolveHistoryOptions,
} from "../history/options.js";
import { ToolHistoryManager } from "../history/tool-history.js";
import type { RunOptions } from "./options.js";

/** The manager a run renders its history with (see the module comment). */
export function createRunHistory(options: RunOptions): ToolHistoryManager {
  const given = options.history;
  if (given instanceof ToolHistoryManager) return given;
  return new ToolHistoryManager({ ...given, provider: options.provider, model: options.model });
}

/** The settings of the run's manager, defaults filled in (checked: a bad value throws `invalid_config`). */
export function runHistorySettings(options: RunOptions): ResolvedToolHistoryOptions {
  const given = options.history;
  return given instanceof ToolHistoryManager ? given.settings : resolveHistoryOptions(given);
}

/** Whether the settings differ from `HISTORY_DEFAULTS` (a tape header records them only then). */
export function isDefaultHistory(settings: ResolvedToolHistoryOptions): boolean {
  return (
    settings.recentCallsToKeep === HISTORY_DEFAULTS.recentCallsToKeep &&
    settings.truncationThreshold === HISTORY_DEFAULTS.truncationThreshold &&
    settings.strategy === HISTORY_DEFAULTS.strategy &&
    settings.summarizationModel === HISTORY_DEFAULTS.summarizationModel
  );
}
