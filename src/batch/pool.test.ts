import { existsSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createScriptedProvider, type Script, type ScriptedResponse } from "../../test/support/scripted.js";
import type { JsonObject } from "../protocol/types.js";
import type { Provider } from "../provider/provider.js";
import { readTape } from "../replay/tape.js";
import { createToolRegistry } from "../tools/registry.js";
import { defineTool } from "../tools/tool.js";
import { runBatch } from "./pool.js";
import type { BatchResult } from "./run-task.js";
import { fileTapeStore } from "./tape-store.js";
import type { BatchTask } from "./task.js";

const temp = (name: string) => mkdtempSync(join(tmpdir(), `eddy-pool-${name}-`));

/** A model that calls `note` with the task's word, then answers once the output came back. */
const noteThenAnswer: Script = (body) => {
  const input = JSON.stringify(body.input);
  if (input.includes("function_call_output")) return { items: [{ type: "message", text: "noted" }] };
  const word = /word (\w+)/.exec(input)?.[1] ?? "none";
  return { items: [{ type: "function_call", name: "note", arguments: JSON.stringify({ word }) }] };
};

function noteTool(runs: string[]) {
  return defineTool({
    name: "note",
    description: "Notes a word",
    parameters: { type: "object", properties: { word: { type: "string" } }, required: ["word"] },
    execute: async (args) => {
      runs.push((args as { word: string }).word);
      await new Promise((r) => setTimeout(r, 5));
      return "ok";
    },
  });
}

const tasks = (n: number): BatchTask[] =>
  Array.from({ length: n }, (_, i) => ({ id: `t${i}`, spec: { input: `note the word w${i}` } }));

/** The provider, counting streams in flight. */
function counting(provider: Provider): { provider: Provider; peak: () => number } {
  let active = 0;
  let peak = 0;
  return {
    peak: () => peak,
    provider: {
      ...provider,
      stream(request, options) {
        active++;
        peak = Math.max(peak, active);
        const stream = provider.stream(request, options);
        stream.result.finally(() => active--);
        return stream;
      },
    },
  };
}

async function collect(iterable: AsyncIterable<BatchResult>): Promise<BatchResult[]> {
  const out: BatchResult[] = [];
  for await (const r of iterable) out.push(r);
  return out;
}

describe("runBatch", () => {
  it("runs every task once, never more than `concurrency` at a time, and records each tape", async () => {
    const runs: string[] = [];
    const scripted = createScriptedProvider([noteThenAnswer]);
    const { provider, peak } = counting(scripted);
    const dir = temp("tapes");
    const results = await collect(
      runBatch(tasks(12), {
        provider,
        spec: { model: "m" },
        tools: [noteTool(runs)],
        concurrency: 3,
        tapes: fileTapeStore(dir),
      }),
    );
    expect(results.map((r) => r.id).sort()).toEqual(
      tasks(12)
        .map((t) => t.id)
        .sort(),
    );
    expect(results.every((r) => r.reason === "completed" && r.toolCalls === 1 && r.turns === 2)).toBe(true);
    expect(runs.sort()).toEqual(
      tasks(12)
        .map((_, i) => `w${i}`)
        .sort(),
    );
    expect(peak()).toBeLessThanOrEqual(3);
    expect(peak()).toBeGreaterThan(1);
    const tape = readTape(join(dir, "t3.tape"));
    expect(tape.frames.at(-1)).toMatchObject({ type: "run_ended", reason: "completed" });
    expect(results.find((r) => r.id === "t3")?.tape).toBe(join(dir, "t3.tape"));
  });

  it("onEnd comes before the worker's next onStart: started minus ended never exceeds `concurrency`", async () => {
    // The results are yielded when the consumer asks; counting them instead of onEnd showed up to
    // twice `concurrency` runs (a worker starts its next task before its last result is consumed).
    const provider = createScriptedProvider([() => ({ items: [{ type: "message", text: "ok" }] })]);
    let running = 0;
    let peak = 0;
    const ended: string[] = [];
    const results = await collect(
      runBatch(tasks(40), {
        provider,
        spec: { model: "m" },
        tools: [],
        concurrency: 3,
        onStart: () => {
          running++;
          peak = Math.max(peak, running);
        },
        onEnd: (result) => {
          running--;
          ended.push(result.id);
        },
      }),
    );
    expect(peak).toBe(3);
    expect(running).toBe(0);
    expect(ended.sort()).toEqual(results.map((r) => r.id).sort());
  });

  it("many runs sharing the batch's signal raise no listener-leak warning", async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on("warning", onWarning);
    try {
      const results = await collect(
        runBatch(tasks(40), {
          provider: createScriptedProvider([noteThenAnswer]),
          spec: { model: "m" },
          tools: [noteTool([])],
          concurrency: 40,
        }),
      );
      expect(results).toHaveLength(40);
      await new Promise((r) => setTimeout(r, 10));
    } finally {
      process.off("warning", onWarning);
    }
    expect(warnings).not.toContain("MaxListenersExceededWarning");
  });

  it("a second run over the same tapes sends no request and gives the same results", async () => {
    const runs: string[] = [];
    const dir = temp("again");
    const options = (provider: Provider) => ({
      provider,
      spec: { model: "m" },
      tools: [noteTool(runs)],
      tapes: fileTapeStore(dir),
    });
    const first = await collect(runBatch(tasks(5), options(createScriptedProvider([noteThenAnswer]))));
    const again = createScriptedProvider([noteThenAnswer]);
    const second = await collect(runBatch(tasks(5), options(again)));
    expect(again.requests).toHaveLength(0);
    expect(runs).toHaveLength(5);
    const byId = (rs: BatchResult[]) => Object.fromEntries(rs.map((r) => [r.id, r]));
    expect(byId(second)).toEqual(byId(first));
  });

  it("a task whose process died mid-run resumes from its tape without running its recorded call again", async () => {
    const runs: string[] = [];
    const dir = temp("resume");
    const store = fileTapeStore(dir);
    const run = (provider: Provider) =>
      collect(runBatch(tasks(3), { provider, spec: { model: "m" }, tools: [noteTool(runs)], tapes: store }));
    await run(createScriptedProvider([noteThenAnswer]));
    // t1's process "died" after its tool call: its tape ends at the second request.
    const path = join(dir, "t1.tape");
    const lines = readFileSync(path, "utf8").trimEnd().split("\n");
    const cut = lines.findIndex((l) => l.includes('"type":"request_started"') && l.includes('"turn":1'));
    writeFileSync(path, `${lines.slice(0, cut + 1).join("\n")}\n`);

    const again = createScriptedProvider([noteThenAnswer]);
    const second = await run(again);
    const t1 = second.find((r) => r.id === "t1");
    expect(t1).toMatchObject({ reason: "completed", toolCalls: 1, turns: 2 });
    expect(t1?.resumes).toHaveLength(1);
    expect(again.requests).toHaveLength(1); // only t1's unfinished request
    expect(runs.filter((w) => w === "w1")).toHaveLength(1);
    expect(readTape(path).header.resumes).toHaveLength(1);
  });

  it("a 429 with Retry-After pauses every run of the batch, not just the one that got it", async () => {
    const times: number[] = [];
    let limited = 0;
    const script: Script = (body, index) => {
      times.push(Date.now());
      if (index === 0) {
        limited = Date.now();
        return {
          http: {
            status: 429,
            headers: { "retry-after-ms": "700" },
            body: { error: { type: "rate_limit_error", code: "rate_limit_exceeded", message: "slow down" } },
          },
        };
      }
      return noteThenAnswer(body, index) as ScriptedResponse;
    };
    const results = await collect(
      runBatch(tasks(4), {
        provider: createScriptedProvider([script]),
        spec: { model: "m" },
        tools: [noteTool([])],
        concurrency: 4,
        // A generous limit: only the pause holds requests back.
        rpm: 6000,
      }),
    );
    expect(results.every((r) => r.reason === "completed")).toBe(true);
    // The first requests were all sent at once; every request after the 429 waited out its delay.
    const later = times.slice(4);
    expect(later.length).toBeGreaterThan(0);
    for (const t of later) expect(t - limited).toBeGreaterThanOrEqual(650);
  });

  it("gives each task its own copy of the workspace, kept only for a task that failed", async () => {
    const base = temp("ws");
    writeFileSync(join(base, "data.txt"), "shared\n");
    const copies = temp("copies");
    const script: Script = (body) =>
      JSON.stringify(body.input).includes("fail")
        ? { items: [], status: "failed", error: { code: "server_error", message: "no" } }
        : { items: [{ type: "message", text: "fine" }] };
    const seen: string[] = [];
    const results = await collect(
      runBatch(
        [
          { id: "good", spec: { input: "work" } },
          { id: "bad", spec: { input: "fail please" } },
        ],
        {
          provider: createScriptedProvider([script], { retries: 0 }),
          spec: { model: "m" },
          workspace: base,
          tools: (_task, workspace) => {
            seen.push(workspace);
            return createToolRegistry([]);
          },
          workspaces: copies,
        },
      ),
    );
    expect(seen.sort()).toEqual([join(copies, "bad"), join(copies, "good")]);
    const bad = results.find((r) => r.id === "bad");
    expect(bad).toMatchObject({ reason: "failed", workspace: join(copies, "bad") });
    expect(readFileSync(join(copies, "bad", "data.txt"), "utf8")).toBe("shared\n");
    expect(existsSync(join(copies, "good"))).toBe(false);
  });

  it("never removes through a symlink planted where a task's copy goes", async () => {
    const base = temp("ws2");
    writeFileSync(join(base, "data.txt"), "shared\n");
    const copies = temp("copies2");
    const outside = temp("outside");
    writeFileSync(join(outside, "precious.txt"), "keep me\n");
    symlinkSync(outside, join(copies, "t1"));
    const results = await collect(
      runBatch([{ id: "t1", spec: { input: "work" } }], {
        provider: createScriptedProvider([() => ({ items: [{ type: "message", text: "fine" }] })]),
        spec: { model: "m" },
        workspace: base,
        tools: () => createToolRegistry([]),
        workspaces: copies,
      }),
    );
    expect(readFileSync(join(outside, "precious.txt"), "utf8")).toBe("keep me\n");
    expect(results[0]?.reason).not.toBe("completed");
  });

  it("re-runs failed tasks only when asked to", async () => {
    const dir = temp("retry");
    let failing = true;
    const script: Script = () =>
      failing
        ? { items: [], status: "failed", error: { code: "server_error", message: "no" } }
        : { items: [{ type: "message", text: "fine" }] };
    const batch = (retry?: (r: BatchResult) => boolean) =>
      collect(
        runBatch(tasks(2), {
          provider: createScriptedProvider([script], { retries: 0 }),
          spec: { model: "m" },
          tapes: fileTapeStore(dir),
          ...(retry === undefined ? {} : { retry }),
        }),
      );
    expect((await batch()).map((r) => r.reason)).toEqual(["failed", "failed"]);
    failing = false;
    expect((await batch()).map((r) => r.reason)).toEqual(["failed", "failed"]);
    expect((await batch((r) => r.reason === "failed")).map((r) => r.reason)).toEqual([
      "completed",
      "completed",
    ]);
  });

  it("stopping the iteration cancels the runs in flight", async () => {
    const slow: Script = (): ScriptedResponse => ({
      items: [{ type: "message", text: "slow answer" }],
      pauses: { 2: 5000 },
    });
    const provider = createScriptedProvider([slow]);
    const started = Date.now();
    const controller = new AbortController();
    setTimeout(() => controller.abort("stop"), 100);
    const results = await collect(
      runBatch(tasks(3), { provider, spec: { model: "m" }, concurrency: 3, signal: controller.signal }),
    );
    expect(Date.now() - started).toBeLessThan(3000);
    expect(results.map((r) => r.reason)).toEqual(["cancelled", "cancelled", "cancelled"]);
    const body = provider.requests[0] as JsonObject;
    expect(body.model).toBe("m");
  });
});

describe("instruction files per task", () => {
  it("each task reads them in the workspace it runs in (its copy); a task never names them", async () => {
    const workspace = temp("agents-md");
    writeFileSync(join(workspace, "AGENTS.md"), "Answer tersely.");
    const seen: { workspace: string; copyOf: string | undefined }[] = [];
    const provider = createScriptedProvider([
      { items: [{ type: "message", text: "a" }] },
      { items: [{ type: "message", text: "b" }] },
    ]);
    const copies = temp("agents-md-copies");
    const claimed: BatchTask = {
      id: "claims",
      spec: { input: "hi", instructions: "Be kind.", instruction_files: ["../../etc/passwd"] },
    };
    const results: BatchResult[] = [];
    for await (const r of runBatch([claimed, { id: "plain", spec: { input: "hi" } }], {
      provider,
      spec: { model: "m" },
      workspace,
      workspaces: copies,
      concurrency: 1,
      instructionFiles: (ws, copyOf) => {
        seen.push({ workspace: ws, copyOf });
        return ws.startsWith(copies) ? [{ path: "AGENTS.md", text: "Answer tersely." }] : [];
      },
    }))
      results.push(r);
    expect(results.map((r) => r.reason)).toEqual(["completed", "completed"]);
    expect(seen).toEqual([
      { workspace: join(copies, "claims"), copyOf: workspace },
      { workspace: join(copies, "plain"), copyOf: workspace },
    ]);
    expect(provider.requests.map((r) => r.instructions)).toEqual([
      "Instructions from AGENTS.md:\n\nAnswer tersely.\n\nBe kind.",
      "Instructions from AGENTS.md:\n\nAnswer tersely.",
    ]);
  });

  it("a task's own instruction_files is dropped when nothing was read", async () => {
    const provider = createScriptedProvider([{ items: [{ type: "message", text: "a" }] }]);
    const dir = temp("agents-md-tapes");
    const tapes = fileTapeStore(dir);
    const task: BatchTask = { id: "claims", spec: { input: "hi", instruction_files: ["../../etc/passwd"] } };
    for await (const _ of runBatch([task], {
      provider,
      spec: { model: "m" },
      tapes,
      instructionFiles: () => [],
    }));
    const started = readTape(join(dir, "claims.tape")).frames[0];
    expect(started).toMatchObject({ type: "run_started" });
    expect(started).not.toHaveProperty("instruction_files");
  });
});
