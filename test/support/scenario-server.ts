/**
 * One scripted `eddy mock` server per test, closed after it: `serve(scenario)` starts it and gives
 * its URL, `bodies()` the request bodies it received, `close()` stops it early (a replay that must
 * not reach a server). For the CLI end-to-end suites that script a scenario per test.
 */
import { afterEach } from "vitest";
import { createMockServer, type MockServer } from "../../src/mock/index.js";
import type { Scenario } from "../../src/mock/scenario.js";
import type { JsonObject } from "../../src/protocol/types.js";

export interface ScenarioServer {
  serve(scenario: Scenario): Promise<string>;
  bodies(): JsonObject[];
  close(): Promise<void>;
}

/** Registers the `afterEach` that closes the server; call once at a test file's top level. */
export function scenarioServer(): ScenarioServer {
  let server: MockServer | undefined;
  const close = async () => {
    await server?.close();
    server = undefined;
  };
  afterEach(close);
  return {
    async serve(scenario) {
      server = await createMockServer({ scenario });
      return server.url;
    },
    bodies: () => (server?.requests ?? []).map((r) => r.body as JsonObject),
    close,
  };
}
