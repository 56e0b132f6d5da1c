import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { assertFrameInvariants } from "../../test/support/frames.js";
import { createScriptedProvider, type Script } from "../../test/support/scripted.js";
import type { Frame } from "../frames/frame.js";
import { agentTool } from "../loop/agent-tool.js";
import type { BeforeToolCallDecision, ToolHooks } from "../loop/hooks.js";
import type { RunDeps } from "../loop/options.js";
import { createPolicy, type Policy } from "../loop/policy.js";
import { runAgent } from "../loop/run.js";
import type { RunSpecInput } from "../loop/run-spec.js";
import { createTapeHeader } from "../replay/header.js";
import { replayTape } from "../replay/replay.js";
import type { Tape } from "../replay/tape.js";
import { createToolRegistry, type ToolRegistry } from "../tools/registry.js";
import { approvalNoteTool } from "../tools/test-support/note-tool.js";
import { defineTool } from "../tools/tool.js";
import { planResume, type ResumeOptions, resumeRun } from "./resume.js";

const dir = mkdtempSync(join(tmpdir(), "eddy-resume-"));

/** A tool that counts its runs per argument: what "did it run again" is checked with. */
/**
 * Holds a recorded run's tools until no response is streaming, so a tape's order (the response
 * ends, then its tools do) never depends on how fast the machine is (`record` wires it).
 */
class StreamGate {
  recording = false;
  private streaming = 0;
  private readonly waiters: (() => void)[] = [];

  observe(frame: Frame): void {
    if (frame.type === "request_started") this.streaming++;
    else if (frame.type === "response_ended" || frame.type === "request_failed") {
      this.streaming = Math.max(0, this.streaming - 1);
      if (this.streaming === 0) for (const wake of this.waiters.splice(0)) wake();
    }
  }

  idle(): Promise<void> {
    return this.streaming === 0 ? Promise.resolve() : new Promise((resolve) => this.waiters.push(resolve));
  }
}

/** A run's tools as the helpers below take them: the note tool's counts, or another registry. */
interface Tools {
  runs: Map<string, number>;
  registry: () => ToolRegistry;
  gate?: StreamGate;
}

function counter(): Tools & { gate: StreamGate } {
  const runs = new Map<string, number>();
  const gate = new StreamGate();
  const tool = defineTool({
    name: "note",
    description: "Notes a word",
    parameters: { type: "object", properties: { word: { type: "string" } }, required: ["word"] },
    execute: async (args) => {
      const word = (args as { word: string }).word;
      runs.set(word, (runs.get(word) ?? 0) + 1);
      await (gate.recording ? gate.idle() : new Promise((r) => setTimeout(r, 2)));
      return `noted ${word}`;
    },
  });
  return { runs, gate, registry: () => createToolRegistry([tool]) };
}

const call = (word: string, call_id: string) =>
  ({ type: "function_call", name: "note", arguments: JSON.stringify({ word }), call_id }) as const;
const text = (t: string) => ({ type: "message", text: t }) as const;

/** Records a whole run; returns its tape (header + frames). */
async function record(
  scripts: Script[],
  tools: Tools,
  spec: Partial<RunSpecInput> = {},
  deps: Partial<RunDeps> = {},
) {
  const provider = createScriptedProvider(scripts);
  const frames: Frame[] = [];
  const gate = tools.gate;
  if (gate !== undefined) gate.recording = true;
  const run = runAgent(
    { model: "m", input: "go", run_id: "run_resume_test", ...spec },
    {
      provider,
      tools: tools.registry(),
      workspace: dir,
      ...(gate === undefined ? {} : { onFrame: (f: Frame) => gate.observe(f) }),
      ...deps,
    },
  );
  const header = createTapeHeader(run.spec, {
    provider,
    ...(deps.policy === undefined ? {} : { policy: deps.policy }),
  });
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

async function resume(
  tape: Tape,
  scripts: Script[],
  tools: Tools,
  capabilities = {},
  more: Partial<ResumeOptions> = {},
) {
  const provider = createScriptedProvider(scripts, { capabilities });
  const frames: Frame[] = [];
  const observed: Frame[] = [];
  let resumedAt: number | undefined;
  const run = resumeRun(tape, {
    provider,
    registry: tools.registry(),
    workspace: dir,
    ...more,
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
    // Killed after the first call ended, before the second one started.
    const crashed = cutAfter(full, (f) => f.type === "tool_ended" && f.call_id === "c1");
    expect(crashed.frames.some((f) => f.type === "tool_started" && f.call_id === "c2")).toBe(false);
    expect(planResume(crashed)).toMatchObject({
      status: "resumable",
      point: { turn: 0, reused_tool_outputs: 1, interrupted_calls: 0 },
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

  it("refuses to start without the tools the recorded run offered, naming them", async () => {
    const full = await record(threeTurns, counter());
    const crashed = cutAfter(full, (f) => f.type === "request_started", 2);
    expect(() =>
      resumeRun(crashed, {
        provider: createScriptedProvider(threeTurns.slice(1)),
        registry: createToolRegistry([]),
        workspace: dir,
      }),
    ).toThrow(/"note" is not one of the run's tools/);
  });

  it("refuses to go on when the tape does not reproduce (a tool described differently)", async () => {
    const full = await record(threeTurns, counter());
    const crashed = cutAfter(full, (f) => f.type === "request_started", 2);
    const other = defineTool({
      name: "note",
      description: "Not the recorded description",
      parameters: { type: "object", properties: {} },
      execute: () => "x",
    });
    const run = resumeRun(crashed, {
      provider: createScriptedProvider(threeTurns.slice(1)),
      registry: createToolRegistry([other]),
      workspace: dir,
    });
    for await (const _ of run);
    await expect(run.result).rejects.toThrow(/does not reproduce at frame 1/);
  });
});

/** The tape as a process killed while its first call ran (everything before its `tool_ended`). */
function beforeToolEnded(tape: Tape): Tape {
  const index = tape.frames.findIndex((f) => f.type === "tool_ended");
  const frames = tape.frames.slice(0, index);
  const ended = frames.some(
    (f) => f.type === "provider_event" && (f.data as { type?: string }).type === "response.completed",
  );
  if (!ended) throw new Error("the response had not ended before the tool did: make the tool slower");
  return { header: tape.header, frames };
}

describe("resuming: at most once (a call a crash interrupted is not run twice)", () => {
  it("a call that had started is answered as interrupted, not run again; the run goes on", async () => {
    const scripts: Script[] = [{ items: [call("a", "c1")] }, { items: [text("done")] }];
    const full = await record(scripts, counter());
    // Killed while the call ran: tool_started recorded (and the response's end), tool_ended not.
    const crashed = beforeToolEnded(full);
    const plan = planResume(crashed);
    expect(plan).toMatchObject({ status: "resumable", point: { interrupted_calls: 1 } });
    const tools = counter();
    const resumed = await resume(crashed, scripts.slice(1), tools);
    expect(tools.runs.get("a")).toBeUndefined();
    const ended = resumed.frames.find((f) => f.type === "tool_ended");
    expect(ended).toMatchObject({ call_id: "c1", ok: false });
    expect(JSON.parse((ended as { output: string }).output).error.code).toBe("interrupted");
    expect(resumed.result.reason).toBe("completed");
  });

  it("--rerun-interrupted runs it again, and so does an idempotent tool", async () => {
    const scripts: Script[] = [{ items: [call("a", "c1")] }, { items: [text("done")] }];
    const crashed = beforeToolEnded(await record(scripts, counter()));
    const rerun = counter();
    await resume(crashed, scripts.slice(1), rerun, {}, { policy: createPolicy({ rerunInterrupted: true }) });
    expect(rerun.runs.get("a")).toBe(1);

    const runs = new Map<string, number>();
    const idempotent = defineTool({
      name: "note",
      description: "Notes a word",
      parameters: { type: "object", properties: { word: { type: "string" } }, required: ["word"] },
      idempotent: true,
      execute: async (args) => {
        const word = (args as { word: string }).word;
        runs.set(word, (runs.get(word) ?? 0) + 1);
        return `noted ${word}`;
      },
    });
    await resume(crashed, scripts.slice(1), { runs, registry: () => createToolRegistry([idempotent]) });
    expect(runs.get("a")).toBe(1);
  });

  it("when the interrupted call's response was cut off too, the same call asked again is not run", async () => {
    const slow: Script = { items: [call("a", "c1"), text("and more")] };
    const scripts: Script[] = [slow, { items: [text("done")] }];
    const full = await record(scripts, counter());
    // Killed after the call started but before the response ended.
    const started = full.frames.findIndex((f) => f.type === "tool_started");
    const crashed: Tape = { header: full.header, frames: full.frames.slice(0, started + 1) };
    expect(crashed.frames.some((f) => f.type === "turn_ended")).toBe(false);
    const tools = counter();
    const resumed = await resume(crashed, [{ items: [call("a", "c9")] }, { items: [text("done")] }], tools);
    expect(tools.runs.get("a")).toBeUndefined();
    const ended = resumed.frames.find((f) => f.type === "tool_ended" && f.call_id === "c9");
    expect(ended).toMatchObject({ ok: false });
    expect(resumed.result.reason).toBe("completed");
  });
});

describe("resuming: permissions come from the local policy", () => {
  const shellLike = (runs: string[]) =>
    defineTool({
      name: "shell",
      description: "Runs a command",
      parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
      execute: (args) => {
        runs.push((args as { command: string }).command);
        return "ran";
      },
    });
  const shellCall = (command: string, call_id: string) =>
    ({ type: "function_call", name: "shell", arguments: JSON.stringify({ command }), call_id }) as const;

  it("a tape whose run offers shell is refused without allowShell, naming --allow-shell; nothing runs", async () => {
    const recorded: string[] = [];
    const scripts: Script[] = [{ items: [shellCall("touch /tmp/x", "s1")] }, { items: [text("done")] }];
    const full = await record(
      scripts,
      { runs: new Map(), registry: () => createToolRegistry([shellLike(recorded)]) },
      {},
      { policy: createPolicy({ allowShell: true }) },
    );
    const runs: string[] = [];
    const registry = () => createToolRegistry([shellLike(runs)]);
    const crashed = cutAfter(full, (f) => f.type === "tool_call");
    // The unanswered call, edited as an attacker would.
    const edited: Tape = {
      header: crashed.header,
      frames: crashed.frames.map((f) =>
        f.type === "tool_call" ? { ...f, arguments: '{"command":"rm -rf ~"}' } : f,
      ),
    };
    expect(() =>
      resumeRun(edited, { provider: createScriptedProvider([]), registry: registry(), workspace: dir }),
    ).toThrow(/shell needs --allow-shell/);
    expect(runs).toEqual([]);
  });

  it("a tape whose spec declares a hosted tool is resumed only when the local policy declares it too", async () => {
    const registry = () => createToolRegistry([]);
    // A remote MCP server: the provider sends it the conversation, on this machine's key.
    const docs = { type: "mcp", server_label: "docs", server_url: "https://docs.example/mcp" };
    const full = await record(
      [{ items: [text("done")] }],
      { runs: new Map(), registry },
      { hosted_tools: [docs] },
      { policy: createPolicy({ hostedTools: [docs] }) },
    );
    const cut = cutAfter(full, (f) => f.type === "run_started");
    const provider = createScriptedProvider([{ items: [text("done")] }]);
    const resume = (policy: Policy) =>
      resumeRun(cut, { provider, registry: registry(), workspace: dir, policy });
    expect(() => resume(createPolicy())).toThrow(/hosted tool "mcp:docs".*--tool mcp:LABEL=URL/);
    const elsewhere = { ...docs, server_url: "https://elsewhere.example/mcp" };
    expect(() => resume(createPolicy({ hostedTools: [elsewhere] }))).toThrow(/mcp:docs/);
    const run = resume(createPolicy({ hostedTools: [docs] }));
    for await (const _ of run);
    expect((await run.result).reason).toBe("completed");
  });
});

describe("deferred approvals", () => {
  const write = (t: string, call_id: string) =>
    ({ type: "function_call", name: "write_note", arguments: JSON.stringify({ text: t }), call_id }) as const;

  /** A fresh deferred tape resumed with `more`; `later` names the calls that ran. */
  async function resumeDeferred(more: Partial<ResumeOptions>) {
    const { tape, scripts } = await deferred([]);
    const later: string[] = [];
    const registry = () => createToolRegistry([approvalNoteTool(later)]);
    return { resumed: await resume(tape, scripts.slice(1), { runs: new Map(), registry }, {}, more), later };
  }

  async function deferred(runs: string[]) {
    const registry = () => createToolRegistry([approvalNoteTool(runs)]);
    const scripts: Script[] = [{ items: [write("hello", "w1")] }, { items: [text("done")] }];
    const tape = await record(
      scripts,
      { runs: new Map(), registry },
      {},
      { policy: createPolicy({ approve: "defer" }) },
    );
    return { tape, registry, scripts };
  }

  it("approve defer ends the run awaiting_approval with the pending call named; nothing ran", async () => {
    const runs: string[] = [];
    const { tape } = await deferred(runs);
    const ended = tape.frames.at(-1);
    expect(ended).toMatchObject({ type: "run_ended", reason: "awaiting_approval", pending_calls: ["w1"] });
    expect(tape.frames.some((f) => f.type === "approval_requested" && f.call_id === "w1")).toBe(true);
    expect(tape.frames.some((f) => f.type === "tool_started")).toBe(false);
    expect(runs).toEqual([]);
    // The deferred tape replays as it was.
    const outcome = await replayTape(tape, {
      registry: createToolRegistry([approvalNoteTool([])]),
      workspace: dir,
    });
    expect(outcome.verdict).toEqual({ match: true, frames: tape.frames.length });
  });

  it("resumed with no decision, the call goes to the local approval mode (auto runs it, deny refuses it) and the run completes", async () => {
    for (const approve of [undefined, "auto", "deny"] as const) {
      const { resumed, later } = await resumeDeferred(
        approve === undefined ? {} : { policy: createPolicy({ approve, allowWrite: true }) },
      );
      expect(resumed.result.reason, String(approve)).toBe("completed");
      expect(later).toEqual(approve === "deny" ? [] : ["hello"]);
      expect(resumed.frames.find((f) => f.type === "approval_decided")).toMatchObject({
        decision: approve === "deny" ? "deny" : "allow",
      });
    }
  });

  it("a decision for a call the tape's run does not wait for is refused before anything runs", async () => {
    const { tape, scripts } = await deferred([]);
    const registry = createToolRegistry([approvalNoteTool([])]);
    const provider = createScriptedProvider(scripts.slice(1));
    expect(() => resumeRun(tape, { provider, registry, workspace: dir, decide: { zz: "allow" } })).toThrow(
      /decide: the tape's run does not wait for a call "zz" \(it waits for w1\)/,
    );
    expect(provider.requests).toEqual([]);
  });

  it("resumed with allow, the call runs once and the run completes; the resumed tape replays", async () => {
    const runs: string[] = [];
    const { tape, scripts } = await deferred(runs);
    const later: string[] = [];
    const resumed = await resume(
      tape,
      scripts.slice(1),
      { runs: new Map(), registry: () => createToolRegistry([approvalNoteTool(later)]) },
      {},
      { decide: { w1: "allow" } },
    );
    expect(later).toEqual(["hello"]);
    expect(resumed.result.reason).toBe("completed");
    expect(resumed.frames.find((f) => f.type === "approval_decided")).toMatchObject({ decision: "allow" });
    const outcome = await replayTape(
      { header: resumed.header, frames: resumed.frames },
      { registry: createToolRegistry([approvalNoteTool([])]), workspace: dir },
    );
    expect(outcome.verdict).toEqual({ match: true, frames: resumed.frames.length });
  });

  it("resumed with deny, nothing runs and the run completes", async () => {
    const { resumed, later } = await resumeDeferred({ decide: { all: "deny" } });
    expect(later).toEqual([]);
    expect(resumed.result.reason).toBe("completed");
    expect(resumed.frames.find((f) => f.type === "tool_ended")).toMatchObject({ call_id: "w1", ok: false });
  });
});

describe("deferred approvals inside a sub-agent (agentTool)", () => {
  const writer = agentTool({
    name: "writer",
    description: "Writes notes",
    spec: { instructions: "You write notes.", tools: ["write_note"], max_turns: 3 },
  });
  const tools = (runs: string[]) => ({
    runs: new Map<string, number>(),
    registry: () => createToolRegistry([approvalNoteTool(runs), writer]),
  });
  const json = (tape: Tape): Tape => JSON.parse(JSON.stringify(tape)) as Tape;
  const first: Script[] = [
    {
      items: [{ type: "function_call", name: "writer", arguments: '{"input":"note hello"}', call_id: "a1" }],
    },
    {
      items: [
        {
          type: "function_call",
          name: "write_note",
          arguments: JSON.stringify({ text: "hello" }),
          call_id: "w1",
        },
      ],
    },
  ];
  const later: Script[] = [{ items: [text("the note is written")] }, { items: [text("done: written")] }];

  async function deferredTape(runs: string[]) {
    return json(await record(first, tools(runs), {}, { policy: createPolicy({ approve: "defer" }) }));
  }
  /** The deferred tape resumed under `--approve defer` with `decide`, its tools counting into `runs`. */
  async function resumeDeferred(runs: string[], decide?: Record<string, "allow" | "deny">) {
    const policy = createPolicy({ approve: "defer" });
    return resume(await deferredTape([]), later, tools(runs), {}, decide ? { policy, decide } : { policy });
  }
  /** The frames of the sub-run recorded in the `tool_ended` of the agent call `a1`. */
  const subFramesOf = (frames: Frame[]) => {
    const ended = frames.find((f) => f.type === "tool_ended" && f.call_id === "a1");
    return ended?.type === "tool_ended" ? (ended.subrun?.frames ?? []) : [];
  };

  it("the parent ends awaiting_approval naming the nested call (AGENT_CALL/SUB_CALL); nothing ran; the tape replays", async () => {
    const runs: string[] = [];
    const tape = await deferredTape(runs);
    expect(runs).toEqual([]);
    expect(tape.frames.at(-1)).toMatchObject({
      type: "run_ended",
      reason: "awaiting_approval",
      pending_calls: ["a1/w1"],
    });
    const deferred = tape.frames.find((f) => f.type === "tool_deferred");
    expect(deferred).toMatchObject({ call_id: "a1", name: "writer", pending_calls: ["a1/w1"] });
    const sub = deferred?.type === "tool_deferred" ? deferred.subrun : undefined;
    expect(sub?.agent).toBe("writer");
    expect(sub?.frames.at(-1)).toMatchObject({ type: "run_ended", pending_calls: ["w1"] });
    expect(tape.frames.some((f) => f.type === "tool_ended" && f.call_id === "a1")).toBe(false);
    const outcome = await replayTape(tape, { registry: tools([]).registry(), workspace: dir });
    expect(outcome.verdict).toEqual({ match: true, frames: tape.frames.length });
  });

  it("resumed with allow: the sub-agent's call runs once, the sub-agent finishes, its answer reaches the parent; the tape replays", async () => {
    const runs: string[] = [];
    const resumed = await resumeDeferred(runs, { "a1/w1": "allow" });
    expect(runs).toEqual(["hello"]);
    expect(resumed.result.reason).toBe("completed");
    expect(resumed.result.outputText).toBe("done: written");
    // The sub-agent's follow-up carries its call's output; the parent's carries the sub-agent's answer.
    expect(JSON.stringify(resumed.requests[0]?.input)).toContain("written");
    const parentOutput = (
      (resumed.requests[1]?.input ?? []) as { type?: string; call_id?: string; output?: string }[]
    ).find((i) => i.type === "function_call_output" && i.call_id === "a1");
    expect(parentOutput?.output).toContain("the note is written");
    const subFrames = subFramesOf(resumed.frames);
    expect(subFrames.find((f) => f.type === "approval_decided")).toMatchObject({
      call_id: "w1",
      decision: "allow",
    });
    expect(subFrames.at(-1)).toMatchObject({ type: "run_ended", reason: "completed" });
    const outcome = await replayTape(json({ header: resumed.header, frames: resumed.frames }), {
      registry: tools([]).registry(),
      workspace: dir,
    });
    expect(outcome.verdict).toEqual({ match: true, frames: resumed.frames.length });
  });

  it("resumed with deny: the sub-agent's call is answered denied and never runs", async () => {
    const runs: string[] = [];
    const resumed = await resumeDeferred(runs, { all: "deny" });
    expect(runs).toEqual([]);
    expect(resumed.result.reason).toBe("completed");
    const subFrames = subFramesOf(resumed.frames);
    expect(subFrames.find((f) => f.type === "tool_ended")).toMatchObject({ call_id: "w1", ok: false });
  });

  it("resumed without a decision under defer, it waits again with the sub-run so far", async () => {
    const resumed = await resumeDeferred([]);
    expect(resumed.result.reason).toBe("awaiting_approval");
    expect(resumed.result.pendingCalls).toEqual(["a1/w1"]);
    expect(resumed.requests).toHaveLength(0);
  });
});

/**
 * `threeTurns` recorded (with `recorded` hooks), killed during its second request and resumed with
 * a `beforeToolCall` that answers `decision` and notes which calls it was asked about (none given:
 * resumed without hooks).
 */
async function resumeWithHook(recorded: ToolHooks | undefined, decision: BeforeToolCallDecision | undefined) {
  const full = await record(threeTurns, counter(), {}, recorded === undefined ? {} : { hooks: recorded });
  const crashed = cutAfter(full, (f) => f.type === "request_started", 2);
  const asked: string[] = [];
  const tools = counter();
  const hooks: ToolHooks = {
    beforeToolCall: (call) => {
      asked.push(call.callId);
      return decision;
    },
  };
  const resumed = await resume(
    crashed,
    threeTurns.slice(1),
    tools,
    {},
    decision === undefined ? {} : { hooks },
  );
  return { asked, tools, resumed };
}

describe("a resumed run's hooks are this invocation's (ResumeOptions.hooks)", () => {
  it("a tape recorded without hooks: the settled call is not asked, the live one is denied; the tape still reproduces", async () => {
    const { asked, tools, resumed } = await resumeWithHook(undefined, {
      action: "deny",
      reason: "no notes after the crash",
    });
    expect(asked).toEqual(["c2"]);
    expect(tools.runs.size).toBe(0); // c1 recorded, c2 denied
    expect(resumed.result.reason).toBe("completed");
    const decided = resumed.frames.filter((f) => f.type === "hook_decided");
    expect(decided).toEqual([
      expect.objectContaining({ call_id: "c2", decision: "deny", reason: "no notes after the crash" }),
    ]);
    // The new frames come after the point: what was recorded reproduced unchanged.
    expect(decided[0]?.seq).toBeGreaterThanOrEqual(resumed.point.at_seq);
  });

  it("a tape recorded with hooks: its decisions are given back, only the live call is asked", async () => {
    const allow = { beforeToolCall: () => ({ action: "allow" as const, note: "recorded allow" }) };
    const { asked, tools, resumed } = await resumeWithHook(allow, { action: "allow", note: "live allow" });
    expect(asked).toEqual(["c2"]);
    expect(tools.runs.get("b")).toBe(1);
    expect(resumed.frames.filter((f) => f.type === "hook_decided").map((f) => [f.call_id, f.note])).toEqual([
      ["c1", "recorded allow"],
      ["c2", "live allow"],
    ]);
  });

  it("without hooks given, a tape's recorded decisions still reproduce and nothing is asked", async () => {
    const deny = { beforeToolCall: () => ({ action: "deny" as const, reason: "recorded deny" }) };
    const { resumed } = await resumeWithHook(deny, undefined);
    expect(resumed.result.reason).toBe("completed");
    expect(resumed.frames.filter((f) => f.type === "hook_decided").map((f) => f.call_id)).toEqual(["c1"]);
  });
});
