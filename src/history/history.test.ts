import { describe, expect, it } from "vitest";
import type { JsonObject } from "../protocol/types.js";
import { validateInputItem } from "../protocol/validate.js";
import { toInputItem } from "./items.js";
import { orderOutputs, repairChainedOutputs, repairHistory } from "./pairing.js";

const call = (id: string, name = "f"): JsonObject => ({
  type: "function_call",
  call_id: id,
  name,
  arguments: "{}",
});
const out = (id: string, output = "ok"): JsonObject => ({
  type: "function_call_output",
  call_id: id,
  output,
});
const user = (text: string): JsonObject => ({ type: "message", role: "user", content: text });

describe("repairHistory (docs/pitfalls.md #1, #2, #6)", () => {
  it("leaves a well-paired history alone", () => {
    const items = [user("hi"), call("a"), call("b"), out("a"), out("b")];
    expect(repairHistory(items)).toEqual({ items, repairs: [] });
  });

  it("answers a call with no output, before the next user turn", () => {
    const { items, repairs } = repairHistory([user("hi"), call("a"), user("again")]);
    expect(items.map((i) => i.type)).toEqual(["message", "function_call", "function_call_output", "message"]);
    expect(JSON.parse(items[2]?.output as string)).toMatchObject({
      ok: false,
      error: { code: "missing_output" },
    });
    expect(repairs).toEqual([expect.objectContaining({ kind: "missing_output", call_id: "a" })]);
  });

  it("drops an orphan output and a duplicate output", () => {
    const { items, repairs } = repairHistory([user("hi"), out("ghost"), call("a"), out("a"), out("a")]);
    expect(items).toEqual([user("hi"), call("a"), out("a")]);
    expect(repairs.map((r) => r.kind)).toEqual(["orphan_output", "duplicate_output"]);
  });

  it("renames a repeated call id together with its output", () => {
    const { items, repairs } = repairHistory([
      call("t0"),
      out("t0", "first"),
      user("more"),
      call("t0"),
      out("t0", "second"),
    ]);
    expect(items.map((i) => i.call_id).filter(Boolean)).toEqual(["t0", "t0", "t0__2", "t0__2"]);
    expect(items[4]).toMatchObject({ output: "second" });
    expect(repairs[0]).toMatchObject({ kind: "duplicate_call_id", call_id: "t0" });
  });

  it("checks a chained follow-up: one output per call of the previous response, in call order", () => {
    const { items, repairs } = repairChainedOutputs(["a", "b"], [out("b"), out("x"), out("b")]);
    expect(items.map((i) => i.call_id)).toEqual(["b", "a"]);
    expect(repairs.map((r) => r.kind)).toEqual(["orphan_output", "duplicate_output", "missing_output"]);
  });
});

describe("toInputItem (docs/decisions.md #4)", () => {
  it("keeps reasoning with encrypted content, drops raw content; drops reasoning without it", () => {
    const reasoning = {
      type: "reasoning",
      id: "rs_1",
      summary: [],
      content: [{ type: "reasoning_text", text: "raw" }],
      encrypted_content: "E",
    };
    const input = toInputItem(reasoning, { keepItemIds: true });
    expect(input).toEqual({ type: "reasoning", id: "rs_1", summary: [], encrypted_content: "E" });
    expect(validateInputItem(input)).toBeUndefined();
    expect(
      toInputItem({ type: "reasoning", id: "rs_2", summary: [] }, { keepItemIds: true }),
    ).toBeUndefined();
  });

  it("fills call_id from the item id and strips ids when the provider wants them gone", () => {
    expect(
      toInputItem({ type: "function_call", id: "fc_1", name: "f", arguments: "{}" }, { keepItemIds: true }),
    ).toMatchObject({ call_id: "fc_1" });
    const msg = {
      type: "message",
      id: "msg_1",
      role: "assistant",
      phase: "commentary",
      content: [{ type: "output_text", text: "x", annotations: [] }],
    };
    expect(toInputItem(msg, { keepItemIds: false })).toEqual({
      type: "message",
      role: "assistant",
      content: [{ type: "output_text", text: "x" }],
      phase: "commentary",
    });
  });

  it("rebuilds each item in its input schema's form: nothing a server added goes back", () => {
    // A third-party server's call item with a status the schema does not allow, and extras.
    const call = {
      type: "function_call",
      id: "fc_1",
      call_id: "call_1",
      name: "f",
      arguments: '{"a":1}',
      status: "ready",
      namespace: "x",
    };
    expect(toInputItem(call, { keepItemIds: true })).toEqual({
      type: "function_call",
      id: "fc_1",
      call_id: "call_1",
      name: "f",
      arguments: '{"a":1}',
    });
    expect(toInputItem(call, { keepItemIds: false })).toEqual({
      type: "function_call",
      call_id: "call_1",
      name: "f",
      arguments: '{"a":1}',
    });
    const message = {
      type: "message",
      id: "msg_1",
      role: "assistant",
      status: "incomplete",
      phase: "final_answer",
      content: [
        { type: "output_text", text: "Hi", annotations: [], logprobs: [] },
        {
          type: "output_text",
          text: " there",
          annotations: [
            {
              type: "url_citation",
              start_index: 0,
              end_index: 2,
              url: "https://x.test",
              title: "X",
              extra: 1,
            },
            { type: "file_citation", file_id: "f", index: 0 },
          ],
        },
        { type: "refusal", refusal: "no", extra: true },
        { type: "reasoning_text", text: "hidden" },
      ],
    };
    const input = toInputItem(message, { keepItemIds: true });
    expect(input).toEqual({
      type: "message",
      id: "msg_1",
      role: "assistant",
      content: [
        { type: "output_text", text: "Hi" },
        {
          type: "output_text",
          text: " there",
          annotations: [
            { type: "url_citation", start_index: 0, end_index: 2, url: "https://x.test", title: "X" },
          ],
        },
        { type: "refusal", refusal: "no" },
      ],
      phase: "final_answer",
    });
    expect(validateInputItem(input)).toBeUndefined();
    const reasoning = {
      type: "reasoning",
      id: "rs_1",
      status: "completed",
      summary: [{ type: "summary_text", text: "s", extra: 1 }],
      encrypted_content: "E",
    };
    expect(toInputItem(reasoning, { keepItemIds: true })).toEqual({
      type: "reasoning",
      id: "rs_1",
      summary: [{ type: "summary_text", text: "s" }],
      encrypted_content: "E",
    });
    expect(toInputItem({ type: "message", role: "assistant", content: [] }, { keepItemIds: true })).toBe(
      undefined,
    );
    // A hosted tool item has no input schema in the spec: it goes back as the provider sent it.
    const search = { type: "web_search_call", id: "ws_1", status: "completed", action: { type: "search" } };
    expect(toInputItem(search, { keepItemIds: true })).toEqual(search);
    expect(toInputItem(search, { keepItemIds: false })).toEqual({
      type: "web_search_call",
      status: "completed",
      action: { type: "search" },
    });
  });
});

describe("call id bounds and output order", () => {
  it("keeps a renamed call id within the spec's 64 characters", () => {
    const long = "x".repeat(64);
    const { items } = repairHistory([call(long), out(long), user("more"), call(long), out(long)]);
    const renamed = items[3]?.call_id as string;
    expect(renamed).toHaveLength(64);
    expect(renamed.endsWith("__2")).toBe(true);
    expect(items[4]?.call_id).toBe(renamed);
    for (const item of items) expect(validateInputItem(item)).toBeUndefined();
  });

  it("puts a run of outputs in the order of their calls, and leaves ordered ones alone", () => {
    const ordered = [call("a"), call("b"), out("a"), out("b")];
    expect(orderOutputs(ordered)).toEqual({ items: ordered, moved: 0 });
    const { items, moved } = orderOutputs([call("a"), call("b"), out("b"), out("a")]);
    expect(items.map((i) => `${i.type}:${i.call_id}`)).toEqual([
      "function_call:a",
      "function_call:b",
      "function_call_output:a",
      "function_call_output:b",
    ]);
    expect(moved).toBe(2);
  });
});

describe("pairing native call items", () => {
  const NATIVE = { callTypes: ["function_call", "apply_patch_call", "shell_call", "mcp_approval_request"] };
  const patch = (id: string) => ({
    type: "apply_patch_call",
    call_id: id,
    operation: { type: "delete_file", path: "x" },
  });
  const patchOut = (id: string) => ({ type: "apply_patch_call_output", call_id: id, status: "completed" });

  it("a native call without its answer gets a synthetic output of the matching type", () => {
    const { items, repairs } = repairHistory(
      [user("hi"), patch("p1"), { type: "shell_call", call_id: "s1" }],
      NATIVE,
    );
    expect(items.slice(3)).toEqual([
      expect.objectContaining({ type: "apply_patch_call_output", call_id: "p1", status: "failed" }),
      expect.objectContaining({
        type: "shell_call_output",
        call_id: "s1",
        output: [expect.objectContaining({ outcome: { type: "exit", exit_code: 1 } })],
      }),
    ]);
    expect(repairs.map((r) => r.kind)).toEqual(["missing_output", "missing_output"]);
  });

  it("MCP approvals pair by the request id; an orphan native output is dropped", () => {
    const request = {
      type: "mcp_approval_request",
      id: "mcpr_1",
      name: "t",
      server_label: "s",
      arguments: "{}",
    };
    const response = { type: "mcp_approval_response", approval_request_id: "mcpr_1", approve: true };
    const { items, repairs } = repairHistory([user("hi"), request, response, patchOut("ghost")], NATIVE);
    expect(items).toEqual([user("hi"), request, response]);
    expect(repairs).toEqual([expect.objectContaining({ kind: "orphan_output", call_id: "ghost" })]);
  });

  it("without callTypes, native items are a provider's record and are left alone", () => {
    const items = [user("hi"), { type: "custom_tool_call", call_id: "xs_1", name: "x_search", input: "{}" }];
    expect(repairHistory(items)).toEqual({ items, repairs: [] });
  });

  it("a chained follow-up answers each pending native call with its own type", () => {
    const { items, repairs } = repairChainedOutputs(
      [{ callId: "p1", itemType: "apply_patch_call" }, "f1"],
      [patchOut("p1"), patchOut("p9")],
    );
    expect(items).toEqual([
      patchOut("p1"),
      expect.objectContaining({ type: "function_call_output", call_id: "f1" }),
    ]);
    expect(repairs.map((r) => r.kind)).toEqual(["orphan_output", "missing_output"]);
  });
});
