/**
 * `eddy/client`: a typed client for `eddy serve`'s runs API — start a run, follow its frames (an
 * async iterator that reconnects with `Last-Event-ID`, losing nothing), cancel it, decide its
 * deferred approvals, read and write threads. Uses `fetch` only, so it runs in browsers too.
 *
 * @example
 * ```ts
 * import { createServeClient } from "eddy/client";
 *
 * const eddy = createServeClient({ baseUrl: "http://127.0.0.1:7341", token: process.env.EDDY_SERVE_TOKEN });
 * const { id } = await eddy.start({ input: "Summarise README.md" });
 * for await (const { frame } of eddy.events(id)) {
 *   if (frame.type === "output_text_delta") process.stdout.write(frame.delta);
 *   if (frame.type === "run_ended" && frame.reason === "awaiting_approval")
 *     for (const call of frame.pending_calls ?? []) await eddy.decide(id, call, "allow");
 * }
 * ```
 *
 * @packageDocumentation
 */
export {
  CLIENT_DEFAULTS,
  createServeClient,
  type RunEvent,
  type RunEventsOptions,
  type ServeClient,
  type ServeClientOptions,
} from "../serve/client.js";
export type { RunStatus, RunView } from "../serve/runs.js";
