import { tmpdir } from "node:os";
import { describe, expect, it } from "vitest";
import { createScriptedProvider } from "../../test/support/scripted.js";
import { type ContextCompaction, type Frame, frame } from "../frames/frame.js";
import { runAgent } from "../loop/run.js";
import type { ItemParam, JsonObject } from "../protocol/types.js";
import { validateInputItem } from "../protocol/validate.js";
import { defineTool } from "../tools/tool.js";
import { HISTORY_DEFAULTS, historyConfigSchema, historyOptionsFromConfig } from "./options.js";
import { recordedSummaries, recordedSummarizer, type Summarizer } from "./summarizer.js";
import { estimateCounter } from "./tokens.js";
import { ToolHistoryManager } from "./tool-history.js";

const call = (id: string, name = "read_file", args = '{"path":"a"}'): JsonObject => ({
  type: "function_call",
  call_id: id,
  name,
  arguments: args,
});
const out = (id: string, output = "ok"): JsonObject => ({
  type: "function_call_output",
  call_id: id,
  output,
});
const user = (text: string): JsonObject => ({
  type: "message",
  role: "user",
  content: [{ type: "input_text", text }],
});

/** A history of `n` tool rounds after one prompt, each output `size` characters. */
function rounds(n: number, size: number): JsonObject[] {
  const items = [user("look at the files")];
  for (let i = 1; i <= n; i++)
    items.push(call(`c${i}`, "read_file", `{"path":"f${i}"}`), out(`c${i}`, `${i}:`.padEnd(size, "x")));
  return items;
}

/** A summarizer that counts its calls. */
function counting(text = "S"): Summarizer & { calls: number } {
  const state = { calls: 0 };
  const summarize: Summarizer = async () => {
    state.calls++;
    return { text: `${text}${state.calls}`, method: "model_summary", model: "m" };
  };
  return Object.defineProperty(summarize, "calls", { get: () => state.calls }) as Summarizer & {
    calls: number;
  };
}

const echo = defineTool({
  name: "echo",
  description: "echo",
  parameters: { type: "object", properties: {} },
  execute: () => "pong",
});

describe("ToolHistoryManager: the native strategy is a pass-through", () => {
  it("returns eddy's own stateless history unchanged (reasoning, phase, ids) with the defaults", async () => {
    const provider = createScriptedProvider([
      {
        items: [
          { type: "reasoning", summary: "think", encrypted_content: "ENC1" },
          { type: "message", text: "Let me look.", phase: "commentary" },
          { type: "function_call", name: "echo", arguments: "{}" },
        ],
      },
      { items: [{ type: "message", text: "Done.", phase: "final_answer" }] },
    ]);
    const run = runAgent(
      { model: "m", input: "go", mode: "stateless" },
      { provider, tools: [echo], workspace: tmpdir() },
    );
    for await (const _ of run);
    const { items } = await run.result;
    expect(items.map((i) => i.type)).toEqual([
      "message",
      "reasoning",
      "message",
      "function_call",
      "function_call_output",
      "message",
    ]);
    const manager = new ToolHistoryManager({ provider, model: "m" });
    const rendered = await manager.render({ items, model: "m" });
    expect(rendered.strategy).toBe("native");
    expect(rendered.items).toHaveLength(items.length);
    for (const [i, item] of rendered.items.entries()) expect(item).toBe(items[i]); // the very objects
    expect(JSON.stringify(rendered.items)).toBe(JSON.stringify(items));
    expect(rendered.repairs).toEqual([]);
    expect(rendered.notes).toEqual([]);
    expect(rendered.compaction).toBeUndefined();
    // And it is what the loop itself sent on its second (stateless) request.
    expect(JSON.stringify(provider.requests[1]?.input)).toBe(JSON.stringify(items.slice(0, 5)));
  });

  it("does not load a tokenizer while the history is far below the threshold", async () => {
    let counted = 0;
    const manager = new ToolHistoryManager({
      tokenCounter: { name: "spy", count: (t) => ++counted + t.length },
    });
    await manager.render({ items: rounds(3, 100) });
    expect(counted).toBe(0);
  });
});

describe("ToolHistoryManager settings take effect", () => {
  it("strategy: native, text-embed, or auto by the provider's nativeToolHistory capability", async () => {
    const items = [user("hi"), call("c1"), out("c1", "A")];
    const render = async (o: ConstructorParameters<typeof ToolHistoryManager>[0]) =>
      (await new ToolHistoryManager(o).render({ items })).items;
    expect(await render({ strategy: "native" })).toEqual(items);
    const embedded = await render({ strategy: "text-embed" });
    expect(embedded).toEqual([
      items[0],
      {
        type: "message",
        role: "user",
        content: [{ type: "input_text", text: "Context (tool result of read_file):\nA" }],
      },
    ]);
    expect(JSON.stringify(embedded)).not.toContain("function_call"); // no mimicry: calls omitted
    expect(await render({ capabilities: { nativeToolHistory: false } })).toEqual(embedded);
    expect(await render({ capabilities: { nativeToolHistory: true } })).toEqual(items);
    const noNative = createScriptedProvider([], { capabilities: { nativeToolHistory: false } });
    expect(await render({ provider: noNative })).toEqual(embedded);
    expect(await render({ provider: noNative, strategy: "native" })).toEqual(items);
    for (const item of embedded) expect(validateInputItem(item)).toBeUndefined();
  });

  it("text-embed drops reasoning, strips ids, marks failed results", async () => {
    const items = [
      user("hi"),
      { type: "reasoning", id: "rs_1", summary: [], encrypted_content: "E" },
      { ...call("c1"), id: "fc_1" },
      out("c1", JSON.stringify({ tool: "read_file", ok: false, error: { code: "nope" } })),
      {
        type: "message",
        id: "msg_1",
        role: "assistant",
        phase: "final_answer",
        content: [{ type: "output_text", text: "x", annotations: [] }],
      },
    ];
    const rendered = await new ToolHistoryManager({ strategy: "text-embed" }).render({ items });
    expect(rendered.items.map((i) => (i as JsonObject).type)).toEqual(["message", "message", "message"]);
    expect(JSON.stringify(rendered.items[1])).toContain("tool result of read_file, failed");
    expect(rendered.items[2]).toEqual({
      type: "message",
      role: "assistant",
      phase: "final_answer",
      content: items[4]?.content,
    });
  });

  it("truncationThreshold: untouched at or below it, folded above it", async () => {
    const items = rounds(10, 400);
    const tokens = (await new ToolHistoryManager({ tokenCounter: estimateCounter }).countTokens(items))
      .tokens;
    const above = new ToolHistoryManager({
      truncationThreshold: tokens,
      recentCallsToKeep: 2,
      tokenCounter: estimateCounter,
      summarizer: counting(),
    });
    expect((await above.render({ items })).compaction).toBeUndefined();
    const below = new ToolHistoryManager({
      truncationThreshold: tokens - 1,
      recentCallsToKeep: 2,
      tokenCounter: estimateCounter,
      summarizer: counting(),
    });
    const folded = await below.render({ items });
    expect(folded.compaction).toMatchObject({
      trigger: "threshold",
      calls_removed: 8,
      items_removed: 16,
      tokens_before: tokens,
    });
    expect(folded.compaction?.tokens_after).toBeLessThan(tokens);
  });

  it("recentCallsToKeep: exactly that many calls stay verbatim after the summary", async () => {
    const items = rounds(10, 400);
    for (const keep of [2, 5]) {
      const manager = new ToolHistoryManager({
        truncationThreshold: 100,
        recentCallsToKeep: keep,
        tokenCounter: estimateCounter,
        summarizer: counting(),
      });
      const { items: rendered, compaction } = await manager.render({ items });
      const calls = rendered.filter((i) => (i as JsonObject).type === "function_call") as JsonObject[];
      expect(calls.map((c) => c.call_id)).toEqual(
        Array.from({ length: keep }, (_, k) => `c${10 - keep + 1 + k}`),
      );
      expect(compaction?.calls_removed).toBe(10 - keep);
      expect(rendered[0]).toBe(items[0]); // the prompt stays
      expect(JSON.stringify(rendered[1])).toContain("Summary of the earlier conversation");
    }
  });

  it("summarizationModel: the summary is asked of that model on the run's provider and used", async () => {
    const provider = createScriptedProvider([
      { items: [{ type: "message", text: "The agent read f1…f8." }] },
    ]);
    const manager = new ToolHistoryManager({
      provider,
      summarizationModel: "summarizer-1",
      truncationThreshold: 100,
      recentCallsToKeep: 2,
      tokenCounter: estimateCounter,
    });
    const { items, compaction } = await manager.render({ items: rounds(10, 400) });
    expect(provider.requests).toHaveLength(1);
    expect(provider.requests[0]).toMatchObject({ model: "summarizer-1" });
    expect(JSON.stringify(provider.requests[0]?.input)).toContain(
      JSON.stringify('Tool call read_file({"path":"f1"}) returned').slice(1, -1),
    );
    expect(compaction).toMatchObject({ method: "model_summary", model: "summarizer-1" });
    expect(JSON.stringify(items[1])).toContain("The agent read f1…f8.");
  });

  it("falls back to the extractive summary when the model call fails, and says why", async () => {
    const provider = createScriptedProvider([
      { http: { status: 400, body: { error: { message: "no such model", type: "invalid_request_error" } } } },
    ]);
    const manager = new ToolHistoryManager({
      provider,
      summarizationModel: "missing-model",
      truncationThreshold: 100,
      recentCallsToKeep: 2,
      tokenCounter: estimateCounter,
    });
    const { items, compaction } = await manager.render({ items: rounds(10, 400) });
    expect(compaction?.method).toBe("extractive_summary");
    expect(compaction?.fallback_reason).toMatch(/^missing-model failed: /);
    expect(JSON.stringify(items[1])).toContain("read: 8 calls");
  });

  it("falls back to the extractive summary when the model answers with more than it summarizes (found by a probe)", async () => {
    const provider = createScriptedProvider([{ items: [{ type: "message", text: "z".repeat(200_000) }] }]);
    const manager = new ToolHistoryManager({
      provider,
      summarizationModel: "verbose-model",
      truncationThreshold: 100,
      recentCallsToKeep: 2,
      tokenCounter: estimateCounter,
    });
    const { items, compaction } = await manager.render({ items: rounds(10, 400) });
    expect(compaction?.method).toBe("extractive_summary");
    expect(compaction?.fallback_reason).toMatch(
      /^verbose-model answered with 200000 characters, more than the \d+ it summarized$/,
    );
    expect(JSON.stringify(items[1])).toContain("read: 8 calls");
  });

  it("without summarizationModel the summary is extractive and no request is made", async () => {
    const provider = createScriptedProvider([]);
    const manager = new ToolHistoryManager({
      provider,
      truncationThreshold: 100,
      recentCallsToKeep: 2,
      tokenCounter: estimateCounter,
    });
    const { compaction } = await manager.render({ items: rounds(10, 400) });
    expect(compaction?.method).toBe("extractive_summary");
    expect(compaction?.fallback_reason).toBeUndefined();
    expect(provider.requests).toHaveLength(0);
  });

  it("a fold is reused on the next request and extended, not rewritten every turn", async () => {
    const summarizer = counting();
    const manager = new ToolHistoryManager({
      truncationThreshold: 300,
      recentCallsToKeep: 2,
      tokenCounter: estimateCounter,
      summarizer,
    });
    const history = rounds(10, 400);
    const first = await manager.render({ items: history });
    const again = await manager.render({ items: history });
    expect(summarizer.calls).toBe(1);
    expect(again.compaction).toBeUndefined();
    expect(again.items).toEqual(first.items);
    history.push(call("c11"), out("c11", "11:".padEnd(400, "x")));
    const grown = await manager.render({ items: history });
    expect(summarizer.calls).toBe(2);
    expect(grown.compaction).toMatchObject({ calls_removed: 1 });
    expect(JSON.stringify(grown.items[1])).toContain("S2");
  });

  it("a replay reuses the summaries its context_compacted frames recorded, byte for byte", async () => {
    const provider = createScriptedProvider([{ items: [{ type: "message", text: "Model summary." }] }]);
    const options = {
      summarizationModel: "sum",
      truncationThreshold: 100,
      recentCallsToKeep: 2,
      tokenCounter: estimateCounter,
    };
    const recorded = await new ToolHistoryManager({ provider, ...options }).render({
      items: rounds(10, 400),
    });
    const compacted = frame("context_compacted", { turn: 1, ...(recorded.compaction as ContextCompaction) });
    const tape = JSON.parse(JSON.stringify([compacted])) as Frame[];
    const { summarizationModel: _, ...rest } = options;
    const replay = new ToolHistoryManager({
      ...rest,
      summarizer: recordedSummarizer(recordedSummaries(tape)),
    });
    const replayed = await replay.render({ items: rounds(10, 400) });
    expect(JSON.stringify(replayed.items)).toBe(JSON.stringify(recorded.items));
    expect(replayed.compaction).toEqual(recorded.compaction);
    expect(provider.requests).toHaveLength(1);
    await expect(recordedSummarizer([])([])).rejects.toThrow(/recorded only 0/);
  });

  it("bad settings are one-line configuration errors", () => {
    expect(() => new ToolHistoryManager({ recentCallsToKeep: -1 })).toThrow(
      /recentCallsToKeep must be an integer ≥ 0/,
    );
    expect(() => new ToolHistoryManager({ truncationThreshold: 0 })).toThrow(/truncationThreshold/);
    expect(() => new ToolHistoryManager({ strategy: "prose" as never })).toThrow(/auto, native, text-embed/);
    expect(() => new ToolHistoryManager({ summarizationModel: "m" })).toThrow(/needs a provider/);
  });

  it("the config file's history object maps onto the options", () => {
    const parsed = historyConfigSchema().parse({
      recent_calls_to_keep: 3,
      truncation_threshold: 5000,
      summarization_model: "gpt-5-nano",
      strategy: "text-embed",
    });
    expect(historyOptionsFromConfig(parsed)).toEqual({
      recentCallsToKeep: 3,
      truncationThreshold: 5000,
      summarizationModel: "gpt-5-nano",
      strategy: "text-embed",
    });
    expect(historyConfigSchema().safeParse({ strategy: "prose" }).success).toBe(false);
    expect(historyConfigSchema().safeParse({ recent_calls: 3 }).success).toBe(false);
    expect(HISTORY_DEFAULTS).toEqual({
      recentCallsToKeep: 6,
      truncationThreshold: 100_000,
      summarizationModel: undefined,
      strategy: "auto",
    });
  });
});

describe("ToolHistoryManager: reasoning and pairing", () => {
  const reasoningTurn = (): JsonObject[] => [
    user("q"),
    { type: "reasoning", id: "rs_1", summary: [], encrypted_content: "E" },
    { ...call("c1"), id: "fc_1" },
    out("c1"),
    {
      type: "message",
      id: "msg_1",
      role: "assistant",
      content: [{ type: "output_text", text: "a", annotations: [] }],
    },
  ];

  it("drops reasoning from another model and strips the ids paired with it", async () => {
    const manager = new ToolHistoryManager({ model: "gpt-5" });
    const same = await manager.render({ items: reasoningTurn(), model: "gpt-5" });
    expect(same.items.map((i) => (i as JsonObject).type)).toContain("reasoning");
    const other = await manager.render({ items: reasoningTurn(), model: "o3" });
    expect(other.items.map((i) => (i as JsonObject).type)).toEqual([
      "message",
      "function_call",
      "function_call_output",
      "message",
    ]);
    expect(other.items[1]).not.toHaveProperty("id");
    expect(other.items[3]).toHaveProperty("id", "msg_1"); // not paired with the reasoning: a later unit
    expect(other.notes.map((n) => n.kind)).toEqual(["reasoning_dropped", "ids_stripped"]);
  });

  it("drops a reasoning item nothing follows; repairs pairs and reorders outputs to call order", async () => {
    const items: ItemParam[] = [
      user("q") as ItemParam,
      call("a") as ItemParam,
      call("b") as ItemParam,
      out("b") as ItemParam,
      out("ghost") as ItemParam,
      out("a") as ItemParam,
      call("c") as ItemParam,
      { type: "reasoning", summary: [], encrypted_content: "E" } as ItemParam,
    ];
    const r = await new ToolHistoryManager().render({ items });
    expect((r.items as JsonObject[]).map((i) => `${i.type}:${i.call_id ?? ""}`)).toEqual([
      "message:",
      "function_call:a",
      "function_call:b",
      "function_call_output:a",
      "function_call_output:b",
      "function_call:c",
      "function_call_output:c",
    ]);
    expect(r.repairs.map((x) => x.kind)).toEqual(["orphan_output", "missing_output"]);
    expect(r.notes.map((n) => n.kind)).toEqual(["reasoning_dropped", "outputs_reordered"]);
    expect(r.history).toEqual(r.items);
  });
});
