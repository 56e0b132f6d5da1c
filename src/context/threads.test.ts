import { spawn } from "node:child_process";
import { appendFileSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cleanEnv, ROOT, runCli } from "../../test/support/cli.js";
import { createScriptedProvider } from "../../test/support/scripted.js";
import { type Frame, frame } from "../frames/frame.js";
import { estimateCounter } from "../history/tokens.js";
import { ToolHistoryManager } from "../history/tool-history.js";
import { runAgent } from "../loop/run.js";
import type { JsonObject } from "../protocol/types.js";
import { validateInputItem } from "../protocol/validate.js";
import { checkThreadName, createThreadStore } from "./threads.js";
import { finishThreadRun, prepareThreadRun } from "./threads-run.js";

const workspace = () => mkdtempSync(join(tmpdir(), "eddy-threads-"));
const clock = () => {
  let t = Date.UTC(2026, 10, 24, 12, 0, 0);
  return () => (t += 1000);
};

describe("thread store", () => {
  it("refuses names that are not plain file names", () => {
    for (const bad of ["", "../x", "a/b", ".hidden", "x".repeat(65), "a b", "trailing."])
      expect(() => checkThreadName(bad)).toThrow(/thread name .* is not allowed: use 1–64 letters/);
    for (const good of ["work", "bug-123", "v1.2_notes", "A"]) expect(checkThreadName(good)).toBe(good);
    // A long name is quoted cut short: the error stays one readable line.
    expect(() => checkThreadName("x".repeat(5000))).toThrow(/^thread name "x{80}…" is not allowed/);
    const store = createThreadStore({ workspace: workspace() });
    return expect(
      store.append("../escape", { kind: "prompt", run_id: "r", prompt: "p", model: null }),
    ).rejects.toThrow(/not allowed/);
  });

  it("appends prompt and outcome records, reads runs back in order, lists threads", async () => {
    const ws = workspace();
    const store = createThreadStore({ workspace: ws, clock: clock() });
    await store.append("t", { kind: "prompt", run_id: "r1", prompt: "one", model: "m" });
    await store.append("t", { kind: "prompt", run_id: "r2", prompt: "two", model: "m" });
    await store.append("t", {
      kind: "outcome",
      run_id: "r2",
      reason: "completed",
      output_text: "2",
      items: [],
      usage: null,
    });
    await store.append("t", {
      kind: "outcome",
      run_id: "r1",
      reason: "failed",
      output_text: "",
      items: [],
      usage: null,
      tape: "r1.tape",
    });
    await store.append("other", { kind: "prompt", run_id: "r3", prompt: "x", model: null });
    const log = await store.read("t");
    expect(log.runs.map((r) => `${r.run_id}:${r.prompt.prompt}:${r.outcome?.reason}`)).toEqual([
      "r1:one:failed",
      "r2:two:completed",
    ]);
    expect(log.runs[0]?.outcome?.tape).toBe("r1.tape");
    expect(await store.list()).toEqual([
      { name: "other", runs: 1, updated: expect.any(Number) },
      { name: "t", runs: 2, updated: Date.UTC(2026, 10, 24, 12, 0, 4) },
    ]);
    // A line being written (no newline yet) and a damaged line are skipped, not fatal.
    appendFileSync(join(ws, ".eddy/threads/t.jsonl"), 'not json\n{"v":1,"kind":"prompt","run_id":"r9","prom');
    const again = await store.read("t");
    expect(again.runs).toHaveLength(2);
    expect(again.skipped).toBe(2);
    expect((await store.read("never")).runs).toEqual([]);
  });

  it("takes a byte order mark before the first record (an editor's), as tapes take one", async () => {
    const ws = workspace();
    const store = createThreadStore({ workspace: ws, clock: clock() });
    await store.append("t", { kind: "prompt", run_id: "r1", prompt: "one", model: "m" });
    const file = join(ws, ".eddy/threads/t.jsonl");
    writeFileSync(file, `\uFEFF${readFileSync(file, "utf8")}`);
    const log = await store.read("t");
    expect(log.runs.map((r) => r.prompt.prompt)).toEqual(["one"]);
    expect(log.skipped).toBe(0);
    expect(await store.list()).toEqual([{ name: "t", runs: 1, updated: expect.any(Number) }]);
  });

  it("lists a thread with more runs than a function call takes arguments (docs/pitfalls.md #64)", async () => {
    const ws = workspace();
    const runs = 70_000; // two timestamps each: past the ~120k arguments Math.max(...spread) takes
    const lines: string[] = [];
    for (let i = 0; i < runs; i++)
      lines.push(
        JSON.stringify({ v: 1, kind: "prompt", run_id: `r${i}`, ts: 1000 + i, prompt: "p", model: null }),
      );
    const store = createThreadStore({ workspace: ws });
    await store.append("long", { kind: "prompt", run_id: "first", prompt: "p", model: null });
    appendFileSync(join(ws, ".eddy", "threads", "long.jsonl"), `${lines.join("\n")}\n`);
    const [summary] = await store.list();
    expect(summary?.runs).toBe(runs + 1);
    expect(summary?.updated).toBeGreaterThanOrEqual(1000 + runs - 1);
  });

  it("stores bundles content-addressed and refuses one that was changed", async () => {
    const ws = workspace();
    const store = createThreadStore({ workspace: ws });
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
    const id = await store.saveBundle(bundle);
    expect(await store.saveBundle(bundle)).toBe(id);
    expect(await store.loadBundle(id)).toEqual(bundle);
    const path = join(ws, ".eddy/bundles", `${id}.json`);
    writeFileSync(path, readFileSync(path, "utf8").replace('"budget_tokens":10', '"budget_tokens":11'));
    await expect(store.loadBundle(id)).rejects.toThrow(/changed after it was stored/);
    await expect(store.loadBundle("nope")).rejects.toThrow(/not a bundle id/);
  });

  it("keeps every record whole when several processes append to one thread at once", async () => {
    const ws = workspace();
    const processes = 4;
    const perProcess = 25;
    // Each process appends records of 1 KB to 1.5 MB (larger than any pipe or stream chunk), as fast as it can.
    const script = `
      const { createThreadStore } = await import(${JSON.stringify(join(ROOT, "dist/context/threads.js"))});
      const store = createThreadStore({ workspace: ${JSON.stringify(ws)} });
      const p = Number(process.argv[1]);
      for (let i = 0; i < ${perProcess}; i++) {
        const size = i % 5 === 0 ? 1_500_000 : 1_000 + i * 997;
        await store.append("shared", { kind: "outcome", run_id: "p" + p + "_" + i, reason: "completed", output_text: String(p).repeat(size), items: [], usage: null });
      }`;
    const exits = await Promise.all(
      Array.from(
        { length: processes },
        (_, p) =>
          new Promise<number | null>((resolve, reject) => {
            const child = spawn(process.execPath, ["--input-type=module", "-e", script, String(p)], {
              stdio: "inherit",
            });
            child.on("error", reject);
            child.on("exit", resolve);
          }),
      ),
    );
    expect(exits).toEqual(Array(processes).fill(0));
    const all = readFileSync(join(ws, ".eddy/threads/shared.jsonl"), "utf8").split("\n");
    expect(all.pop()).toBe("");
    // A writer that finds the log not ending in a newline (another's record half visible while it
    // is written, or a torn one) ends it first: at worst a blank line, which readers skip.
    const lines = all.filter((l) => l !== "");
    expect(lines).toHaveLength(processes * perProcess);
    const seen = new Set<string>();
    for (const line of lines) {
      const record = JSON.parse(line) as { run_id: string; output_text: string };
      const [p] = record.run_id.slice(1).split("_");
      expect(record.output_text).toBe(String(p).repeat(record.output_text.length)); // not interleaved
      seen.add(record.run_id);
    }
    expect(seen.size).toBe(processes * perProcess);
  }, 60_000);
});

describe("a thread across runs", () => {
  /** A model that answers from what its input says: remembers a name and a number when they are in the input. */
  const model = (body: JsonObject) => {
    const input = JSON.stringify(body.input);
    const users = (body.input as JsonObject[]).filter((i) => i.type === "message" && i.role === "user");
    const asked = JSON.stringify(users.at(-1));
    if (/remember/i.test(asked)) return { items: [{ type: "message" as const, text: "Noted." }] };
    if (/what is my name/i.test(asked)) {
      const name = /Ada/.test(input) ? "Ada" : "unknown";
      const number = /\b7\b/.test(input) ? "7" : "unknown";
      return {
        items: [{ type: "message" as const, text: `Your name is ${name}; your number is ${number}.` }],
      };
    }
    return { items: [{ type: "message" as const, text: "4" }] };
  };

  it("three runs: the third remembers the first through the compiled bundle, with no previous_response_id", async () => {
    const ws = workspace();
    const store = createThreadStore({ workspace: ws, clock: clock() });
    const provider = createScriptedProvider([model]);
    const prompts = [
      "Please remember: my name is Ada and my number is 7.",
      "What is 2+2?",
      "What is my name and my number?",
    ];
    const compiled: Frame[] = [];
    let last = "";
    for (const [i, prompt] of prompts.entries()) {
      const runId = `run_${i + 1}`;
      const manager = new ToolHistoryManager({ provider, model: "m", tokenCounter: estimateCounter });
      const prepared = await prepareThreadRun({ store, thread: "demo", prompt, runId, model: "m", manager });
      for (const item of prepared.input) expect(validateInputItem(item)).toBeUndefined();
      const run = runAgent(
        { model: "m", input: prepared.input, run_id: runId },
        {
          provider,
          workspace: ws,
          onFrame: (f) => {
            if (f.type === "run_started") compiled.push(frame("context_compiled", prepared.compiled));
          },
        },
      );
      for await (const _ of run);
      const result = await run.result;
      await finishThreadRun(store, prepared, result, { tape: `${runId}.tape` });
      last = result.outputText;
    }
    expect(last).toBe("Your name is Ada; your number is 7.");
    for (const body of provider.requests) expect(body).not.toHaveProperty("previous_response_id");
    expect(compiled.map((f) => f.type === "context_compiled" && [f.runs, f.item_count, f.strategy])).toEqual([
      [0, 0, "recent_messages_v1"],
      [1, 2, "recent_messages_v1"],
      [2, 4, "recent_messages_v1"],
    ]);
    const log = await store.read("demo");
    expect(log.runs.map((r) => r.outcome?.output_text)).toEqual(["Noted.", "4", last]);
    expect(log.runs[2]?.outcome?.items).toEqual([
      {
        type: "message",
        id: expect.any(String),
        role: "assistant",
        content: [expect.objectContaining({ text: last })],
      },
    ]);
    // The bundle the third run started from is stored under its id and loads back.
    const third = log.runs[2]?.prompt.bundle_id as string;
    expect((await store.loadBundle(third)).source.map((s) => s.run_id)).toEqual(["run_1", "run_2"]);

    // eddy threads / eddy threads show NAME
    const list = await runCli(["threads", "--workspace", ws], { env: cleanEnv() });
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^THREAD\s+RUNS\s+LAST UPDATE\ndemo\s+3\s+2026-11-24T12:00:06\.000Z\n$/);
    const show = await runCli(["threads", "show", "demo", "--workspace", ws], { env: cleanEnv() });
    expect(show.code).toBe(0);
    expect(show.stdout).toContain("thread demo: 3 runs");
    expect(show.stdout).toContain("> What is my name and my number?");
    expect(show.stdout).toContain("< Your name is Ada; your number is 7.");
    expect(show.stdout).toContain("tape run_3.tape");
    const json = await runCli(["threads", "show", "demo", "--json"], { cwd: ws, env: cleanEnv() });
    expect(JSON.parse(json.stdout)).toMatchObject({
      name: "demo",
      runs: [{ run_id: "run_1" }, { run_id: "run_2" }, { run_id: "run_3" }],
    });
    const missing = await runCli(["threads", "show", "nope"], { cwd: ws, env: cleanEnv() });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('no thread named "nope"');
  }, 60_000);
});
