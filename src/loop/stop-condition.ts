/**
 * What happens after a turn: end the run (and why) or send a follow-up. Pure: it sees the turn's
 * outcome and the run's counters, nothing else. The order of the checks is the contract
 * (end reasons: docs/architecture.md, "The frame contract"; limits: docs/decisions.md #6).
 */
import type { FrameError, RunEndReason } from "../frames/frame.js";
import type { ProviderOutcome } from "../provider/provider.js";
import type { AnsweredCall } from "./tool-runner.js";

export type TurnDecision =
  | { next: "continue" }
  | { next: "end"; reason: RunEndReason; error?: FrameError; result?: unknown };

/** Parses and validates a structured final answer. */
export type StructuredOutputCheck = (
  text: string,
) => { ok: true; value: unknown } | { ok: false; message: string };

export interface TurnFacts {
  outcome: ProviderOutcome;
  answered: readonly AnsweredCall[];
  /** A call was refused because the run's tool-call budget was spent. */
  budgetExceeded: boolean;
  /** The response was not read further after this many calls (too many past the budget: turn.ts). */
  cutAfterCalls?: number;
  /** Turns done so far, this one included. */
  turnsDone: number;
  maxTurns: number;
  /** How many turns in a row (this one included) made exactly the same calls. */
  identicalTurns: number;
  identicalTurnsLimit: number;
  structured: StructuredOutputCheck | undefined;
}

export function decideAfterTurn(facts: TurnFacts): TurnDecision {
  const { outcome, answered } = facts;
  if (facts.cutAfterCalls !== undefined) {
    return {
      next: "end",
      reason: "max_tool_calls",
      error: {
        code: "max_tool_calls",
        message: `the run's tool-call budget is spent: the response made ${facts.cutAfterCalls} tool calls and was not read further (raise --max-tool-calls to allow more)`,
      },
    };
  }
  if (!outcome.ok) {
    return {
      next: "end",
      reason: outcome.error.runEndReason,
      error: { code: outcome.error.frameCode, message: outcome.error.message },
    };
  }
  const response = outcome.response;
  if (response.terminal === "incomplete") {
    const why = response.incompleteReason ?? "unknown";
    return {
      next: "end",
      reason: "incomplete",
      error: {
        code: why,
        message: `the response is incomplete (${why})${why === "max_output_tokens" ? ": the output token budget ran out" : ""}`,
      },
    };
  }
  const terminal = answered.find((a) => a.result.ok && a.result.terminalResult !== undefined);
  if (terminal !== undefined)
    return { next: "end", reason: "terminal_tool", result: terminal.result.terminalResult };
  if (facts.budgetExceeded) {
    return {
      next: "end",
      reason: "max_tool_calls",
      error: {
        code: "max_tool_calls",
        message: "the run's tool-call budget is spent (raise --max-tool-calls to allow more)",
      },
    };
  }
  if (answered.length === 0) return endWithoutCalls(facts, response.outputText);
  if (facts.identicalTurns >= facts.identicalTurnsLimit) {
    return {
      next: "end",
      reason: "no_progress",
      error: {
        code: "no_progress",
        message: `the model made the same tool calls ${facts.identicalTurns} turns in a row`,
      },
    };
  }
  if (facts.turnsDone >= facts.maxTurns) {
    return {
      next: "end",
      reason: "max_turns",
      error: {
        code: "max_turns",
        message: `the run reached its limit of ${facts.maxTurns} model requests (raise --max-turns to allow more)`,
      },
    };
  }
  return { next: "continue" };
}

/** A turn without tool calls ends the run: structured output, text, or nothing (`no_progress`). */
function endWithoutCalls(facts: TurnFacts, outputText: string): TurnDecision {
  if (facts.structured !== undefined) {
    const parsed = facts.structured(outputText);
    return parsed.ok
      ? { next: "end", reason: "completed", result: parsed.value }
      : {
          next: "end",
          reason: "failed",
          error: { code: "output_schema_mismatch", message: parsed.message },
        };
  }
  if (outputText.trim() !== "") return { next: "end", reason: "completed" };
  return {
    next: "end",
    reason: "no_progress",
    error: { code: "no_progress", message: "the model returned neither text nor tool calls" },
  };
}

/** A turn's calls as one comparable string: names and canonical (key-sorted) arguments, in output order. */
export function callsSignature(answered: readonly AnsweredCall[]): string {
  const inOrder = [...answered].sort((a, b) => a.call.outputIndex - b.call.outputIndex);
  return JSON.stringify(inOrder.map((a) => [a.call.name, canonicalArguments(a.call.arguments)]));
}

function canonicalArguments(raw: string): string {
  try {
    return JSON.stringify(sortKeys(JSON.parse(raw)));
  } catch {
    return raw;
  }
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) out[key] = sortKeys((value as Record<string, unknown>)[key]);
  return out;
}
