/**
 * The stdio transport for MCP servers, built on the SDK's own message framing (`ReadBuffer`,
 * `serializeMessage`). The SDK's `StdioClientTransport` is not used because it leaves the server
 * in eddy's process group and, on close, signals only the server itself: anything the server
 * started (a `docker run`, an `npx` wrapper's real process, a helper) outlives the run. Here the
 * server leads its own process group (`detached`), and close follows the MCP shutdown order
 * (close stdin, wait, SIGTERM, wait, SIGKILL) and then signals the whole group, so no process
 * of the server survives. A close may be given a deadline (the command's shared shutdown budget,
 * src/cli/shutdown.ts): each wait then takes its share of the time left, so the SIGKILL always
 * comes before it; a server that ignores SIGTERM goes straight to SIGKILL (its group already got
 * the SIGTERM). The environment is exactly what the caller gives (nothing is read
 * from `process.env`), and stderr is kept (a bounded tail) to explain a failed start or a crash
 * instead of being printed over eddy's output.
 */
import { type ChildProcessByStdio, spawn } from "node:child_process";
import type { Readable, Writable } from "node:stream";
import {
  ReadBuffer,
  STDIO_DEFAULT_MAX_BUFFER_SIZE,
  serializeMessage,
} from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { groupAlive, signalGroup } from "../process-signals.js";

/** Options of `createStdioTransport`. */
export interface StdioTransportOptions {
  command: string;
  args: readonly string[];
  /** The child's complete environment. */
  env: Record<string, string>;
  cwd: string | undefined;
  /** Wait after closing stdin, and again after SIGTERM, before escalating. */
  closeGraceMs: number;
  /** Bytes of stderr kept (the tail). */
  stderrTailBytes: number;
}

/** How the server process ended. */
export type ProcessExit = { code: number | null; signal: NodeJS.Signals | null };

/** An MCP `Transport` over a child process's stdin/stdout, plus what eddy needs to explain it. */
export interface StdioTransport extends Transport {
  /** The server's pid (also its process group id), once spawned. */
  readonly pid: number | undefined;
  /** How the server ended, once it has. */
  readonly exit: ProcessExit | undefined;
  /** The last bytes the server wrote to stderr. */
  stderrTail(): string;
  /**
   * `close()`, done by `deadline` (a `performance.now()` time): the waits between the steps share
   * what is left, each at most the grace period. Calls after the first return the same close.
   */
  closeBy(deadline: number | undefined): Promise<void>;
  /** Why eddy stopped a misbehaving server itself, if it did. */
  readonly stopReason: string | undefined;
}

/** After the server exits, how long to wait for its stdout to drain (a grandchild may hold the pipe open). */
const DRAIN_AFTER_EXIT_MS = 200;
const POLL_MS = 20;

/** Creates the transport; `start()` spawns the server. */
export function createStdioTransport(options: StdioTransportOptions): StdioTransport {
  return new ChildStdioTransport(options);
}

/** The transport over one child process; its state is the child's lifecycle. */
class ChildStdioTransport implements StdioTransport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  exit: ProcessExit | undefined;
  stopReason: string | undefined;

  private readonly options: StdioTransportOptions;
  private readonly readBuffer = new ReadBuffer();
  private child: ChildProcessByStdio<Writable, Readable, Readable> | undefined;
  private stderr = Buffer.alloc(0);
  private closedNotified = false;
  private closing: Promise<void> | undefined;
  private onExited: () => void = () => {};
  private readonly exited = new Promise<void>((resolve) => {
    this.onExited = resolve;
  });

  constructor(options: StdioTransportOptions) {
    this.options = options;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  stderrTail(): string {
    return this.stderr.toString("utf8");
  }

  start(): Promise<void> {
    if (this.child !== undefined) return Promise.reject(new Error("the stdio transport was already started"));
    return new Promise<void>((resolve, reject) => {
      const proc = spawn(this.options.command, [...this.options.args], {
        cwd: this.options.cwd,
        env: this.options.env,
        detached: true,
        stdio: ["pipe", "pipe", "pipe"],
        windowsHide: true,
      });
      this.child = proc;
      proc.once("spawn", () => {
        if (proc.pid !== undefined) trackGroup(proc.pid);
        resolve();
      });
      proc.once("error", (error) => {
        // A spawn failure (ENOENT, EACCES) fires "error" and never "spawn".
        if (proc.pid === undefined) {
          this.exit = { code: null, signal: null };
          this.onExited();
          reject(error);
          this.notifyClosed();
        } else this.onerror?.(error);
      });
      proc.once("exit", (code, signal) => {
        this.exit = { code, signal };
        this.onExited();
        // Let the last messages on stdout arrive before pending requests are failed.
        const timer = setTimeout(() => this.notifyClosed(), DRAIN_AFTER_EXIT_MS);
        proc.stdout.once("close", () => {
          clearTimeout(timer);
          this.notifyClosed();
        });
      });
      proc.stdout.on("data", (chunk: Buffer) => this.readStdout(chunk));
      proc.stderr.on("data", (chunk: Buffer) => {
        const joined = Buffer.concat([this.stderr, chunk]);
        this.stderr = joined.subarray(Math.max(0, joined.length - this.options.stderrTailBytes));
      });
      for (const stream of [proc.stdin, proc.stdout, proc.stderr]) {
        stream.on("error", (error: Error) => this.onerror?.(error));
      }
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const stdin = this.child?.stdin;
      if (stdin === undefined || this.exit !== undefined || !stdin.writable) {
        reject(new Error("the server process is not running"));
        return;
      }
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once("drain", () => resolve());
    });
  }

  close(): Promise<void> {
    return this.closeBy(undefined);
  }

  closeBy(deadline: number | undefined): Promise<void> {
    this.closing ??= this.shutdown(deadline);
    return this.closing;
  }

  /** Messages from the server's stdout, one JSON-RPC message a line. */
  private readStdout(chunk: Buffer): void {
    if (this.stopReason !== undefined) return;
    try {
      this.readBuffer.append(chunk);
    } catch {
      // Over the SDK's 10 MiB message limit: the answer is lost, so the server is stopped
      // (its pending calls fail now instead of at their timeout).
      this.stopReason ??= `sent a message over the ${STDIO_DEFAULT_MAX_BUFFER_SIZE}-byte limit and was stopped`;
      void this.close();
      return;
    }
    for (;;) {
      let message: JSONRPCMessage | null;
      try {
        message = this.readBuffer.readMessage();
      } catch (error) {
        // A line that is not JSON-RPC (a server logging to stdout): report it, keep reading.
        this.onerror?.(error as Error);
        continue;
      }
      if (message === null) break;
      this.onmessage?.(message);
    }
  }

  private notifyClosed(): void {
    if (this.closedNotified) return;
    this.closedNotified = true;
    this.onclose?.();
  }

  /**
   * Closes stdin, then SIGTERM, then SIGKILL for the whole group, each after the grace period —
   * or after its share of what is left before `deadline`, so a close with a deadline is done by it.
   */
  private async shutdown(deadline: number | undefined): Promise<void> {
    const proc = this.child;
    const pid = proc?.pid;
    if (proc !== undefined && pid !== undefined) {
      const grace = this.options.closeGraceMs;
      /** The wait of a step with `steps` steps (this one included) still to come. */
      const share = (steps: number) =>
        deadline === undefined ? grace : Math.min(grace, Math.max(0, (deadline - performance.now()) / steps));
      // The polite first step, unless the server already broke the protocol.
      if (this.exit === undefined && this.stopReason === undefined) {
        proc.stdin.end();
        await within(this.exited, share(3));
      }
      if (this.exit === undefined) {
        // The whole group: what the server started gets the SIGTERM too. A server that ignores it
        // is killed next, without waiting again.
        signalGroup(pid, "SIGTERM");
        await within(this.exited, share(2));
        // It obeyed: what it started got the same signal, and gets time to end too.
        if (this.exit !== undefined && groupAlive(pid)) await groupGone(pid, share(2));
      } else if (groupAlive(pid)) {
        // The server is gone; whatever it started may not be, and has had no signal yet.
        signalGroup(pid, "SIGTERM");
        await groupGone(pid, share(2));
      }
      signalGroup(pid, "SIGKILL");
      await within(this.exited, share(1));
      untrackGroup(pid);
      proc.stdout.destroy();
      proc.stderr.destroy();
      proc.stdin.destroy();
    }
    this.readBuffer.clear();
    this.notifyClosed();
  }
}

async function groupGone(pgid: number, maxMs: number): Promise<void> {
  const deadline = Date.now() + maxMs;
  while (groupAlive(pgid) && Date.now() < deadline) await sleep(POLL_MS);
}

/** Waits for `promise`, but at most `ms` milliseconds. */
export function within(promise: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Process groups of servers not yet closed. If the process exits without closing them (an
 * uncaught error, `process.exit()`), one `exit` listener kills them: their own process group
 * does not get the terminal's Ctrl-C, so nothing else would. Installed only while a group lives.
 */
const liveGroups = new Set<number>();

function killLiveGroups(): void {
  for (const pgid of liveGroups) signalGroup(pgid, "SIGKILL");
}

function trackGroup(pgid: number): void {
  if (liveGroups.size === 0) process.on("exit", killLiveGroups);
  liveGroups.add(pgid);
}

function untrackGroup(pgid: number): void {
  liveGroups.delete(pgid);
  if (liveGroups.size === 0) process.off("exit", killLiveGroups);
}
