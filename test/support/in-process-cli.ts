/** `eddy ARGS` run in-process through `main`, with a home, config and cache of its own under `cwd`. */
import { join } from "node:path";
import { main } from "../../src/cli/main.js";
import type { CliIo } from "../../src/cli/run-command.js";

/** What one in-process run wrote, and its exit code. */
export interface InProcessResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `eddy ARGS` in `cwd` (piped stdin, empty), its HOME, XDG config and cache inside `cwd`. */
export async function runMainIn(args: string[], cwd: string): Promise<InProcessResult> {
  let stdout = "";
  let stderr = "";
  const io: CliIo = {
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: (s: string) => (stderr += s) },
    readStdin: async () => "",
    stdinIsTTY: false,
    env: { HOME: cwd, XDG_CONFIG_HOME: join(cwd, ".config"), XDG_CACHE_HOME: join(cwd, ".cache") },
    cwd,
    onSignal: () => () => {},
  };
  const code = await main(args, io);
  return { code, stdout, stderr };
}
