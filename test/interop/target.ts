/**
 * The server the interop suite talks to. By default each test file starts the mock server in
 * process (`createMockServer`, the listener `eddy mock` uses, on 127.0.0.1) with eddy's demo model
 * or the file's scenario, and closes it after the file. Two environment variables point the same
 * suite at another server:
 *
 * - `EDDY_INTEROP_TARGET=/path/to/module.ts`: a module exporting `startTarget(options)` (the
 *   `StartTarget` below) that starts the server under test for a file — e.g. `eddy serve` over a
 *   mock provider playing `options.scenario`, or the demo model when there is none;
 * - `EDDY_INTEROP_BASE_URL=http://127.0.0.1:PORT/v1`: a server that is already running and answers
 *   with the demo model (`eddy mock`, or `eddy serve` over it). Files that need a scenario are
 *   skipped, since it cannot be installed from here.
 *
 * The tests assert on what each client got back, never on the server's own records, so any
 * server that behaves like the mock passes them.
 */
import { isAbsolute, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { createMockServer, type Scenario } from "../../src/mock/index.js";

/** A running server for one test file. */
export interface InteropTarget {
  /** The base URL clients are given, ending in `/v1`. */
  baseURL: string;
  close(): Promise<void>;
}

/** What a file asks of its server. */
export interface TargetOptions {
  /** The scripted answers; without one the demo model answers. */
  scenario?: Scenario;
}

/** Starts the server for one file (the contract of an `EDDY_INTEROP_TARGET` module). */
export type StartTarget = (options: TargetOptions) => Promise<InteropTarget>;

const baseURL = process.env.EDDY_INTEROP_BASE_URL;
const targetModule = process.env.EDDY_INTEROP_TARGET;

/** False when the target is a running server given by URL, where no scenario can be installed. */
export const scenariosSupported = baseURL === undefined || baseURL === "";

/** Starts the target for a file (see the module comment). */
export async function startTarget(options: TargetOptions = {}): Promise<InteropTarget> {
  if (targetModule !== undefined && targetModule !== "") {
    const path = isAbsolute(targetModule) ? targetModule : resolve(targetModule);
    const loaded = (await import(pathToFileURL(path).href)) as { startTarget?: StartTarget };
    if (typeof loaded.startTarget !== "function") {
      throw new Error(`EDDY_INTEROP_TARGET ${targetModule} exports no startTarget(options) function`);
    }
    return loaded.startTarget(options);
  }
  if (!scenariosSupported) {
    if (options.scenario !== undefined)
      throw new Error("a scenario cannot be installed on EDDY_INTEROP_BASE_URL");
    return { baseURL: baseURL ?? "", close: async () => {} };
  }
  const server = await createMockServer(options.scenario === undefined ? {} : { scenario: options.scenario });
  return { baseURL: server.url, close: () => server.close() };
}
