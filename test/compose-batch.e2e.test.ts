/**
 * Composition in `eddy batch` through the built CLI against scripted mock servers on 127.0.0.1:
 * each task reads the AGENTS.md of the workspace it runs in (its own copy with
 * `--workspace-per-task`) as `eddy run` does, `--no-agents-md` turns that off, and the config
 * file's `agents` are offered to every task (docs/architecture.md, "Composing runs").
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Scenario } from "../src/mock/scenario.js";
import type { JsonObject } from "../src/protocol/types.js";
import { readTape } from "../src/replay/tape.js";
import { cleanEnv, runCli } from "./support/cli.js";
import { scenarioServer } from "./support/scenario-server.js";

const { serve, bodies, close: closeServer } = scenarioServer();

function workspace(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "eddy-compose-batch-"));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

const answer = (text: string): Scenario["turns"][number] => ({ items: [{ type: "message", text }] });
const tasks = (...ids: string[]) =>
  `${ids.map((id) => JSON.stringify({ id, prompt: `task ${id}`, instructions: "Be kind." })).join("\n")}\n`;

describe("eddy batch reads AGENTS.md per task", { timeout: 120_000 }, () => {
  it("AGENTS.md reaches request 1 of each task and is listed in its run_started; --no-agents-md leaves it out", async () => {
    const url = await serve({ turns: [answer("a"), answer("b"), answer("c"), answer("d")] });
    const cwd = workspace({ "AGENTS.md": "Always answer in haiku.", "tasks.jsonl": tasks("t1", "t2") });
    const common = ["batch", "tasks.jsonl", "--concurrency", "1", "--base-url", url, "--model", "m"];
    const on = await runCli([...common, "--out", "on", "--workspace-per-task"], { cwd, env: cleanEnv() });
    expect(on.stderr).not.toContain("does not apply");
    expect(on.code).toBe(0);
    expect(bodies().map((b) => b.instructions)).toEqual([
      "Instructions from AGENTS.md:\n\nAlways answer in haiku.\n\nBe kind.",
      "Instructions from AGENTS.md:\n\nAlways answer in haiku.\n\nBe kind.",
    ]);
    for (const id of ["t1", "t2"])
      expect(readTape(join(cwd, "on", "tapes", `${id}.tape`)).frames[0]).toMatchObject({
        type: "run_started",
        instruction_files: ["AGENTS.md"],
      });

    const off = await runCli([...common, "--out", "off", "--no-agents-md"], { cwd, env: cleanEnv() });
    expect(off.code).toBe(0);
    expect(
      bodies()
        .slice(2)
        .map((b) => b.instructions),
    ).toEqual(["Be kind.", "Be kind."]);
    expect(readTape(join(cwd, "off", "tapes", "t1.tape")).frames[0]).not.toHaveProperty("instruction_files");
  });
});

describe("eddy batch offers the config file's agents", { timeout: 120_000 }, () => {
  it("agents.reviewer is a tool of a batch task: its call makes the sub-agent's request, its answer reaches the follow-up; the tape replays", async () => {
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
        answer("REVIEW-OK: looks fine"),
        answer("The reviewer said it looks fine."),
      ],
    });
    const cwd = workspace({
      "eddy.config.json": JSON.stringify({
        agents: { reviewer: { instructions: "You review code tersely.", model: "review-m", max_turns: 2 } },
      }),
      "tasks.jsonl": `${JSON.stringify({ id: "r1", prompt: "write x = 1, then review it" })}\n`,
    });
    const out = await runCli(["batch", "tasks.jsonl", "--out", "out", "--base-url", url, "--model", "m"], {
      cwd,
      env: cleanEnv(),
    });
    expect(out.code).toBe(0);
    const [parent, sub, followUp] = bodies();
    expect(bodies()).toHaveLength(3);
    expect(((parent?.tools ?? []) as JsonObject[]).map((t) => t.name)).toContain("reviewer");
    expect(sub?.instructions).toBe("You review code tersely.");
    expect(sub?.model).toBe("review-m");
    const output = ((followUp?.input ?? []) as JsonObject[]).find(
      (i) => i.type === "function_call_output" && i.call_id === "call_a",
    );
    expect(String(output?.output)).toContain("REVIEW-OK: looks fine");
    const tape = join(cwd, "out", "tapes", "r1.tape");
    expect(readTape(tape).header.agents).toEqual([expect.objectContaining({ name: "reviewer" })]);
    await closeServer();
    const replay = await runCli(["replay", tape], { cwd, env: cleanEnv() });
    expect(replay.stdout + replay.stderr).toMatch(/match/i);
    expect(replay.code).toBe(0);
  });
});

describe("eddy batch applies the config file's hooks", { timeout: 120_000 }, () => {
  it("before_tool_call runs for every task, in the workspace the task runs in, and its deny holds", async () => {
    const readCall = (id: string): Scenario["turns"][number] => ({
      items: [{ type: "function_call", name: "read_file", arguments: { path: "secret.txt" }, call_id: id }],
    });
    const url = await serve({
      turns: [readCall("call_1"), answer("I could not read it."), readCall("call_2"), answer("Nor I.")],
    });
    const marker = join(mkdtempSync(join(tmpdir(), "eddy-hook-marker-")), "where.txt");
    const cwd = workspace({
      "secret.txt": "TOPSECRET-42",
      "eddy.config.json": JSON.stringify({
        hooks: { before_tool_call: `pwd >> ${marker}; echo "blocked by policy" >&2; exit 2` },
      }),
      "tasks.jsonl": tasks("h1", "h2"),
    });
    const out = await runCli(
      [
        "batch",
        "tasks.jsonl",
        "--out",
        "out",
        "--concurrency",
        "1",
        "--workspace-per-task",
        "--base-url",
        url,
        "--model",
        "m",
      ],
      { cwd, env: cleanEnv() },
    );
    expect(out.code, out.stderr).toBe(0);
    const sent = JSON.stringify(bodies());
    expect(sent).not.toContain("TOPSECRET");
    expect(sent).toContain("blocked by policy");
    for (const id of ["h1", "h2"])
      expect(
        readTape(join(cwd, "out", "tapes", `${id}.tape`)).frames.find((f) => f.type === "hook_decided"),
      ).toMatchObject({ hook: "before_tool_call", decision: "deny", reason: "blocked by policy" });
    // Each task's hook ran in its own copy of the workspace, never in the original.
    const { readFileSync, realpathSync } = await import("node:fs");
    const dirs = readFileSync(marker, "utf8").trim().split("\n");
    expect(dirs).toHaveLength(2);
    expect(new Set(dirs).size).toBe(2);
    for (const d of dirs) expect(d).not.toBe(realpathSync(cwd));
  });
});
