import { describe, expect, it } from "vitest";
import { composedRun, replayComposed } from "../../test/support/compose.js";
import type { Script } from "../../test/support/scripted.js";
import { parseFrames } from "../frames/jsonl.js";
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

describe("prepareTurn lowers a turn's max_output_tokens", () => {
  const called = (callId: string) =>
    ({ items: [{ type: "function_call", name: "search", arguments: "{}", call_id: callId }] }) as Script;
  const done = { items: [{ type: "message", text: "done" }] } as Script;
  const asked = (requests: readonly { max_output_tokens?: unknown }[]) =>
    requests.map((r) => r.max_output_tokens);

  it("for that turn only, never above the run's; the frame records it and the replay gives it back", async () => {
    const run = await composedRun(
      [called("c1"), called("c2"), done],
      { request: { max_output_tokens: 500 } },
      tools,
      { prepareTurn: ({ turn }) => (turn === 1 ? { max_output_tokens: 200 } : { max_output_tokens: 9000 }) },
    );
    expect(asked(run.requests)).toEqual([500, 200, 500]);
    expect(
      run.frames.flatMap((f) => (f.type === "turn_prepared" ? [[f.turn, f.max_output_tokens]] : [])),
    ).toEqual([
      [0, 500],
      [1, 200],
      [2, 500],
    ]);
    expect((await replayComposed(run.tape, tools)).verdict.match).toBe(true);
  });

  it("below 16 (the least a request may ask for), the request is not sent: the run ends incomplete, max_output_tokens", async () => {
    for (const left of [0, 1, 15]) {
      const run = await composedRun([called("c1"), done], {}, tools, {
        prepareTurn: ({ turn }) => (turn === 1 ? { max_output_tokens: left } : undefined),
      });
      expect(run.requests).toHaveLength(1);
      expect(run.result.reason).toBe("incomplete");
      expect(run.result.error?.code).toBe("max_output_tokens");
      expect(run.result.error?.message).toContain(`${left} token`);
      expect(run.result.turns).toBe(1);
      expect((await replayComposed(run.tape, tools)).verdict.match).toBe(true);
    }
    const sixteen = await composedRun([called("c1"), done], {}, tools, {
      prepareTurn: ({ turn }) => (turn === 1 ? { max_output_tokens: 16 } : undefined),
    });
    expect(asked(sixteen.requests)).toEqual([undefined, 16]);
    expect(sixteen.result.reason).toBe("completed");
  });

  it("is asked for the on_limit answer too (it held the turn before's setting), and can leave it unsent", async () => {
    const turns: number[] = [];
    const run = await composedRun([called("c1"), done], { max_turns: 1, on_limit: "answer" }, tools, {
      prepareTurn: ({ turn }) => {
        turns.push(turn);
        return { max_output_tokens: turn === 0 ? 300 : 100 };
      },
    });
    expect(turns).toEqual([0, 1]);
    expect(asked(run.requests)).toEqual([300, 100]);
    expect((await replayComposed(run.tape, tools)).verdict.match).toBe(true);
    const spent = await composedRun([called("c1"), done], { max_turns: 1, on_limit: "answer" }, tools, {
      prepareTurn: ({ turn }) => (turn === 0 ? undefined : { max_output_tokens: 0 }),
    });
    expect(spent.requests).toHaveLength(1);
    expect([spent.result.reason, spent.result.error?.code]).toEqual(["incomplete", "max_output_tokens"]);
  });

  it.each([
    ["negative", -1],
    ["fractional", 100.5],
    ["not a number", "100"],
    ["NaN", Number.NaN],
    ["beyond a safe integer", 2 ** 60],
  ])("a %s max_output_tokens fails the run naming it, before the request", async (_what, value) => {
    const run = await composedRun([done], {}, tools, {
      prepareTurn: () => ({ max_output_tokens: value as number }),
    });
    expect(run.requests).toHaveLength(0);
    expect(run.result.reason).toBe("failed");
    expect(run.result.error?.message).toContain("prepareTurn: max_output_tokens must be a whole number");
    expect(run.result.error?.message).not.toMatch(/\n\s+at /);
  });

  it("a tape whose turn_prepared has a max_output_tokens that is not an integer is refused", () => {
    const line = (value: unknown) =>
      `${JSON.stringify({ type: "turn_prepared", seq: 0, ts: 1, run_id: "r", turn: 0, max_output_tokens: value })}\n`;
    expect(parseFrames(line(100))).toHaveLength(1);
    for (const bad of ["100", 1.5, null, [100], { n: 1 }])
      expect(() => parseFrames(line(bad))).toThrow(
        /turn_prepared\) has a `max_output_tokens` that is not an integer/,
      );
  });
});
