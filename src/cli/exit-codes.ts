/** Exit codes of the CLI (docs/architecture.md, "The CLI contract"): the contract scripts rely on. */

import { assertNever } from "../errors.js";
import type { RunEndReason } from "../frames/frame.js";

export const SUCCESS = 0;
export const RUN_FAILED = 1;
/** Bad usage, found before any request is sent. */
export const USAGE_ERROR = 2;
/** Stopped by a limit. */
export const LIMIT_REACHED = 3;
/** The run waits for a decision on a deferred approval (`--approve defer`; `eddy resume --decide`). */
export const AWAITING_APPROVAL = 4;
/** Cancelled by SIGINT/SIGTERM. */
export const CANCELLED = 130;

export function exitCodeFor(reason: RunEndReason): number {
  switch (reason) {
    case "completed":
    case "terminal_tool":
    case "stop_condition":
      return SUCCESS;
    case "failed":
    case "provider_error":
    case "incomplete":
    case "invalid_request":
    case "guardrail":
      return RUN_FAILED;
    case "max_tool_calls":
    case "max_turns":
    case "no_progress":
      return LIMIT_REACHED;
    case "awaiting_approval":
      return AWAITING_APPROVAL;
    case "cancelled":
      return CANCELLED;
    default:
      return assertNever(reason, "run end reason");
  }
}
