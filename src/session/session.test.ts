import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { failingTapeWriter } from "../../test/support/failing-tapes.js";
import { createScriptedProvider, type ScriptedResponse } from "../../test/support/scripted.js";
import { resumeRun } from "../batch/resume.js";
import { createTapeFileWriter } from "../batch/tape-store.js";
import { createThreadStore } from "../context/threads.js";
import type { Frame } from "../frames/frame.js";
import { createPolicy } from "../loop/policy.js";
import type { JsonObject } from "../protocol/types.js";
import { readTape } from "../replay/tape.js";
import { createBuiltinTools } from "../tools/builtin/index.js";
import { createToolRegistry } from "../tools/registry.js";
import { defineTool } from "../tools/tool.js";
import { createSession, type SessionEvent } from "./session.js";

const say = (text: string): ScriptedResponse => ({ items: [{ type: "message", text }] });
const call = (name: string, args: JsonObject, id: string): ScriptedResponse => ({
  items: [{ type: "function_call", name, arguments: JSON.stringify(args), call_id: id }],
});

/** A tool that waits until released (or its call is cancelled). */
function gatedTool(name = "wait") {
  let release: () => void = () => {};
  let started: () => void = () => {};
  const running = new Promise<void>((resolve) => {
    started = resolve;
  });
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const calls: string[] = [];
  const tool = defineTool({
    name,
    description: "waits",
    parameters: { type: "object", properties: {}, additionalProperties: false },
    execute: async (_args, { signal }) => {
      calls.push(name);
      started();
      await new Promise<void>((resolve, reject) => {
        gate.then(resolve);
        signal.addEventListener("abort", () => reject(new Error("cancelled")), { once: true });
      });
      return "done";
    },
  });
  return { tool, release: () => release(), running, calls };
}

/** A tool that needs approval, answers "launched", and counts its runs. */
function launchTool() {
  let runs = 0;
  const tool = defineTool({
    name: "launch",
    description: "needs approval",
    parameters: { type: "object", properties: { n: { type: "number" } } },
    needsApproval: true,
    execute: () => {
      runs++;
      return "launched";
    },
  });
  return { tool, runs: () => runs };
}

function workspace(): string {
  return mkdtempSync(join(tmpdir(), "eddy-session-"));
}

/** The text of every user message a request sent. */
function userTexts(body: JsonObject): string[] {
  const input = body.input;
  if (typeof input === "string") return [input];
  return (input as JsonObject[])
    .filter((i) => i.type === "message" && i.role === "user")
    .map((i) => JSON.stringify(i.content));
}

function collect(events: AsyncIterableIterator<SessionEvent>): SessionEvent[] {
  const out: SessionEvent[] = [];
  (async () => {
    for await (const e of events) out.push(e);
  })();
  return out;
}

describe("a session whose tape cannot be written (a full disk)", () => {
  it("stops the turn naming why, still shows it to its end, and takes the next message", async () => {
    const cwd = workspace();
    const provider = createScriptedProvider([call("note", { text: "a" }, "c1"), say("never"), say("second")]);
    const noted: string[] = [];
    const note = defineTool({
      name: "note",
      description: "notes",
      parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
      execute: (args) => {
        noted.push((args as { text: string }).text);
        return "ok";
      },
    });
    const faults = { failAfter: 2 };
    const session = createSession({
      spec: { model: "m" },
      deps: { provider, tools: [note], workspace: cwd },
      tapeWriter: (path, header, secrets, replaces) =>
        failingTapeWriter(createTapeFileWriter(path, header, secrets, replaces), faults),
    });
    const events = collect(session.events());
    const first = await session.send("note a");
    expect(first.run.reason).toBe("cancelled");
    expect(noted).toEqual([]);
    const shown = events.flatMap((e) => (e.type === "frame" ? [(e as { frame: Frame }).frame] : []));
    expect(shown.at(-1)?.type).toBe("run_ended");
    expect(shown.find((f) => f.type === "cancel_requested")).toMatchObject({
      reason: "could not record this turn's tape: ENOSPC",
    });
    // The tape keeps the two frames written before the failure, as shown.
    expect(readTape(first.tape).frames.map((f) => f.seq)).toEqual([0, 1]);
    expect(readTape(first.tape).frames.map((f) => f.type)).toEqual(shown.slice(0, 2).map((f) => f.type));
    faults.failAfter = Number.POSITIVE_INFINITY;
    const second = await session.send("again");
    expect(second.run.reason).toBe("completed");
    expect(readTape(second.tape).frames.at(-1)?.type).toBe("run_ended");
    await session.close();
  });
});

describe("a session whose turn's tape cannot be opened", () => {
  it("fails the turn with the error; its run is cancelled before it asks or runs anything", async () => {
    const cwd = workspace();
    const noted: string[] = [];
    const note = defineTool({
      name: "note",
      description: "notes",
      parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
      execute: (args) => void noted.push((args as { text: string }).text),
    });
    const provider = createScriptedProvider([call("note", { text: "a" }, "c1"), say("noted")]);
    let refuse = true;
    const session = createSession({
      spec: { model: "m" },
      deps: { provider, tools: [note], workspace: cwd },
      tapeWriter: (path, header, secrets, replaces) => {
        if (refuse) throw Object.assign(new Error("EACCES: permission denied, open"), { code: "EACCES" });
        return createTapeFileWriter(path, header, secrets, replaces);
      },
    });
    await expect(session.send("note a")).rejects.toThrow(/EACCES/);
    expect(provider.requests).toHaveLength(0);
    expect(noted).toEqual([]);
    refuse = false;
    const next = await session.send("again");
    expect(next.run.reason).toBe("completed");
    expect(noted).toEqual(["a"]);
    await session.close();
  });
});

describe("a session", () => {
  it("runs each message as a turn on its thread, recorded as a tape; the next turn sees the earlier one", async () => {
    const cwd = workspace();
    const provider = createScriptedProvider([say("Hello Ada."), say("Your name is Ada.")]);
    const session = createSession({ spec: { model: "m" }, deps: { provider, workspace: cwd } });
    const first = await session.send("My name is Ada.");
    const second = await session.send("What is my name?");
    expect(second.run.reason).toBe("completed");
    expect(userTexts(provider.requests[1] as JsonObject).join(" ")).toContain("My name is Ada.");
    expect(readTape(first.tape).frames.at(-1)?.type).toBe("run_ended");
    expect(readTape(second.tape).header.run_id).toBe(second.run.runId);
    const log = await createThreadStore({ workspace: cwd }).read(session.thread);
    expect(log.runs.map((r) => r.outcome?.tape)).toEqual([first.tape, second.tape]);
    expect(session.usage().turns).toHaveLength(2);
    expect(session.usage().total.total_tokens).toBe(30);
    await session.close();
  });

  it("queues a message sent while a turn runs and sends it when the turn ends", async () => {
    const gated = gatedTool();
    const provider = createScriptedProvider([call("wait", {}, "c1"), say("waited"), say("second")]);
    const session = createSession({
      spec: { model: "m" },
      deps: { provider, tools: [gated.tool], workspace: workspace() },
    });
    const events = collect(session.events());
    const a = session.send("first");
    await gated.running;
    const b = session.send("second");
    expect(session.busy).toBe(true);
    expect(session.queued).toEqual(["second"]);
    gated.release();
    expect((await a).run.outputText).toBe("waited");
    expect((await b).run.outputText).toBe("second");
    const starts = events
      .filter((e) => e.type === "turn_started")
      .map((e) => (e as { message: string }).message);
    expect(starts).toEqual(["first", "second"]);
    await session.close();
  });

  it("cancel stops the running turn (every started call answered, recorded) and the session takes the next message", async () => {
    const gated = gatedTool();
    const provider = createScriptedProvider([call("wait", {}, "c1"), say("after cancel")]);
    const session = createSession({
      spec: { model: "m" },
      deps: { provider, tools: [gated.tool], workspace: workspace() },
    });
    const turn = session.send("go");
    await gated.running;
    expect(session.cancel()).toBe(true);
    const cancelled = await turn;
    expect(cancelled.run.reason).toBe("cancelled");
    const frames = readTape(cancelled.tape).frames;
    const ended = frames.filter((f) => f.type === "tool_ended") as Extract<Frame, { type: "tool_ended" }>[];
    expect(ended.map((f) => f.call_id)).toEqual(["c1"]);
    expect(frames.at(-1)).toMatchObject({ type: "run_ended", reason: "cancelled" });
    expect(session.cancel()).toBe(false);
    expect((await session.send("again")).run.outputText).toBe("after cancel");
    await session.close();
  });

  it("steer interrupts at the next safe point (after the calls are answered) and sends its message before the queue", async () => {
    const gated = gatedTool();
    const provider = createScriptedProvider([
      call("wait", {}, "c1"),
      // The steered turn's answer: the first turn ends before its follow-up request.
      say("steered"),
      say("from the queue"),
    ]);
    const session = createSession({
      spec: { model: "m" },
      deps: { provider, tools: [gated.tool], workspace: workspace() },
    });
    const first = session.send("long task");
    await gated.running;
    const queued = session.send("queued");
    const steered = session.steer("stop, do this instead");
    gated.release();
    const r1 = await first;
    expect(r1.run.reason).toBe("cancelled");
    const frames = readTape(r1.tape).frames;
    // The call ran to its end (its output is the tool's, not a cancellation).
    expect(frames.find((f) => f.type === "tool_ended")).toMatchObject({ ok: true });
    const r2 = await steered;
    expect(r2.message).toBe("stop, do this instead");
    expect(r2.run.outputText).toBe("steered");
    expect(JSON.stringify(provider.requests[1])).toContain("stop, do this instead");
    expect((await queued).turn).toBe(2);
    await session.close();
  });

  it("changes the model between turns", async () => {
    const provider = createScriptedProvider([say("one"), say("two")]);
    const session = createSession({ spec: { model: "m1" }, deps: { provider, workspace: workspace() } });
    await session.send("a");
    session.setModel("m2");
    await session.send("b");
    expect(provider.requests.map((r) => r.model)).toEqual(["m1", "m2"]);
    expect(() => session.setApprove("ask")).toThrow(/approval handler/);
    // Refused when set, not at the next message (which used to fail, and every one after it).
    expect(() => session.setModel("M".repeat(257))).toThrow(/257 characters long, more than 256/);
    expect(() => session.setModel("a\u001b]0;x\u0007")).toThrow(/holds control characters/);
    expect(session.model).toBe("m2");
    await session.close();
  });

  it("a turn's tape records the approval mode the turn ran under, after /approve changed it", async () => {
    const provider = createScriptedProvider([say("one"), say("two")]);
    const session = createSession({
      spec: { model: "m" },
      deps: { provider, workspace: workspace(), policy: createPolicy({ approve: "deny" }) },
    });
    const first = await session.send("a");
    session.setApprove("auto");
    const second = await session.send("b");
    const approveOf = (tape: string) => readTape(tape).header.policy?.approve;
    expect([approveOf(first.tape), approveOf(second.tape)]).toEqual(["deny", "auto"]);
    await session.close();
  });

  it("decides a deferred call later in the session: the turn resumes from its tape and the call runs once", async () => {
    const launch = launchTool();
    const guarded = launch.tool;
    const provider = createScriptedProvider([call("launch", {}, "c9"), say("Launched.")]);
    const session = createSession({
      spec: { model: "m" },
      deps: {
        provider,
        tools: createToolRegistry([guarded]),
        workspace: workspace(),
        policy: createPolicy({ approve: "defer" }),
      },
    });
    const deferred = await session.send("launch it");
    expect(deferred.run.reason).toBe("awaiting_approval");
    expect(session.pending()).toEqual(["c9"]);
    expect(launch.runs()).toBe(0);
    await expect(session.decide({ nope: "allow" })).rejects.toThrow(/not waiting/);
    const decided = await session.decide({ c9: "allow" });
    expect(decided.run.reason).toBe("completed");
    expect(decided.run.outputText).toBe("Launched.");
    expect(launch.runs()).toBe(1);
    expect(session.pending()).toEqual([]);
    // The resumed tape replaced the deferred one in place.
    expect(readTape(deferred.tape).frames.at(-1)).toMatchObject({ type: "run_ended", reason: "completed" });
    await session.close();
  });

  it("picks up a run an earlier session left waiting: the calls as its tape recorded them, decided here, the thread's log updated", async () => {
    const launch = launchTool();
    const guarded = launch.tool;
    const cwd = workspace();
    const deps = (provider: ReturnType<typeof createScriptedProvider>) => ({
      provider,
      tools: createToolRegistry([guarded]),
      workspace: cwd,
      policy: createPolicy({ approve: "defer" as const }),
    });
    // Yesterday's chat: the call deferred, the chat closed.
    const first = createSession({
      spec: { model: "m" },
      deps: deps(createScriptedProvider([call("launch", { n: 7 }, "c9")])),
      thread: "t1",
    });
    const deferred = await first.send("launch it");
    expect(deferred.run.reason).toBe("awaiting_approval");
    await first.close();
    // Today's: it finds the run, decides it, and the thread's log says how it ended.
    const provider = createScriptedProvider([say("Launched."), say("Next.")]);
    const second = createSession({ spec: { model: "m" }, deps: deps(provider), thread: "t1" });
    expect(second.pending()).toEqual([]);
    await second.hold();
    expect(second.inherited).toEqual({
      runId: deferred.run.runId,
      tape: deferred.tape,
      calls: [{ call_id: "c9", name: "launch", arguments: '{"n":7}' }],
    });
    expect(second.pending()).toEqual(["c9"]);
    await expect(second.decide({ c8: "allow" })).rejects.toThrow(/c8 is not waiting/);
    const decided = await second.decide({ c9: "allow" });
    expect(decided.run).toMatchObject({ reason: "completed", outputText: "Launched." });
    expect(launch.runs()).toBe(1);
    expect(second.pending()).toEqual([]);
    expect(second.inherited).toBeUndefined();
    const log = await createThreadStore({ workspace: cwd }).read("t1");
    expect(log.runs.map((r) => [r.run_id, r.outcome?.reason, r.outcome?.output_text])).toEqual([
      [deferred.run.runId, "completed", "Launched."],
    ]);
    // The next turn continues from the decided run: the call's real output, not a missing one.
    await second.send("and then?");
    const input = JSON.stringify(provider.requests.at(-1)?.input);
    expect(input).toContain("launched");
    expect(input).not.toContain("missing_output");
    await second.close();
  });

  it("an inherited run whose tape is gone, or records another run, is named with the reason and not continued", async () => {
    const cwd = workspace();
    const guarded = launchTool().tool;
    const deps = {
      provider: createScriptedProvider([call("launch", {}, "c1"), call("launch", {}, "c2")]),
      tools: createToolRegistry([guarded]),
      workspace: cwd,
      policy: createPolicy({ approve: "defer" as const }),
    };
    const a = createSession({ spec: { model: "m" }, deps, thread: "ta" });
    const ta = await a.send("go");
    await a.close();
    const b = createSession({ spec: { model: "m" }, deps, thread: "tb" });
    const tb = await b.send("go");
    await b.close();
    // ta's tape now holds tb's run (a copied or edited file); tb's tape is gone.
    writeFileSync(ta.tape, readFileSync(tb.tape));
    writeFileSync(tb.tape, "");
    const onA = createSession({ spec: { model: "m" }, deps, thread: "ta" });
    await onA.hold();
    expect(onA.inherited).toMatchObject({
      runId: ta.run.runId,
      problem: expect.stringMatching(/records another run/),
    });
    expect(onA.pending()).toEqual([]);
    await onA.close();
    const onB = createSession({ spec: { model: "m" }, deps, thread: "tb" });
    await onB.hold();
    expect(onB.inherited).toMatchObject({
      runId: tb.run.runId,
      problem: expect.stringMatching(/cannot be read/),
    });
    await expect(onB.decide({ c2: "allow" })).rejects.toThrow(/no call is waiting/);
    await onB.close();
  });

  it("a thread log naming as the waiting run's tape a FIFO, a folder, a file outside or one not a tape: named, not read, nothing hangs", async () => {
    const cwd = workspace();
    const store = createThreadStore({ workspace: cwd });
    execFileSync("mkfifo", [join(cwd, "fifo.tape")]);
    mkdirSync(join(cwd, "dir.tape"));
    writeFileSync(join(cwd, "text.tape"), "not a tape\u001b[2J\n");
    const targets = [join(cwd, "fifo.tape"), "dir.tape", "../../../../../../etc/passwd", "text.tape"];
    for (const [i, tape] of targets.entries()) {
      const thread = `w${i}`;
      await store.append(thread, {
        kind: "prompt",
        run_id: `run_w${i}`,
        prompt: "go",
        model: "m",
        bundle_id: "b",
      });
      await store.append(thread, {
        kind: "outcome",
        run_id: `run_w${i}`,
        reason: "awaiting_approval",
        output_text: "",
        items: [],
        usage: null,
        tape,
      });
      const session = createSession({
        spec: { model: "m" },
        deps: { provider: createScriptedProvider([]), workspace: cwd },
        thread,
      });
      await session.hold();
      expect(session.inherited, tape).toMatchObject({
        runId: `run_w${i}`,
        // A file outside the workspace is not read at all (its first characters were quoted).
        problem: expect.stringMatching(
          tape.includes("etc/passwd") ? /is not inside the workspace/ : /cannot be read/,
        ),
      });
      expect(JSON.stringify(session.inherited)).not.toContain("root:");
      expect(session.pending()).toEqual([]);
      await session.close();
    }
  });

  it("resumeRun of a tape that names a thread its run never ran on appends nothing to any thread's log", async () => {
    const cwd = workspace();
    const guarded = launchTool().tool;
    const tools = createToolRegistry([guarded]);
    const policy = createPolicy({ approve: "defer" });
    const provider = createScriptedProvider([call("launch", {}, "c1"), say("Launched.")]);
    const session = createSession({
      spec: { model: "m" },
      deps: { provider, tools, workspace: cwd, policy },
      thread: "ta",
    });
    const deferred = await session.send("go");
    await session.close();
    const store = createThreadStore({ workspace: cwd });
    await store.append("tb", {
      kind: "prompt",
      run_id: "run_other",
      prompt: "x",
      model: "m",
      bundle_id: "b",
    });
    const before = [
      readFileSync(join(cwd, ".eddy/threads/ta.jsonl"), "utf8"),
      readFileSync(join(cwd, ".eddy/threads/tb.jsonl"), "utf8"),
    ];
    const tape = readTape(deferred.tape);
    const moved = { ...tape, header: { ...tape.header, spec: { ...tape.header.spec, thread: "tb" } } };
    const run = resumeRun(moved, {
      provider,
      registry: tools,
      workspace: cwd,
      policy,
      decide: { c1: "allow" },
    });
    for await (const _ of run);
    expect((await run.result).reason).toBe("completed");
    expect([
      readFileSync(join(cwd, ".eddy/threads/ta.jsonl"), "utf8"),
      readFileSync(join(cwd, ".eddy/threads/tb.jsonl"), "utf8"),
    ]).toEqual(before);
  });

  it("undoes the files the last turn wrote, and refuses when one changed since", async () => {
    const cwd = workspace();
    writeFileSync(join(cwd, "notes.txt"), "old\n");
    const { tools, disabled } = createBuiltinTools({ allowWrite: true });
    const write = (content: string, id: string) => call("write_file", { path: "notes.txt", content }, id);
    const provider = createScriptedProvider([
      write("new\n", "w1"),
      say("written"),
      write("newer\n", "w2"),
      say("again"),
    ]);
    const session = createSession({
      spec: { model: "m" },
      deps: {
        provider,
        tools: createToolRegistry(tools, { disabled }),
        workspace: cwd,
        policy: createPolicy({ allowWrite: true }),
      },
    });
    const turn = await session.send("write it");
    expect(turn.fileChanges).toEqual([
      { path: "notes.txt", encoding: "utf8", before: "old\n", after: "new\n" },
    ]);
    expect(await session.undo()).toEqual({ turn: 0, restored: ["notes.txt"] });
    expect(readFileSync(join(cwd, "notes.txt"), "utf8")).toBe("old\n");
    await expect(session.undo()).rejects.toThrow(/nothing to undo/);
    await session.send("write it again");
    writeFileSync(join(cwd, "notes.txt"), "edited by hand\n");
    await expect(session.undo()).rejects.toThrow(/notes\.txt \(it changed since\)/);
    expect(readFileSync(join(cwd, "notes.txt"), "utf8")).toBe("edited by hand\n");
    await session.close();
  });
});

describe("a session's tapes in a workspace whose .eddy/tapes is a symlink", () => {
  it("refuses to write through it (a cloned repository's link could point anywhere); nothing lands outside", async () => {
    const cwd = workspace();
    const outside = workspace();
    mkdirSync(join(cwd, ".eddy"));
    symlinkSync(outside, join(cwd, ".eddy", "tapes"));
    const session = createSession({
      spec: { model: "m" },
      deps: { provider: createScriptedProvider([say("hi")]), workspace: cwd },
      thread: "t",
    });
    await expect(session.send("hello")).rejects.toThrow(/tapes is a symlink: eddy keeps its own state/);
    expect(readdirSync(outside)).toEqual([]);
    await session.close();
  });
});
