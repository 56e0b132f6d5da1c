/**
 * Runs a spec on a scripted provider, then replays its tape through `replayTape`: for the
 * composition tests (stop conditions, hooks, guardrails, prepareTurn, agent tools), which must
 * each replay exactly from the tape alone.
 */
import { tmpdir } from "node:os";
import type { Frame } from "../../src/frames/frame.js";
import type { RunDeps, RunResult } from "../../src/loop/options.js";
import { runAgent } from "../../src/loop/run.js";
import type { RunSpecInput } from "../../src/loop/run-spec.js";
import type { JsonObject } from "../../src/protocol/types.js";
import { createTapeHeader } from "../../src/replay/header.js";
import { type ReplayOutcome, replayTape } from "../../src/replay/replay.js";
import type { Tape } from "../../src/replay/tape.js";
import { createToolRegistry } from "../../src/tools/registry.js";
import type { ToolDefinition } from "../../src/tools/tool.js";
import { assertFrameInvariants } from "./frames.js";
import { createScriptedProvider, type Script } from "./scripted.js";

export interface ComposedRun {
  frames: Frame[];
  result: RunResult;
  requests: JsonObject[];
  tape: Tape;
}

/** Runs `spec` with `tools` and the extra deps on a provider answering `scripts` in order. */
export async function composedRun(
  scripts: Script[],
  spec: Partial<RunSpecInput>,
  tools: ToolDefinition[],
  extra: Partial<RunDeps> = {},
): Promise<ComposedRun> {
  const provider = createScriptedProvider(scripts);
  const deps: RunDeps = { provider, workspace: tmpdir(), tools, ...extra };
  const handle = runAgent({ model: "test-model", input: "hello", ...spec }, deps);
  const frames: Frame[] = [];
  for await (const f of handle) frames.push(f);
  const result = await handle.result;
  assertFrameInvariants(frames);
  const tape: Tape = { header: createTapeHeader(handle.spec, { provider }), frames };
  return { frames, result, requests: provider.requests, tape };
}

/** Replays a tape with `tools` as the registry (recorded outputs, no live deps). */
export function replayComposed(tape: Tape, tools: ToolDefinition[]): Promise<ReplayOutcome> {
  return replayTape(JSON.parse(JSON.stringify(tape)) as Tape, {
    registry: createToolRegistry(tools),
    workspace: tmpdir(),
    stallMs: 500,
  });
}
