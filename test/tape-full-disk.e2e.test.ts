/**
 * `eddy run --record` onto a disk that fills up mid-run (a file size limit, `ulimit -f`, makes the
 * writes fail with EFBIG as a full disk does with ENOSPC): the run stops, the command says why and
 * exits 1 — not silently with a Ctrl-C's 130 — and the tape keeps whole lines only, every one the
 * JSON it was (docs/pitfalls.md #69).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMockServer, type MockServer } from "../src/mock/listener.js";
import { BIN, cleanEnv, ROOT } from "./support/cli.js";

let dir: string;
let mock: MockServer;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "eddy-full-disk-"));
  mock = await createMockServer({});
});

afterAll(async () => {
  await mock.close();
  rmSync(dir, { recursive: true, force: true });
});

/** `eddy ARGS` under a file size limit of `blocks` (sh's unit: 512 bytes). */
function runLimited(blocks: number, args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      "sh",
      ["-c", `ulimit -f ${blocks} && exec "$@"`, "sh", process.execPath, BIN, ...args],
      {
        cwd: ROOT,
        env: cleanEnv(),
        stdio: ["ignore", "ignore", "pipe"],
      },
    );
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString("utf8");
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

describe("eddy run --record on a disk that fills up", () => {
  it("stops the run, says why, exits 1; the tape holds whole lines up to the failure", async () => {
    const tape = join(dir, "run.tape");
    // 16 blocks = 8 KB: the header (~1 KB) and the first frames fit, the run's ~60 KB do not.
    const { code, stderr } = await runLimited(16, [
      "run",
      "--record",
      tape,
      "--base-url",
      mock.url,
      "--model",
      "demo",
      "What is in package.json?",
    ]);
    expect(stderr).toMatch(/eddy: cannot write the tape .*run\.tape: EFBIG; the run was stopped/);
    expect(stderr).not.toMatch(/\n\s+at /); // no stack trace
    expect(code).toBe(1);
    const text = readFileSync(tape, "utf8");
    expect(text.endsWith("\n")).toBe(true);
    const lines = text.slice(0, -1).split("\n");
    expect(lines.length).toBeGreaterThan(2);
    const parsed = lines.map((line) => JSON.parse(line) as { type: string });
    expect(parsed[0]?.type).toBe("tape_header");
    expect(parsed[1]?.type).toBe("run_started");
    expect(parsed.some((f) => f.type === "run_ended")).toBe(false);
  });
});
