/**
 * Response lifecycle and errors. The first terminal event wins (`response.completed`,
 * `response.incomplete`, `response.failed`), except that an `error` event is normally followed by
 * `response.failed` (spec §8.5), which completes it. Usage is read from every snapshot that has it,
 * so failed and incomplete responses keep their usage too (docs/pitfalls.md #41).
 */
import type { JsonObject, Usage } from "../../protocol/types.js";
import { isJsonObject } from "../../util/json.js";
import { str } from "./item-lookup.js";
import { promoteRemainingCalls } from "./items.js";
import type { Assembly, StreamError } from "./state.js";

export function onLifecycleEvent(state: Assembly, event: JsonObject): void {
  const raw = event.response;
  const response = isJsonObject(raw) ? (raw as JsonObject) : undefined;
  const settled = state.terminal !== null && state.terminal !== "error";
  if (settled) return;
  if (response !== undefined) {
    const id = str(response.id);
    if (id !== undefined) state.responseId = id;
    const model = str(response.model);
    if (model !== undefined) state.model = model;
    const status = str(response.status);
    if (status !== undefined) state.status = status;
    if (response.usage !== null && typeof response.usage === "object") state.usage = response.usage as Usage;
  }
  switch (event.type) {
    case "response.completed":
      if (state.terminal === "error") break; // an error event already failed this response
      state.terminal = "completed";
      state.status = "completed";
      state.terminalResponse = response ?? null;
      promoteRemainingCalls(state, response?.output);
      break;
    case "response.incomplete": {
      if (state.terminal === "error") break;
      state.terminal = "incomplete";
      state.status = "incomplete";
      state.terminalResponse = response ?? null;
      const details = response?.incomplete_details;
      const reason =
        details !== null && typeof details === "object" ? str((details as JsonObject).reason) : undefined;
      state.incompleteReason = reason ?? "unknown";
      break;
    }
    case "response.failed":
      state.terminal = "failed";
      state.status = "failed";
      state.terminalResponse = response ?? null;
      state.error ??= readError(response?.error) ?? {
        code: null,
        message: "the provider reported the response as failed",
      };
      break;
    default:
      break;
  }
}

/** `error` events: `{error:{type, code, message, param}}` per spec, or the older flat shape. */
export function onErrorEvent(state: Assembly, event: JsonObject): void {
  if (state.terminal !== null && state.terminal !== "error") return;
  const error = readError(event.error) ??
    readError(event) ?? { code: null, message: "the provider sent an error event" };
  state.error ??= error;
  state.terminal = "error";
  state.status = "failed";
}

function readError(raw: unknown): StreamError | undefined {
  if (!isJsonObject(raw)) return undefined;
  const e = raw as JsonObject;
  const message = str(e.message);
  const code = str(e.code) ?? null;
  if (message === undefined && code === null) return undefined;
  const out: StreamError = { code, message: message ?? code ?? "error" };
  const type = str(e.type);
  if (type !== undefined && type !== "error") out.type = type;
  if (typeof e.param === "string" || e.param === null) out.param = e.param;
  return out;
}

export type { StreamError };
