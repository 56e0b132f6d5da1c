import { describe, expect, it } from "vitest";
import type { JsonObject } from "../protocol/types.js";
import { validateInputItem } from "../protocol/validate.js";
import { toInputItem } from "./items.js";
import { repairChainedOutputs, repairHistory } from "./pairing.js";
import { nativeStrategy, strategyFor, ToolHistoryManager, textEmbedStrategy } from "./tool-history.js";

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

describe("repairHistory (pain points 1, 2, 6)", () => {
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

describe("toInputItem (DESIGN.md §8.3)", () => {
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
      phase: "commentary",
      content: msg.content,
    });
  });
});

describe("ToolHistoryManager (seed 004)", () => {
  it("renders native pairs or text-embedded results, chosen by capability in one place", () => {
    const m = new ToolHistoryManager();
    m.addToolCall({ callId: "c1", name: "read_file", arguments: { path: "a" }, result: "A" });
    const native = m.renderAsItems(strategyFor({ nativeToolHistory: true }));
    expect(native).toEqual([
      { type: "function_call", call_id: "c1", name: "read_file", arguments: '{"path":"a"}' },
      { type: "function_call_output", call_id: "c1", output: "A" },
    ]);
    for (const item of native) expect(validateInputItem(item)).toBeUndefined();
    const text = m.renderAsItems(strategyFor({ nativeToolHistory: false }));
    expect(text).toHaveLength(1);
    expect(JSON.stringify(text)).toContain("Context (tool result of read_file):\\nA");
    expect(JSON.stringify(text)).not.toContain("function_call");
  });

  it("keeps recent calls verbatim and summarizes older ones past the budget", () => {
    const m = new ToolHistoryManager({ recentCallsToKeep: 2, truncationThreshold: 10 });
    m.addToolCall({ callId: "1", name: "read_file", arguments: '{"path":"a"}', result: "aaaaaa" });
    m.addToolCall({
      callId: "2",
      name: "grep",
      arguments: '{"pattern":"x"}',
      result: "bbbbbb",
      isError: true,
    });
    m.addToolCall({ callId: "3", name: "shell", arguments: '{"command":"ls"}', result: "cccccc" });
    m.addToolCall({ callId: "4", name: "write_file", arguments: '{"path":"b"}', result: "dddddd" });
    const { summary, recent } = m.getCompactedHistory();
    expect(recent.map((e) => e.callId)).toEqual(["3", "4"]);
    expect(summary).toContain("Earlier tool calls (2");
    expect(summary).toContain('read: 1 call: read_file({"path":"a"})');
    expect(summary).toContain("search: 1 call, 1 failed");
    const items = m.renderAsItems(nativeStrategy);
    expect(items[0]).toMatchObject({ type: "message", role: "user" });
    expect(items.slice(1).map((i) => i.type)).toEqual([
      "function_call",
      "function_call_output",
      "function_call",
      "function_call_output",
    ]);
  });

  it("pairs a foreign item history by call_id, leaving orphans out", () => {
    const m = new ToolHistoryManager();
    m.addFromItems([call("a", "ls"), out("zzz"), out("a", "files")]);
    expect(m.size).toBe(1);
    expect(m.renderAsItems(textEmbedStrategy)).toHaveLength(1);
  });
});
