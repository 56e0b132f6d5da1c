/**
 * The output item that answers a call, by the item type the call came from: a
 * `function_call_output` for a function call, and for the native items (provider/assembler/
 * native-calls.ts) the matching output item — `apply_patch_call_output` (`status` completed or
 * failed, `output` the tool's answer), `shell_call_output` (one `{stdout, stderr, outcome}` chunk
 * per command, `max_output_length` echoed), `local_shell_call_output`, `custom_tool_call_output`,
 * and `mcp_approval_response` for an MCP approval request.
 *
 * Built only from the call and the result's `output` string (what `tool_ended.output` records),
 * so a replay that feeds back recorded outputs sends the same items.
 */
import { functionCallOutputItem, textOutputItem } from "../history/items.js";
import type { JsonObject } from "../protocol/types.js";
import { shellOutputChunks } from "../tools/native-calls.js";
import type { AnsweredCall } from "./tool-runner.js";

/** The input item that answers `answered.call`. */
export function answerItem(answered: AnsweredCall): JsonObject {
  const { call, result } = answered;
  switch (call.itemType) {
    case "function_call":
      return functionCallOutputItem(call.callId, result.output, result.imageUrl);
    case "shell_call": {
      const item: JsonObject = {
        type: "shell_call_output",
        call_id: call.callId,
        output: shellOutputChunks(result.output) as unknown as JsonObject[],
      };
      const action = call.item.action as JsonObject | undefined;
      if (typeof action?.max_output_length === "number") item.max_output_length = action.max_output_length;
      return item;
    }
    case "mcp_approval_request":
      return textOutputItem(
        call.itemType,
        call.callId,
        result.ok ? "" : errorMessage(result.output),
        result.ok,
      );
    default:
      return textOutputItem(call.itemType, call.callId, result.output, result.ok);
  }
}

/** The `error.message` of a docs/decisions.md #7 output (why a call was refused), else the output itself. */
function errorMessage(output: string): string {
  try {
    const parsed = JSON.parse(output) as { error?: { message?: unknown } };
    if (typeof parsed.error?.message === "string") return parsed.error.message;
  } catch {}
  return output;
}
