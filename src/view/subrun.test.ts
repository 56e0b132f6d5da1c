import { describe, expect, it } from "vitest";
import { composedRun } from "../../test/support/compose.js";
import type { Script } from "../../test/support/scripted.js";
import { agentTool } from "../loop/agent-tool.js";
import { parseViewTape } from "./read.js";
import { buildRunView } from "./run-model.js";
import type { RunView, ToolCallView } from "./view-data.js";

const reviewer = agentTool({
  name: "reviewer",
  description: "Reviews a change",
  spec: { instructions: "You are the reviewer.", model: "review-model", max_turns: 2 },
});

const scripts: Script[] = [
  {
    items: [{ type: "function_call", name: "reviewer", arguments: '{"input":"review x=1"}', call_id: "c1" }],
  },
  { items: [{ type: "message", text: "LGTM from the reviewer" }] },
  { items: [{ type: "message", text: "the reviewer approved" }] },
];

function viewOf(lines: string[]): RunView {
  return buildRunView(parseViewTape(`${lines.join("\n")}\n`, "t.tape"));
}

function calls(view: RunView): ToolCallView[] {
  return view.turn_views.flatMap((t) => t.items.flatMap((i) => (i.kind === "tool" ? [i.call] : [])));
}

describe("sub-runs in the view", () => {
  it("an agentTool call carries its sub-run as a run of its own: the agent's name, its turns and answer", async () => {
    const run = await composedRun(scripts, {}, [reviewer]);
    const view = viewOf(run.frames.map((f) => JSON.stringify(f)));
    const [call] = calls(view);
    expect(call?.name).toBe("reviewer");
    expect(call?.subrun?.agent).toBe("reviewer");
    expect(call?.subrun?.view).toMatchObject({
      reason: "completed",
      model: "review-model",
      answer: "LGTM from the reviewer",
      turns: 1,
    });
    expect(call?.subrun?.view.turn_views).toHaveLength(1);
    expect(view.answer).toBe("the reviewer approved");
  });

  it("untrusted sub-runs: wrong types are counted, not shown; frames without an envelope are skipped; nesting is bounded", async () => {
    const run = await composedRun(scripts, {}, [reviewer]);
    const lines = run.frames.map((f) => JSON.stringify(f));
    const at = run.frames.findIndex((f) => f.type === "tool_ended");
    const ended = run.frames[at] as unknown as Record<string, unknown>;
    const sub = ended.subrun as { agent: string; frames: Record<string, unknown>[] };

    const hostile = (subrun: unknown) => {
      const copy = [...lines];
      copy[at] = JSON.stringify({ ...ended, subrun });
      return viewOf(copy);
    };
    const notObject = hostile("<script>alert(1)</script>");
    expect(calls(notObject)[0]?.subrun).toBeUndefined();
    expect(notObject.omitted?.join(" ")).toMatch(/sub-runs that are not sub-runs/);

    const badFrames = hostile({ agent: { evil: true }, frames: [42, { type: "x" }, ...sub.frames] });
    expect(typeof calls(badFrames)[0]?.subrun?.agent).toBe("string"); // shown as text
    expect(calls(badFrames)[0]?.subrun?.view.answer).toBe("LGTM from the reviewer");
    expect(badFrames.omitted?.join(" ")).toMatch(/2 sub-run frames that are not frames/);

    // A sub-run whose call's tool_ended holds a sub-run, and so on, 10 deep.
    let nested: unknown = sub;
    for (let i = 0; i < 10; i++) {
      const frames = run.frames.slice(0, at + 1).map((f, j) => (j === at ? { ...f, subrun: nested } : f));
      nested = { agent: `a${i}`, frames };
    }
    const deep = hostile(nested);
    let depth = 0;
    for (let c = calls(deep)[0]; c?.subrun !== undefined; c = calls(c.subrun.view)[0]) depth++;
    expect(depth).toBeGreaterThan(1);
    expect(depth).toBeLessThan(5);
    expect(deep.omitted?.join(" ")).toMatch(/sub-runs nested too deep/);
  });
});
