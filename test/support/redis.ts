/**
 * A real `redis-server` for the batch tests (Debian package `redis-server`; `.ci/run` installs
 * it): started on a free port of 127.0.0.1 with no persistence in a temporary folder, stopped
 * (and its folder removed) after. Tests skip themselves when the binary is missing.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** True when `redis-server` is on PATH. */
export const HAVE_REDIS = spawnSync("redis-server", ["--version"], { stdio: "ignore" }).status === 0;

export interface RedisServer {
  url: string;
  port: number;
  /** Stops it (SIGTERM) and removes its folder (unless it was given one). */
  stop(): Promise<void>;
  /** Kills it outright (SIGKILL): every key is gone, nothing was saved. */
  kill(): Promise<void>;
}

/** A free TCP port on 127.0.0.1 (the OS picks it; released before the server binds it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts `redis-server` and waits until it accepts connections: on a free port, or on `port` (a
 * restart of a killed one: empty, since nothing is ever saved). With `dataDir`, every write is
 * saved there before it is answered (append-only file, fsync always) and the folder is kept: a
 * server started again on the same folder — even after `kill()` — has every key it had.
 */
export async function startRedis(options: { port?: number; dataDir?: string } = {}): Promise<RedisServer> {
  const port = options.port ?? (await freePort());
  const dir = options.dataDir ?? mkdtempSync(join(tmpdir(), "eddy-redis-"));
  const persistence =
    options.dataDir === undefined
      ? ["--save", "", "--appendonly", "no"]
      : ["--save", "", "--appendonly", "yes", "--appendfsync", "always"];
  const child: ChildProcess = spawn(
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", ...persistence, "--dir", dir],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let log = "";
  child.stdout?.on("data", (d: Buffer) => {
    log += d.toString("utf8");
  });
  const deadline = Date.now() + 10_000;
  while (!log.includes("Ready to accept connections")) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`redis-server did not start on port ${port}:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  const end = async (signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once("exit", r));
      child.kill(signal);
      await exited;
    }
    if (options.dataDir === undefined) rmSync(dir, { recursive: true, force: true });
  };
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    stop: () => end("SIGTERM"),
    kill: () => end("SIGKILL"),
  };
}
