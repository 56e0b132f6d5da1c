/** Every behaviour-altering default of the agent loop, in one place (docs/decisions.md #6; docs/architecture.md, "The CLI contract"). */
export const LOOP_DEFAULTS = {
  /** Tool calls answered per run (`--max-tool-calls`). */
  maxToolCalls: 32,
  /**
   * How many calls past the remaining tool-call budget one response may make before the loop stops
   * reading it (each would only be refused; src/loop/turn.ts, docs/pitfalls.md #64).
   */
  callsPastBudget: 256,
  /** Model requests per run, retries not counted (`--max-turns`). */
  maxTurns: 20,
  /** Turns in a row with identical calls (same names and arguments) that end the run `no_progress`. */
  identicalTurnsLimit: 3,
  /** Ask for one call per response; several are still executed one by one if a server ignores it. */
  parallelToolCalls: false,
  /** With `parallelToolCalls`, how many calls of one response run at once. */
  toolConcurrency: 4,
  /** `eager`: run each call as soon as its item is done; `after_response`: wait for the terminal event. */
  toolExecution: "eager",
  /** Send `tools` on every request (the spec does not carry them over `previous_response_id`). */
  toolsOnFollowUp: "every_request",
  /** Reset a forcing `tool_choice` (`required`, a named function) to `auto` after the first tool round. */
  resetToolChoice: true,
  /** The follow-up `continueIncomplete` sends when a final answer was cut off by `max_output_tokens`. */
  continuePrompt:
    "Your previous answer was cut off by the output token limit. Continue exactly where it stopped, without repeating anything.",
  /** The note `on_limit: "answer"` adds before its last, tool-less request. */
  limitAnswerPrompt:
    "You have reached this run's limit of model requests or tool calls, so no more tools can be used. Answer now, as well as you can with what you have found so far, and say what is left undone.",
} as const;
