import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { assertFrameInvariants } from "../../test/support/frames.js";
import { createScriptedProvider, type Script } from "../../test/support/scripted.js";
import type { Frame } from "../frames/frame.js";
import type { RunOptions } from "../loop/options.js";
import { runAgent } from "../loop/run.js";
import { createTapeHeader } from "../replay/header.js";
import { replayTape } from "../replay/replay.js";
import type { Tape } from "../replay/tape.js";
import { createToolRegistry } from "../tools/registry.js";
import { defineTool } from "../tools/tool.js";
import { planResume, resumeRun } from "./resume.js";

const dir = mkdtempSync(join(tmpdir(), "eddy-resume-"));

/** A tool that counts its runs per argument: what "did it run again" is checked with. */
function counter() {
  const runs = new Map<string, number>();
  const tool = defineTool({
    name: "note",
    description: "Notes a word",
    parameters: { type: "object", properties: { word: { type: "string" } }, required: ["word"] },
    execute: async (args) => {
      const word = (args as { word: string }).word;
      runs.set(word, (runs.get(word) ?? 0) + 1);
      await new Promise((r) => setTimeout(r, 2));
      return `noted ${word}`;
    },
  });
  return { runs, registry: () => createToolRegistry([tool]) };
}

const call = (word: string, call_id: string) =>
  ({ type: "function_call", name: "note", arguments: JSON.stringify({ word }), call_id }) as const;
const text = (t: string) => ({ type: "message", text: t }) as const;

/** Records a whole run; returns its tape (header + frames). */
async function record(
  scripts: Script[],
  tools: ReturnType<typeof counter>,
  options: Partial<RunOptions> = {},
) {
  const runOptions: RunOptions = {
    provider: createScriptedProvider(scripts),
    model: "m",
    input: "go",
    tools: tools.registry(),
    workspace: dir,
    runId: "run_resume_test",
    ...options,
  };
  const header = createTapeHeader(runOptions, { runId: "run_resume_test", validate: true });
  const frames: Frame[] = [];
  const run = runAgent(runOptions);
  for await (const f of run) frames.push(f);
  return { header, frames } satisfies Tape;
}

/** The tape as a process killed right after frame `index` would have left it. */
function cutAfter(tape: Tape, test: (f: Frame) => boolean, nth = 1): Tape {
  let seen = 0;
  const index = tape.frames.findIndex((f) => test(f) && ++seen === nth);
  if (index === -1) throw new Error("no such frame");
  return { header: tape.header, frames: tape.frames.slice(0, index + 1) };
}

async function resume(tape: Tape, scripts: Script[], tools: ReturnType<typeof counter>, capabilities = {}) {
  const provider = createScriptedProvider(scripts, { capabilities });
  const frames: Frame[] = [];
  const observed: Frame[] = [];
  let resumedAt: number | undefined;
  const run = resumeRun(tape, {
    provider,
    registry: tools.registry(),
    workspace: dir,
    onFrame: (f) => observed.push(f),
    onResumed: () => {
      resumedAt = observed.length;
    },
  });
  for await (const f of run) frames.push(f);
  const result = await run.result;
  assertFrameInvariants(frames);
  return { frames, result, requests: provider.requests, point: run.point, header: run.header, resumedAt };
}

const threeTurns: Script[] = [
  { items: [call("a", "c1")] },
  { items: [call("b", "c2")] },
  { items: [text("done")] },
];

describe("resuming a run from its tape", () => {
  it("after its first tool call: the tool does not run again, the next request chains on the last response", async () => {
    const first = counter();
    const full = await record(threeTurns, first);
    // Killed while the second request was in flight.
    const crashed = cutAfter(full, (f) => f.type === "request_started", 2);
    const plan = planResume(crashed);
    expect(plan).toMatchObject({ status: "resumable", point: { turn: 1, reused_tool_outputs: 1 } });

    const tools = counter();
    const resumed = await resume(crashed, threeTurns.slice(1), tools);
    expect(tools.runs.get("a")).toBeUndefined(); // recorded: not run again
    expect(tools.runs.get("b")).toBe(1);
    expect(resumed.result.reason).toBe("completed");
    expect(resumed.result.toolCalls).toBe(2);
    expect(resumed.result.turns).toBe(3);
    // Only the unfinished and later requests were sent; the first chains on the recorded response.
    expect(resumed.requests).toHaveLength(2);
    expect(resumed.requests[0]).toMatchObject({ previous_response_id: "resp_1" });
    // The kept frames are the old tape's, to the letter; the resume point is in the header.
    expect(resumed.frames.slice(0, resumed.point.at_seq)).toEqual(
      crashed.frames.slice(0, resumed.point.at_seq),
    );
    expect(resumed.resumedAt).toBe(resumed.point.at_seq);
    expect(resumed.header.resumes).toEqual([resumed.point]);
  });

  it("the resumed tape replays as one run", async () => {
    const full = await record(threeTurns, counter());
    const crashed = cutAfter(full, (f) => f.type === "tool_ended", 2);
    const tools = counter();
    const resumed = await resume(crashed, threeTurns.slice(2), tools);
    expect(tools.runs.size).toBe(0);
    const outcome = await replayTape(
      { header: resumed.header, frames: resumed.frames },
      { registry: tools.registry(), workspace: dir },
    );
    expect(outcome.verdict).toEqual({ match: true, frames: resumed.frames.length });
  });

  it("stateless from the recorded items when the provider no longer has the response", async () => {
    const full = await record(threeTurns, counter());
    const crashed = cutAfter(full, (f) => f.type === "turn_ended", 1);
    const notFound: Script = {
      http: {
        status: 404,
        body: {
          error: { type: "invalid_request_error", code: "previous_response_not_found", message: "gone" },
        },
      },
    };
    const tools = counter();
    const resumed = await resume(crashed, [notFound, ...threeTurns.slice(1)], tools);
    expect(resumed.result.reason).toBe("completed");
    expect(resumed.frames.some((f) => f.type === "mode_changed")).toBe(true);
    // The resend carries the history rebuilt from the tape: the prompt, the call and its output.
    const resend = JSON.stringify(resumed.requests[1]);
    expect(resend).toContain('"call_id":"c1"');
    expect(resend).toContain("noted a");
    expect(tools.runs.get("a")).toBeUndefined();
  });

  it("inside an unfinished turn whose response had ended: the response is not requested again, its unrun call runs", async () => {
    const scripts: Script[] = [{ items: [call("a", "c1"), call("b", "c2")] }, { items: [text("done")] }];
    const full = await record(scripts, counter());
    // Killed while the second call of the first response ran.
    const crashed = cutAfter(full, (f) => f.type === "tool_started" && f.call_id === "c2");
    expect(planResume(crashed)).toMatchObject({
      status: "resumable",
      point: { turn: 0, reused_tool_outputs: 1 },
    });
    const tools = counter();
    const resumed = await resume(crashed, scripts.slice(1), tools);
    expect(tools.runs.get("a")).toBeUndefined();
    expect(tools.runs.get("b")).toBe(1);
    expect(resumed.requests).toHaveLength(1); // only the follow-up: the first response came from the tape
    expect(resumed.result.reason).toBe("completed");
  });

  it("an unfinished response is requested again; nothing after the last complete turn is kept", async () => {
    const full = await record(threeTurns, counter());
    const crashed = cutAfter(full, (f) => f.type === "provider_event", 2);
    const plan = planResume(crashed);
    expect(plan).toMatchObject({ status: "resumable", point: { turn: 0, reused_tool_outputs: 0 } });
    if (plan.status === "resumable") expect(plan.point.dropped_frames).toBeGreaterThan(0);
    const tools = counter();
    const resumed = await resume(crashed, threeTurns, tools);
    expect(resumed.result.reason).toBe("completed");
    expect(resumed.requests).toHaveLength(3);
    expect(tools.runs.get("a")).toBe(1);
  });

  it("a cancelled run resumes from before the cancellation; a run that ended by itself does not", async () => {
    const full = await record(threeTurns, counter());
    expect(planResume(full)).toEqual({ status: "ended", reason: "completed" });
    expect(() =>
      resumeRun(full, {
        provider: createScriptedProvider([]),
        registry: counter().registry(),
        workspace: dir,
      }),
    ).toThrow(/already ended \(completed\)/);
    const frames = cutAfter(full, (f) => f.type === "turn_ended", 1).frames;
    const cancelled: Tape = {
      header: full.header,
      frames: [
        ...frames,
        { ...frames[0], seq: frames.length, type: "cancel_requested", turn: 1, reason: "SIGINT" } as Frame,
      ],
    };
    expect(planResume(cancelled)).toMatchObject({ status: "resumable", point: { at_seq: frames.length } });
  });

  it("refuses to go on when the tape does not reproduce (other tools than recorded)", async () => {
    const full = await record(threeTurns, counter());
    const crashed = cutAfter(full, (f) => f.type === "request_started", 2);
    const run = resumeRun(crashed, {
      provider: createScriptedProvider(threeTurns.slice(1)),
      registry: createToolRegistry([]),
      workspace: dir,
    });
    for await (const _ of run);
    await expect(run.result).rejects.toThrow(/does not reproduce at frame 0/);
  });
});
