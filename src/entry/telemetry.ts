/**
 * `eddy/telemetry`: OpenTelemetry spans of runs, following the GenAI semantic conventions — one
 * `invoke_agent` span per run, a `chat {model}` span per model request (model, response id, token
 * usage, finish reasons, time to first token), an `execute_tool {name}` span per tool call. Built
 * from frames only, so it works for live runs, replays and batches alike. Prompts and outputs are
 * recorded only with `captureContent`. `@opentelemetry/api` is an optional peer dependency: nothing
 * is loaded until you create an observer.
 *
 * @example
 * ```ts
 * import { trace } from "@opentelemetry/api";
 * import { runAgent } from "eddy";
 * import { createOtelObserver } from "eddy/telemetry";
 *
 * const observer = await createOtelObserver({ tracer: trace.getTracer("my-app") });
 * const run = runAgent({ provider, model, input, onFrame: observer });
 * ```
 *
 * @packageDocumentation
 */
export * from "../telemetry/index.js";
