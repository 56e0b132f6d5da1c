import { describe, expect, it } from "vitest";
import { composedRun, replayComposed } from "../../test/support/compose.js";
import type { Script } from "../../test/support/scripted.js";
import { defineTool } from "../tools/tool.js";

const search = defineTool({
  name: "search",
  description: "Searches",
  parameters: { type: "object", properties: {} },
  execute: () => "found",
});

/** A steering function that has `message` for the boundary before turn `at`, once. */
function steerAt(at: number, message: string) {
  const asked: number[] = [];
  let given = false;
  const steering = ({ turn }: { turn: number }) => {
    asked.push(turn);
    if (turn !== at || given) return undefined;
    given = true;
    return [message];
  };
  return { steering, asked };
}

describe("RunDeps.steering", () => {
  it("adds the message after the calls of the turn before, as a user message with a steered frame; the replay gives it back", async () => {
    const scripts: Script[] = [
      { items: [{ type: "function_call", name: "search", arguments: "{}", call_id: "c1" }] },
      { items: [{ type: "message", text: "done" }] },
    ];
    const s = steerAt(1, "answer in French");
    const run = await composedRun(scripts, { mode: "stateless" }, [search], { steering: s.steering });
    expect(JSON.stringify(run.requests[0])).not.toContain("answer in French");
    const second = JSON.stringify(run.requests[1]);
    // After the call's output, so the model reads it with the turn's results.
    expect(second.indexOf("answer in French")).toBeGreaterThan(second.indexOf("function_call_output"));
    const steered = run.frames.filter((f) => f.type === "steered");
    expect(steered).toMatchObject([{ type: "steered", turn: 1, message: "answer in French" }]);
    expect(run.result.reason).toBe("completed");
    expect((await replayComposed(run.tape, [search])).verdict.match).toBe(true);
  });

  it("a run about to complete goes on with the message instead", async () => {
    const scripts: Script[] = [
      { items: [{ type: "message", text: "first answer" }] },
      { items: [{ type: "message", text: "second answer" }] },
    ];
    const s = steerAt(1, "one more thing");
    const run = await composedRun(scripts, {}, [], { steering: s.steering });
    expect(run.requests).toHaveLength(2);
    expect(JSON.stringify(run.requests[1])).toContain("one more thing");
    expect(run.result.outputText).toBe("second answer");
    expect(run.result.turns).toBe(2);
    expect((await replayComposed(run.tape, [])).verdict.match).toBe(true);
  });

  it("is not asked at max_turns: the run ends by its limit, not with a request beyond it", async () => {
    const scripts: Script[] = [{ items: [{ type: "message", text: "only answer" }] }];
    const s = steerAt(1, "ignored");
    const run = await composedRun(scripts, { max_turns: 1 }, [], { steering: s.steering });
    expect(run.requests).toHaveLength(1);
    expect(s.asked).toEqual([]);
    expect(run.frames.some((f) => f.type === "steered")).toBe(false);
  });
});
