/**
 * Recording a run against the mock server through the library, as `eddy run --record` does: the
 * built-in tools over a workspace, the tape written as the run goes. For tests that need a real
 * tape or a real run's frames (the viewer, the OpenTelemetry observer).
 */
import type { Frame } from "../../src/frames/frame.js";
import type { RunResult } from "../../src/loop/options.js";
import { createPolicy } from "../../src/loop/policy.js";
import { runAgent } from "../../src/loop/run.js";
import type { RunSpecInput } from "../../src/loop/run-spec.js";
import { createMockServer, type Scenario } from "../../src/mock/index.js";
import { createOpenResponsesProvider } from "../../src/provider/open-responses.js";
import { createTapeHeader } from "../../src/replay/header.js";
import { createTapeRecorder } from "../../src/replay/recorder.js";
import { createBuiltinTools } from "../../src/tools/builtin/index.js";
import { createToolRegistry } from "../../src/tools/registry.js";

export interface MockRunOptions {
  /** The scenario; the demo model when absent. */
  scenario?: Scenario;
  prompt: string;
  workspace: string;
  /** Write the tape here. */
  tape?: string;
  allowWrite?: boolean;
  /** A key the mock requires (and the provider sends): it must never show up in frames or spans. */
  apiKey?: string;
  model?: string;
  onFrame?: (frame: Frame) => void;
  runId?: string;
  instructions?: string;
}

/** Runs the agent against a fresh mock server; returns every frame and the result. */
export async function recordMockRun(
  options: MockRunOptions,
): Promise<{ frames: Frame[]; result: RunResult }> {
  const mock = await createMockServer(
    options.apiKey === undefined
      ? { scenario: options.scenario }
      : { scenario: options.scenario, apiKey: options.apiKey },
  );
  try {
    const provider = createOpenResponsesProvider({
      baseURL: mock.url,
      name: "mock",
      ...(options.apiKey !== undefined ? { apiKey: options.apiKey } : {}),
    });
    const { tools, disabled } = createBuiltinTools({ allowWrite: options.allowWrite === true });
    const spec: RunSpecInput = { model: options.model ?? "eddy-demo", input: options.prompt };
    if (options.runId !== undefined) spec.run_id = options.runId;
    if (options.instructions !== undefined) spec.instructions = options.instructions;
    const handle = runAgent(spec, {
      provider,
      tools: createToolRegistry(tools, { disabled }),
      workspace: options.workspace,
    });
    const recorder =
      options.tape === undefined
        ? undefined
        : createTapeRecorder(
            options.tape,
            createTapeHeader(handle.spec, {
              provider,
              policy: createPolicy({ allowWrite: options.allowWrite === true }),
            }),
            [options.apiKey],
          );
    const frames: Frame[] = [];
    try {
      for await (const frame of handle) {
        recorder?.observer(frame);
        options.onFrame?.(frame);
        frames.push(frame);
      }
    } finally {
      recorder?.close();
    }
    return { frames, result: await handle.result };
  } finally {
    await mock.close();
  }
}
