/**
 * eddy's public library API. Everything a program needs to run agents on any Open Responses
 * provider, test against the embedded mock server, and record and replay runs. The CLI's internals
 * are not part of it.
 *
 * ```ts
 * import { createOpenResponsesProvider, createBuiltinTools, createToolRegistry, runAgent } from "eddy";
 *
 * const provider = createOpenResponsesProvider({ baseURL: "https://api.openai.com/v1", apiKey: process.env.OPENAI_API_KEY });
 * const { tools, disabled } = createBuiltinTools();
 * const run = runAgent({ provider, model: "gpt-5-mini", input: "What is in package.json?", tools: createToolRegistry(tools, { disabled }) });
 * for await (const frame of run) if (frame.type === "output_text_delta") process.stdout.write(frame.delta);
 * console.log((await run.result).reason);
 * ```
 */

export * from "./context/index.js";
export { EddyError, type EddyErrorCode, type ErrorFault } from "./errors.js";
export * from "./frames/index.js";
export * from "./history/index.js";
export * from "./loop/index.js";
export * from "./mock/index.js";
export * from "./protocol/index.js";
export * from "./provider/index.js";
export * from "./replay/index.js";
export * from "./sse/index.js";
export * from "./tools/index.js";
export { type CompiledSchema, compileSchema, type SchemaCheck } from "./util/schema.js";
export { EDDY_VERSION } from "./version.js";
