/**
 * A view that throws on a frame stops alone (docs/pitfalls.md #95): the tape still gets every
 * frame through `run_ended`, the run goes on to its own end and exit code, and the failure is one
 * line on stderr. The throw comes from the command's own seam, its stdout (`CliIo.stdout`, where
 * the human view streams the answer): a terminal or pipe that throws on write, as a renderer bug
 * would.
 */
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import type { Frame } from "../frames/frame.js";
import { createMockServer, type MockServer } from "../mock/listener.js";
import type { Scenario } from "../mock/scenario.js";
import { main } from "./main.js";
import type { CliIo } from "./run-command.js";

let server: MockServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const answer = "The notes say: remember the milk, and the eggs, and the bread.";

/** `eddy ARGS` in-process, in `cwd`, with a stdout that throws on every write (and `stdin` piped, if given). */
async function withBrokenStdout(args: string[], cwd: string, stdin?: string) {
  let stderr = "";
  let writes = 0;
  const io: CliIo = {
    stdout: {
      write: () => {
        writes++;
        throw new Error("stdout exploded\n    at Renderer.write (render.ts:1:1)");
      },
    },
    stderr: { write: (text: string) => (stderr += text) },
    readStdin: async () => "",
    stdinIsTTY: true,
    env: { XDG_CACHE_HOME: mkdtempSync(join(tmpdir(), "eddy-cache-")) },
    cwd,
    onSignal: () => () => {},
    ...(stdin === undefined ? {} : { stdin: Readable.from([stdin]), stdinIsTTY: false }),
  };
  const code = await main(args, io);
  return { code, stderr, writes };
}

function tapeFrames(path: string): Frame[] {
  const lines = readFileSync(path, "utf8").trimEnd().split("\n");
  return lines.slice(1).map((line) => JSON.parse(line) as Frame);
}

/** A read_file call, then the answer in many deltas. */
const scenario: Scenario = {
  turns: [
    {
      items: [{ type: "function_call", name: "read_file", arguments: { path: "notes.txt" }, call_id: "c1" }],
    },
    { items: [{ type: "message", text: answer }] },
  ],
};

describe("a terminal view that throws on a frame", () => {
  it("eddy run --record: the tape gets every frame to run_ended, the run completes (exit 0), one line says so", async () => {
    server = await createMockServer({ scenario });
    const cwd = mkdtempSync(join(tmpdir(), "eddy-view-failure-"));
    writeFileSync(join(cwd, "notes.txt"), "remember the milk\n");
    const tape = join(cwd, "run.tape");
    const { code, stderr, writes } = await withBrokenStdout(
      ["run", "--base-url", server.url, "--model", "m", "--record", tape, "What do my notes say?"],
      cwd,
    );
    const frames = tapeFrames(tape);
    expect(frames.at(-1)).toMatchObject({ type: "run_ended", reason: "completed", output_text: answer });
    expect(frames.map((f) => f.seq)).toEqual(frames.map((_, i) => i));
    expect(frames.filter((f) => f.type === "output_text_delta").length).toBeGreaterThan(1);
    expect(code).toBe(0);
    // Rendering is off after the first failure: one write tried, one line said, no stack.
    expect(writes).toBe(1);
    const said = stderr.split("\n").filter((line) => line.includes("stopped at"));
    expect(said).toEqual([
      "eddy: the terminal view stopped at a output_text_delta frame (stdout exploded); the run goes on without it: what it records and its exit code are unaffected",
    ]);
    expect(stderr).not.toMatch(/\n\s+at /);
    expect(stderr).not.toContain("frame observer");
  });

  it("eddy resume: the resumed run's tape is whole too", async () => {
    // A write waits for approval; --approve defer ends the first run there.
    const write = { path: "out.txt", content: "milk" };
    server = await createMockServer({
      scenario: {
        turns: [
          { items: [{ type: "function_call", name: "write_file", arguments: write, call_id: "c1" }] },
          { items: [{ type: "message", text: answer }] },
        ],
      },
    });
    const cwd = mkdtempSync(join(tmpdir(), "eddy-view-failure-"));
    const tape = join(cwd, "deferred.tape");
    const base = ["--base-url", server.url, "--model", "m", "--allow-write"];
    // The first run stops at the call, waiting for a decision (exit 4); its stdout is never written.
    const deferred = await withBrokenStdout(
      ["run", ...base, "--approve", "defer", "--record", tape, "What do my notes say?"],
      cwd,
    );
    expect(deferred.code).toBe(4);
    const resumed = await withBrokenStdout(["resume", tape, ...base, "--decide", "all=allow"], cwd);
    const frames = tapeFrames(tape);
    expect(frames.at(-1)).toMatchObject({ type: "run_ended", reason: "completed", output_text: answer });
    expect(resumed.code).toBe(0);
    expect(resumed.stderr.split("\n").filter((line) => line.includes("stopped at"))).toHaveLength(1);
  });

  it("eddy chat: the turn's tape is whole, the chat goes on to its end (exit 0), one line says so", async () => {
    server = await createMockServer({ scenario });
    const cwd = mkdtempSync(join(tmpdir(), "eddy-view-failure-"));
    const { code, stderr } = await withBrokenStdout(
      ["chat", "--base-url", server.url, "--model", "m"],
      cwd,
      "What do my notes say?\n",
    );
    const tapes = readdirSync(join(cwd, ".eddy"), { recursive: true, encoding: "utf8" }).filter((p) =>
      p.endsWith(".tape"),
    );
    expect(tapes).toHaveLength(1);
    const frames = tapeFrames(join(cwd, ".eddy", tapes[0] as string));
    expect(frames.at(-1)).toMatchObject({ type: "run_ended", reason: "completed", output_text: answer });
    expect(code).toBe(0);
    expect(stderr.split("\n").filter((line) => line.includes("stopped at"))).toHaveLength(1);
    expect(stderr).not.toMatch(/\n\s+at /);
  });
});
