/**
 * The tool-history RFC's surface on eddy's manager (docs/decisions.md #17): `addToolCall`,
 * `getCompactedHistory`, `renderAsItems(strategy?)`, and the `NativeStrategy` / `TextEmbedStrategy`
 * classes — code written against it runs here, over the same fold and strategies `render` uses.
 */
import { describe, expect, it } from "vitest";
import { EddyError } from "../errors.js";
// As a user writes it: from the package's root entry.
import {
  type CompactedHistory,
  type FormattedToolEntry,
  NativeStrategy,
  nativeStrategy,
  TextEmbedStrategy,
  ToolHistoryManager,
  type ToolHistoryStrategy,
  textEmbedStrategy,
} from "../index.js";
import type { ItemParam, JsonObject } from "../protocol/types.js";
import { validateInputItem } from "../protocol/validate.js";
import { functionCallItem, functionCallOutputItem } from "./items.js";
import { SUMMARY_HEADING } from "./tool-text.js";

/** A manager that was given five read_file calls, c1…c5. */
function fiveCalls(options: ConstructorParameters<typeof ToolHistoryManager>[0] = {}): ToolHistoryManager {
  const manager = new ToolHistoryManager({ recentCallsToKeep: 2, ...options });
  for (let i = 1; i <= 5; i++)
    manager.addToolCall(`c${i}`, "read_file", { path: `f${i}.ts` }, `contents of f${i}`);
  return manager;
}

const types = (items: readonly ItemParam[]) => items.map((i) => (i as JsonObject).type);

describe("ToolHistoryManager: the RFC's surface", () => {
  it("keeps the two newest pairs as native items, paired by call id, the three older folded into a summary", () => {
    const manager = fiveCalls();
    const items = manager.renderAsItems(new NativeStrategy());
    expect(types(items)).toEqual([
      "message",
      "function_call",
      "function_call_output",
      "function_call",
      "function_call_output",
    ]);
    expect(items.slice(1)).toEqual([
      { type: "function_call", call_id: "c4", name: "read_file", arguments: '{"path":"f4.ts"}' },
      { type: "function_call_output", call_id: "c4", output: "contents of f4" },
      { type: "function_call", call_id: "c5", name: "read_file", arguments: '{"path":"f5.ts"}' },
      { type: "function_call_output", call_id: "c5", output: "contents of f5" },
    ]);
    const summary = JSON.stringify(items[0]);
    expect(summary).toContain(SUMMARY_HEADING);
    expect(summary).toContain("Tool calls (3)");
    for (const older of ["f1.ts", "f2.ts", "f3.ts"]) expect(summary).toContain(older);
    expect(summary).not.toContain("f4.ts");
    for (const item of items) expect(validateInputItem(item)).toBeUndefined();

    const compacted: CompactedHistory = manager.getCompactedHistory();
    expect(compacted.summary).not.toBeNull();
    expect(compacted.truncatedCount).toBe(3);
    expect(compacted.originalCount).toBe(5);
    expect(compacted.recentCalls.map((e) => [e.call.call_id, e.output.call_id, e.record.name])).toEqual([
      ["c4", "c4", "read_file"],
      ["c5", "c5", "read_file"],
    ]);
  });

  it("text-embed renders no function_call items: the results as user text, the calls left out", () => {
    const items = fiveCalls().renderAsItems(new TextEmbedStrategy());
    expect(JSON.stringify(items)).not.toContain("function_call");
    expect(items).toHaveLength(3);
    for (const item of items) {
      expect(item).toMatchObject({ type: "message", role: "user" });
      expect(validateInputItem(item)).toBeUndefined();
    }
    expect(items[1]).toEqual({
      type: "message",
      role: "user",
      content: [{ type: "input_text", text: "Context (tool result of read_file):\ncontents of f4" }],
    });
    expect(JSON.stringify(items[2])).toContain("contents of f5");
  });

  it("is the fold and the rendering render() makes once past the threshold, for both strategies", async () => {
    const log: JsonObject[] = [];
    for (let i = 1; i <= 5; i++)
      log.push(
        functionCallItem(`c${i}`, "read_file", JSON.stringify({ path: `f${i}.ts` })),
        functionCallOutputItem(`c${i}`, `contents of f${i}`),
      );
    for (const strategy of ["native", "text-embed"] as const) {
      const manager = fiveCalls({ strategy });
      const rendered = await new ToolHistoryManager({
        strategy,
        recentCallsToKeep: 2,
        truncationThreshold: 1,
      }).render({
        items: log,
      });
      expect(rendered.compaction?.calls_removed).toBe(3);
      expect(JSON.stringify(manager.renderAsItems())).toBe(JSON.stringify(rendered.items));
      expect(manager.getCompactedHistory().summary).toBe(rendered.compaction?.summary);
    }
  });

  it("below recentCallsToKeep nothing is folded; with none added there is nothing to render", () => {
    const manager = new ToolHistoryManager({ recentCallsToKeep: 2 });
    expect(manager.getCompactedHistory()).toEqual({
      summary: null,
      recentCalls: [],
      truncatedCount: 0,
      originalCount: 0,
    });
    expect(manager.renderAsItems()).toEqual([]);
    manager.addToolCall("c1", "read_file", { path: "a" }, "A");
    manager.addToolCall("c2", "read_file", { path: "b" }, "B");
    expect(manager.getCompactedHistory()).toMatchObject({
      summary: null,
      truncatedCount: 0,
      originalCount: 2,
    });
    expect(types(manager.renderAsItems())).toEqual([
      "function_call",
      "function_call_output",
      "function_call",
      "function_call_output",
    ]);
  });

  it("without a strategy it renders by the manager's own: native by default, text-embed by the capability", () => {
    expect(fiveCalls().strategy).toBe(nativeStrategy);
    expect(types(fiveCalls().renderAsItems())).toContain("function_call");
    const noNative = fiveCalls({ capabilities: { nativeToolHistory: false } });
    expect(noNative.strategy).toBe(textEmbedStrategy);
    expect(JSON.stringify(noNative.renderAsItems())).not.toContain("function_call");
    expect(fiveCalls({ strategy: "text-embed" }).renderAsItems()).toEqual(
      fiveCalls().renderAsItems(new TextEmbedStrategy()),
    );
  });

  it("the exported singletons are instances of the classes (one implementation)", () => {
    expect(nativeStrategy).toBeInstanceOf(NativeStrategy);
    expect(textEmbedStrategy).toBeInstanceOf(TextEmbedStrategy);
    expect([nativeStrategy.name, textEmbedStrategy.name]).toEqual(["native", "text-embed"]);
    const entry = fiveCalls().getCompactedHistory().recentCalls[0] as FormattedToolEntry;
    expect(new NativeStrategy().renderEntry(entry)).toEqual([entry.call, entry.output]);
    expect(nativeStrategy.renderEntry(entry)[0]).toBe(entry.call); // the very items
    expect(new TextEmbedStrategy().renderEntry(entry)).toEqual(
      textEmbedStrategy.renderResult(entry.output, entry.record),
    );
    expect(new NativeStrategy().renderSummary("")).toEqual([]);
    expect(new TextEmbedStrategy().renderSummary("s")).toEqual(new NativeStrategy().renderSummary("s"));
  });

  it("isError marks the result as failed: in the output, the text form and the summary", () => {
    const manager = new ToolHistoryManager({ recentCallsToKeep: 1 });
    manager.addToolCall("c1", "shell", { command: "npm test" }, "1 test failed", true);
    manager.addToolCall("c2", "shell", { command: "npm test" }, "exit 2: no such file", true);
    const [recent] = manager.getCompactedHistory().recentCalls;
    expect(recent?.output.output).toBe("Error: exit 2: no such file");
    expect(recent?.record.failed).toBe(true);
    expect(JSON.stringify(manager.renderAsItems(new TextEmbedStrategy()))).toContain(
      "tool result of shell, failed",
    );
    expect(manager.getCompactedHistory().summary).toContain("1 failed");
    // A result that already reads as a failure is not marked twice.
    const again = new ToolHistoryManager();
    again.addToolCall("c1", "shell", {}, "Error: boom", true);
    expect(again.getCompactedHistory().recentCalls[0]?.output.output).toBe("Error: boom");
  });

  it("takes arguments as an object (sent as JSON) or as the model's own string, unchanged", () => {
    const manager = new ToolHistoryManager();
    manager.addToolCall("c1", "read_file", { path: "a", range: [1, 2] }, "A");
    manager.addToolCall("c2", "read_file", '{ "path" : "b" }', "B");
    const [first, second] = manager.getCompactedHistory().recentCalls;
    expect(first?.call.arguments).toBe('{"path":"a","range":[1,2]}');
    expect(second?.call.arguments).toBe('{ "path" : "b" }');
  });

  it("renames a repeated call id together with its output, as render does", () => {
    const manager = new ToolHistoryManager();
    manager.addToolCall("c1", "read_file", { path: "a" }, "A");
    manager.addToolCall("c1", "read_file", { path: "b" }, "B");
    const items = manager.renderAsItems() as JsonObject[];
    expect(items.map((i) => i.call_id)).toEqual(["c1", "c1", "c1__2", "c1__2"]);
  });

  it("renders through any object of the RFC's strategy shape", () => {
    const names: ToolHistoryStrategy = {
      name: "names",
      renderEntry: (entry) => [{ type: "message", role: "user", content: entry.record.name }],
      renderSummary: (summary) => [{ type: "message", role: "user", content: `S:${summary.length}` }],
    };
    const items = fiveCalls().renderAsItems(names) as JsonObject[];
    expect(items.map((i) => i.content)).toEqual([expect.stringMatching(/^S:\d+$/), "read_file", "read_file"]);
  });

  it("refuses a call it cannot send, in one line naming the argument", () => {
    const manager = new ToolHistoryManager();
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const bad: [string, () => void][] = [
      ["callId", () => manager.addToolCall("", "read_file", {}, "A")],
      ["name", () => manager.addToolCall("c1", "", {}, "A")],
      ["result of c1", () => manager.addToolCall("c1", "read_file", {}, 42 as unknown as string)],
      [
        "args of c1",
        () => manager.addToolCall("c1", "read_file", [] as unknown as Record<string, unknown>, "A"),
      ],
      ["args of c1", () => manager.addToolCall("c1", "read_file", cyclic, "A")],
    ];
    for (const [field, add] of bad) {
      let caught: unknown;
      try {
        add();
      } catch (err) {
        caught = err;
      }
      expect(caught).toBeInstanceOf(EddyError);
      expect(caught).toMatchObject({ code: "invalid_argument", fault: "user" });
      expect((caught as Error).message).toContain(field);
      expect((caught as Error).message).not.toContain("\n");
    }
    expect(manager.getCompactedHistory().originalCount).toBe(0);
  });
});
