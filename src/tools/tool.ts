/**
 * The tool contract: what a tool is, what it receives and what it answers. Tools never see the
 * provider; the loop hands them parsed, validated arguments and turns what they return into the
 * stable model-facing output object (docs/decisions.md #7).
 */
import type { z } from "zod";

import type { FileChangeRecord } from "./file-changes.js";

/** A JSON Schema object (the tool's `parameters`). */
export type { JsonSchema } from "../util/schema.js";

import type { JsonSchema } from "../util/schema.js";

/** What a running tool gets besides its arguments. */
export interface ToolContext {
  /** Aborted when the run is cancelled or the tool's timeout expires. Tools must stop promptly. */
  signal: AbortSignal;
  /** Absolute, real path of the workspace root. File tools never reach outside it. */
  workspace: string;
  /** The model's `call_id` for this call (for idempotency keys, never for output). */
  callId: string;
  /**
   * An image a tool returns (`ToolResult.imageUrl`) is shown to the model: the provider takes
   * images in tool output (its `toolOutputImages` capability). When false, say so in a note instead.
   */
  imagesInOutput?: boolean;
  /**
   * What the calling run lends its tools (the provider, policy, tools and approval handler it
   * runs with): opaque here; `agentTool` (src/loop/agent-tool.ts) runs its sub-agent with it.
   * Absent outside a run (a tool executed on its own, a replay running tools live).
   */
  parent?: unknown;
}

/**
 * What a tool may return. A `string` becomes `stdout`; a `ToolResult` is used as is (ok, exit
 * code, streams, artifacts); any other value is JSON-encoded into `stdout`.
 */
export type ToolReturn = string | ToolResult | unknown;

/** A structured tool answer; becomes the output object of docs/decisions.md #7 `{tool, ok, exit_code, stdout, stderr, artifacts?, error?}`. */
export interface ToolResult {
  /** Brand so a returned plain object is not mistaken for a result: build one with `toolResult()`. */
  readonly kind: "eddy.tool_result";
  ok: boolean;
  exitCode: number;
  stdout: string;
  stderr: string;
  /** Small, deterministic, JSON-safe facts (paths, counts). Never ids or durations. */
  artifacts?: Record<string, unknown>;
  error?: ToolError;
  /**
   * An image for the model (a `data:` URL), sent after the output as an `input_image` part of the
   * `function_call_output` (only when `ToolContext.imagesInOutput`).
   */
  imageUrl?: string;
  /**
   * The files the call changed, content before and after (`write_file`, `apply_patch`): kept in
   * the `tool_ended` frame (never sent to the model) so a turn can be undone (file-changes.ts).
   */
  fileChanges?: FileChangeRecord[];
  /**
   * A sub-agent's run (`agentTool`): its frames, kept in the `tool_ended` frame's `subrun` (never
   * sent to the model) so the parent's tape holds them and a replay gives them back.
   */
  subrun?: SubRunRecord;
  /**
   * The sub-agent's calls still waiting for approval when its run ended `awaiting_approval` (its
   * own call ids): the call is then not answered, and the calling run ends awaiting approval too
   * (a `tool_deferred` frame, src/frames/frame.ts). Set by `agentTool` only.
   */
  deferred?: string[];
}

/** A sub-agent's run as a tool result carries it (the `tool_ended` frame's `subrun`, src/frames/frame.ts). */
export interface SubRunRecord {
  /** The agent tool's name. */
  agent: string;
  /** The sub-run's frames, `run_started` to `run_ended`. */
  frames: unknown[];
}

/**
 * Error codes the tools layer writes into model-facing outputs. Open: a custom tool may use its
 * own code. `tool_disabled` (a built-in turned off by configuration), `tool_not_allowed` (refused
 * by `tool_choice`) and `max_tool_calls` (over the run's budget) are refusals; the rest match
 * `EddyErrorCode`s of the same name.
 */
export type ToolErrorCode =
  | "tool_input_invalid"
  | "tool_not_found"
  | "tool_disabled"
  | "tool_not_allowed"
  | "max_tool_calls"
  | "tool_failed"
  | "tool_timeout"
  | "path_outside_workspace"
  | "path_protected"
  | "cancelled"
  | "interrupted"
  | (string & {});

/** A model-readable error: a stable code and a message that says what to do differently. */
export interface ToolError {
  code: ToolErrorCode;
  message: string;
}

/**
 * A per-call approval rule. (Declared through a method type so that a `ToolDefinition<{path:
 * string}>` still fits in a `ToolDefinition[]`, as `execute` does.)
 */
export type ApprovalRule<Args> = { rule(args: Args): boolean }["rule"];

/** A tool definition. `parameters` is a JSON Schema or a zod schema (converted with zod's own JSON Schema export). */
export interface ToolDefinition<Args = unknown> {
  /** 1–64 characters of `[a-zA-Z0-9_-]` (the spec's pattern). */
  name: string;
  description: string;
  parameters: JsonSchema | z.ZodType<Args>;
  /**
   * Sent as the function tool's `strict` flag. Arguments are validated locally either way.
   * @defaultValue false
   */
  strict?: boolean;
  /**
   * Runs the tool. Optional only for terminal tools (whose arguments are the result). Throwing is
   * fine: the call ends `ok:false` with the error's first line (an `EddyError` keeps its `code`).
   * (Declared as a method so a `ToolDefinition<{path: string}>` fits in a `ToolDefinition[]`.)
   *
   * It must not block the event loop: the timeout and a cancellation can only act when the loop
   * is free, so CPU-bound work belongs in a worker thread or a child process (the built-in `grep`
   * and `apply_patch` run theirs in a worker thread that a cancellation terminates).
   */
  execute?(args: Args, context: ToolContext): Promise<ToolReturn> | ToolReturn;
  /**
   * Per-call timeout in milliseconds; wins over the run's `timeoutMs`.
   * @defaultValue the run's `timeoutMs`, else TOOL_DEFAULTS.timeoutMs
   */
  timeoutMs?: number;
  /**
   * A terminal tool ends the run: its validated arguments become the run's `result` (docs/decisions.md #16:
   * `submit_decision`). If it also has `execute`, that runs first and must succeed.
   * @defaultValue false
   */
  terminal?: boolean;
  /**
   * The tool only reads: it changes nothing in the workspace or elsewhere, so an approval flow may
   * run it without asking. Never taken from an MCP server's `readOnlyHint` annotation (a server
   * is not trusted: src/tools/mcp/offline.ts, `MCP_TOOL_EFFECTS`).
   * @defaultValue false
   */
  readOnly?: boolean;
  /**
   * Running a call twice has the effect of running it once, so a call a crash interrupted may run
   * again on resume (`eddy resume`, batch workers); any other interrupted call is answered as
   * interrupted instead (at most once, docs/architecture.md "Resuming a run").
   * @defaultValue the tool's `readOnly`
   */
  idempotent?: boolean;
  /** Other names the model may use for this tool. Accepted, never advertised (docs/decisions.md #7). */
  aliases?: string[];
  /**
   * Told to the model when this tool's output is capped, after the byte count: how to ask for
   * less (e.g. "read a smaller range with start_line/end_line").
   * @defaultValue a generic "ask for less output" hint
   */
  truncationHint?: string;
  /**
   * Ask before running a call (the run's `onApproval`, the CLI's `--approve ask`). A function
   * decides per call from the parsed arguments.
   * @defaultValue false
   */
  needsApproval?: boolean | ApprovalRule<Args>;
  /**
   * May run at the same time as other calls of the same response (with `parallelToolCalls`). A
   * tool that changes shared state (files, processes) says false and then runs alone.
   * @defaultValue true
   */
  parallel?: boolean;
  /**
   * Free-form input: where the provider has custom tools (the `nativeTools` capability) the tool
   * is offered as `{type:"custom"}` and the model writes raw text (a patch, SQL, code) instead of
   * JSON; `true` for any text, or a Lark or regex grammar the text follows. The text arrives as
   * the value of the tool's one required string parameter, which is also how the tool is offered
   * (as a function) to other providers. @defaultValue false (JSON arguments)
   */
  freeform?: boolean | FreeformGrammar;
  /**
   * Releases what the tool holds across calls (processes it started, connections). Called once
   * per run by `ToolRegistry.dispose()` when the run ends; the tool may be used again afterwards.
   * (The built-in `shell` kills the background jobs its commands left running.)
   */
  dispose?(): Promise<void> | void;
}

/** The grammar a free-form tool's input follows (sent as the custom tool's `format`). */
export interface FreeformGrammar {
  syntax: "lark" | "regex";
  definition: string;
}

/**
 * The brand `toolResult()` puts on what it builds: a symbol key, which no JSON value can carry. A
 * tool that returns parsed data shaped like a result (`{"kind": "eddy.tool_result", "fileChanges":
 * […]}` from a web page) must not forge the records the run acts on — undo records, a sub-agent's
 * deferred calls — so `isToolResult` asks for the symbol, not the `kind` string. `Symbol.for`: a
 * second copy of the package in one program still recognises the first one's results.
 */
const BRAND: unique symbol = Symbol.for("eddy.tool_result") as never;

/** Builds a branded `ToolResult`. */
export function toolResult(
  fields: Omit<ToolResult, "kind" | "stdout" | "stderr" | "exitCode"> & {
    exitCode?: number;
    stdout?: string;
    stderr?: string;
  },
): ToolResult {
  const result: ToolResult & { [BRAND]?: true } = {
    [BRAND]: true,
    kind: "eddy.tool_result",
    ok: fields.ok,
    exitCode: fields.exitCode ?? (fields.ok ? 0 : 1),
    stdout: fields.stdout ?? "",
    stderr: fields.stderr ?? "",
  };
  if (fields.artifacts !== undefined) result.artifacts = fields.artifacts;
  if (fields.error !== undefined) result.error = fields.error;
  if (fields.imageUrl !== undefined) result.imageUrl = fields.imageUrl;
  if (fields.fileChanges !== undefined) result.fileChanges = fields.fileChanges;
  if (fields.subrun !== undefined) result.subrun = fields.subrun;
  if (fields.deferred !== undefined) result.deferred = fields.deferred;
  return result;
}

/** True for a value built with `toolResult()` (checked by its brand, not by shape: see `BRAND`). */
export function isToolResult(value: unknown): value is ToolResult {
  return value !== null && typeof value === "object" && (value as { [BRAND]?: unknown })[BRAND] === true;
}

/**
 * Identity helper that infers `Args` from a zod schema.
 *
 * @example
 * ```ts
 * const weather = defineTool({
 *   name: "get_weather",
 *   description: "Current weather for a city",
 *   parameters: z.object({ city: z.string() }),
 *   execute: async ({ city }) => `Sunny in ${city}`,
 * });
 * ```
 */
export function defineTool<Args>(definition: ToolDefinition<Args>): ToolDefinition<Args> {
  return definition;
}
