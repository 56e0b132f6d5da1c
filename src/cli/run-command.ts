/**
 * `eddy run [prompt]`: resolve the configuration, start the provider (the embedded mock server when
 * none is configured), run the agent with the built-in tools, render frames (human view or JSONL),
 * record the tape, and exit with the code of the run's end reason (DESIGN.md §5).
 */
import { readFileSync } from "node:fs";
import { compileContextBundle, renderContextBundle } from "../context/bundle.js";
import type { Frame } from "../frames/frame.js";
import { userMessageItem } from "../history/items.js";
import type { RunHandle, RunOptions } from "../loop/options.js";
import { runAgent } from "../loop/run.js";
import type { ItemParam } from "../protocol/types.js";
import type { Provider } from "../provider/provider.js";
import { createTapeHeader } from "../replay/header.js";
import { createTapeRecorder, type TapeRecorder } from "../replay/recorder.js";
import { readTape } from "../replay/tape.js";
import { createBuiltinTools } from "../tools/builtin/index.js";
import { createToolRegistry, type ToolRegistry } from "../tools/registry.js";
import { compileSchema } from "../util/schema.js";
import { type EffectiveConfig, type Env, type RunFlags, resolveConfig } from "./config.js";
import { exitCodeFor } from "./exit-codes.js";
import { assertReadyToRun, checkWorkspace, keyHint, usageError } from "./preflight.js";
import { HumanRenderer } from "./render-human.js";
import { secretsOf, startTargetProvider, type TargetProvider } from "./target-provider.js";
import { type Output, type Styles, stylesFor } from "./terminal.js";

export interface CliIo {
  stdout: Output;
  stderr: Output;
  /** Reads all of stdin (only called when no prompt argument is given and stdin is not a TTY). */
  readStdin: () => Promise<string>;
  stdinIsTTY: boolean;
  env: Env;
  cwd: string;
  /** Registers a handler for SIGINT/SIGTERM; returns a function that removes it. */
  onSignal: (handler: (signal: string) => void) => () => void;
}

/** A run with every input read and checked: nothing is started, nothing sent. */
export interface PreparedRun {
  config: EffectiveConfig;
  input: string | ItemParam[];
  outputSchema: RunOptions["outputSchema"];
  registry: ToolRegistry;
}

/** `eddy run`: returns the exit code of the run's end reason (2 for bad usage, before any request). */
export async function runCommand(prompt: string | undefined, flags: RunFlags, io: CliIo): Promise<number> {
  const prepared = await prepareRun(prompt, flags, io);
  const styles = stylesFor(io.stderr, io.env);
  const controller = new AbortController();
  let started: TargetProvider | undefined;
  let recorder: TapeRecorder | undefined;
  let removeSignal: (() => void) | undefined;
  try {
    started = await startTargetProvider(prepared.config);
    const runOptions = runOptionsFor(prepared, started.provider, controller.signal);
    // Bad options throw here, before any request and before the demo-model notice: exit 2.
    const handle = runAgent(runOptions);
    if (started.notice !== undefined) io.stderr.write(`${styles.dim(started.notice)}\n`);
    if (flags.record !== undefined) recorder = recordTape(flags.record, runOptions, handle, prepared.config);
    removeSignal = cancelOnSignal(io, controller);
    const render = flags.json === true ? jsonRenderer(io.stdout) : humanRenderer(io, styles, prepared.config);
    for await (const frame of handle) {
      recorder?.observer(frame);
      render(frame);
    }
    return exitCodeFor((await handle.result).reason);
  } finally {
    removeSignal?.();
    recorder?.close();
    await started?.close();
  }
}

/** Reads and checks every input (configuration, workspace, prompt, schema, tools) before anything starts. */
async function prepareRun(prompt: string | undefined, flags: RunFlags, io: CliIo): Promise<PreparedRun> {
  const config = resolveConfig(flags, io.env, io.cwd);
  checkWorkspace(config.workspace.value);
  assertReadyToRun(config, io.env);
  const text = await readPrompt(prompt, io);
  return {
    config,
    input: flags.context === undefined ? text : withContext(flags.context, text),
    outputSchema: flags.schema === undefined ? undefined : readSchema(flags.schema),
    registry: toolRegistryFor(config),
  };
}

/** The tools a run of this configuration offers (a fresh registry: tools keep per-run state). */
export function toolRegistryFor(config: EffectiveConfig): ToolRegistry {
  const { tools, disabled } = createBuiltinTools({
    allowWrite: config.allowWrite.value,
    allowShell: config.allowShell.value,
  });
  return createToolRegistry(tools, { disabled });
}

/** The run options of a prepared run (also the defaults `eddy batch` and `eddy worker` give their tasks). */
export function runOptionsFor(prepared: PreparedRun, provider: Provider, signal: AbortSignal): RunOptions {
  const { config } = prepared;
  const options: RunOptions = {
    provider,
    model: config.model.value,
    input: prepared.input,
    tools: prepared.registry,
    workspace: config.workspace.value,
    signal,
    maxToolCalls: config.maxToolCalls.value,
    maxTurns: config.maxTurns.value,
    toolsOnFollowUp: config.toolsOnFollowUp.value,
    secrets: secretsOf(config),
  };
  if (config.stateless.value) options.mode = "stateless";
  if (config.instructions.value !== undefined) options.instructions = config.instructions.value;
  if (prepared.outputSchema !== undefined) options.outputSchema = prepared.outputSchema;
  return options;
}

function recordTape(
  path: string,
  options: RunOptions,
  handle: RunHandle,
  config: EffectiveConfig,
): TapeRecorder {
  const header = createTapeHeader(options, {
    runId: handle.runId,
    validate: config.validate.value,
    toolSet: { allow_write: config.allowWrite.value, allow_shell: config.allowShell.value },
  });
  header.provider.name = config.target.kind === "mock" ? "mock" : config.target.profile.name;
  return createTapeRecorder(path, header, secretsOf(config));
}

/** The first SIGINT/SIGTERM cancels the run (tools killed, `run_ended` written); a second one exits now. */
export function cancelOnSignal(io: CliIo, controller: AbortController): () => void {
  let signals = 0;
  return io.onSignal((signal) => {
    signals++;
    if (signals > 1) process.exit(130);
    controller.abort(signal);
  });
}

export function humanRenderer(io: CliIo, styles: Styles, config: EffectiveConfig): (frame: Frame) => void {
  const renderer = new HumanRenderer({
    stdout: io.stdout,
    stderr: io.stderr,
    styles,
    now: () => performance.now(),
    ...(config.target.kind === "http" ? { authHint: keyHint(config.target) } : {}),
  });
  return (frame) => renderer.onFrame(frame);
}

/** Frames as JSONL on stdout, one write per frame (a consumer sees each frame as it happens). */
export function jsonRenderer(stdout: Output): (frame: Frame) => void {
  return (frame) => {
    stdout.write(`${JSON.stringify(frame)}\n`);
  };
}

async function readPrompt(prompt: string | undefined, io: CliIo): Promise<string> {
  if (prompt !== undefined) {
    if (prompt.trim() === "") throw usageError("the prompt is empty");
    return prompt;
  }
  if (io.stdinIsTTY) throw usageError('no prompt: give it as an argument (eddy run "…") or on stdin');
  const text = (await io.readStdin()).trim();
  if (text === "") throw usageError("no prompt: stdin was empty");
  return text;
}

export function readSchema(path: string): NonNullable<RunOptions["outputSchema"]> {
  let schema: unknown;
  try {
    schema = JSON.parse(readFileSync(path, "utf8"));
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    throw usageError(`cannot read the --schema file ${path}: ${reason}`);
  }
  if (schema === null || typeof schema !== "object" || Array.isArray(schema)) {
    throw usageError(`the --schema file ${path} must hold a JSON Schema object`);
  }
  const title = (schema as { title?: unknown }).title;
  const name = typeof title === "string" ? title : "output";
  const outputSchema = {
    name: name.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, 64) || "output",
    schema: schema as Record<string, unknown>,
  };
  // Checked now, so a schema the loop would refuse exits 2 before anything starts (compiled once: cached).
  compileSchema(`the --schema file ${path}`, outputSchema.schema);
  return outputSchema;
}

/** The prompt preceded by a context bundle compiled from earlier runs' tapes. */
function withContext(tapes: string[], prompt: string): ItemParam[] {
  const bundle = compileContextBundle(tapes.map((path) => readTape(path).frames));
  return [...renderContextBundle(bundle), userMessageItem(prompt) as ItemParam];
}
