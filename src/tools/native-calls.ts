/**
 * Executing the calls of native tool items (the loop promotes them: provider/assembler/
 * native-calls.ts) with the run's registry, so they meet the same gates, confinement, timeouts
 * and output cap as function calls:
 *
 * - `custom_tool_call`: the model's free-form `input` becomes the value of the tool's one string
 *   parameter (`{input}` for a free-form tool, `{patch}` for `apply_patch`, `{command}` for
 *   `shell`), then runs as a function call;
 * - `shell_call`: each of `action.commands` runs through `shell`, one after the other; the output
 *   is the JSON of the `shell_call_output.output` chunks (`{stdout, stderr, outcome}` per command:
 *   an exit with its code, or a timeout), each command's text cut to `max_output_length`;
 * - `mcp_approval_request`: nothing runs here — by the time the executor is called the approval
 *   flow has allowed it, and the answer is "approved";
 * - everything else (`apply_patch_call`, `local_shell_call` carry ready `apply_patch` / `shell`
 *   arguments) runs as a function call.
 */
import {
  type ExecuteToolCallOptions,
  executeToolCall,
  type ToolCall,
  type ToolCallResult,
} from "./execute.js";
import { oneStringParameter, type ToolRegistry } from "./registry.js";
import { cutMiddle } from "./utf8.js";

/** One chunk of a `shell_call_output`: what one command printed and how it ended. */
export interface ShellOutputChunk {
  stdout: string;
  stderr: string;
  outcome: { type: "exit"; exit_code: number } | { type: "timeout" };
}

/** Executes any promoted call: a function call, or a native item's call (see the module comment). Never throws. */
export async function executeCall(
  registry: ToolRegistry,
  call: ToolCall,
  options: ExecuteToolCallOptions,
): Promise<ToolCallResult> {
  switch (call.itemType) {
    case "shell_call":
      return executeShellCommands(registry, call, options);
    case "mcp_approval_request":
      return approved(call);
    case "custom_tool_call":
      return executeToolCall(registry, { ...call, arguments: customArguments(registry, call) }, options);
    default:
      return executeToolCall(registry, call, options);
  }
}

/**
 * The JSON arguments for a custom tool call's free-form input: the input as the value of the
 * tool's single required string parameter. A tool without one gets the input as its arguments
 * string (so JSON input still reaches a JSON tool, and anything else is refused as invalid).
 */
export function customArguments(registry: ToolRegistry, call: ToolCall): string {
  const tool = registry.resolve(call.name);
  const key = tool === undefined ? undefined : oneStringParameter(tool.parameters);
  return key === undefined ? call.arguments : JSON.stringify({ [key]: call.arguments });
}

interface ShellCommandsArgs {
  commands: string[];
  timeout_ms?: number;
  max_output_length?: number;
}

/** Runs a `shell_call`'s commands one by one through `shell`; see the module comment. */
async function executeShellCommands(
  registry: ToolRegistry,
  call: ToolCall,
  options: ExecuteToolCallOptions,
): Promise<ToolCallResult> {
  const started = performance.now();
  const args = shellCommandsArgs(call.arguments);
  if (args === undefined || args.commands.length === 0) {
    return executeToolCall(registry, { callId: call.callId, name: call.name, arguments: "{}" }, options);
  }
  // Each command's share of the output cap, so the chunks together stay near it.
  const share = Math.floor((options.outputCapBytes ?? 64 * 1024) / args.commands.length);
  const chunks: ShellOutputChunk[] = [];
  let ok = true;
  let exitCode = 0;
  for (const command of args.commands) {
    const commandArgs: Record<string, unknown> = { command };
    if (args.timeout_ms !== undefined) commandArgs.timeout_ms = args.timeout_ms;
    const result = await executeToolCall(
      registry,
      { callId: call.callId, name: call.name, arguments: JSON.stringify(commandArgs) },
      { ...options, outputCapBytes: Math.max(share, 1024) },
    );
    const parsed = parseOutput(result.output);
    if (chunks.length === 0 && refusedBeforeRunning(parsed.code)) return result; // nothing ran: the refusal as is
    chunks.push(toChunk(parsed, args.max_output_length));
    if (!result.ok) {
      ok = false;
      if (exitCode === 0) exitCode = result.exitCode;
    }
    if (options.signal?.aborted) break;
  }
  const output = JSON.stringify(chunks);
  return { tool: "shell", ok, output, truncated: false, exitCode, durationMs: performance.now() - started };
}

function shellCommandsArgs(raw: string): ShellCommandsArgs | undefined {
  try {
    const parsed = JSON.parse(raw) as Partial<ShellCommandsArgs>;
    return Array.isArray(parsed.commands) ? (parsed as ShellCommandsArgs) : undefined;
  } catch {
    return undefined;
  }
}

interface ParsedOutput {
  stdout: string;
  stderr: string;
  exitCode: number;
  code: string | undefined;
  message: string | undefined;
}

function parseOutput(output: string): ParsedOutput {
  try {
    const o = JSON.parse(output) as {
      stdout?: unknown;
      stderr?: unknown;
      exit_code?: unknown;
      error?: { code?: unknown; message?: unknown };
    };
    return {
      stdout: typeof o.stdout === "string" ? o.stdout : "",
      stderr: typeof o.stderr === "string" ? o.stderr : "",
      exitCode: typeof o.exit_code === "number" ? o.exit_code : 1,
      code: typeof o.error?.code === "string" ? o.error.code : undefined,
      message: typeof o.error?.message === "string" ? o.error.message : undefined,
    };
  } catch {
    return { stdout: output, stderr: "", exitCode: 1, code: undefined, message: undefined };
  }
}

/** Refusals that mean the shell never ran (disabled, unknown, bad input): answered as they are. */
function refusedBeforeRunning(code: string | undefined): boolean {
  return code === "tool_disabled" || code === "tool_not_found" || code === "tool_input_invalid";
}

/**
 * One command's docs/decisions.md #7 output as a `shell_call_output` chunk. An eddy error (a timeout, a refused
 * cwd, a cancellation) is appended to stderr, so the model reads why.
 */
export function toChunk(parsed: ParsedOutput, maxLength: number | undefined): ShellOutputChunk {
  let stderr = parsed.stderr;
  if (parsed.message !== undefined) stderr = stderr === "" ? parsed.message : `${stderr}\n${parsed.message}`;
  return {
    stdout: limit(parsed.stdout, maxLength),
    stderr: limit(stderr, maxLength),
    outcome:
      parsed.code === "tool_timeout" ? { type: "timeout" } : { type: "exit", exit_code: parsed.exitCode },
  };
}

/** The chunks of a shell call's output: its own chunk list, or one chunk made from a docs/decisions.md #7 output (a refusal). */
export function shellOutputChunks(output: string): ShellOutputChunk[] {
  try {
    const parsed = JSON.parse(output) as unknown;
    if (Array.isArray(parsed)) return parsed as ShellOutputChunk[];
  } catch {}
  return [toChunk(parseOutput(output), undefined)];
}

/** `text` cut to `max` UTF-8 bytes (head and tail kept, with a note) when the model asked for a limit. */
function limit(text: string, max: number | undefined): string {
  if (max === undefined || max <= 0) return text;
  const bytes = Buffer.from(text, "utf8");
  if (bytes.length <= max) return text;
  const cut = cutMiddle(bytes, max);
  if (cut === undefined) return text;
  return `${cut.head}\n[… ${cut.cutBytes} bytes cut to fit max_output_length …]\n${cut.tail}`;
}

function approved(call: ToolCall): ToolCallResult {
  const output = JSON.stringify({ tool: call.name, ok: true, exit_code: 0, stdout: "approved", stderr: "" });
  return { tool: call.name, ok: true, output, truncated: false, exitCode: 0, durationMs: 0 };
}
