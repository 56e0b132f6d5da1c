/**
 * The built CLI in a real pseudo-terminal, without a native module: util-linux `script -qfec CMD
 * /dev/null` runs CMD on a new pty (stdin, stdout and stderr all a TTY, its line discipline turning
 * Ctrl-C into SIGINT) and relays our pipe to it. Output arrives as the terminal shows it: stdout
 * and stderr interleaved, CRLF line ends, typed input echoed.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { BIN } from "./cli.js";

/** Whether `script` (util-linux) is here. */
export const HAS_SCRIPT = spawnSync("script", ["--version"], { stdio: "ignore" }).status === 0;

/** A CLI run on a pty. */
export interface PtyRun {
  /** Everything the terminal showed so far (CRLF turned into LF). */
  readonly output: string;
  /** Types `text` on the terminal (e.g. "n\n", or "\x03" for Ctrl-C). */
  type(text: string): void;
  /** Resolves once the output contains `text` (rejects after `ms`). */
  waitFor(text: string, ms?: number): Promise<void>;
  /** The exit code (the CLI's, through `script -e`). */
  readonly exited: Promise<number | null>;
}

/** Runs `eddy ARGS…` on a pseudo-terminal in `cwd` with exactly `env`. */
export function runOnPty(args: string[], options: { cwd: string; env: Record<string, string> }): PtyRun {
  const command = ["exec", quote(process.execPath), quote(BIN), ...args.map(quote)].join(" ");
  const child: ChildProcess = spawn("script", ["-qfec", command, "/dev/null"], {
    cwd: options.cwd,
    env: options.env,
    stdio: ["pipe", "pipe", "pipe"],
  });
  let output = "";
  const waiters: (() => void)[] = [];
  const onData = (chunk: Buffer) => {
    output += chunk.toString("utf8").replace(/\r\n/g, "\n");
    for (const w of waiters.splice(0)) w();
  };
  child.stdout?.on("data", onData);
  child.stderr?.on("data", onData);
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  return {
    get output() {
      return output;
    },
    type: (text) => {
      child.stdin?.write(text);
    },
    waitFor(text, ms = 15_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          child.kill("SIGKILL");
          reject(new Error(`the terminal never showed ${JSON.stringify(text)}; it showed:\n${output}`));
        }, ms);
        const check = () => {
          if (output.includes(text)) {
            clearTimeout(timer);
            resolve();
          } else waiters.push(check);
        };
        check();
      });
    },
    exited,
  };
}

function quote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}
