/**
 * The defaults of the tool-history settings (`ToolHistoryOptions`, options.ts) and the strategy
 * names, in a module of their own: `eddy --help` prints them without loading the config-file schema
 * (and zod) that options.ts holds.
 */
import type { ToolHistoryOptions } from "./options.js";
import type { ToolHistoryStrategySetting } from "./strategies.js";

/** The defaults of `ToolHistoryOptions`, read by the library and the CLI alike. */
export const HISTORY_DEFAULTS = {
  recentCallsToKeep: 6,
  truncationThreshold: 100_000,
  summarizationModel: undefined,
  strategy: "auto",
} as const satisfies ToolHistoryOptions;

/** Every strategy setting, for flag and config validation. */
export const HISTORY_STRATEGIES = [
  "auto",
  "native",
  "text-embed",
] as const satisfies readonly ToolHistoryStrategySetting[];
