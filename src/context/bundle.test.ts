import { tmpdir } from "node:os";
import { describe, expect, it } from "vitest";
import { createScriptedProvider } from "../../test/support/scripted.js";
import type { Frame } from "../frames/frame.js";
import { runAgent } from "../loop/run.js";
import { validateInputItem } from "../protocol/validate.js";
import { defineTool } from "../tools/tool.js";
import { compileContextBundle, renderContextBundle } from "./bundle.js";

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
  const run = runAgent({
    provider: createScriptedProvider(scripts),
    model: "m",
    input: prompt,
    tools: [echo],
    workspace: tmpdir(),
  });
  const out: Frame[] = [];
  for await (const f of run) out.push(f);
  return out;
}

describe("context bundles", () => {
  it("compiles past runs into user/assistant exchanges plus a tool summary, and renders valid input items", async () => {
    const runs = [await frames("What is 2+2?", "4."), await frames("Ping the server", "It answered.", true)];
    const bundle = compileContextBundle(runs);
    expect(bundle.schema).toBe("eddy.context_bundle.v1");
    expect(bundle.source.map((s) => s.reason)).toEqual(["completed", "completed"]);
    expect(bundle.items.map((i) => (i.type === "message" ? `${i.role}:${i.content}` : "summary"))).toEqual([
      "user:What is 2+2?",
      "assistant:4.",
      "user:Ping the server",
      "summary",
      "assistant:It answered.",
    ]);
    const items = renderContextBundle(bundle);
    for (const item of items) expect(validateInputItem(item)).toBeUndefined();
    expect(JSON.stringify(items[3])).toContain("echo({})");
  });

  it("keeps only the last `limit` runs", async () => {
    const runs = [await frames("one", "1"), await frames("two", "2"), await frames("three", "3")];
    expect(compileContextBundle(runs, { limit: 2 }).items.map((i) => i.content)).toEqual([
      "two",
      "2",
      "three",
      "3",
    ]);
  });
});
