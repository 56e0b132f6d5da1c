/**
 * Composition through the built CLI against scripted mock servers on 127.0.0.1 (the "done when"
 * checks of docs/architecture.md, "Composing runs"): `--on-limit answer`, config hook commands and
 * AGENTS.md — runs recorded and replayed with `eddy replay`.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Frame } from "../src/frames/frame.js";
import { parseFrames } from "../src/frames/jsonl.js";
import type { Scenario } from "../src/mock/scenario.js";
import type { JsonObject } from "../src/protocol/types.js";
import { cleanEnv, runCli } from "./support/cli.js";
import { scenarioServer } from "./support/scenario-server.js";

const { serve, bodies, close: closeServer } = scenarioServer();

function workspace(files: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), "eddy-compose-"));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

async function runJson(
  args: string[],
  cwd: string,
): Promise<{ code: number | null; frames: Frame[]; stderr: string }> {
  const out = await runCli(["run", "--json", ...args], { cwd, env: cleanEnv() });
  return { code: out.code, frames: parseFrames(out.stdout), stderr: out.stderr };
}

function last(frames: Frame[]): Frame | undefined {
  return frames[frames.length - 1];
}

async function replays(tape: string, cwd: string): Promise<void> {
  const replay = await runCli(["replay", tape], { cwd, env: cleanEnv() });
  expect(replay.stdout + replay.stderr).toMatch(/match/i);
  expect(replay.code).toBe(0);
}

const readCall = (path: string, callId = "call_r"): Scenario["turns"][number] => ({
  items: [{ type: "function_call", name: "read_file", arguments: { path }, call_id: callId }],
});

describe("--on-limit", { timeout: 90_000 }, () => {
  it("answer: at --max-turns 1 a second request with tools off, exit 3, a non-empty final answer", async () => {
    const url = await serve({
      turns: [readCall("notes.txt"), { items: [{ type: "message", text: "The notes say hello." }] }],
    });
    const cwd = workspace({ "notes.txt": "hello" });
    const tape = join(cwd, "run.tape");
    const args = [
      "--base-url",
      url,
      "--model",
      "m",
      "--max-turns",
      "1",
      "--on-limit",
      "answer",
      "--record",
      tape,
    ];
    const run = await runJson([...args, "read notes.txt"], cwd);
    expect(run.code).toBe(3);
    expect(bodies()).toHaveLength(2);
    expect(bodies()[0]?.tools).toBeDefined();
    expect(bodies()[1]?.tools).toBeUndefined();
    expect(last(run.frames)).toMatchObject({
      type: "run_ended",
      reason: "max_turns",
      output_text: "The notes say hello.",
    });
    await replays(tape, cwd);
  });

  it("stop (the default): one request, exit 3", async () => {
    const url = await serve({ turns: [readCall("notes.txt"), { items: [{ type: "message", text: "x" }] }] });
    const cwd = workspace({ "notes.txt": "hello" });
    const run = await runJson(["--base-url", url, "--model", "m", "--max-turns", "1", "read"], cwd);
    expect(run.code).toBe(3);
    expect(bodies()).toHaveLength(1);
  });
});

describe("config hooks", { timeout: 90_000 }, () => {
  it("before_tool_call exiting 2: the call is not run, the model sees the reason, the file never reaches the provider", async () => {
    const url = await serve({
      turns: [readCall("secret.txt"), { items: [{ type: "message", text: "I could not read it." }] }],
    });
    const cwd = workspace({
      "secret.txt": "TOPSECRET-42",
      "eddy.config.json": JSON.stringify({
        hooks: { before_tool_call: 'cat > call.json; echo "blocked by policy" >&2; exit 2' },
      }),
    });
    const tape = join(cwd, "run.tape");
    const run = await runJson(["--base-url", url, "--model", "m", "--record", tape, "read secret.txt"], cwd);
    expect(run.code).toBe(0);
    const sent = JSON.stringify(bodies());
    expect(sent).not.toContain("TOPSECRET");
    expect(sent).toContain("blocked by policy");
    expect(run.frames.find((f) => f.type === "hook_decided")).toMatchObject({
      hook: "before_tool_call",
      decision: "deny",
      reason: "blocked by policy",
    });
    await replays(tape, cwd);
  });

  it("a hook that hangs is bounded by timeout_ms and fails closed with a note", async () => {
    const url = await serve({
      turns: [readCall("secret.txt"), { items: [{ type: "message", text: "ok" }] }],
    });
    const cwd = workspace({
      "secret.txt": "TOPSECRET-42",
      "eddy.config.json": JSON.stringify({ hooks: { before_tool_call: "sleep 30", timeout_ms: 300 } }),
    });
    const run = await runJson(["--base-url", url, "--model", "m", "read secret.txt"], cwd);
    expect(run.code).toBe(0);
    expect(JSON.stringify(bodies())).not.toContain("TOPSECRET");
    expect(run.frames.find((f) => f.type === "hook_decided")).toMatchObject({
      decision: "deny",
      note: "the before_tool_call hook timed out after 300 ms (fail closed)",
    });
  });

  it("after_tool_call rewrites the output on stdout (redaction) and before_tool_call gets the call on stdin", async () => {
    const url = await serve({
      turns: [readCall("secret.txt"), { items: [{ type: "message", text: "ok" }] }],
    });
    const cwd = workspace({
      "secret.txt": "TOPSECRET-42",
      "eddy.config.json": JSON.stringify({
        hooks: {
          before_tool_call: "cat > before.json",
          after_tool_call: `node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const c=JSON.parse(s);process.stdout.write(JSON.stringify({output:c.output.replace(/TOPSECRET-\\d+/g,"[redacted]")}))})'`,
        },
      }),
    });
    const run = await runJson(["--base-url", url, "--model", "m", "read secret.txt"], cwd);
    expect(run.code).toBe(0);
    const sent = JSON.stringify(bodies());
    expect(sent).not.toContain("TOPSECRET");
    expect(sent).toContain("[redacted]");
    const { readFileSync } = await import("node:fs");
    expect(JSON.parse(readFileSync(join(cwd, "before.json"), "utf8"))).toMatchObject({
      hook: "before_tool_call",
      name: "read_file",
      call_id: "call_r",
      arguments: { path: "secret.txt" },
    });
  });
});

describe("AGENTS.md", { timeout: 90_000 }, () => {
  it("reaches request 1 and is listed in run_started.instruction_files; --no-agents-md leaves it out", async () => {
    const url = await serve({
      turns: [{ items: [{ type: "message", text: "ok" }] }, { items: [{ type: "message", text: "ok" }] }],
    });
    const cwd = workspace({ "AGENTS.md": "Always answer in haiku." });
    const run = await runJson(["--base-url", url, "--model", "m", "--instructions", "Be kind.", "hi"], cwd);
    expect(run.code).toBe(0);
    expect(bodies()[0]?.instructions).toBe(
      "Instructions from AGENTS.md:\n\nAlways answer in haiku.\n\nBe kind.",
    );
    expect(run.frames[0]).toMatchObject({ type: "run_started", instruction_files: ["AGENTS.md"] });

    const off = await runJson(["--base-url", url, "--model", "m", "--no-agents-md", "hi"], cwd);
    expect(off.code).toBe(0);
    expect(bodies()[1]?.instructions).toBeUndefined();
    expect(off.frames[0]).not.toHaveProperty("instruction_files");
  });
  it("an AGENTS.md left out (a FIFO) or cut (over 64 KiB) is said on stderr, once, and the run goes on", async () => {
    const url = await serve({ turns: [{ items: [{ type: "message", text: "ok" }], repeat: true }] });
    const cwd = workspace({ "AGENTS.md": "z".repeat(65 * 1024) });
    mkdirSync(join(cwd, ".git")); // the repository root: the parent's AGENTS.md is read
    const sub = join(cwd, "sub");
    mkdirSync(sub);
    execFileSync("mkfifo", [join(sub, "AGENTS.md")]);
    const run = await runJson(["--base-url", url, "--model", "m", "--workspace", sub, "hi"], cwd);
    expect(run.code).toBe(0);
    const lines = run.stderr.split("\n").filter((l) => l.includes("AGENTS.md"));
    expect(lines).toEqual([
      "eddy: ../AGENTS.md is larger than 64 KiB: the instructions have its beginning only (cut at 65536 bytes)",
      "eddy: AGENTS.md is left out of the instructions: not a regular file",
    ]);
    expect(run.frames[0]).toMatchObject({ type: "run_started", instruction_files: ["../AGENTS.md"] });
  });
});

describe("config agents", { timeout: 90_000 }, () => {
  it("agents.reviewer is offered as a tool; its call makes a sub-agent request whose answer reaches the parent's follow-up; the tape replays", async () => {
    const url = await serve({
      turns: [
        {
          items: [
            {
              type: "function_call",
              name: "reviewer",
              arguments: { input: "review: x = 1" },
              call_id: "call_a",
            },
          ],
        },
        { items: [{ type: "message", text: "REVIEW-OK: looks fine" }] },
        { items: [{ type: "message", text: "The reviewer said it looks fine." }] },
      ],
    });
    const cwd = workspace({
      "eddy.config.json": JSON.stringify({
        agents: { reviewer: { instructions: "You review code tersely.", model: "review-m", max_turns: 2 } },
      }),
    });
    const tape = join(cwd, "run.tape");
    const run = await runJson(
      ["--base-url", url, "--model", "m", "--record", tape, "write x = 1, then review it"],
      cwd,
    );
    expect(run.code).toBe(0);
    const [parent, sub, followUp] = bodies();
    expect(bodies()).toHaveLength(3);
    const offered = ((parent?.tools ?? []) as JsonObject[]).map((t) => t.name);
    expect(offered).toContain("reviewer");
    expect(sub?.instructions).toBe("You review code tersely.");
    expect(sub?.model).toBe("review-m");
    expect(JSON.stringify(sub?.input)).toContain("review: x = 1");
    const output = ((followUp?.input ?? []) as JsonObject[]).find(
      (i) => i.type === "function_call_output" && i.call_id === "call_a",
    );
    expect(String(output?.output)).toContain("REVIEW-OK: looks fine");
    const ended = run.frames.find((f) => f.type === "tool_ended");
    expect(ended).toMatchObject({ name: "reviewer", ok: true, subrun: { agent: "reviewer" } });
    expect(last(run.frames)).toMatchObject({
      reason: "completed",
      output_text: "The reviewer said it looks fine.",
    });
    // No server answers the replay: the sub-agent's run comes from the tape.
    await closeServer();
    await replays(tape, cwd);
  });
});

describe("a sub-agent's call awaiting approval (--approve defer)", { timeout: 120_000 }, () => {
  it("the run exits 4 naming the nested call; eddy resume --decide CALL/SUB=allow runs it, the sub-agent's answer reaches the parent; the tape replays", async () => {
    const url = await serve({
      turns: [
        {
          items: [
            {
              type: "function_call",
              name: "writer",
              arguments: { input: "write the note" },
              call_id: "call_a",
            },
          ],
        },
        {
          items: [
            {
              type: "function_call",
              name: "write_file",
              arguments: { path: "note.txt", content: "hello" },
              call_id: "call_w",
            },
          ],
        },
        { items: [{ type: "message", text: "WROTE note.txt" }] },
        { items: [{ type: "message", text: "The writer wrote the note." }] },
      ],
    });
    const cwd = workspace({
      "eddy.config.json": JSON.stringify({
        agents: { writer: { instructions: "You write files.", tools: ["write_file"], max_turns: 3 } },
      }),
    });
    const tape = join(cwd, "run.tape");
    const common = ["--base-url", url, "--model", "m", "--allow-write"];
    const run = await runJson([...common, "--approve", "defer", "--record", tape, "write a note"], cwd);
    expect(run.code).toBe(4);
    expect(last(run.frames)).toMatchObject({ reason: "awaiting_approval", pending_calls: ["call_a/call_w"] });
    expect(run.frames.find((f) => f.type === "tool_deferred")).toMatchObject({
      call_id: "call_a",
      name: "writer",
    });
    expect(bodies()).toHaveLength(2);
    expect(existsSync(join(cwd, "note.txt"))).toBe(false);

    const resumed = await runCli(
      ["resume", tape, ...common, "--approve", "defer", "--decide", "call_a/call_w=allow", "--json"],
      { cwd, env: cleanEnv() },
    );
    expect(resumed.stderr).not.toMatch(/error/i);
    expect(resumed.code).toBe(0);
    expect(readFileSync(join(cwd, "note.txt"), "utf8")).toBe("hello");
    expect(bodies()).toHaveLength(4);
    const output = ((bodies()[3]?.input ?? []) as JsonObject[]).find(
      (i) => i.type === "function_call_output" && i.call_id === "call_a",
    );
    expect(String(output?.output)).toContain("WROTE note.txt");
    expect(last(parseFrames(resumed.stdout))).toMatchObject({
      reason: "completed",
      output_text: "The writer wrote the note.",
    });
    await closeServer();
    await replays(tape, cwd);
  });
});
