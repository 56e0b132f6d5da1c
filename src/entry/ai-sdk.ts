/**
 * `eddy/ai-sdk`: any AI SDK language model as an eddy provider. Give it a model from any AI SDK 6
 * provider package (`@ai-sdk/anthropic`, `@ai-sdk/google`, `@ai-sdk/amazon-bedrock`,
 * `@ai-sdk/openai-compatible`, community providers: they implement `LanguageModelV3` of
 * `@ai-sdk/provider` 3) and run agents on it as on any Open Responses provider: the same frames,
 * tool loop, retries, tapes and replay. The run is stateless (the history is the prompt); every
 * stream part is kept verbatim in a `provider_event` frame. The AI SDK packages are not
 * dependencies of eddy (its types describe the model structurally): install the provider package
 * you use.
 *
 * @example
 * ```ts
 * import { createAnthropic } from "@ai-sdk/anthropic";
 * import { createBuiltinTools, createToolRegistry, runAgent } from "eddy";
 * import { createAiSdkProvider } from "eddy/ai-sdk";
 *
 * const anthropic = createAnthropic({ apiKey: process.env.ANTHROPIC_API_KEY });
 * const provider = createAiSdkProvider({ model: anthropic.languageModel });
 * const { tools, disabled } = createBuiltinTools();
 * const run = runAgent({ model: "claude-sonnet-4-5", input: "What is in package.json?" }, { provider, tools: createToolRegistry(tools, { disabled }) });
 * for await (const frame of run) if (frame.type === "output_text_delta") process.stdout.write(frame.delta);
 * ```
 *
 * @packageDocumentation
 */
export * from "../provider/ai-sdk/index.js";
