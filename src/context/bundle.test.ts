import { tmpdir } from "node:os";
import { describe, expect, it } from "vitest";
import { createScriptedProvider } from "../../test/support/scripted.js";
import type { Frame } from "../frames/frame.js";
import { estimateCounter } from "../history/tokens.js";
import { ToolHistoryManager } from "../history/tool-history.js";
import { runAgent } from "../loop/run.js";
import type { JsonObject } from "../protocol/types.js";
import { validateInputItem } from "../protocol/validate.js";
import { defineTool } from "../tools/tool.js";
import { bundleId, compileContextBundle, type PastRun, renderContextBundle } from "./bundle.js";

const echo = defineTool({
  name: "echo",
  description: "echo",
  parameters: { type: "object", properties: {} },
  execute: () => "pong",
});

async function frames(prompt: string, answer: string, withTool = false): Promise<Frame[]> {
  const scripts = withTool
    ? [
        { items: [{ type: "function_call" as const, name: "echo", arguments: "{}" }] },
        { items: [{ type: "message" as const, text: answer }] },
      ]
    : [{ items: [{ type: "message" as const, text: answer }] }];
  const run = runAgent(
    { model: "m", input: prompt },
    { provider: createScriptedProvider(scripts), tools: [echo], workspace: tmpdir() },
  );
  const out: Frame[] = [];
  for await (const f of run) out.push(f);
  return out;
}

const past = (i: number, answer = `answer ${i}`, items: JsonObject[] = []): PastRun => ({
  run_id: `run_${i}`,
  prompt: `question ${i}`,
  items,
  output_text: answer,
  reason: "completed",
  model: "m",
});

const texts = (items: readonly unknown[]) =>
  (items as JsonObject[]).map((i) => {
    if (i.type !== "message") return String(i.type);
    const c = i.content as JsonObject[];
    return `${i.role}:${c.map((p) => p.text).join("")}`;
  });

const manager = (o: ConstructorParameters<typeof ToolHistoryManager>[0] = {}) =>
  new ToolHistoryManager({ tokenCounter: estimateCounter, ...o });

describe("context bundles", () => {
  it("recent_messages_v1: prompts and answers, the newest run with its tool pairs, valid input items", async () => {
    const runs = [await frames("What is 2+2?", "4."), await frames("Ping the server", "It answered.", true)];
    const m = manager();
    const bundle = await compileContextBundle(runs, { manager: m });
    expect(bundle.schema).toBe("eddy.context_bundle.v1");
    expect(bundle.source.map((s) => s.use)).toEqual(["messages", "items"]);
    expect(texts(bundle.items)).toEqual([
      "user:What is 2+2?",
      "assistant:4.",
      "user:Ping the server",
      "function_call",
      "function_call_output",
      "assistant:It answered.",
    ]);
    const rendered = await renderContextBundle(bundle, m);
    expect(rendered.items).toEqual(bundle.items);
    for (const item of rendered.items) expect(validateInputItem(item)).toBeUndefined();
    const embedded = await renderContextBundle(bundle, manager({ strategy: "text-embed" }));
    expect(JSON.stringify(embedded.items)).toContain("Context (tool result of echo)");
    expect(bundle.token_estimate).toBeGreaterThan(0);
  });

  it("keeps the newest runs that fit the budget", async () => {
    const runs = [past(1), past(2), past(3), past(4)];
    const m = manager();
    const perRun = (await compileContextBundle([past(9)], { manager: m })).token_estimate;
    const bundle = await compileContextBundle(runs, { manager: m, budget: perRun * 2 });
    expect(bundle.source.map((s) => s.run_id)).toEqual(["run_3", "run_4"]);
    expect(texts(bundle.items)).toEqual([
      "user:question 3",
      "assistant:answer 3",
      "user:question 4",
      "assistant:answer 4",
    ]);
  });

  it("summaries_recent_messages_v1 folds the older runs into one summary (by the summarization model)", async () => {
    const provider = createScriptedProvider([
      { items: [{ type: "message", text: "Earlier: the user's name is Ada." }] },
    ]);
    const m = manager({ provider, summarizationModel: "sum" });
    const runs = [past(1, "Hello Ada"), past(2), past(3), past(4)];
    const one = (await compileContextBundle([past(9)], { manager: manager() })).token_estimate;
    const bundle = await compileContextBundle(runs, {
      manager: m,
      budget: Math.ceil((one * 2 * 4) / 3) + 2,
      strategy: "summaries_recent_messages_v1",
    });
    expect(bundle.source.map((s) => `${s.run_id}:${s.use}`)).toEqual([
      "run_1:summary",
      "run_2:summary",
      "run_3:messages",
      "run_4:messages",
    ]);
    expect(bundle.summary).toEqual({ method: "model_summary", model: "sum" });
    expect(texts(bundle.items)[0]).toContain("Earlier: the user's name is Ada.");
    expect(JSON.stringify(provider.requests[0]?.input)).toContain(JSON.stringify("Hello Ada").slice(1, -1));
  });

  it("has a stable content address: same content, same id; any change, another id", async () => {
    const a = await compileContextBundle([past(1), past(2)], { manager: manager() });
    const b = await compileContextBundle([past(1), past(2)], { manager: manager() });
    expect(bundleId(a)).toBe(bundleId(b));
    expect(bundleId(a)).toMatch(/^[0-9a-f]{64}$/);
    expect(bundleId({ ...a, items: a.items.slice(1) })).not.toBe(bundleId(a));
    // Key order does not matter (canonical JSON).
    const reordered = Object.fromEntries(Object.entries(a).reverse()) as typeof a;
    expect(bundleId(reordered)).toBe(bundleId(a));
  });

  it("keeps the synchronous form eddy run --context uses", async () => {
    const runs = [await frames("one", "1"), await frames("two", "2")];
    const bundle = compileContextBundle(runs);
    expect(texts(renderContextBundle(bundle))).toEqual([
      "user:one",
      "assistant:1",
      "user:two",
      "assistant:2",
    ]);
  });

  it("rejects a bad budget or strategy with a one-line error", () => {
    expect(() => compileContextBundle([], { manager: manager(), budget: 0 })).toThrow(
      /budget must be a number of tokens/,
    );
    expect(() => compileContextBundle([], { manager: manager(), strategy: "all" as never })).toThrow(
      /unknown context strategy "all"/,
    );
  });
});
