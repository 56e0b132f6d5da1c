/**
 * The run's tool budget: which promoted calls may run. A call is admitted unless a terminal tool
 * already ended the run, `tool_choice` does not allow it (servers do not always enforce it), or
 * the run-wide cap on tool calls is spent (docs/decisions.md #6). Refusals by `tool_choice` count
 * against the cap; refusals for the cap do not.
 */
import type { ToolChoiceParam } from "../protocol/types.js";
import type { AssembledCall } from "../provider/assembler/index.js";
import type { ToolRegistry } from "../tools/registry.js";
import { toolChoiceRefusal } from "./tool-choice.js";
import type { Refusal } from "./tool-runner.js";

export class ToolBudget {
  /** Calls admitted (or refused by `tool_choice`) so far. */
  private spent = 0;
  /** A call was refused because the cap was spent: the run ends `max_tool_calls`. */
  private overrun = false;
  /** A terminal tool was admitted in the current turn: later calls do not run. */
  private terminalCalled = false;

  constructor(
    private readonly max: number,
    private readonly registry: ToolRegistry,
  ) {}

  get used(): number {
    return this.spent;
  }

  get exceeded(): boolean {
    return this.overrun;
  }

  /** What is left of the cap (sent as the request's `max_tool_calls`). */
  get remaining(): number {
    return this.max - this.spent;
  }

  /** A new turn starts. */
  startTurn(): void {
    this.terminalCalled = false;
  }

  /** Whether `call` may run under `toolChoice`; the refusal when it may not. */
  admit(call: AssembledCall, toolChoice: ToolChoiceParam | null | undefined): Refusal | undefined {
    if (this.terminalCalled) {
      return {
        code: "not_run",
        message: "The run already ended with a terminal tool call; this call did not run.",
      };
    }
    const tool = this.registry.resolve(call.name);
    const refusal = toolChoiceRefusal(toolChoice, tool?.name ?? call.name);
    if (refusal !== undefined) {
      this.spent++;
      return { code: "tool_not_allowed", message: refusal };
    }
    if (this.spent >= this.max) {
      this.overrun = true;
      return {
        code: "max_tool_calls",
        message: `The run's tool-call budget (${this.max}) is spent; this call did not run.`,
      };
    }
    this.spent++;
    if (tool?.definition.terminal === true) this.terminalCalled = true;
    return undefined;
  }
}
