/**
 * The response assembler: a reducer over streaming events, `step(state, event) → state`. It does
 * no I/O and reads no clock. For speed it updates `state` in place and returns it (copying per
 * delta would make a 100k-delta stream quadratic); treat it as a function of (state, event).
 *
 * Tolerances, each forced by a real stream (docs/pitfalls.md):
 * - events out of order (a delta before its `output_item.added`): item state is created lazily
 *   and merged, never replaced (#27);
 * - item ids that change mid-item (GitHub Copilot capture): items are keyed by `output_index` (#27);
 * - deltas after an item closed are ignored (#30);
 * - unknown event and item types pass through untouched (#25): they are kept, never executed.
 */
import type { JsonObject } from "../../protocol/types.js";
import { isJsonObject } from "../../util/json.js";
import { onContentPartEvent, onOutputTextEvent, onRefusalEvent } from "./content.js";
import { onFunctionCallArgumentsEvent, onOutputItemEvent } from "./items.js";
import { onErrorEvent, onLifecycleEvent } from "./lifecycle.js";
import { onReasoningEvent } from "./reasoning.js";
import type { Assembly } from "./state.js";

/** Applies one parsed event (a provider_event's `data`) to the assembly. Non-objects are ignored. */
export function step(state: Assembly, event: unknown): Assembly {
  if (!isJsonObject(event)) return state;
  const e = event as JsonObject;
  state.events++;
  const type = e.type;
  if (typeof type !== "string") {
    // A server that ignored `stream: true` and answered with the ResponseResource itself.
    if (e.object === "response") onLifecycleEvent(state, { type: inferTerminalType(e), response: e });
    // A proxy's chat-style error frame, `{"error": {…}}` with no type (docs/pitfalls.md #35).
    else if (e.error !== null && typeof e.error === "object") onErrorEvent(state, e);
    return state;
  }
  switch (type) {
    case "response.created":
    case "response.queued":
    case "response.in_progress":
    case "response.completed":
    case "response.incomplete":
    case "response.failed":
      onLifecycleEvent(state, e);
      break;
    case "response.done": {
      // Not in the spec, but some servers end with it: terminal by its response's status.
      const response = e.response;
      if (response !== null && typeof response === "object") {
        onLifecycleEvent(state, { type: inferTerminalType(response as JsonObject), response });
      }
      break;
    }
    case "error":
      onErrorEvent(state, e);
      break;
    case "response.output_item.added":
    case "response.output_item.done":
      onOutputItemEvent(state, e);
      break;
    case "response.content_part.added":
    case "response.content_part.done":
      onContentPartEvent(state, e);
      break;
    case "response.output_text.delta":
    case "response.output_text.done":
    case "response.output_text.annotation.added":
      onOutputTextEvent(state, e);
      break;
    case "response.refusal.delta":
    case "response.refusal.done":
      onRefusalEvent(state, e);
      break;
    case "response.function_call_arguments.delta":
    case "response.function_call_arguments.done":
      onFunctionCallArgumentsEvent(state, e);
      break;
    case "response.reasoning_summary_part.added":
    case "response.reasoning_summary_part.done":
    case "response.reasoning_summary_text.delta":
    case "response.reasoning_summary_text.done":
    case "response.reasoning.delta":
    case "response.reasoning.done":
    // OpenAI and LM Studio name raw reasoning `reasoning_text`; the spec says `reasoning`.
    case "response.reasoning_text.delta":
    case "response.reasoning_text.done":
      onReasoningEvent(state, e);
      break;
    default:
      // Unknown, hosted-tool and extension events: kept in the frames, no effect on the assembly.
      break;
  }
  return state;
}

function inferTerminalType(response: JsonObject): string {
  switch (response.status) {
    case "incomplete":
      return "response.incomplete";
    case "failed":
      return "response.failed";
    default:
      return "response.completed";
  }
}
