/**
 * Per-turn control (docs/architecture.md, "Composing runs"): `RunDeps.prepareTurn` is asked before
 * each turn's request and may change, for that turn only, the model, the tools offered (a
 * selection of the run's), `tool_choice`, the instructions and `max_output_tokens` (lowered, never
 * raised). What it changed is a `turn_prepared` frame, which a replay gives back instead of calling
 * the function.
 */
import { EddyError } from "../errors.js";
import type { Frame, TurnPreparedFrame } from "../frames/frame.js";
import type { ItemParam, ToolChoiceParam, Usage } from "../protocol/types.js";
import type { RunSpec } from "./run-spec.js";

/** What `prepareTurn` sees: the run so far. */
export interface TurnContext {
  /** The turn about to be sent (0 for the first request). */
  turn: number;
  spec: RunSpec;
  /** The conversation so far as input items. */
  items: readonly ItemParam[];
  /** Names of the calls answered so far, in order. */
  calls: readonly string[];
  usage: Usage;
}

/** What `prepareTurn` may change for one turn; fields left out keep the run's. */
export interface TurnSettings {
  model?: string;
  /** Names of the run's tools to offer in this turn (calls to others are refused). */
  tools?: string[];
  tool_choice?: ToolChoiceParam;
  instructions?: string;
  /**
   * The most output tokens (reasoning included) this turn's request may generate: at most the
   * run's `request.max_output_tokens` (a higher one is the run's). Below `MIN_OUTPUT_TOKENS`, the
   * least a request may ask for, the request is not sent: the run ends `incomplete`, code
   * `max_output_tokens`, as when the upstream stops there (docs/pitfalls.md #125).
   */
  max_output_tokens?: number;
}

/** The least `max_output_tokens` a request may carry (the Open Responses `CreateResponseBody` minimum). */
export const MIN_OUTPUT_TOKENS = 16;

/** `RunDeps.prepareTurn`. Returning nothing keeps the run's settings. */
export type PrepareTurn = (ctx: TurnContext) => TurnSettings | undefined | Promise<TurnSettings | undefined>;

/** The settings as the `turn_prepared` frame records them (only what was given). */
export function preparedSettings(settings: TurnSettings | undefined): TurnSettings | undefined {
  if (settings === undefined) return undefined;
  const out: TurnSettings = {};
  if (settings.model !== undefined) out.model = settings.model;
  if (settings.tools !== undefined) out.tools = [...settings.tools];
  if (settings.tool_choice !== undefined) out.tool_choice = settings.tool_choice;
  if (settings.instructions !== undefined) out.instructions = settings.instructions;
  const tokens: unknown = settings.max_output_tokens;
  if (tokens !== undefined) {
    if (typeof tokens !== "number" || !Number.isSafeInteger(tokens) || tokens < 0)
      throw new EddyError(
        "invalid_argument",
        `prepareTurn: max_output_tokens must be a whole number of tokens, 0 or more (got ${typeof tokens === "number" ? tokens : `a ${typeof tokens}`})`,
        { fault: "user" },
      );
    out.max_output_tokens = tokens;
  }
  return out;
}

/** The `prepareTurn` a tape's `turn_prepared` frames stand for (replay). */
export function recordedPrepareTurn(frames: readonly Frame[]): PrepareTurn | undefined {
  const byTurn = new Map<number, TurnPreparedFrame>();
  for (const f of frames) if (f.type === "turn_prepared") byTurn.set(f.turn, f);
  if (byTurn.size === 0) return undefined;
  return (ctx) => {
    const f = byTurn.get(ctx.turn);
    if (f === undefined) return undefined;
    const { run_id: _r, seq: _s, ts: _t, type: _y, turn: _n, ...settings } = f;
    return settings;
  };
}
