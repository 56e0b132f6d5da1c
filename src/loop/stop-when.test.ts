import { describe, expect, it } from "vitest";
import { composedRun, replayComposed } from "../../test/support/compose.js";
import { ended } from "../../test/support/frames.js";
import type { Script } from "../../test/support/scripted.js";
import type { JsonObject } from "../protocol/types.js";
import { defineTool } from "../tools/tool.js";
import { hasToolCall, type StopContext, turnCountIs } from "./stop-when.js";

const echo = defineTool({
  name: "echo",
  description: "Echo text back",
  parameters: { type: "object", properties: { text: { type: "string" } } },
  execute: (args) => `echo: ${(args as { text?: string }).text ?? ""}`,
});
const submit = defineTool({
  name: "submit",
  description: "Submit",
  parameters: { type: "object", properties: {} },
  execute: () => "submitted",
});

/** The model calls echo every turn, forever. */
const forever: Script = (_body, i) => ({
  items: [{ type: "function_call", name: "echo", arguments: JSON.stringify({ text: `t${i}` }) }],
});

describe("stopWhen", () => {
  it("turnCountIs(2) stops after the second turn; the condition is data the spec (and tape) carries", async () => {
    const run = await composedRun([forever], {}, [echo], { stopWhen: turnCountIs(2) });
    expect(run.result.reason).toBe("stop_condition");
    expect(run.result.stopCondition).toBe("turn_count_is(2)");
    expect(run.requests).toHaveLength(2);
    expect(run.tape.header.spec.stop_when).toEqual([{ type: "turn_count_is", count: 2 }]);
    expect((await replayComposed(run.tape, [echo])).verdict.match).toBe(true);
  });

  it("hasToolCall stops after the turn that called the tool, once its output is in", async () => {
    const scripts: Script[] = [
      { items: [{ type: "function_call", name: "echo", arguments: "{}" }] },
      { items: [{ type: "function_call", name: "submit", arguments: "{}" }] },
      { items: [{ type: "message", text: "never asked" }] },
    ];
    const run = await composedRun(scripts, { stop_when: [hasToolCall("submit")] }, [echo, submit]);
    expect(run.result.reason).toBe("stop_condition");
    expect(ended(run.frames).stop_condition).toBe("has_tool_call(submit)");
    expect(run.requests).toHaveLength(2);
    expect(run.frames.filter((f) => f.type === "tool_ended").map((f) => f.name)).toEqual(["echo", "submit"]);
  });

  it("a function condition sees the run so far; the replay stops where the tape did without it", async () => {
    const seen: StopContext[] = [];
    function enoughEchoes(ctx: StopContext): boolean {
      seen.push(ctx);
      return ctx.allCalls.length >= 3;
    }
    const run = await composedRun([forever], {}, [echo], { stopWhen: [enoughEchoes] });
    expect(run.result.reason).toBe("stop_condition");
    expect(run.result.stopCondition).toBe("enoughEchoes");
    expect(seen.map((c) => c.turns)).toEqual([1, 2, 3]);
    expect(seen[0]?.calls).toEqual([{ name: "echo", arguments: '{"text":"t0"}', ok: true }]);
    expect(run.tape.header.spec.stop_when).toBeUndefined();
    expect((await replayComposed(run.tape, [echo])).verdict.match).toBe(true);
  });

  it("the limits still apply next to the conditions", async () => {
    const run = await composedRun([forever], { max_turns: 2 }, [echo], { stopWhen: turnCountIs(5) });
    expect(run.result.reason).toBe("max_turns");
  });
});

describe("on_limit", () => {
  it('"answer": at max_turns, one last request with no tools; the reason stays max_turns', async () => {
    const scripts: Script[] = [
      { items: [{ type: "function_call", name: "echo", arguments: "{}" }] },
      { items: [{ type: "message", text: "Here is what I found." }] },
    ];
    const run = await composedRun(scripts, { max_turns: 1, on_limit: "answer" }, [echo]);
    expect(run.result.reason).toBe("max_turns");
    expect(run.result.outputText).toBe("Here is what I found.");
    expect(run.requests).toHaveLength(2);
    const last = run.requests[1] as JsonObject;
    expect(last.tools).toBeUndefined();
    expect(last.tool_choice).toBeUndefined();
    expect(JSON.stringify(last.input)).toContain("reached this run's limit");
    expect(ended(run.frames).limit_answer).toBe(true);
    expect((await replayComposed(run.tape, [echo])).verdict.match).toBe(true);
  });

  it('"answer" at max_tool_calls too; a call made in the last request is not run', async () => {
    const scripts: Script[] = [
      { items: [{ type: "function_call", name: "echo", arguments: "{}", call_id: "c1" }] },
      { items: [{ type: "function_call", name: "echo", arguments: "{}", call_id: "c2" }] },
      {
        items: [
          { type: "function_call", name: "echo", arguments: "{}", call_id: "c3" },
          { type: "message", text: "Done anyway." },
        ],
      },
    ];
    const run = await composedRun(scripts, { max_tool_calls: 1, on_limit: "answer" }, [echo]);
    expect(run.result.reason).toBe("max_tool_calls");
    expect(run.result.outputText).toBe("Done anyway.");
    const c3 = run.frames.find((f) => f.type === "tool_ended" && f.call_id === "c3");
    expect(c3?.type === "tool_ended" && c3.ok).toBe(false);
  });

  it('"stop" (the default) makes no further request', async () => {
    const run = await composedRun([forever], { max_turns: 1 }, [echo]);
    expect(run.result.reason).toBe("max_turns");
    expect(run.requests).toHaveLength(1);
  });
});
