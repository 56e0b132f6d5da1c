import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createToolRegistry } from "../registry.js";
import {
  allBuiltins,
  createSandbox,
  runTool,
  runToolsInChild,
  type Sandbox,
} from "../test-support/workspace.js";
import { createShellTool, SHELL_FALLBACK_ENV, shellEnvironment } from "./shell.js";

let box: Sandbox;
const registry = allBuiltins();

beforeAll(async () => {
  box = await createSandbox();
  await box.files({ "sub/file.txt": "in sub\n" });
});
afterAll(() => box.cleanup());
afterEach(() => {
  vi.unstubAllEnvs();
});

const sh = (args: Record<string, unknown>, options: { signal?: AbortSignal } = {}) =>
  runTool(registry, box.root, "shell", args, options);

/** Alive and not a zombie (a killed orphan stays a zombie until the container's init reaps it). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, "utf8"));
  } catch {
    return true;
  }
}

async function waitDead(pid: number, ms = 3000): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (!alive(pid)) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return !alive(pid);
}

const readPid = async (file: string) => Number((await readFile(join(box.root, file), "utf8")).trim());

describe("shell", () => {
  it("runs bash -c in the workspace root and captures both streams", async () => {
    const r = await sh({ command: "echo out; echo err >&2; pwd" });
    expect(r.parsed).toEqual({
      tool: "shell",
      ok: true,
      exit_code: 0,
      stdout: `out\n${box.root}\n`,
      stderr: "err\n",
    });
  });

  it("a non-zero exit ends ok:false with its exit_code (docs/decisions.md #7)", async () => {
    const r = await sh({ command: "echo failing >&2; exit 3" });
    expect(r.parsed).toEqual({ tool: "shell", ok: false, exit_code: 3, stdout: "", stderr: "failing\n" });
  });

  it("runs in cwd", async () => {
    const r = await sh({ command: "cat file.txt", cwd: "sub" });
    expect(r.parsed.stdout).toBe("in sub\n");
  });

  it("refuses a cwd that is a file or missing", async () => {
    expect((await sh({ command: "ls", cwd: "sub/file.txt" })).error?.message).toMatch(
      /cwd sub\/file.txt is not a directory/,
    );
    expect((await sh({ command: "ls", cwd: "nope" })).error?.message).toMatch(
      /nope: no such file or directory/,
    );
  });

  it("answers to its alias bash", async () => {
    const r = await runTool(registry, box.root, "bash", { command: "echo hi" });
    expect(r.parsed).toMatchObject({ tool: "shell", ok: true, stdout: "hi\n" });
  });

  it("gives commands an empty stdin", async () => {
    const r = await sh({ command: "cat; echo done" });
    expect(r.parsed.stdout).toBe("done\n");
  });

  it("never passes API keys through; only the allowlist", async () => {
    vi.stubEnv("OPENAI_API_KEY", "sk-test-should-not-leak");
    vi.stubEnv("LC_EDDY_TEST", "lc-ok");
    const reg = createToolRegistry([createShellTool({ env: { source: process.env } })]);
    const r = await runTool(reg, box.root, "shell", { command: "env" });
    expect(r.parsed.stdout).not.toContain("sk-test-should-not-leak");
    expect(r.parsed.stdout).toContain("LC_EDDY_TEST=lc-ok");
    const names = r.parsed.stdout
      .split("\n")
      .filter((l) => l.includes("="))
      .map((l) => l.slice(0, l.indexOf("=")));
    for (const name of names)
      expect(name).toMatch(/^(PATH|HOME|LANG|TERM|USER|SHELL|TMPDIR|LC_\w+|PWD|SHLVL|_|OLDPWD)$/);
  });

  it("shellEnvironment: allowlist, LC_*, configured extras and fixed values", () => {
    const env = shellEnvironment({
      source: { PATH: "/bin", OPENAI_API_KEY: "sk", GOPATH: "/go", LC_ALL: "C", AWS_SECRET_ACCESS_KEY: "x" },
      passThrough: ["GOPATH"],
      set: { CI: "1" },
    });
    expect(env).toEqual({ GOPATH: "/go", LC_ALL: "C", PATH: "/bin", CI: "1" });
  });

  it("without a source, reads nothing from the process: a standard PATH and what is set", async () => {
    vi.stubEnv("HOME", "/home/should-not-pass");
    vi.stubEnv("LC_EDDY_TEST", "lc-not-read");
    expect(shellEnvironment({ set: { CI: "1" } })).toEqual({ ...SHELL_FALLBACK_ENV, CI: "1" });
    const r = await runTool(allBuiltins(), box.root, "shell", { command: "env; ls /" });
    expect(r.parsed.ok).toBe(true);
    expect(r.parsed.stdout).not.toContain("should-not-pass");
    expect(r.parsed.stdout).not.toContain("lc-not-read");
    expect(r.parsed.stdout).toContain(`PATH=${SHELL_FALLBACK_ENV.PATH}`);
  });

  it("uses a configured environment", async () => {
    const reg = createToolRegistry([
      createShellTool({ env: { source: { PATH: process.env.PATH }, set: { GREETING: "hej" } } }),
    ]);
    const r = await runTool(reg, box.root, "shell", { command: 'echo "$GREETING"' });
    expect(r.parsed.stdout).toBe("hej\n");
  });

  it("reports a command killed by a signal", async () => {
    const r = await sh({ command: "kill -9 $$" });
    expect(r.parsed).toMatchObject({
      ok: false,
      exit_code: 137,
      error: { code: "tool_failed", message: "shell: the command was killed by SIGKILL" },
    });
  });

  it("times out: kills the whole process group, exit 124, keeps the partial output", async () => {
    const r = await sh({ command: "echo started; sleep 30 & echo $! > bg.pid; sleep 30", timeout_ms: 300 });
    expect(r.parsed).toMatchObject({
      ok: false,
      exit_code: 124,
      stdout: "started\n",
      error: { code: "tool_timeout" },
    });
    expect(r.parsed.error?.message).toMatch(/timed out after 300 ms and its process group was killed/);
    expect(await waitDead(await readPid("bg.pid"))).toBe(true);
  });

  it("kills a command that ignores SIGTERM (SIGKILL after the grace period)", async () => {
    const started = Date.now();
    const r = await sh({
      command: "trap '' TERM; echo $$ > stubborn.pid; while true; do sleep 0.05; done",
      timeout_ms: 200,
    });
    expect(r.parsed.exit_code).toBe(124);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(await waitDead(await readPid("stubborn.pid"))).toBe(true);
  });

  it("cancellation kills the process group and still answers the call", async () => {
    const controller = new AbortController();
    const pending = sh(
      { command: "echo $$ > cancel.pid; sleep 30 & echo $! >> cancel.pid; wait" },
      { signal: controller.signal },
    );
    // Cancelled once both pids are written (a fixed wait lost that race at load average 10).
    const pidFile = join(box.root, "cancel.pid");
    while ((await readFile(pidFile, "utf8").catch(() => "")).trim().split("\n").length < 2)
      await new Promise((r) => setTimeout(r, 20));
    controller.abort();
    const r = await pending;
    expect(r.parsed).toMatchObject({ ok: false, exit_code: 130, error: { code: "cancelled" } });
    const pids = (await readFile(join(box.root, "cancel.pid"), "utf8")).trim().split("\n").map(Number);
    for (const pid of pids) expect(await waitDead(pid)).toBe(true);
  });

  it("returns when the shell exits even if a background job keeps the pipes open", async () => {
    const started = Date.now();
    const r = await sh({ command: "sleep 30 & echo $! > holder.pid; echo quick" });
    expect(r.parsed).toMatchObject({ ok: true, stdout: "quick\n" });
    expect(Date.now() - started).toBeLessThan(3000);
    process.kill(await readPid("holder.pid"), "SIGKILL");
  });

  it("bounds memory while streaming and caps the model-facing output", async () => {
    const r = await sh({ command: "head -c 3000000 /dev/zero | tr '\\0' a; echo; echo THE-END" });
    expect(r.ok).toBe(true);
    expect(r.truncated).toBe(true);
    expect(Buffer.byteLength(r.output)).toBeLessThanOrEqual(64 * 1024);
    expect(r.parsed.stdout.startsWith("aaaa")).toBe(true);
    expect(r.parsed.stdout.endsWith("THE-END\n")).toBe(true);
    expect(r.parsed.stdout).toMatch(/bytes of stdout cut here; filter the output/);
    expect(r.parsed.artifacts).toEqual({ stdout_bytes: 3_000_009, stderr_bytes: 0 });
    const full = JSON.parse(r.fullOutput ?? "{}") as { stdout: string };
    expect(Buffer.byteLength(full.stdout)).toBeLessThan(1024 * 1024 + 200);
    expect(full.stdout).toMatch(/bytes of output dropped while streaming/);
  });
});

describe("shell: background jobs end with the run", () => {
  it("dispose() kills what a finished command left running in the background", async () => {
    const tool = createShellTool({ env: { source: { PATH: process.env.PATH } } });
    const reg = createToolRegistry([tool]);
    const r = await runTool(reg, box.root, "shell", { command: "sleep 100 & echo $!" });
    expect(r.ok).toBe(true);
    const pid = Number(r.parsed.stdout.trim());
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(alive(pid)).toBe(true); // the command has returned; its job still runs
    await reg.dispose();
    expect(await waitDead(pid)).toBe(true);
    await reg.dispose(); // nothing left: a second call is a no-op
  });

  it("dispose() also stops a job that ignores SIGTERM (SIGKILL after the grace period)", async () => {
    const reg = createToolRegistry([createShellTool({ env: { source: { PATH: process.env.PATH } } })]);
    const r = await runTool(reg, box.root, "shell", {
      command: "(trap '' TERM; while true; do sleep 0.05; done) & echo $!",
    });
    const pid = Number(r.parsed.stdout.trim());
    await reg.dispose();
    expect(await waitDead(pid)).toBe(true);
  });

  it("a process that exits without dispose() still takes the jobs with it (exit hook)", async () => {
    const [r] = await runToolsInChild([
      { workspace: box.root, name: "shell", args: { command: "sleep 100 & echo $!" } },
    ]);
    expect(r?.ok).toBe(true);
    expect(await waitDead(Number(r?.parsed.stdout.trim()))).toBe(true);
  });
});
