/**
 * The OpenAI Agents SDK's trace export loop, stopped when an interop file is done
 * (docs/pitfalls.md #118). Importing `@openai/agents` sets its default trace processor, whose export
 * loop reschedules itself with `setTimeout` every 5 s for as long as the process lives — tracing
 * disabled or not. Files share their worker (`isolate: false`, vitest.config.ts), so the loop went
 * on into later files; one that installed fake timers (src/replay/gate.test.ts) turned the loop's
 * next timer into a fake one, and `vi.runAllTimersAsync()` ran it until "Aborting after running
 * 10000 timers". The SDK's `getGlobalTraceProvider().shutdown()` flushes what is buffered and clears
 * the loop's timer.
 */
import { getGlobalTraceProvider } from "@openai/agents";
import { afterAll } from "vitest";

/** Stops the SDK's trace export loop (and flushes its buffer): no timer of the SDK is left. */
export async function shutdownAgentsTracing(): Promise<void> {
  await getGlobalTraceProvider().shutdown();
}

/** Stops the SDK's trace export loop after the calling file's tests (vitest's `afterAll`). */
export function stopAgentsTracingAfterAll(): void {
  afterAll(shutdownAgentsTracing);
}
