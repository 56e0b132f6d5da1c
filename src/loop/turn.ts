/**
 * One turn: stream one request (all its attempts) from the provider, emit its frames, and promote
 * each function call the moment its item is done (docs/decisions.md #3) — or, with `after_response`, once the
 * response has completed. Calls are never run from a response that ended incomplete or failed
 * unless they had already started (docs/decisions.md #3); queued ones are answered "not run".
 *
 * A response that goes on making calls far past what the run's tool-call budget can answer is
 * not read to its end: once it has made `LOOP_DEFAULTS.callsPastBudget` more calls than the
 * budget had left, the request is cancelled, the calls it made are answered as usual (those not
 * started yet "not run") and the run ends `max_tool_calls`. Every call the loop saw still gets
 * its `tool_call` → `tool_started` → `tool_ended`; what came after was never read, so it has no
 * frame at all (docs/pitfalls.md #64).
 */
import type { ProviderFrame } from "../frames/frame.js";
import type { CreateResponseBody } from "../protocol/types.js";
import type { AssembledCall } from "../provider/assembler/index.js";
import type { Provider, ProviderOutcome } from "../provider/provider.js";
import { LOOP_DEFAULTS } from "./defaults.js";
import type { FrameChannel } from "./frame-channel.js";
import type { ToolExecutionPolicy } from "./options.js";
import type { Refusal, ToolRunner } from "./tool-runner.js";

export interface TurnInput {
  channel: FrameChannel;
  provider: Provider;
  turn: number;
  body: CreateResponseBody;
  firstAttempt: number;
  signal: AbortSignal;
  toolExecution: ToolExecutionPolicy;
  runner: ToolRunner;
  /** Decides, at promotion, whether a call may run (tool_choice, budget, a terminal tool already ran). */
  admit: (call: AssembledCall) => Refusal | undefined;
  /** Native call items are promoted and answered too (`ProviderStreamOptions.nativeCalls`). */
  nativeCalls?: boolean;
  /** What is left of the run's tool-call budget when the turn starts. */
  remainingToolCalls: number;
  /** Calls past the budget after which the response is not read further. @defaultValue LOOP_DEFAULTS.callsPastBudget */
  callsPastBudget?: number;
}

export interface TurnOutcome {
  outcome: ProviderOutcome;
  /** The last attempt number used (a loop-level resend continues after it). */
  lastAttempt: number;
  /** The response was not read to its end: it made this many calls, too many past the budget. */
  cutAfterCalls?: number;
}

export async function streamTurn(input: TurnInput): Promise<TurnOutcome> {
  const { channel, runner, toolExecution } = input;
  const deferred: AssembledCall[] = [];
  const limit = input.remainingToolCalls + (input.callsPastBudget ?? LOOP_DEFAULTS.callsPastBudget);
  let seen = 0;
  const onCall = (call: AssembledCall) => {
    seen++;
    if (toolExecution === "eager") runner.submit(call, input.admit(call));
    else deferred.push(call);
  };
  const stream = input.provider.stream(
    { body: input.body, turn: input.turn, firstAttempt: input.firstAttempt },
    {
      signal: input.signal,
      canRetry: () => !runner.ranAny,
      isBusy: () => runner.busy,
      onCall,
      ...(input.nativeCalls === true ? { nativeCalls: true } : {}),
    },
  );
  let lastAttempt = input.firstAttempt;
  // A provider event and the frames derived from it are emitted together, so a tool that ends
  // meanwhile cannot land among them (their positions stay deterministic for replay). The cut (see
  // the module comment) is checked before the next group is shown: a replay, whose tape ends where
  // the cut was, agrees.
  const show = (group: readonly ProviderFrame[]): boolean => {
    if (seen >= limit) return false;
    channel.emitGroup(group);
    for (const frame of group) if (frame.type === "request_started") lastAttempt = frame.attempt;
    return true;
  };
  if (stream.pumpGroups !== undefined) await stream.pumpGroups(show);
  else for await (const group of stream.frameGroups?.() ?? single(stream)) if (!show(group)) break;
  const outcome = await stream.result;
  const cut = seen >= limit;
  const completed = !cut && outcome.ok && outcome.response.terminal === "completed";
  if (toolExecution === "after_response") {
    // Waiting for the whole response buys a fixed order: calls run in output order.
    if (completed) {
      deferred.sort((a, b) => a.outputIndex - b.outputIndex);
      for (const call of deferred) runner.submit(call, input.admit(call));
    }
  } else if (!completed) {
    runner.stopPending(cut ? cutShort(limit) : notRun(outcome));
  }
  await runner.drain();
  return cut ? { outcome, lastAttempt, cutAfterCalls: limit } : { outcome, lastAttempt };
}

function cutShort(limit: number): Refusal {
  return {
    code: "not_run",
    message: `The response made ${limit} tool calls, far more than the run's budget allows; it was not read further and this call did not run.`,
  };
}

/** A stream without groups, one frame per group. */
async function* single(stream: AsyncIterable<ProviderFrame>): AsyncGenerator<readonly ProviderFrame[]> {
  for await (const frame of stream) yield [frame];
}

function notRun(outcome: ProviderOutcome): Refusal {
  if (!outcome.ok && outcome.error.kind === "cancelled") {
    return { code: "cancelled", message: "The run was cancelled before this call started; it did not run." };
  }
  const how = outcome.ok ? `ended ${outcome.response.status}` : `failed (${outcome.error.frameCode})`;
  return { code: "not_run", message: `The response ${how} before this call started, so it did not run.` };
}
