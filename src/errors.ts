/**
 * The one error base of eddy. Every error eddy raises on purpose is an `EddyError` with a stable
 * `code` (safe to branch on), a `fault` saying who has to act, and a message that names the bad
 * input and, where there is one, the fix.
 */

/** Stable error codes. Add new ones here; never reuse a code for a different meaning. */
export type EddyErrorCode =
  // SSE / framing
  | "sse_message_too_large"
  | "response_too_large"
  | "sse_stream_error"
  // frames, tapes and files
  | "frame_invalid"
  | "tape_invalid"
  | "tape_version_unsupported"
  // a thread log with more unreadable lines than eddy ever leaves (context/threads.ts)
  | "thread_log_invalid"
  // provider / transport
  | "provider_http"
  | "provider_connection"
  | "provider_not_found"
  | "connect_timeout"
  | "first_byte_timeout"
  | "idle_timeout"
  | "stream_truncated"
  | "not_event_stream"
  | "response_failed"
  | "response_incomplete"
  | "previous_response_not_found"
  | "invalid_response"
  | "unsupported_request"
  | "cancelled"
  // configuration and usage
  | "invalid_config"
  | "invalid_argument"
  // eddy's own state under .eddy/ (a symlink, a special file, a file with other links)
  | "state_path_unsafe"
  // a thread another process holds (context/thread-hold.ts)
  | "thread_busy"
  | "invalid_run_spec"
  | "policy_denied"
  // tools
  | "tool_input_invalid"
  | "tool_not_found"
  | "tool_failed"
  | "tool_timeout"
  | "path_outside_workspace"
  // a write into .git or the workspace's .eddy/ (tools/workspace.ts resolveWritableInWorkspace)
  | "path_protected"
  // batch
  | "workspace_copy_failed"
  // undo (a file changed since the change to undo)
  | "undo_conflict"
  // loop
  | "output_schema_mismatch"
  | "replay_mismatch"
  // mock server
  | "scenario_invalid"
  // eddy serve (its client: the server answered 4xx/5xx)
  | "serve_error";

/** Who has to act on an error: the caller (configuration), the provider, the model, or eddy itself. */
export type ErrorFault = "user" | "provider" | "model" | "system";

export interface EddyErrorOptions {
  cause?: unknown;
  fault?: ErrorFault;
  /** Structured, secret-free details (status codes, field names, limits). */
  details?: Record<string, unknown>;
}

/**
 * The one error class of eddy: a stable `code` to branch on, a `fault` saying who must act, and a
 * message naming the problem and the fix. `EddyError.isInstance` also recognises copies from
 * another instance of the package.
 */
export class EddyError extends Error {
  override readonly name = "EddyError";
  readonly code: EddyErrorCode;
  readonly fault: ErrorFault;
  readonly details: Record<string, unknown>;

  constructor(code: EddyErrorCode, message: string, options: EddyErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.fault = options.fault ?? "system";
    this.details = options.details ?? {};
  }

  /** True for any EddyError, also one from another copy of this module. */
  static isInstance(value: unknown): value is EddyError {
    return (
      value instanceof EddyError ||
      (value instanceof Error &&
        value.name === "EddyError" &&
        typeof (value as { code?: unknown }).code === "string")
    );
  }
}

/** Exhaustiveness guard for `switch` over discriminated unions: fails to compile when a case is missing. */
export function assertNever(value: never, what = "value"): never {
  throw new EddyError("invalid_argument", `unexpected ${what}: ${JSON.stringify(value)}`);
}

/** A short, single-line description of any thrown value (for error frames and one-line CLI errors). */
export function describeError(error: unknown): string {
  if (error instanceof Error) {
    const message = error.message;
    const first = message.split("\n", 1)[0] ?? "";
    // A first line that opens a JSON dump (the MCP SDK's validation errors end "…result: [" and
    // list the issues below) says nothing alone: the whole message, on one line, cut.
    if (/[[{]\s*$/.test(first) && message.length > first.length + 1) {
      const whole = message.replace(/\s+/g, " ").trim();
      return whole.length > 500 ? `${whole.slice(0, 499)}…` : whole;
    }
    return first || error.name;
  }
  if (typeof error === "string") return error;
  try {
    return JSON.stringify(error);
  } catch {
    return String(error);
  }
}
