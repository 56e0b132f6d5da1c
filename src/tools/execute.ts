/**
 * Executes one function call: look the name up, parse the arguments strictly, run the tool with a
 * timeout and the run's abort signal, and encode the stable output (docs/decisions.md #7). Whatever
 * happens (unknown tool, disabled tool, bad JSON, schema violation, throw, timeout, cancellation),
 * the call gets an output the model can read; this function never throws.
 */
import { assertNever, EddyError } from "../errors.js";
import { onAbort } from "../util/abort.js";
import { redactSecrets as redact } from "../util/redact.js";
import { TOOL_DEFAULTS } from "./defaults.js";
import type { FileChangeRecord } from "./file-changes.js";
import { encodeToolOutput, toToolOutput } from "./output.js";
import type { ToolLookup, ToolRegistry } from "./registry.js";
import {
  isToolResult,
  type SubRunRecord,
  type ToolError,
  type ToolErrorCode,
  type ToolResult,
  toolResult,
} from "./tool.js";
import { shortenText } from "./utf8.js";

/** A function call to execute, as promoted by the loop. */
export interface ToolCall {
  callId: string;
  /** The name the model used (canonical or alias). */
  name: string;
  /** The raw `arguments` string, unparsed. */
  arguments: string;
  /**
   * The output item type the call came from, when not a `function_call` (`shell_call`,
   * `custom_tool_call`, …): `executeCall` (native-calls.ts) runs those.
   * @defaultValue "function_call"
   */
  itemType?: string;
}

/** Options of `executeToolCall`. */
export interface ExecuteToolCallOptions {
  /** The run's signal: when it aborts, the tool is told through its own signal and the call ends `cancelled`. */
  signal?: AbortSignal;
  /** Absolute, real path of the workspace root (passed to the tool as `context.workspace`). */
  workspace: string;
  /**
   * Timeout for tools that declare no `timeoutMs` of their own.
   * @defaultValue TOOL_DEFAULTS.timeoutMs
   */
  timeoutMs?: number;
  /** @defaultValue TOOL_DEFAULTS.outputCapBytes */
  outputCapBytes?: number;
  /** Tools may return images for the model (`ToolContext.imagesInOutput`). @defaultValue false */
  imagesInOutput?: boolean;
  /** What the calling run lends its tools (`ToolContext.parent`). @defaultValue none */
  parent?: unknown;
  /**
   * Secret values that must never reach the model through an error message; each is replaced by
   * `[redacted]`. @defaultValue the registry's `secrets` (the CLI's: `secretValuesFromEnv` of its environment)
   */
  redact?: readonly string[];
}

/** The outcome of one call: what to send to the model, plus facts for frames and the loop. */
export interface ToolCallResult {
  /** The canonical tool name (for an alias, the tool it stands for; for an unknown tool, the name as called). */
  tool: string;
  ok: boolean;
  /** Exactly the string to send as `function_call_output.output` (and to put in `tool_ended.output`). */
  output: string;
  truncated: boolean;
  /** The uncapped JSON string, only when `truncated`. */
  fullOutput?: string;
  exitCode: number;
  error?: ToolError;
  /** For a terminal tool that succeeded: its validated arguments (the run's `result`). */
  terminalResult?: unknown;
  /** Wall time of the call in milliseconds (never sent to the model). */
  durationMs: number;
  /** An image the tool returned (a `data:` URL), sent as an `input_image` part after `output`. */
  imageUrl?: string;
  /** The files the call changed (`ToolResult.fileChanges`), for the `tool_ended` frame. */
  fileChanges?: FileChangeRecord[];
  /** A sub-agent's run (`ToolResult.subrun`), for the `tool_ended` frame. */
  subrun?: SubRunRecord;
  /** The sub-agent's calls awaiting approval (`ToolResult.deferred`): the call is not answered. */
  deferred?: string[];
}

/**
 * Exit codes for failures, by error code (shell conventions): 1 general failure, 2 bad input,
 * 124 timeout (as `timeout(1)`), 126 refused/not permitted, 127 not found, 130 cancelled (SIGINT).
 * A code not listed here exits 1.
 */
export const TOOL_EXIT_CODES: Readonly<Record<string, number>> = {
  tool_failed: 1,
  path_outside_workspace: 1,
  path_protected: 126,
  tool_input_invalid: 2,
  tool_timeout: 124,
  tool_disabled: 126,
  tool_not_allowed: 126,
  max_tool_calls: 126,
  tool_not_found: 127,
  cancelled: 130,
};

/** The exit code that goes with an error code. */
export function exitCodeFor(code: ToolErrorCode): number {
  return TOOL_EXIT_CODES[code] ?? 1;
}

/**
 * The output for a call refused before execution (disallowed by `tool_choice`, over the tool-call
 * budget, …), in the same shape as every other failure. `code` picks the exit code (`TOOL_EXIT_CODES`).
 */
export function refusedToolOutput(
  name: string,
  code: ToolErrorCode,
  message: string,
  options: { outputCapBytes?: number } = {},
): ToolCallResult {
  return finish(name, failure(code, message), { started: performance.now(), ...options });
}

/** Executes one call. Never throws: every failure is an `ok:false` result. */
export async function executeToolCall(
  registry: ToolRegistry,
  call: ToolCall,
  options: ExecuteToolCallOptions,
): Promise<ToolCallResult> {
  const started = performance.now();
  const capOptions = { started, outputCapBytes: options.outputCapBytes };
  const lookup = registry.lookup(call.name);
  if (lookup.kind !== "tool") return finish(lookup.name, refusal(registry, lookup), capOptions);
  const tool = lookup.tool;
  const definition = tool.definition;
  const finishTool = (result: ToolResult, terminalResult?: unknown) =>
    finish(tool.name, result, { ...capOptions, hint: definition.truncationHint, terminalResult });

  if (options.signal?.aborted) {
    return finishTool(failure("cancelled", `The run was cancelled before ${tool.name} started.`));
  }
  const parsed = tool.parseArguments(call.arguments);
  if (!parsed.ok) return finishTool(failure(parsed.error.code, parsed.error.message));
  const args = parsed.value;

  const execute = definition.execute;
  if (execute === undefined) {
    // A terminal tool without a body: its arguments are the result.
    return finishTool(toolResult({ ok: true, stdout: "result accepted" }), args);
  }

  const timeoutMs = definition.timeoutMs ?? options.timeoutMs ?? TOOL_DEFAULTS.timeoutMs;
  const outcome = await runBounded(
    (signalOf) =>
      execute.call(definition, args, {
        get signal() {
          return signalOf();
        },
        workspace: options.workspace,
        callId: call.callId,
        ...(options.imagesInOutput === true ? { imagesInOutput: true } : {}),
        ...(options.parent === undefined ? {} : { parent: options.parent }),
      }),
    { name: tool.name, timeoutMs, signal: options.signal },
  );
  switch (outcome.kind) {
    case "timeout":
      return finishTool(
        failure("tool_timeout", `${tool.name} did not finish within ${timeoutMs} ms and was stopped.`),
      );
    case "cancelled":
      return finishTool(
        failure("cancelled", `The run was cancelled while ${tool.name} was running; it was stopped.`),
      );
    case "threw":
      return finishTool(fromThrown(tool.name, outcome.error, options.redact ?? registry.secrets ?? []));
    case "returned": {
      const result = fromReturned(tool.name, outcome.value);
      return finishTool(result, definition.terminal === true && result.ok ? args : undefined);
    }
    default:
      return assertNever(outcome, "tool outcome");
  }
}

/** How a bounded tool body ended: it returned, it threw, or it was stopped (timeout or run cancelled). */
type Outcome =
  | { kind: "returned"; value: unknown }
  | { kind: "threw"; error: unknown }
  | { kind: "timeout" }
  | { kind: "cancelled" };

/**
 * Runs `body` until it settles, its time is up or the run's signal aborts — whichever comes
 * first. A stop wins the race before the tool's own abort handling can answer, then aborts the
 * tool's signal with the reason (`tool_timeout` or `cancelled`).
 *
 * The tool's signal is made when the tool first reads it (`signalOf`), already aborted if a stop
 * came first. A body that returns without a promise is done: nothing can stop it (a timer cannot
 * fire while it runs), so no timer, race or signal is made for it — only the run's cancellation
 * during it is honoured (bench/README.md, "The turn").
 */
async function runBounded(
  body: (signalOf: () => AbortSignal) => unknown,
  o: { name: string; timeoutMs: number; signal: AbortSignal | undefined },
): Promise<Outcome> {
  let controller: AbortController | undefined;
  let stopped: "timeout" | "cancelled" | undefined;
  const reason = (why: "timeout" | "cancelled") =>
    why === "timeout"
      ? new EddyError("tool_timeout", `${o.name} timed out after ${o.timeoutMs} ms`)
      : new EddyError("cancelled", "the run was cancelled");
  const signalOf = (): AbortSignal => {
    if (controller === undefined) {
      controller = new AbortController();
      if (stopped !== undefined) controller.abort(reason(stopped));
    }
    return controller.signal;
  };
  let value: unknown;
  try {
    value = body(signalOf);
  } catch (error) {
    return o.signal?.aborted === true ? { kind: "cancelled" } : { kind: "threw", error };
  }
  if (!isThenable(value))
    return o.signal?.aborted === true ? { kind: "cancelled" } : { kind: "returned", value };
  let onStop: () => void = () => {};
  const stoppedPromise = new Promise<void>((resolve) => {
    onStop = resolve;
  });
  const stop = (why: "timeout" | "cancelled") => {
    if (stopped !== undefined) return;
    stopped = why;
    onStop(); // settle the race before the tool's own abort handling can
    controller?.abort(reason(why));
  };
  const unsubscribe = o.signal === undefined ? undefined : onAbort(o.signal, () => stop("cancelled"));
  const timer = setTimeout(() => stop("timeout"), o.timeoutMs);
  const running = Promise.resolve(value).then(
    (returned): Outcome => ({ kind: "returned", value: returned }),
    (error: unknown): Outcome => ({ kind: "threw", error }),
  );
  const outcome = await Promise.race([running, stoppedPromise.then(() => undefined)]);
  clearTimeout(timer);
  unsubscribe?.();
  // Checked first: a tool that settles in the same tick as its stop still counts as stopped.
  const why = stopped as "timeout" | "cancelled" | undefined;
  if (why !== undefined) return { kind: why };
  return outcome ?? { kind: "cancelled" };
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    value !== null &&
    (typeof value === "object" || typeof value === "function") &&
    typeof (value as { then?: unknown }).then === "function"
  );
}

function refusal(registry: ToolRegistry, lookup: Exclude<ToolLookup, { kind: "tool" }>): ToolResult {
  if (lookup.kind === "disabled") {
    return failure("tool_disabled", `${lookup.name} is disabled: ${lookup.reason}.`);
  }
  const names = registry.names();
  const available =
    names.length === 0 ? "No tools are available in this run." : `Available tools: ${names.join(", ")}.`;
  const key = (n: string) => n.toLowerCase().replace(/-/g, "_");
  const near = [...names, ...registry.disabledNames()].find((n) => key(n) === key(lookup.name));
  const suggestion = near === undefined ? "" : ` Did you mean "${near}"?`;
  return failure(
    "tool_not_found",
    `Unknown tool "${shortenText(lookup.name, 80)}".${suggestion} ${available}`,
  );
}

function failure(code: ToolErrorCode, message: string): ToolResult {
  return toolResult({ ok: false, exitCode: exitCodeFor(code), error: { code, message } });
}

/** A string is stdout; a `ToolResult` is used as is; `undefined` is empty; anything else is JSON-encoded. */
function fromReturned(tool: string, value: unknown): ToolResult {
  if (typeof value === "string") return toolResult({ ok: true, stdout: value });
  if (isToolResult(value)) return value;
  if (value === undefined) return toolResult({ ok: true });
  try {
    return toolResult({ ok: true, stdout: JSON.stringify(value) ?? "" });
  } catch (error) {
    return failure(
      "tool_failed",
      `${tool} returned a value that cannot be JSON-encoded (${oneLine(error)}).`,
    );
  }
}

/**
 * A thrown error becomes a short message: the first line, bounded, secrets redacted. Never the
 * stack, `cause` or `details` (they may hold environment values or file contents). An `EddyError`
 * keeps its code (e.g. `path_outside_workspace`); anything else is `tool_failed`.
 */
function fromThrown(tool: string, error: unknown, secrets: readonly string[]): ToolResult {
  const message = redactSecrets(oneLine(error), secrets);
  if (EddyError.isInstance(error)) return failure(error.code, message);
  return failure("tool_failed", `${tool} failed: ${message}`);
}

function oneLine(error: unknown): string {
  let text: string;
  if (error instanceof Error) text = error.message.split("\n", 1)[0] || error.name;
  else if (typeof error === "string") text = error.split("\n", 1)[0] ?? "";
  else text = "a non-Error value was thrown";
  return shortenText(text, TOOL_DEFAULTS.errorMessageMaxChars);
}

const SECRET_NAME = /KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|COOKIE|SESSION|PRIVATE/i;
const MIN_SECRET_LENGTH = 8;

/** Values of environment variables whose names look secret (`*_API_KEY`, `*TOKEN*`, …), longest first. */
export function secretValuesFromEnv(env: Readonly<Record<string, string | undefined>>): string[] {
  const values = new Set<string>();
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && value.length >= MIN_SECRET_LENGTH && SECRET_NAME.test(name)) values.add(value);
  }
  return [...values].sort((a, b) => b.length - a.length);
}

/** `text` with every occurrence of each secret replaced by `[redacted]`. */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  return redact(text, secrets, "[redacted]");
}

function finish(
  tool: string,
  result: ToolResult,
  options: {
    started: number;
    outputCapBytes?: number | undefined;
    hint?: string | undefined;
    terminalResult?: unknown;
  },
): ToolCallResult {
  const encoded = encodeToolOutput(toToolOutput(tool, result), {
    ...(options.outputCapBytes === undefined ? {} : { capBytes: options.outputCapBytes }),
    ...(options.hint === undefined ? {} : { hint: options.hint }),
  });
  const out: ToolCallResult = {
    tool,
    ok: result.ok,
    output: encoded.output,
    truncated: encoded.truncated,
    exitCode: result.exitCode,
    durationMs: performance.now() - options.started,
  };
  if (encoded.fullOutput !== undefined) out.fullOutput = encoded.fullOutput;
  if (result.error !== undefined) out.error = { code: result.error.code, message: result.error.message };
  if (options.terminalResult !== undefined) out.terminalResult = options.terminalResult;
  if (result.imageUrl !== undefined) out.imageUrl = result.imageUrl;
  if (result.fileChanges !== undefined) out.fileChanges = result.fileChanges;
  if (result.subrun !== undefined) out.subrun = result.subrun;
  if (result.deferred !== undefined) out.deferred = result.deferred;
  return out;
}
