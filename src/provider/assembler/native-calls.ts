/**
 * Native tool-call items: the OpenAI item types that a client answers, like `function_call`, but
 * whose input is not a JSON arguments string — `apply_patch_call` (an `operation`), `shell_call`
 * (`action.commands`), `local_shell_call` (`action.command`, an argv) and `custom_tool_call`
 * (free-form `input`) — plus `mcp_approval_request`, which the client answers with a decision.
 * Shapes: test/fixtures/captures/openai/openai-apply-patch-tool*.chunks.txt,
 * openai-shell-tool.1, openai-local-shell-tool.1, openai-custom-tool.1, openai-mcp-tool-approval.1.
 *
 * Each is promoted like a function call and run by the tool that does the same job, with the
 * arguments that tool takes, so gates, approvals, budgets and workspace confinement are the same:
 * an apply-patch operation becomes one `apply_patch {patch}` envelope (the V4A diff is the body of
 * an `*** Add File:` / `*** Update File:` section), a local shell argv becomes one `shell {command}`
 * line, and a shell call's commands run one by one through `shell` (tools/native-shell.ts).
 * A `shell_call` that names a hosted environment (`container_auto`, `container_reference`) is run
 * by the provider, which sends its `shell_call_output` itself (openai-shell-container.1): it is
 * never promoted.
 */
import type { JsonObject } from "../../protocol/types.js";

/** Item types the loop answers besides `function_call`. */
export const NATIVE_CALL_TYPES = [
  "apply_patch_call",
  "shell_call",
  "local_shell_call",
  "custom_tool_call",
  "mcp_approval_request",
] as const;

/** A native call item type. */
export type NativeCallType = (typeof NATIVE_CALL_TYPES)[number];

/** The item type a promoted call came from. */
export type CallItemType = "function_call" | NativeCallType;

/** True for an item type in `NATIVE_CALL_TYPES`. */
export function isNativeCallType(type: unknown): type is NativeCallType {
  return typeof type === "string" && (NATIVE_CALL_TYPES as readonly string[]).includes(type);
}

/** Whether a done native item is for the client to answer (a hosted shell's call is not). */
export function answeredLocally(item: JsonObject): boolean {
  if (item.type !== "shell_call") return true;
  const environment = item.environment;
  if (environment === undefined || environment === null || typeof environment !== "object") return true;
  return (environment as JsonObject).type === "local";
}

/** The call id that pairs a native item with its answer (an MCP approval request is answered by its id). */
export function nativeCallId(item: JsonObject): string | undefined {
  const id = item.type === "mcp_approval_request" ? item.id : item.call_id;
  return typeof id === "string" && id !== "" ? id : undefined;
}

/** The tool name and arguments a native item runs with (see the module comment). */
export function nativeCallInput(item: JsonObject): { name: string; arguments: string } {
  switch (item.type as NativeCallType) {
    case "apply_patch_call":
      return { name: "apply_patch", arguments: JSON.stringify({ patch: patchEnvelope(item.operation) }) };
    case "shell_call":
      return { name: "shell", arguments: JSON.stringify(shellCommands(item.action)) };
    case "local_shell_call":
      return { name: "shell", arguments: JSON.stringify(localShellCommand(item.action)) };
    case "custom_tool_call":
      return { name: text(item.name), arguments: text(item.input) };
    case "mcp_approval_request":
      return { name: text(item.name), arguments: text(item.arguments) };
    default:
      return { name: text(item.type), arguments: "" };
  }
}

/**
 * An apply-patch `operation` as the Codex envelope `apply_patch` parses: `create_file` and
 * `update_file` carry a V4A diff (the `+` lines of a new file; `@@` hunks of an update), which is
 * exactly the body of an `*** Add File:` / `*** Update File:` section.
 */
export function patchEnvelope(operation: unknown): string {
  const op = (operation !== null && typeof operation === "object" ? operation : {}) as JsonObject;
  const path = text(op.path);
  const diff = text(op.diff).replace(/\n+$/, "");
  const body = (header: string) => (diff === "" ? header : `${header}\n${diff}`);
  let section: string;
  switch (op.type) {
    case "create_file":
      section = body(`*** Add File: ${path}`);
      break;
    case "update_file":
      section = body(`*** Update File: ${path}`);
      break;
    case "delete_file":
      section = `*** Delete File: ${path}`;
      break;
    default:
      // Not an operation eddy knows: the parser's error names the line, so the model learns why.
      section = `*** Unsupported operation: ${JSON.stringify(op.type ?? null)}`;
  }
  return `*** Begin Patch\n${section}\n*** End Patch`;
}

/** `shell_call.action` as the arguments of the native shell runner (tools/native-shell.ts). */
function shellCommands(action: unknown): JsonObject {
  const a = (action !== null && typeof action === "object" ? action : {}) as JsonObject;
  const out: JsonObject = {
    commands: Array.isArray(a.commands) ? a.commands.filter((c) => typeof c === "string") : [],
  };
  if (typeof a.timeout_ms === "number") out.timeout_ms = a.timeout_ms;
  if (typeof a.max_output_length === "number") out.max_output_length = a.max_output_length;
  return out;
}

/** `local_shell_call.action` (an argv, env, working directory) as `shell {command, cwd?, timeout_ms?}`. */
function localShellCommand(action: unknown): JsonObject {
  const a = (action !== null && typeof action === "object" ? action : {}) as JsonObject;
  const argv = Array.isArray(a.command) ? a.command.filter((c) => typeof c === "string") : [];
  const env = a.env !== null && typeof a.env === "object" ? (a.env as Record<string, unknown>) : {};
  const assignments = Object.entries(env)
    .filter(([name, value]) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) && typeof value === "string")
    .map(([name, value]) => `${name}=${shellQuote(value as string)}`);
  // No program, no command: the environment alone ran as a bare assignment and answered ok:true
  // for a command that never ran (a `command` sent as a string, not an argv); empty, the shell
  // tool refuses it and the model reads why.
  const words = argv.length === 0 ? [] : [...assignments, ...argv.map(shellQuote)];
  const out: JsonObject = { command: words.join(" ") };
  if (typeof a.working_directory === "string" && a.working_directory !== "") out.cwd = a.working_directory;
  if (typeof a.timeout_ms === "number") out.timeout_ms = a.timeout_ms;
  return out;
}

/** One argv word for bash: as is when it has no special characters, else single-quoted. */
export function shellQuote(word: string): string {
  if (/^[A-Za-z0-9_\-.,:/@%+=]+$/.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

function text(value: unknown): string {
  return typeof value === "string" ? value : "";
}
