/**
 * `eddy/mock`: the mock Open Responses server — the provider `eddy run` uses when none is
 * configured, the double behind eddy's own tests, and a server anyone can point an Open Responses
 * client at offline. It answers with a small demo model, or plays a scenario (scripted turns,
 * faults such as HTTP errors, stalls, dropped connections and error events).
 *
 * @example
 * ```ts
 * import { createMockServer } from "eddy/mock";
 *
 * const server = await createMockServer({ scenario: { turns: [{ items: [{ type: "message", text: "Hi!" }] }] } });
 * // point any client at server.url (http://127.0.0.1:PORT/v1); server.requests records what came
 * await server.close();
 * ```
 *
 * @packageDocumentation
 */
export * from "../mock/index.js";
