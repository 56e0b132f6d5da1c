import { describe, expect, it } from "vitest";
import { composedRun, replayComposed } from "../../test/support/compose.js";
import type { Script } from "../../test/support/scripted.js";
import { defineTool } from "../tools/tool.js";
import type { TurnContext } from "./prepare-turn.js";

const tool = (name: string) =>
  defineTool({
    name,
    description: name,
    parameters: { type: "object", properties: {} },
    execute: () => name,
  });
const tools = [tool("search"), tool("write")];

describe("prepareTurn", () => {
  it("changes the model, tools, tool_choice and instructions for one turn; the replay gives them back", async () => {
    const seen: TurnContext[] = [];
    const scripts: Script[] = [
      { items: [{ type: "function_call", name: "write", arguments: "{}", call_id: "c1" }] },
      { items: [{ type: "message", text: "done" }] },
    ];
    const run = await composedRun(scripts, { instructions: "base" }, tools, {
      prepareTurn: (ctx) => {
        seen.push(ctx);
        return ctx.turn === 0
          ? { model: "small-model", tools: ["search"], tool_choice: "required", instructions: "first turn" }
          : undefined;
      },
    });
    const [first, second] = run.requests;
    expect(first).toMatchObject({
      model: "small-model",
      instructions: "first turn",
      tool_choice: "required",
    });
    expect(((first?.tools ?? []) as { name: string }[]).map((t) => t.name)).toEqual(["search"]);
    expect(second).toMatchObject({ model: "test-model", instructions: "base" });
    expect(((second?.tools ?? []) as { name: string }[]).map((t) => t.name)).toEqual(["search", "write"]);
    // write was not offered in turn 0: the call is refused.
    const ended = run.frames.find((f) => f.type === "tool_ended");
    expect(ended?.type === "tool_ended" && ended.ok).toBe(false);
    expect(seen.map((c) => c.turn)).toEqual([0, 1]);
    expect(seen[1]?.calls).toEqual(["write"]);
    expect(run.frames.filter((f) => f.type === "turn_prepared")).toHaveLength(1);
    expect((await replayComposed(run.tape, tools)).verdict.match).toBe(true);
  });
});
