/**
 * How long a task's own workspace copy lives (docs/decisions.md #42): a refused task's, an
 * unresumable cancelled task's and one whose task could not be run are removed; failed tasks'
 * are kept up to `maxKeptWorkspaces`; a cancelled task with a tape keeps its copy and resumes in
 * it. Before, every copy but a successful task's stayed in the temporary folder, most named nowhere.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createScriptedProvider, type Script } from "../../test/support/scripted.js";
import { createToolRegistry } from "../tools/registry.js";
import { defineTool } from "../tools/tool.js";
import { BATCH_DEFAULTS } from "./defaults.js";
import { runBatch } from "./pool.js";
import type { BatchResult } from "./run-task.js";
import { sweepTaskWorkspaces } from "./run-task.js";
import { fileTapeStore } from "./tape-store.js";
import type { BatchTask } from "./task.js";

const temp = (name: string) => mkdtempSync(join(tmpdir(), `eddy-task-ws-${name}-`));

async function collect(iterable: AsyncIterable<BatchResult>): Promise<BatchResult[]> {
  const out: BatchResult[] = [];
  for await (const r of iterable) out.push(r);
  return out;
}

/** A workspace with one file in it. */
/** `tasks` run in copies under `copies`, each failing at its first request. */
function failingBatch(
  tasks: BatchTask[],
  copies: string,
  options: { maxKeptWorkspaces?: number; concurrency: number },
): Promise<BatchResult[]> {
  return collect(
    runBatch(tasks, {
      provider: createScriptedProvider([fails], { retries: 0 }),
      spec: { model: "m" },
      workspace: workspace(),
      tools: () => createToolRegistry([]),
      workspaces: copies,
      ...options,
    }),
  );
}

function workspace(): string {
  const dir = temp("ws");
  writeFileSync(join(dir, "data.txt"), "shared\n");
  return dir;
}

const fails: Script = () => ({ items: [], status: "failed", error: { code: "server_error", message: "no" } });
const answers: Script = () => ({ items: [{ type: "message", text: "fine" }] });

describe("a task's workspace copy", () => {
  it("a refused task's is removed: it never ran, and nothing named it", async () => {
    const copies = temp("copies");
    const results = await collect(
      runBatch([{ id: "r", spec: { input: "x", max_turns: 0 } } as BatchTask], {
        provider: createScriptedProvider([answers]),
        spec: { model: "m" },
        workspace: workspace(),
        tools: () => createToolRegistry([]),
        workspaces: copies,
      }),
    );
    expect(results[0]).toMatchObject({ id: "r", reason: "invalid_request" });
    expect(results[0]?.workspace).toBeUndefined();
    expect(readdirSync(copies)).toEqual([]);
  });

  it("failed tasks' copies are kept up to maxKeptWorkspaces; later failures' are removed and said", async () => {
    const copies = temp("copies");
    const tasks: BatchTask[] = ["f1", "f2", "f3", "f4", "f5"].map((id) => ({ id, spec: { input: "x" } }));
    const results = await failingBatch(tasks, copies, { maxKeptWorkspaces: 2, concurrency: 1 });
    expect(results.map((r) => [r.id, r.reason, r.workspace, r.workspaceDropped])).toEqual([
      ["f1", "failed", join(copies, "f1"), undefined],
      ["f2", "failed", join(copies, "f2"), undefined],
      ["f3", "failed", undefined, true],
      ["f4", "failed", undefined, true],
      ["f5", "failed", undefined, true],
    ]);
    expect(readdirSync(copies).sort()).toEqual(["f1", "f2"]);
  });

  it("the bound is BATCH_DEFAULTS.maxKeptWorkspaces when none is given", async () => {
    const copies = temp("copies");
    const n = BATCH_DEFAULTS.maxKeptWorkspaces + 3;
    const tasks: BatchTask[] = Array.from({ length: n }, (_, i) => ({ id: `f${i}`, spec: { input: "x" } }));
    await failingBatch(tasks, copies, { concurrency: 4 });
    expect(readdirSync(copies)).toHaveLength(BATCH_DEFAULTS.maxKeptWorkspaces);
  });

  it("a cancelled task with a tape keeps its copy and resumes in it; without a tape, it is removed", async () => {
    const copies = temp("copies");
    const base = workspace();
    // The first run writes a file in its copy, then the batch is stopped (Ctrl-C) before the answer.
    const controller = new AbortController();
    const mark = (ws: string) =>
      defineTool({
        name: "mark",
        description: "Marks the workspace",
        parameters: { type: "object", properties: {} },
        execute: async () => {
          writeFileSync(join(ws, "marked.txt"), "by the first run\n");
          controller.abort("Ctrl-C");
          return "ok";
        },
      });
    const script: Script = (body) =>
      JSON.stringify(body.input).includes("function_call_output")
        ? { items: [{ type: "message", text: "done" }] }
        : { items: [{ type: "function_call", name: "mark", arguments: "{}" }] };
    const seen: string[] = [];
    const batch = (tapes: string | undefined, signal?: AbortSignal) =>
      collect(
        runBatch([{ id: "t", spec: { input: "mark it" } }], {
          provider: createScriptedProvider([script]),
          spec: { model: "m" },
          workspace: base,
          tools: (_task, ws) => {
            seen.push(existsSync(join(ws, "marked.txt")) ? "marked" : "fresh");
            return createToolRegistry([mark(ws)]);
          },
          workspaces: copies,
          ...(tapes === undefined ? {} : { tapes: fileTapeStore(tapes) }),
          ...(signal === undefined ? {} : { signal }),
        }),
      );
    const tapes = temp("tapes");
    expect((await batch(tapes, controller.signal)).map((r) => r.reason)).toEqual(["cancelled"]);
    expect(readdirSync(copies)).toEqual(["t"]);
    expect(existsSync(join(copies, "t", "marked.txt"))).toBe(true);
    // Run again: it resumes in its copy (the file its recorded call wrote is there), completes, and the copy goes.
    expect((await batch(tapes)).map((r) => r.reason)).toEqual(["completed"]);
    expect(seen).toEqual(["fresh", "marked"]);
    expect(readdirSync(copies)).toEqual([]);

    // No tape: nothing can resume it, so its copy is not kept.
    const other = new AbortController();
    const untaped = temp("copies");
    const stop: Script = () => {
      other.abort("Ctrl-C");
      return { items: [{ type: "message", text: "late" }], pauses: { 0: 50 } };
    };
    const results = await collect(
      runBatch([{ id: "u", spec: { input: "x" } }], {
        provider: createScriptedProvider([stop]),
        spec: { model: "m" },
        workspace: base,
        tools: () => createToolRegistry([]),
        workspaces: untaped,
        signal: other.signal,
      }),
    );
    expect(results.map((r) => [r.reason, r.workspace])).toEqual([["cancelled", undefined]]);
    expect(readdirSync(untaped)).toEqual([]);
  });

  it("a task that could not be run (its tools failed to be made) leaves no copy when it has no tape", async () => {
    const copies = temp("copies");
    await expect(
      collect(
        runBatch([{ id: "t", spec: { input: "x" } }], {
          provider: createScriptedProvider([answers]),
          spec: { model: "m" },
          workspace: workspace(),
          tools: () => {
            throw new Error("no tools today");
          },
          workspaces: copies,
        }),
      ),
    ).rejects.toThrow("no tools today");
    expect(readdirSync(copies)).toEqual([]);
  });
});

describe("sweepTaskWorkspaces", () => {
  it("removes the copies it is not told to keep, and the folder once empty; never follows a symlink", () => {
    const copies = temp("copies");
    for (const name of ["kept", "stale", "other"]) mkdirSync(join(copies, name));
    const outside = temp("outside");
    writeFileSync(join(outside, "precious.txt"), "keep me\n");
    symlinkSync(outside, join(copies, "link"));
    expect(sweepTaskWorkspaces(copies, new Set(["kept", "link"]))).toEqual(["kept"]);
    expect(readdirSync(copies).sort()).toEqual(["kept", "link"]);
    expect(existsSync(join(outside, "precious.txt"))).toBe(true);

    const empty = temp("copies");
    mkdirSync(join(empty, "done"));
    expect(sweepTaskWorkspaces(empty, new Set())).toEqual([]);
    expect(existsSync(empty)).toBe(false);
  });
});
