/**
 * `eddy mock [--port N] [--scenario FILE] [--strict]`: serves the mock Open Responses server on
 * 127.0.0.1, prints its base URL on stdout, logs one line per request on stderr, stops cleanly on
 * Ctrl-C. `--strict` refuses the short forms real clients send instead of rewriting them
 * (docs/interop.md).
 */
import { resolve } from "node:path";
import { createMockServer, formatRequestLog, loadScenario, type MockServer } from "../mock/index.js";
import type { CliIo } from "./run-command.js";

export interface MockFlags {
  port?: number;
  scenario?: string;
  apiKey?: string;
  strict?: boolean;
}

export async function mockCommand(flags: MockFlags, io: CliIo): Promise<number> {
  const server = await listen(flags, io);
  // The handler is in place before the banner: a script may signal the moment it reads "Ctrl-C".
  const stopped = new Promise<void>((resolve) => {
    const remove = io.onSignal(() => {
      remove();
      resolve();
    });
  });
  io.stdout.write(`${server.url}\n`);
  io.stderr.write(
    `eddy mock: serving Open Responses at ${server.url}${flags.scenario === undefined ? " (demo model)" : ` (scenario ${flags.scenario})`}${flags.strict === true ? ", strict" : ""}; Ctrl-C stops it\n`,
  );
  await stopped;
  await server.close();
  io.stderr.write("eddy mock: stopped\n");
  return 0;
}

/** Starts the server (a port it cannot have is a user error from the listener: exit 2). */
async function listen(flags: MockFlags, io: CliIo): Promise<MockServer> {
  const options: Parameters<typeof createMockServer>[0] = {
    onRequest: (log) => io.stderr.write(`${formatRequestLog(log)}\n`),
  };
  if (flags.port !== undefined) options.port = flags.port;
  // A relative path is from io.cwd, the command's directory (in-process, not the process's);
  // errors name it as it was typed (docs/pitfalls.md #115).
  if (flags.scenario !== undefined)
    options.scenario = await loadScenario(resolve(io.cwd, flags.scenario), flags.scenario);
  if (flags.apiKey !== undefined) options.apiKey = flags.apiKey;
  if (flags.strict === true) options.conformance = "strict";
  return createMockServer(options);
}
