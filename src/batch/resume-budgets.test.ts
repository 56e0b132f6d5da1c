import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createScriptedProvider, type Script } from "../../test/support/scripted.js";
import type { Frame } from "../frames/frame.js";
import { LOOP_DEFAULTS } from "../loop/defaults.js";
import { runAgent } from "../loop/run.js";
import { type RunSpecInput, resolveRunSpec } from "../loop/run-spec.js";
import { createTapeHeader } from "../replay/header.js";
import { replayTape } from "../replay/replay.js";
import type { Tape } from "../replay/tape.js";
import { TOOL_DEFAULTS } from "../tools/defaults.js";
import { createToolRegistry } from "../tools/registry.js";
import { defineTool } from "../tools/tool.js";
import { type ResumeOptions, resumeRun } from "./resume.js";
import { resumeBudgets } from "./resume-budgets.js";

/**
 * A tape is input from elsewhere: `resumeRun` gives its budgets at most the resuming invocation's
 * (`ResumeOptions.budgets`, the defaults when none), as a batch task or a `POST /v1/runs` body
 * gets (src/batch/resume-budgets.ts).
 */

const dir = mkdtempSync(join(tmpdir(), "eddy-resume-budgets-"));

function tools() {
  const runs: string[] = [];
  const note = defineTool({
    name: "note",
    description: "Notes a word",
    parameters: { type: "object", properties: { word: { type: "string" } }, required: ["word"] },
    execute: async (args) => {
      runs.push((args as { word: string }).word);
      return `noted ${(args as { word: string }).word}`;
    },
  });
  return { runs, registry: () => createToolRegistry([note]) };
}

const call = (word: string, call_id: string) =>
  ({ type: "function_call", name: "note", arguments: JSON.stringify({ word }), call_id }) as const;
const text = (t: string) => ({ type: "message", text: t }) as const;

/** Records a whole run with `spec` over a plain one. */
async function record(scripts: Script[], spec: Partial<RunSpecInput>): Promise<Tape> {
  const provider = createScriptedProvider(scripts);
  const run = runAgent(
    { model: "m", input: "go", run_id: "run_budgets", ...spec },
    { provider, tools: tools().registry(), workspace: dir },
  );
  const header = createTapeHeader(run.spec, { provider });
  const frames: Frame[] = [];
  for await (const f of run) frames.push(f);
  return { header, frames };
}

/** The tape as a process killed while its `nth` request was in flight would have left it. */
function crashedAtRequest(tape: Tape, nth: number): Tape {
  let seen = 0;
  const index = tape.frames.findIndex((f) => f.type === "request_started" && ++seen === nth);
  return { header: tape.header, frames: tape.frames.slice(0, index + 1) };
}

async function resume(tape: Tape, scripts: Script[], more: Partial<ResumeOptions> = {}) {
  const provider = createScriptedProvider(scripts);
  const t = tools();
  const run = resumeRun(tape, { provider, registry: t.registry(), workspace: dir, ...more });
  const frames: Frame[] = [];
  for await (const f of run) frames.push(f);
  return { run, frames, result: await run.result, requests: provider.requests, runs: t.runs };
}

/**
 * A model that calls `note` every turn (what a run with a huge budget keeps paying for), for 200
 * turns: past any budget the tests allow, yet a run that is not held to one ends soon.
 */
const forever: Script = (_body, index) =>
  index < 200 ? { items: [call(`w${index}`, `c${index}`)] } : { items: [text("enough")] };
const threeTurns: Script[] = [
  { items: [call("a", "c1")] },
  { items: [call("b", "c2")] },
  { items: [text("done")] },
];

describe("a resumed tape's budgets are at most the invocation's", () => {
  it("a tape asking 100000 turns and 1000000 tool calls runs with the defaults, and its new header says so", async () => {
    const full = await record(threeTurns, {
      max_turns: 100_000,
      max_tool_calls: 1_000_000,
      tool_concurrency: 1024,
      tool_timeout_ms: 86_400_000,
      tool_output_cap_bytes: 1 << 30,
    });
    // Killed while its second request was in flight.
    const crashed = crashedAtRequest(full, 2);
    const resumed = await resume(crashed, [forever]);
    expect(resumed.result.reason).toBe("max_turns");
    expect(resumed.result.turns).toBe(LOOP_DEFAULTS.maxTurns);
    expect(resumed.run.spec).toMatchObject({
      max_turns: LOOP_DEFAULTS.maxTurns,
      max_tool_calls: LOOP_DEFAULTS.maxToolCalls,
      tool_concurrency: LOOP_DEFAULTS.toolConcurrency,
      tool_timeout_ms: TOOL_DEFAULTS.timeoutMs,
      tool_output_cap_bytes: TOOL_DEFAULTS.outputCapBytes,
    });
    expect(resumed.run.header.spec).toEqual(resumed.run.spec);
    expect(resumed.run.lowered.map((o) => [o.field, o.asked, o.limit])).toEqual([
      ["max_turns", 100_000, LOOP_DEFAULTS.maxTurns],
      ["max_tool_calls", 1_000_000, LOOP_DEFAULTS.maxToolCalls],
      ["tool_concurrency", 1024, LOOP_DEFAULTS.toolConcurrency],
      ["tool_timeout_ms", 86_400_000, TOOL_DEFAULTS.timeoutMs],
      ["tool_output_cap_bytes", 1 << 30, TOOL_DEFAULTS.outputCapBytes],
    ]);
    // The live requests carry the lowered budget left, not the tape's.
    expect(resumed.requests[0]).toMatchObject({ max_tool_calls: LOOP_DEFAULTS.maxToolCalls - 1 });
    // The resumed tape replays as one run, under its header's (lowered) spec.
    const outcome = await replayTape(
      { header: resumed.run.header, frames: resumed.frames },
      { registry: tools().registry(), workspace: dir },
    );
    expect(outcome.verdict).toEqual({ match: true, frames: resumed.frames.length });
  });

  it("the invocation's own budgets are the ceilings; a tape asking less keeps its own", async () => {
    const full = await record(threeTurns, { max_turns: 50, max_tool_calls: 40 });
    const crashed = crashedAtRequest(full, 2);
    const capped = await resume(crashed, [forever], { budgets: { max_turns: 5, max_tool_calls: 100 } });
    expect(capped.result.reason).toBe("max_turns");
    expect(capped.result.turns).toBe(5);
    expect(capped.run.header.spec).toMatchObject({ max_turns: 5, max_tool_calls: 40 });
    expect(capped.run.lowered.map((o) => o.field)).toEqual(["max_turns"]);
    const asked = await resume(crashed, threeTurns.slice(1), {
      budgets: { max_turns: 80, max_tool_calls: 40 },
    });
    expect(asked.result.reason).toBe("completed");
    expect(asked.run.lowered).toEqual([]);
    expect(asked.run.header.spec).toEqual(crashed.header.spec);
  });

  it("request.max_output_tokens is lowered to the invocation's, in the reproduced requests too", async () => {
    const full = await record(threeTurns, { request: { max_output_tokens: 100_000 } });
    const crashed = crashedAtRequest(full, 2);
    const resumed = await resume(crashed, threeTurns.slice(1), {
      budgets: { request: { max_output_tokens: 500 } },
    });
    expect(resumed.result.reason).toBe("completed");
    expect(resumed.requests.every((r) => r.max_output_tokens === 500)).toBe(true);
    const first = resumed.frames.find((f) => f.type === "request_started");
    expect(first?.type === "request_started" && first.body.max_output_tokens).toBe(500);
  });

  it("a tape whose recorded part already made more requests than the lowered budget is refused, naming the flag", async () => {
    const full = await record([forever], { max_turns: 30 });
    const crashed = crashedAtRequest(full, 25);
    expect(() =>
      resumeRun(crashed, {
        provider: createScriptedProvider([]),
        registry: tools().registry(),
        workspace: dir,
      }),
    ).toThrow(
      /already made 25 model requests, more than the 20 this invocation allows \(max_turns; the tape asks 30\): resume it with --max-turns 25 or more/,
    );
    // …and with the budget it names, it resumes.
    const resumed = await resume(crashed, [{ items: [text("done")] }], { budgets: { max_turns: 25 } });
    expect(resumed.result.reason).toBe("completed");
  });

  it("a tape whose recorded part made more tool calls than the lowered budget is refused, naming the flag", async () => {
    const full = await record([forever], { max_tool_calls: 100, max_turns: 60 });
    const crashed = crashedAtRequest(full, 15);
    expect(() =>
      resumeBudgets(crashed, crashed.frames.length - 1, { max_turns: 60, max_tool_calls: 10 }),
    ).toThrow(
      /already made 14 tool calls, more than the 10 this invocation allows \(max_tool_calls; the tape asks 100\): resume it with --max-tool-calls 14 or more/,
    );
  });

  it("the invocation's budgets are checked: a bad value is a user error, never a silent pass", async () => {
    const full = await record(threeTurns, { max_turns: 50 });
    const crashed = crashedAtRequest(full, 2);
    for (const bad of [{ max_turns: "many" }, { max_turns: -1 }, { max_turns: 2.5 }, { max_turns: 1e9 }]) {
      expect(() =>
        resumeRun(crashed, {
          provider: createScriptedProvider([]),
          registry: tools().registry(),
          workspace: dir,
          budgets: bad as never,
        }),
      ).toThrow(/the resuming invocation's budgets: max_turns/);
    }
  });
});

describe("resumeBudgets", () => {
  it("counts the calls that ran at once and refuses a lower tool_concurrency", () => {
    const base = { v: 1, run_id: "r", ts: 0 } as const;
    const frames = [
      { ...base, seq: 0, type: "tool_started", turn: 0, call_id: "a", name: "note" },
      { ...base, seq: 1, type: "tool_started", turn: 0, call_id: "b", name: "note" },
      { ...base, seq: 2, type: "tool_started", turn: 0, call_id: "c", name: "note" },
      { ...base, seq: 3, type: "tool_ended", turn: 0, call_id: "a", name: "note" },
    ] as unknown as Frame[];
    const spec = resolveRunSpec({ model: "m", input: "go", tool_concurrency: 8, parallel_tool_calls: true });
    const header = createTapeHeader(spec, { provider: createScriptedProvider([]) });
    const tape: Tape = { header, frames };
    expect(() => resumeBudgets(tape, 4, { tool_concurrency: 2 })).toThrow(
      /ran 3 tool calls at once, more than the 2 this invocation allows \(tool_concurrency; the tape asks 8\): resume it with --tool-concurrency 3 or more/,
    );
    expect(resumeBudgets(tape, 4, { tool_concurrency: 3 }).spec.tool_concurrency).toBe(3);
  });
});
