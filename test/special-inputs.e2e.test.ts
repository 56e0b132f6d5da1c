/**
 * Files named on the command line are read only when they are regular files, and only up to a
 * bound (src/util/regular-file.ts): a FIFO used to block the process forever, and `/dev/zero` was
 * read until memory ran out (8.7 GB for `eddy batch`). Each reader — tasks, tapes (view, replay,
 * resume, `--context`), configs (`--config`, the workspace's `eddy.config.json`), `--schema` —
 * refuses them at once with exit 2 and one line naming the file.
 *
 * Folders eddy creates (a batch's output, a server's data, a workspace's `.eddy`) where the system
 * will not make them are named the same way. Under procfs, node's own `mkdir -p` spun at full CPU
 * forever (src/util/make-dir.ts).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMockServer, type MockServer } from "../src/mock/listener.js";
import { runCli } from "./support/cli.js";

const dir = mkdtempSync(join(tmpdir(), "eddy-special-inputs-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The provider of the runs below: each test checks that nothing reached it, or only what should. */
let mock: MockServer;
beforeAll(async () => {
  mock = await createMockServer({});
});
afterAll(async () => {
  await mock.close();
});

const fifo = join(dir, "input.fifo");
spawnSync("mkfifo", [fifo]);
const workspace = join(dir, "ws");
mkdirSync(workspace);
const fifoConfigWorkspace = join(dir, "ws-fifo-config");
mkdirSync(fifoConfigWorkspace);
spawnSync("mkfifo", [join(fifoConfigWorkspace, "eddy.config.json")]);
writeFileSync(join(workspace, "package.json"), "{}\n");

// A hang guard only: the refusal is immediate; before the fix these runs never ended.
const HANG_GUARD_MS = 15_000;

describe("special files as inputs: refused at once, exit 2, one line", () => {
  it.each([
    [
      ["batch", fifo, "--out", join(dir, "out")],
      /the tasks file .*input\.fifo is a FIFO \(named pipe\), not a regular file/,
    ],
    [["view", fifo, "--out", join(dir, "v.html")], /tape .*input\.fifo is a FIFO/],
    [["replay", fifo], /tape .*input\.fifo is a FIFO/],
    [["resume", fifo], /tape .*input\.fifo is a FIFO/],
    [["run", "--context", fifo, "hi"], /tape .*input\.fifo is a FIFO/],
    [["run", "--config", fifo, "hi"], /config file .*input\.fifo is a FIFO/],
    [["run", "--schema", fifo, "hi"], /the --schema file .*input\.fifo is a FIFO/],
    [["batch", "/dev/zero", "--out", join(dir, "out")], /the tasks file \/dev\/zero is a character device/],
    [["view", "/dev/zero", "--out", join(dir, "v.html")], /tape \/dev\/zero is a character device/],
    [["replay", "/dev/zero"], /tape \/dev\/zero is a character device/],
  ])("eddy %j", async (args, message) => {
    const r = await runCli(args as string[], { cwd: workspace, timeoutMs: HANG_GUARD_MS });
    expect(r.stderr).toMatch(message);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.code).toBe(2);
  });

  it("a FIFO named eddy.config.json in the workspace", async () => {
    const r = await runCli(["run", "hi"], { cwd: fifoConfigWorkspace, timeoutMs: HANG_GUARD_MS });
    expect(r.stderr).toMatch(/config file .*eddy\.config\.json is a FIFO/);
    expect(r.code).toBe(2);
  });
});

describe.runIf(existsSync("/proc/self"))(
  "folders the system will not make: exit 2, one line naming the folder",
  () => {
    const tasks = join(dir, "tasks.jsonl");
    writeFileSync(tasks, '{"id":"a","input":"hi"}\n');

    it.each([
      [
        ["batch", tasks, "--out", "/proc/eddy-nope/out"],
        /cannot create the batch folder \/proc\/eddy-nope\/out: ENOENT/,
      ],
      [
        ["serve", "--port", "0", "--token", "abcdefghijkl", "--data-dir", "/proc/eddy-nope"],
        /cannot create the data folder \/proc\/eddy-nope\/runs \(ENOENT\).*--data-dir/,
      ],
      [
        ["run", "--workspace", "/proc", "--thread", "t", "hi"],
        /cannot create the folder \/proc\/\.eddy \(ENOENT\): eddy keeps this workspace's own state there/,
      ],
    ])("eddy %j", async (args, message) => {
      const target = ["--base-url", mock.url, "--model", "m"];
      const r = await runCli([...(args as string[]), ...target], {
        cwd: workspace,
        timeoutMs: HANG_GUARD_MS,
      });
      expect(r.stderr).toMatch(message);
      expect(r.stderr).not.toMatch(/internal error/);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      expect(r.code).toBe(2);
    });
  },
);

describe("a file to write that is not a regular file: refused before anything is sent", () => {
  const recordFifo = join(dir, "record.fifo");
  spawnSync("mkfifo", [recordFifo]);

  it.each([
    [recordFifo, /cannot write the tape .*record\.fifo: it is a FIFO \(named pipe\), not a regular file/],
    ["/dev/null", /cannot write the tape \/dev\/null: it is a character device/],
    [join(dir, "no-such-folder", "t.tape"), /cannot write the tape .*t\.tape: ENOENT/],
  ])("eddy run --record %s", async (tape, message) => {
    const before = mock.requests.length;
    const args = ["run", "--record", tape, "--base-url", mock.url, "--model", "m", "hi"];
    const r = await runCli(args, { cwd: workspace, timeoutMs: HANG_GUARD_MS });
    expect(r.stderr).toMatch(message);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stdout).toBe("");
    expect(r.code).toBe(2);
    // Before, the run went ahead (a FIFO's open then blocked the process for good after the request).
    expect(mock.requests.length).toBe(before);
  });

  it("eddy view --out a FIFO (writing the page blocked until a reader came)", async () => {
    const tape = join(dir, "viewed.tape");
    const recorded = await runCli(["run", "--record", tape, "--base-url", mock.url, "--model", "m", "hi"], {
      cwd: workspace,
      timeoutMs: HANG_GUARD_MS,
    });
    expect(recorded.code, recorded.stderr).toBe(0);
    const page = join(dir, "page.fifo");
    spawnSync("mkfifo", [page]);
    const r = await runCli(["view", tape, "--out", page], { cwd: workspace, timeoutMs: HANG_GUARD_MS });
    expect(r.stderr).toMatch(
      /cannot write the page .*page\.fifo: it is a FIFO \(named pipe\), not a regular file/,
    );
    expect(r.code).toBe(2);
  });

  it("eddy batch --out a folder whose results.jsonl is a FIFO (reading it blocked)", async () => {
    const out = join(dir, "batch-fifo");
    mkdirSync(out);
    spawnSync("mkfifo", [join(out, "results.jsonl")]);
    const tasks = join(dir, "fifo-tasks.jsonl");
    writeFileSync(tasks, '{"id":"a","input":"hi"}\n');
    const args = ["batch", tasks, "--out", out, "--base-url", mock.url, "--model", "m"];
    const before = mock.requests.length;
    const r = await runCli(args, { cwd: workspace, timeoutMs: HANG_GUARD_MS });
    expect(r.stderr).toMatch(/the batch file .*results\.jsonl is a FIFO \(named pipe\), not a regular file/);
    expect(r.code).toBe(2);
    expect(mock.requests.length).toBe(before);
  });
});

describe("oversized stdin: refused with one line, no stack trace, memory bounded", () => {
  const OVER = "y".repeat(33 * 1024 * 1024); // PROMPT_MAX_BYTES is 32 MiB

  it("eddy run with a prompt over 32 MiB on stdin (`cat /dev/zero | eddy run` read until memory ran out)", async () => {
    const r = await runCli(["run"], { cwd: workspace, stdin: OVER, timeoutMs: HANG_GUARD_MS * 2 });
    expect(r.stderr).toMatch(/the prompt on stdin is larger than 32 MiB, the most eddy reads there/);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.code).toBe(2);
  });

  it("eddy chat with a line over 32 MiB (readline grew it until the process died with a RangeError)", async () => {
    const r = await runCli(["chat"], { cwd: workspace, stdin: `hi\n${OVER}`, timeoutMs: HANG_GUARD_MS * 2 });
    expect(r.stderr).toMatch(/a line on stdin is longer than 32 MiB, the most eddy reads as one message/);
    expect(r.stderr).not.toMatch(/RangeError|\n\s+at /);
    // The lines before it were read and answered; nothing of the long one was sent.
    expect(r.stdout).toContain("You wrote “hi”");
    expect(r.stdout).not.toContain("yyyy");
    expect(r.code).toBe(2);
  });
});
