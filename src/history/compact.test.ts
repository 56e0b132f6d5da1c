import { describe, expect, it } from "vitest";
import { createScriptedProvider } from "../../test/support/scripted.js";
import type { JsonObject } from "../protocol/types.js";
import { validateInputItem } from "../protocol/validate.js";
import { compactHistory } from "./compact.js";
import { estimateCounter, TokenMeter } from "./tokens.js";
import { ToolHistoryManager } from "./tool-history.js";
import { splitUnits } from "./units.js";

const msg = (role: string, text: string): JsonObject =>
  role === "assistant"
    ? { type: "message", role, content: [{ type: "output_text", text, annotations: [] }] }
    : { type: "message", role, content: [{ type: "input_text", text }] };
const reasoning = (n: number): JsonObject => ({
  type: "reasoning",
  summary: [],
  encrypted_content: `E${n}`.padEnd(40, "="),
});
const call = (id: string): JsonObject => ({
  type: "function_call",
  call_id: id,
  name: "read_file",
  arguments: `{"path":"${id}"}`,
});
const out = (id: string, size = 800): JsonObject => ({
  type: "function_call_output",
  call_id: id,
  output: `${id}:`.padEnd(size, "x"),
});

/** system, a user prompt, then `n` model turns (reasoning, a commentary message, two parallel calls, their outputs), then the answer. */
function longRun(n: number): JsonObject[] {
  const items = [msg("system", "You are terse."), msg("user", "Audit the repo")];
  for (let t = 1; t <= n; t++)
    items.push(
      reasoning(t),
      msg("assistant", `step ${t}`),
      call(`a${t}`),
      call(`b${t}`),
      out(`a${t}`),
      out(`b${t}`),
    );
  items.push(reasoning(n + 1), msg("assistant", "Done."));
  return items;
}

const meter = () => new TokenMeter(estimateCounter);

/** Every call has its output and every reasoning item is followed by what it was emitted with. */
function expectIntact(items: readonly JsonObject[]) {
  const calls = items.filter((i) => i.type === "function_call").map((i) => i.call_id);
  const outs = items.filter((i) => i.type === "function_call_output").map((i) => i.call_id);
  expect(outs).toEqual(calls);
  items.forEach((item, i) => {
    if (item.type === "reasoning")
      expect(["message", "function_call", "reasoning"]).toContain(items[i + 1]?.type);
  });
}

describe("compactHistory (context overflow)", () => {
  it("returns the history as it is when it already fits", () => {
    const items = longRun(3);
    const r = compactHistory(items, { budget: 1_000_000 });
    expect(r).toMatchObject({ items, removed: [], compaction: undefined, fits: true });
  });

  it("summarizes whole oldest turns until the history fits, keeping the system prompt, the user's request and the last turn", () => {
    const items = longRun(10);
    const before = meter().items(items);
    const budget = Math.floor(before / 3);
    const r = compactHistory(items, { budget, counter: estimateCounter });
    expect(r.fits).toBe(true);
    expect(r.compaction).toMatchObject({
      trigger: "overflow",
      method: "extractive_summary",
      tokens_before: before,
      tokenizer: "estimate",
    });
    expect(r.compaction?.tokens_after).toBeLessThanOrEqual(budget);
    expect(r.items[0]).toBe(items[0]);
    expect(r.items[1]).toBe(items[1]);
    expect(JSON.stringify(r.items[2])).toContain("Summary of the earlier conversation");
    expect(r.items.at(-1)).toBe(items.at(-1));
    expectIntact(r.items);
    // Whole units only: what was removed is a prefix of the model turns, each turn complete.
    const units = splitUnits(items).filter((u) => u.kind === "model");
    const removedTurns = r.compaction?.items_removed ?? 0;
    expect(removedTurns % 6).toBe(0);
    expect(r.compaction?.calls_removed).toBe((removedTurns / 6) * 2);
    expect(units.length).toBe(11);
    expect(r.compaction?.summary).toContain("read: ");
    for (const item of r.items) expect(validateInputItem(item)).toBeUndefined();
  });

  it("drops turns with a notice instead of a summary when asked", () => {
    const items = longRun(6);
    const r = compactHistory(items, { budget: Math.floor(meter().items(items) / 2), method: "drop" });
    expect(r.compaction?.method).toBe("dropped");
    expect(r.compaction?.summary).toBeUndefined();
    expect(JSON.stringify(r.items)).toContain("Earlier turns were removed to fit the context window");
    expectIntact(r.items);
  });

  it("says it does not fit when even removing every removable turn is not enough", () => {
    const items = [msg("user", "x".repeat(4000)), call("a"), out("a", 40_000)];
    const r = compactHistory(items, { budget: 100 });
    expect(r.fits).toBe(false);
    expect(r.items).toEqual(items); // the request and the turn in progress are never removed
  });

  it("is pure: the same history and budget give the same result", () => {
    const items = longRun(8);
    const a = compactHistory(items, { budget: 2000 });
    const b = compactHistory(items, { budget: 2000 });
    expect(JSON.stringify(a.items)).toBe(JSON.stringify(b.items));
    expect(a.compaction).toEqual(b.compaction);
  });
});

describe("ToolHistoryManager.compactForOverflow", () => {
  it("uses the summarization model for the removed turns, falling back to the extractive summary", async () => {
    const items = longRun(10);
    const budget = Math.floor(meter().items(items) / 3);
    const provider = createScriptedProvider([{ items: [{ type: "message", text: "Audited a1–a7: fine." }] }]);
    const manager = new ToolHistoryManager({
      provider,
      summarizationModel: "sum-1",
      tokenCounter: estimateCounter,
    });
    const r = await manager.compactForOverflow(items, { budget });
    expect(r.fits).toBe(true);
    expect(r.compaction).toMatchObject({ trigger: "overflow", method: "model_summary", model: "sum-1" });
    expect(r.compaction?.summary).toContain("Audited a1–a7: fine.");
    expect(provider.requests[0]).toMatchObject({ model: "sum-1" });
    expectIntact(r.items);

    const failing = createScriptedProvider([
      { http: { status: 400, body: { error: { message: "bad", type: "invalid_request_error" } } } },
    ]);
    const fallback = await new ToolHistoryManager({
      provider: failing,
      summarizationModel: "sum-1",
      tokenCounter: estimateCounter,
    }).compactForOverflow(items, { budget });
    expect(fallback.compaction).toMatchObject({ method: "extractive_summary" });
    expect(fallback.compaction?.fallback_reason).toMatch(/^sum-1 failed/);
  });
});
