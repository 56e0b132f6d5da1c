/**
 * The thread store as hostile input finds it: a cloned repository can ship `.eddy/` with symlinks
 * (or hard links) pointing out of the workspace, and a crash can leave a torn last line in a log.
 */
import { spawnSync } from "node:child_process";
import {
  appendFileSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { runCli } from "../../test/support/cli.js";
import { createScriptedProvider } from "../../test/support/scripted.js";
import { estimateCounter } from "../history/tokens.js";
import { ToolHistoryManager } from "../history/tool-history.js";
import { createThreadStore, parseThreadLog, THREAD_LOG_MAX_UNREADABLE } from "./threads.js";
import { prepareThreadRun } from "./threads-run.js";

const temp = (name: string) => mkdtempSync(join(tmpdir(), `eddy-${name}-`));
const prompt = (run_id: string) => ({ kind: "prompt" as const, run_id, prompt: `p ${run_id}`, model: null });
const bundle = {
  schema: "eddy.context_bundle.v1" as const,
  compiler: {
    id: "eddy.context_compiler.v1" as const,
    strategy: "recent_messages_v1" as const,
    budget_tokens: 10,
    tokenizer: "estimate",
  },
  source: [],
  items: [],
  token_estimate: 0,
};

/** A workspace and a folder outside it, with a file there that must never change. */
function setup(): { ws: string; outside: string; victim: string } {
  const ws = temp("threads-ws");
  const outside = temp("threads-outside");
  const victim = join(outside, "victim.jsonl");
  writeFileSync(victim, "precious\n");
  return { ws, outside, victim };
}

describe("the thread store never follows a symlink out of the workspace", () => {
  it.each([
    [
      ".eddy/threads/x.jsonl → a file elsewhere",
      (ws: string, _outside: string, victim: string) => {
        mkdirSync(join(ws, ".eddy/threads"), { recursive: true });
        symlinkSync(victim, join(ws, ".eddy/threads/x.jsonl"));
      },
    ],
    [
      ".eddy/threads → a folder elsewhere",
      (ws: string, outside: string) => {
        mkdirSync(join(ws, ".eddy"));
        symlinkSync(outside, join(ws, ".eddy/threads"));
        symlinkSync(join(outside, "victim.jsonl"), join(outside, "x.jsonl"));
      },
    ],
    [
      ".eddy → a folder elsewhere",
      (ws: string, outside: string) => {
        mkdirSync(join(outside, "threads"));
        symlinkSync(outside, join(ws, ".eddy"));
      },
    ],
  ])("%s: append and read are refused, nothing outside changes", async (_label, arrange) => {
    const { ws, outside, victim } = setup();
    arrange(ws, outside, victim);
    const before = readdirSync(outside, { recursive: true }).sort();
    const store = createThreadStore({ workspace: ws });
    await expect(store.append("x", prompt("r1"))).rejects.toThrow(/is a symlink: eddy keeps its own state/);
    await expect(store.read("x")).rejects.toThrow(/is a symlink/);
    // A folder that is a link fails the listing; a log that is one is listed as unreadable, saying why.
    const listed = await store.list().catch((err: Error) => err);
    if (listed instanceof Error) expect(listed.message).toMatch(/is a symlink/);
    else
      expect(listed).toEqual([
        { name: "x", runs: 0, updated: 0, problem: expect.stringMatching(/is a symlink/) },
      ]);
    expect(readFileSync(victim, "utf8")).toBe("precious\n");
    expect(readdirSync(outside, { recursive: true }).sort()).toEqual(before);
  });

  it("eddy threads lists the readable logs beside one that is a FIFO or a folder, which it names as unreadable", async () => {
    const { ws } = setup();
    const dir = join(ws, ".eddy/threads");
    const store = createThreadStore({ workspace: ws });
    await store.append("good", prompt("r1"));
    spawnSync("mkfifo", [join(dir, "pipe.jsonl")]);
    mkdirSync(join(dir, "folder.jsonl"));
    const listed = await store.list();
    expect(listed.find((t) => t.name === "good")).toMatchObject({ runs: 1 });
    expect(listed.find((t) => t.name === "good")?.problem).toBeUndefined();
    expect(listed.find((t) => t.name === "pipe")?.problem).toMatch(/pipe\.jsonl is not a regular file/);
    expect(listed.find((t) => t.name === "folder")?.problem).toMatch(/folder\.jsonl is not a regular file/);
  });

  it("a log that is a hard link to a file elsewhere, or a FIFO, is refused", async () => {
    const { ws, victim } = setup();
    mkdirSync(join(ws, ".eddy/threads"), { recursive: true });
    try {
      linkSync(victim, join(ws, ".eddy/threads/x.jsonl"));
    } catch {
      return; // another file system: no hard link to test
    }
    const store = createThreadStore({ workspace: ws });
    await expect(store.append("x", prompt("r1"))).rejects.toThrow(/has other hard links/);
    expect(readFileSync(victim, "utf8")).toBe("precious\n");
    spawnSync("mkfifo", [join(ws, ".eddy/threads/f.jsonl")]);
    await expect(store.read("f")).rejects.toThrow(/is not a regular file/);
  });

  it("a log replaced by a folder is named when appending to it (the error named /proc/self/fd/N)", async () => {
    const { ws } = setup();
    mkdirSync(join(ws, ".eddy/threads/z.jsonl"), { recursive: true });
    const store = createThreadStore({ workspace: ws });
    await expect(store.append("z", prompt("r1"))).rejects.toThrow(
      `${join(ws, ".eddy/threads/z.jsonl")} is not a regular file`,
    );
  });

  it(".eddy/bundles → a folder elsewhere: storing a bundle is refused", async () => {
    const { ws, outside } = setup();
    mkdirSync(join(ws, ".eddy"));
    symlinkSync(outside, join(ws, ".eddy/bundles"));
    const store = createThreadStore({ workspace: ws });
    await expect(store.saveBundle(bundle)).rejects.toThrow(/bundles is a symlink/);
    expect(readdirSync(outside)).toEqual(["victim.jsonl"]);
  });

  it("a bundle file that is a symlink is replaced by the real bundle, never written through", async () => {
    const { ws, victim } = setup();
    const store = createThreadStore({ workspace: ws });
    const id = await store.saveBundle(bundle);
    const path = join(ws, ".eddy/bundles", `${id}.json`);
    const text = readFileSync(path, "utf8");
    rmSync(path);
    symlinkSync(victim, path);
    await expect(store.loadBundle(id)).rejects.toThrow(/is a symlink/);
    expect(await store.saveBundle(bundle)).toBe(id);
    expect(readFileSync(path, "utf8")).toBe(text);
    expect(readFileSync(victim, "utf8")).toBe("precious\n");
  });

  it("eddy run --thread in a workspace whose .eddy/threads leads elsewhere: exit 2, one line, nothing written", async () => {
    const { ws, outside } = setup();
    writeFileSync(join(ws, "package.json"), "{}\n");
    mkdirSync(join(ws, ".eddy"));
    symlinkSync(outside, join(ws, ".eddy/threads"));
    const r = await runCli(["run", "--thread", "x", "hi"], { cwd: ws });
    expect(r.stderr).toMatch(/^eddy: .*\.eddy\/threads is a symlink: eddy keeps its own state/);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.code).toBe(2);
    expect(readdirSync(outside)).toEqual(["victim.jsonl"]);
  });
});

describe("a torn last line (a crash mid-write)", () => {
  it("does not swallow the next run's record", async () => {
    const ws = temp("threads-torn");
    const store = createThreadStore({ workspace: ws });
    await store.append("t", prompt("r1"));
    const path = join(ws, ".eddy/threads/t.jsonl");
    appendFileSync(path, '{"v":1,"kind":"outcome","run_id":"r1","reas'); // the crash
    await store.append("t", prompt("r2"));
    await store.append("t", {
      kind: "outcome",
      run_id: "r2",
      reason: "completed",
      output_text: "two",
      items: [],
      usage: null,
    });
    const log = await store.read("t");
    expect(log.runs.map((r) => [r.run_id, r.outcome?.output_text])).toEqual([
      ["r1", undefined],
      ["r2", "two"],
    ]);
    expect(log.skipped).toBe(1); // the torn record itself
    expect(readFileSync(path, "utf8").split("\n")).toHaveLength(5); // 4 lines, each ended
  });

  it("a reader recovers a whole record glued to a torn one (a log damaged by an older eddy)", () => {
    const r1 = JSON.stringify({ v: 1, ...prompt("r1"), ts: 1 });
    const r2 = JSON.stringify({ v: 1, ...prompt("r2"), ts: 2 });
    const log = parseThreadLog("t", `${r1}\n{"v":1,"kind":"outcome","run_id":"r1","reas${r2}\n`);
    expect(log.runs.map((r) => r.run_id)).toEqual(["r1", "r2"]);
    expect(log.skipped).toBe(1);
  });

  it("a bad line full of record starts costs a few parses, not one per start (20,000 starts took 35 s)", () => {
    const line = `x${'{"v":1,"a":'.repeat(20_000)}1`;
    const good = JSON.stringify({ v: 1, ...prompt("r1"), ts: 1 });
    const parse = vi.spyOn(JSON, "parse");
    try {
      const log = parseThreadLog("t", `${line}\n${good}\n`);
      expect(log.runs.map((r) => r.run_id)).toEqual(["r1"]);
      expect(log.skipped).toBe(1);
      expect(parse.mock.calls.length).toBeLessThanOrEqual(10);
    } finally {
      parse.mockRestore();
    }
  });

  it("a log of more unreadable lines than eddy ever leaves is refused, not parsed to its end (2M lines: 45 s, Ctrl-C unheard)", async () => {
    const good = JSON.stringify({ v: 1, ...prompt("r1"), ts: 1 });
    const bad = (n: number) => "x\n".repeat(n);
    // Up to the bound, bad lines are skipped as ever.
    const log = parseThreadLog("t", `${bad(THREAD_LOG_MAX_UNREADABLE)}${good}\n`);
    expect(log.runs.map((r) => r.run_id)).toEqual(["r1"]);
    expect(log.skipped).toBe(THREAD_LOG_MAX_UNREADABLE);
    // Past it, the read stops there: the lines after it are never parsed.
    const parse = vi.spyOn(JSON, "parse");
    try {
      expect(() =>
        parseThreadLog("t", `${bad(THREAD_LOG_MAX_UNREADABLE + 1)}${bad(100_000)}${good}\n`),
      ).toThrow(
        /^the log of thread t \(\.eddy\/threads\/t\.jsonl\) has more than 1,000 unreadable lines by line 1001: .*move it away/,
      );
      expect(parse.mock.calls.length).toBeLessThanOrEqual(THREAD_LOG_MAX_UNREADABLE + 1);
    } finally {
      parse.mockRestore();
    }
    // eddy threads lists it as unreadable, beside the others.
    const { ws } = setup();
    const store = createThreadStore({ workspace: ws });
    await store.append("good", prompt("r1"));
    writeFileSync(join(ws, ".eddy/threads/junk.jsonl"), bad(5_000));
    const listed = await store.list();
    expect(listed.find((t) => t.name === "good")).toMatchObject({ runs: 1 });
    expect(listed.find((t) => t.name === "junk")?.problem).toMatch(/more than 1,000 unreadable lines/);
    await expect(store.read("junk")).rejects.toMatchObject({ code: "thread_log_invalid" });
  });

  it("a record nested deeper than 1,032 levels is skipped (the walks after JSON.parse overflowed the stack)", () => {
    const deep = `{"v":1,"kind":"prompt","run_id":"d","ts":1,"prompt":"p","model":null,"x":${"[".repeat(20_000)}${"]".repeat(20_000)}}`;
    const good = JSON.stringify({ v: 1, ...prompt("r1"), ts: 1 });
    const log = parseThreadLog("t", `${deep}\n${good}\n`);
    expect(log.runs.map((r) => r.run_id)).toEqual(["r1"]);
    expect(log.skipped).toBe(1);
  });

  it("records of the wrong shape are skipped, not trusted", () => {
    const lines = [
      { v: 1, kind: "prompt", run_id: "a", ts: 1, prompt: 5, model: null },
      { v: 1, kind: "outcome", run_id: "a", ts: 1, reason: "x", output_text: "", items: [null], usage: null },
      { v: 1, kind: "outcome", run_id: "a", ts: 1, reason: "x", output_text: "", items: [], usage: 3 },
      { v: 1, kind: "prompt", run_id: "b", ts: "soon", prompt: "p", model: null },
      // A time no Date holds: `eddy threads show` failed on it (found by test/fuzz-inputs.test.ts).
      { v: 1, kind: "prompt", run_id: "c", ts: 1e308, prompt: "p", model: null },
    ].map((l) => JSON.stringify(l));
    const log = parseThreadLog("t", `${lines.join("\n")}\n`);
    expect(log.runs).toEqual([]);
    expect(log.skipped).toBe(5);
  });

  it.each([
    [
      "a function_call whose call_id is a number",
      { type: "function_call", call_id: 5, name: "f", arguments: "{}" },
    ],
    [
      "a function_call whose arguments are an object",
      { type: "function_call", call_id: "c", name: "f", arguments: {} },
    ],
    ["a function_call_output without its call_id", { type: "function_call_output", output: "x" }],
    ["a message whose content is a number", { type: "message", role: "assistant", content: 7 }],
    ["an item whose type is not a string", { type: ["message"], role: "user", content: "x" }],
  ])(
    "an outcome holding %s is skipped: sent back, it failed every later turn with the provider's 400",
    (_what, item) => {
      const good = { type: "function_call", call_id: "c1", name: "f", arguments: "{}" };
      const outcome = (items: unknown[]) =>
        JSON.stringify({
          v: 1,
          kind: "outcome",
          run_id: "a",
          ts: 2,
          reason: "completed",
          output_text: "",
          items,
          usage: null,
        });
      const prompt = JSON.stringify({ v: 1, kind: "prompt", run_id: "a", ts: 1, prompt: "p", model: null });
      const bad = parseThreadLog("t", `${prompt}\n${outcome([good, item])}\n`);
      expect(bad.runs[0]?.outcome).toBeUndefined();
      expect(bad.skipped).toBe(1);
      // A provider's own item kind, and the kinds eddy sends when well formed, are kept.
      const kept = parseThreadLog(
        "t",
        `${prompt}\n${outcome([good, { type: "x_search_call", id: "x1" }])}\n`,
      );
      expect(kept.runs[0]?.outcome?.items).toHaveLength(2);
      expect(kept.skipped).toBe(0);
    },
  );

  /** The next run ("next", r2) of thread t, prepared with an estimating manager. */
  const prepareNext = (store: ReturnType<typeof createThreadStore>) => {
    const provider = createScriptedProvider([{ items: [{ type: "message", text: "ok" }] }]);
    const manager = new ToolHistoryManager({ provider, model: "m", tokenCounter: estimateCounter });
    return prepareThreadRun({ store, thread: "t", prompt: "next", runId: "r2", model: "m", manager });
  };

  it("a record with a lone surrogate (JSON allows one) still compiles into a bundle (found by test/fuzz-inputs.test.ts)", async () => {
    const ws = temp("threads-surrogate");
    mkdirSync(join(ws, ".eddy/threads"), { recursive: true });
    const record = { v: 1, ...prompt("r1"), prompt: "half \ud800 a pair", ts: 1 };
    writeFileSync(join(ws, ".eddy/threads/t.jsonl"), `${JSON.stringify(record)}\n`);
    const store = createThreadStore({ workspace: ws });
    const prepared = await prepareNext(store);
    expect(JSON.stringify(prepared.input)).toContain("half \ufffd a pair");
    expect(await store.loadBundle(prepared.bundleId)).toEqual(prepared.bundle);
  });

  it("a run too large for the context budget is said left out, not taken for no run at all", async () => {
    const ws = temp("threads-left-out");
    const store = createThreadStore({ workspace: ws });
    const big = "x".repeat(200_000);
    await store.append("t", { kind: "prompt", run_id: "r1", prompt: big, model: "m" });
    await store.append("t", {
      kind: "outcome",
      run_id: "r1",
      reason: "completed",
      output_text: "ok",
      items: [{ type: "message", role: "assistant", content: [{ type: "output_text", text: "ok" }] }],
      usage: null,
    });
    const prepared = await prepareNext(store);
    expect(prepared.compiled).toMatchObject({ runs: 0, runs_left_out: 1 });
  });
});
