/**
 * The pre-send history check (docs/pitfalls.md #1, #2, #6): every call has exactly one output, no output
 * is an orphan, and call ids are unique. Violations are repaired — never sent — and each repair is
 * reported so the loop can record it in a `history_repaired` frame. Function calls are always
 * checked; native call items (`apply_patch_call` ↔ `apply_patch_call_output`, `shell_call`,
 * `local_shell_call`, `custom_tool_call`, `mcp_approval_request` ↔ `mcp_approval_response`:
 * `OUTPUT_TYPE_OF`) when the run answers them (`callTypes`): elsewhere they are a provider's
 * record of its own hosted tools, whose outputs are not the client's to add.
 */
import type { HistoryRepair } from "../frames/frame.js";
import type { JsonObject } from "../protocol/types.js";
import { OUTPUT_TYPE_OF, pairingField, pairingKey, textOutputItem } from "./items.js";

export interface RepairedHistory {
  items: JsonObject[];
  repairs: HistoryRepair[];
}

/** Which call item types a check pairs. */
export interface PairingOptions {
  /** Call item types to pair with their outputs (keys of `OUTPUT_TYPE_OF`). @defaultValue ["function_call"] */
  callTypes?: readonly string[];
}

/** A call of the response a chained follow-up answers: its id and item type. */
export interface PendingCall {
  callId: string;
  /** @defaultValue "function_call" */
  itemType?: string;
}

/** Output type → call type, for the paired call types. */
function pairedTypes(options: PairingOptions): { calls: Set<string>; outputs: Map<string, string> } {
  const calls = new Set(options.callTypes ?? ["function_call"]);
  const outputs = new Map<string, string>();
  for (const type of calls) {
    const output = OUTPUT_TYPE_OF[type];
    if (output !== undefined) outputs.set(output, type);
  }
  return { calls, outputs };
}

function withKey(item: JsonObject, key: string): JsonObject {
  return { ...item, [pairingField(item.type)]: key };
}

const MISSING_OUTPUT = JSON.stringify({
  tool: "eddy",
  ok: false,
  exit_code: 1,
  stdout: "",
  stderr: "",
  error: {
    code: "missing_output",
    message: "This call was never answered (its output was lost); it did not run.",
  },
});

/**
 * Repairs a full (stateless) history. Calls are paired with outputs by `call_id`, in order: the
 * k-th output with an id answers the k-th call with that id. A repeated call id is renamed
 * (`<id>__2`) together with its output; an output with no call before it is dropped; a second
 * output for one call is dropped; a call with no output gets a synthetic `ok:false` output placed
 * right after the outputs of its own turn.
 */
export function repairHistory(items: readonly JsonObject[], options: PairingOptions = {}): RepairedHistory {
  const types = pairedTypes(options);
  const repairs: HistoryRepair[] = [];
  const callCount = new Map<string, number>(); // original id → calls seen
  const pendingRenames = new Map<string, string[]>(); // original id → new ids of calls awaiting outputs (FIFO)
  const open = new Map<string, string>(); // effective call id → call item type (unanswered)
  const answered = new Set<string>();
  const out: JsonObject[] = [];

  for (const item of items) {
    if (types.calls.has(String(item.type))) {
      const original = pairingKey(item);
      const n = (callCount.get(original) ?? 0) + 1;
      callCount.set(original, n);
      let id = original;
      if (n > 1) {
        // The spec bounds call_id to 64 characters: shorten the base, never the suffix.
        const suffix = `__${n}`;
        id = `${original.slice(0, 64 - suffix.length)}${suffix}`;
        repairs.push({
          kind: "duplicate_call_id",
          call_id: original,
          detail: `a second call used call_id "${original}"; renamed to "${id}" with its output`,
        });
      }
      const queue = pendingRenames.get(original) ?? [];
      queue.push(id);
      pendingRenames.set(original, queue);
      open.set(id, String(item.type));
      out.push(id === original ? item : withKey(item, id));
      continue;
    }
    if (types.outputs.has(String(item.type))) {
      const original = pairingKey(item);
      const queue = pendingRenames.get(original);
      const id = queue?.shift();
      if (id === undefined) {
        const kind = callCount.has(original) ? "duplicate_output" : "orphan_output";
        repairs.push({
          kind,
          call_id: original,
          detail:
            kind === "orphan_output"
              ? "an output with no call before it was dropped"
              : "a second output for one call was dropped",
        });
        continue;
      }
      open.delete(id);
      answered.add(id);
      out.push(id === original ? item : withKey(item, id));
      continue;
    }
    // A new user/system/developer turn closes the previous turn: answer its open calls first.
    if (item.type === "message" && item.role !== "assistant") closeOpenCalls(out, open, repairs);
    out.push(item);
  }
  closeOpenCalls(out, open, repairs);
  return { items: out, repairs };
}

function closeOpenCalls(out: JsonObject[], open: Map<string, string>, repairs: HistoryRepair[]): void {
  for (const [id, type] of open) {
    out.push(textOutputItem(type, id, MISSING_OUTPUT, false));
    repairs.push({
      kind: "missing_output",
      call_id: id,
      detail: "the call had no output; a synthetic ok:false output was added",
    });
  }
  open.clear();
}

/**
 * Checks the input of a chained follow-up against the calls of the response it continues: exactly
 * one output per call, in call order, and nothing else that claims to be an output.
 */
export function repairChainedOutputs(
  calls: readonly (string | PendingCall)[],
  input: readonly JsonObject[],
): RepairedHistory {
  const pending = calls.map((c) => (typeof c === "string" ? { callId: c, itemType: "function_call" } : c));
  const types = pairedTypes({
    callTypes: ["function_call", ...pending.map((c) => c.itemType ?? "function_call")],
  });
  const repairs: HistoryRepair[] = [];
  const expected = new Set(pending.map((c) => c.callId));
  const seen = new Set<string>();
  const out: JsonObject[] = [];
  for (const item of input) {
    if (!types.outputs.has(String(item.type))) {
      out.push(item);
      continue;
    }
    const id = pairingKey(item);
    if (!expected.has(id)) {
      repairs.push({
        kind: "orphan_output",
        call_id: id,
        detail: "an output for a call the previous response did not make was dropped",
      });
      continue;
    }
    if (seen.has(id)) {
      repairs.push({
        kind: "duplicate_output",
        call_id: id,
        detail: "a second output for one call was dropped",
      });
      continue;
    }
    seen.add(id);
    out.push(item);
  }
  for (const { callId: id, itemType } of pending) {
    if (seen.has(id)) continue;
    seen.add(id);
    out.push(textOutputItem(itemType ?? "function_call", id, MISSING_OUTPUT, false));
    repairs.push({
      kind: "missing_output",
      call_id: id,
      detail: "the call had no output; a synthetic ok:false output was added",
    });
  }
  return { items: out, repairs };
}

/**
 * Puts each run of consecutive outputs in the order of the calls they answer (parallel results
 * that finished in reverse still go back as c1, c2: pairing is by `call_id`, and some servers and
 * chat templates read them by position). Returns the items unchanged when they already are.
 */
export function orderOutputs(items: readonly JsonObject[]): { items: JsonObject[]; moved: number } {
  const callIndex = new Map<unknown, number>();
  const out = [...items];
  let moved = 0;
  for (let i = 0; i < out.length; i++) {
    const item = out[i] as JsonObject;
    if (item.type === "function_call") callIndex.set(item.call_id, i);
    if (item.type !== "function_call_output") continue;
    let end = i;
    while (end < out.length && (out[end] as JsonObject).type === "function_call_output") end++;
    const run = out.slice(i, end);
    const sorted = [...run].sort(
      (a, b) => (callIndex.get(a.call_id) ?? -1) - (callIndex.get(b.call_id) ?? -1),
    );
    sorted.forEach((o, k) => {
      if (o !== run[k]) moved++;
      out[i + k] = o;
    });
    i = end - 1;
  }
  return { items: moved === 0 ? [...items] : out, moved };
}
