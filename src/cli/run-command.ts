/**
 * `eddy run [prompt]`: resolve the configuration, start the provider (the embedded mock server when
 * none is configured), run the agent with the built-in tools — on a thread (`--thread`), or from
 * earlier runs' tapes (`--context`) — render frames (human view or JSONL), record the tape, and
 * exit with the code of the run's end reason (docs/architecture.md, "The CLI contract").
 */

import { isAbsolute, relative, resolve, sep } from "node:path";
import { compileContextBundle } from "../context/bundle.js";
import type { ThreadHold } from "../context/thread-hold.js";
import { checkThreadName, createThreadStore } from "../context/threads.js";
import { renderCompiledContext } from "../context/threads-run.js";
import { EddyError } from "../errors.js";
import type { Frame } from "../frames/frame.js";
import { type Attachment, userMessageWithAttachments } from "../history/attachments.js";
import { withInstructionFiles } from "../loop/instruction-files.js";
import type { RunDeps, RunHandle } from "../loop/options.js";
import { runAgent } from "../loop/run.js";
import { createRunHistory } from "../loop/run-history.js";
import { type RunSpec, type RunSpecInput, resolveRunSpec } from "../loop/run-spec.js";
import { runAgentOnThread } from "../loop/thread-run.js";
import type { ItemParam } from "../protocol/types.js";
import type { Provider } from "../provider/provider.js";
import { createTapeHeader } from "../replay/header.js";
import {
  createTapeRecorder,
  type ReservedTape,
  releaseTapeFile,
  reserveTapeFile,
  type TapeRecorder,
} from "../replay/recorder.js";
import { readTape, type TapeHeader } from "../replay/tape.js";
import { abortableSleep } from "../util/abort.js";
import { readRegularTextSync, sameFile, sizeText } from "../util/regular-file.js";
import { compileSchema } from "../util/schema.js";
import { agentSummaries } from "./agent-tools.js";
import type { TerminalInput } from "./approval-prompt.js";
import { type EffectiveConfig, type Env, type RunFlags, resolveConfig } from "./config.js";
import { CANCELLED } from "./exit-codes.js";
import { ImageSaver } from "./hosted-items.js";
import { type OtelExport, otelRequested, silentCollectorLine, startOtelExport } from "./otel.js";
import { assertReadyToRun, checkWorkspace, keyHint, usageError } from "./preflight.js";
import { HumanRenderer } from "./render-human.js";
import { hooksOf, instructionReaderOf, policyOf, specOf } from "./run-settings.js";
import { closeTools, type PreparedTools, prepareTools, type RunTools, startTools } from "./run-tools.js";
import { mcpEventLine, observeApart, RunView } from "./run-view.js";
import { type Closer, closeAllBy, SHUTDOWN_BUDGET } from "./shutdown.js";
import { TapeGuard } from "./tape-guard.js";
import { secretsOf, startTargetProvider, type TargetProvider } from "./target-provider.js";
import { type Output, type Styles, stylesFor } from "./terminal.js";

export interface CliIo {
  stdout: Output;
  stderr: Output;
  /**
   * Reads all of stdin (only called when no prompt argument is given and stdin is not a TTY);
   * undefined once more than `maxBytes` came (the rest is not read).
   */
  readStdin: (maxBytes: number) => Promise<string | undefined>;
  stdinIsTTY: boolean;
  env: Env;
  cwd: string;
  /** Registers a handler for SIGINT, SIGTERM and SIGHUP; returns a function that removes it. */
  onSignal: (handler: (signal: string) => void) => () => void;
  /** The standard input stream (`eddy chat` reads its lines from it). @defaultValue none */
  stdin?: NodeJS.ReadableStream;
  /** Answers typed on the terminal (`--approve ask`); absent when there is none to read from. */
  terminal?: TerminalInput;
}

/** A run with every input read and checked: nothing is started, nothing sent. */
export interface PreparedRun {
  config: EffectiveConfig;
  /**
   * The run's spec as the configuration, the prompt (with its `--image`/`--file` attachments),
   * `--schema` and `--thread` give it (defaults are applied when the run starts).
   */
  spec: RunSpecInput;
  /** The frames of `--context` tapes (read and checked, compiled once the provider is known). */
  contextRuns: Frame[][] | undefined;
  tools: PreparedTools;
  /** Where `--record` writes the tape: a relative one from `io.cwd`, not the process's directory. */
  record: string | undefined;
}

/** `eddy run`: returns the exit code of the run's end reason (2 for bad usage, before any request). */
export async function runCommand(prompt: string | undefined, flags: RunFlags, io: CliIo): Promise<number> {
  const styles = stylesFor(io.stderr, io.env);
  // MCP events come once the servers start, after the view exists.
  let view: RunView | undefined;
  const prepared = await prepareRun(prompt, flags, io, (event) => view?.say(mcpEventLine(event, styles)));
  // A tape that cannot be written stops the command here, before anything starts or is sent.
  const reserved = prepared.record === undefined ? undefined : reserveTapeFile(prepared.record);
  const images = new ImageSaver(prepared.config.workspace.value);
  view =
    flags.json === true
      ? RunView.json(io.stdout, io.stderr, styles)
      : RunView.human(humanRenderer(io, styles, prepared.config, images), io.stderr, styles);
  const controller = new AbortController();
  let started: TargetProvider | undefined;
  let recorder: TapeRecorder | undefined;
  let tools: RunTools | undefined;
  let otel: OtelExport | undefined;
  const unrecorded: Frame[] = [];
  const tape = new TapeGuard(prepared.record ?? "", (reason) => controller.abort(reason));
  // Signals cancel from here on: while MCP servers start, and during the run (whose finally shuts them down).
  const removeSignal = cancelOnSignal(io, controller);
  let signalledAt: number | undefined;
  controller.signal.addEventListener("abort", () => {
    signalledAt = performance.now();
  });
  try {
    const secrets = secretsOf(prepared.config);
    const servers = prepared.config.mcpServers.map((server) => server.name);
    if (servers.length > 0) view.say(styles.dim(`⚙ starting MCP servers: ${servers.join(", ")}…`));
    tools = await startTools(prepared.tools, {
      config: prepared.config,
      io,
      styles,
      signal: controller.signal,
      hold: view,
      secrets,
    });
    if (tools === undefined) {
      view.say(`${styles.red("eddy:")} cancelled while starting the MCP servers`);
      return CANCELLED;
    }
    started = await startTargetProvider(prepared.config);
    if (otelRequested(flags.otel, io.env))
      otel = await startOtelExport({ env: io.env, providerName: started.provider.name, stderr: io.stderr });
    const deps = runDepsOf(prepared.config, tools, started.provider, controller.signal, io.env);
    // Rendered as each frame is emitted, so an approval prompt comes after everything before it.
    // The tape first; then the others, each failing alone (docs/pitfalls.md #95): none can stop it.
    const others = sideObservers(otel, images, io, styles);
    deps.onFrame = (frame) => {
      if (recorder !== undefined) tape.write(() => recorder?.observer(frame));
      else if (prepared.record !== undefined) unrecorded.push(frame);
      others(frame);
      view.render(frame);
    };
    // Bad settings throw here, before any request and before the demo-model notice: exit 2.
    const handle = await startUnlessCancelled(prepared, deps, prepared.record, view, styles);
    if (handle === undefined) return CANCELLED;
    if (started.notice !== undefined) io.stderr.write(`${styles.dim(started.notice)}\n`);
    if (prepared.record !== undefined) {
      const header = tapeHeaderOf(handle.spec, deps, prepared.config, tools);
      recorder = createTapeRecorder(prepared.record, header, deps.secrets ?? [], reserved);
      // A thread's or a context's run starts while its context is compiled: record what came first.
      for (const frame of unrecorded.splice(0)) recorder.observer(frame);
    }
    for await (const _frame of handle) {
      // Frames are rendered and recorded by onFrame; iterating lets the run go on.
    }
    return tape.exitCode((await handle.result).reason, (line) => view.say(line), styles);
  } finally {
    removeSignal();
    closeTape(recorder, reserved);
    const deadline =
      signalledAt === undefined
        ? performance.now() + SHUTDOWN_BUDGET.afterRunMs
        : signalledAt + SHUTDOWN_BUDGET.afterSignalMs;
    const problem = await closeRunBy(deadline, { otel, started, prepared, registry: tools?.registry });
    if (problem !== undefined) io.stderr.write(`${styles.yellow(problem)}\n`);
  }
}

/**
 * A run's observers besides its tape and its view — tracing (`--otel`) and saving generated
 * images — each stopped alone by its first exception, said once on stderr (src/cli/run-view.ts).
 */
export function sideObservers(
  otel: OtelExport | undefined,
  images: ImageSaver,
  io: Pick<CliIo, "stderr">,
  styles: Styles,
): (frame: Frame) => void {
  const save = observeApart("saving generated images", (f) => images.observe(f), io.stderr, styles);
  if (otel === undefined) return save;
  const trace = observeApart("tracing (--otel)", otel.observer, io.stderr, styles);
  return (frame) => {
    trace(frame);
    save(frame);
  };
}

/** Closes the run's tape; one reserved for a run that never started is given back as it was. */
function closeTape(recorder: TapeRecorder | undefined, reserved: ReservedTape | undefined): void {
  if (recorder !== undefined) recorder.close();
  else if (reserved !== undefined) releaseTapeFile(reserved);
}

/**
 * Closes what the run started — the telemetry export, the provider (the embedded mock), the tools'
 * background jobs and the MCP servers — all at once, by `deadline` (src/cli/shutdown.ts). Returns
 * the line to show when the run's spans could not be delivered.
 */
async function closeRunBy(
  deadline: number,
  parts: {
    otel: OtelExport | undefined;
    started: TargetProvider | undefined;
    prepared: PreparedRun;
    registry: RunTools["registry"] | undefined;
  },
): Promise<string | undefined> {
  const { otel, started, prepared, registry } = parts;
  const closers: Closer[] = [{ name: "tools", close: () => closeTools(prepared.tools, registry, deadline) }];
  if (otel !== undefined) closers.push({ name: "otel", close: (by) => otel.shutdown(by) });
  if (started !== undefined) closers.push({ name: "provider", close: () => started.close() });
  const start = performance.now();
  const { results, late } = await closeAllBy(closers, deadline);
  if (otel !== undefined && late.includes("otel"))
    return silentCollectorLine(otel.endpoint, deadline - start);
  const problem = results.get("otel");
  return typeof problem === "string" ? problem : undefined;
}

/** Reads and checks every input (configuration, workspace, prompt, schema, tools) before anything starts. */
async function prepareRun(
  prompt: string | undefined,
  flags: RunFlags,
  io: CliIo,
  onMcpEvent: Parameters<typeof prepareTools>[2],
): Promise<PreparedRun> {
  const config = resolveConfig(flags, io.env, io.cwd);
  checkWorkspace(config.workspace.value);
  assertReadyToRun(config, io.env);
  if (flags.thread !== undefined && flags.context !== undefined)
    throw usageError("--thread and --context cannot be combined: a thread brings its own context");
  if (flags.thread !== undefined) checkThreadName(flags.thread);
  refuseRecordOverContext(flags, io.cwd);
  const text = await readPrompt(prompt, io);
  const attachments: Attachment[] = [
    ...(flags.image ?? []).map((source): Attachment => ({ kind: "image", source })),
    ...(flags.file ?? []).map((source): Attachment => ({ kind: "file", source })),
  ];
  const message =
    attachments.length === 0 ? undefined : await userMessageWithAttachments(text, attachments, io.cwd);
  const spec: RunSpecInput = {
    ...specOf(config),
    input: message === undefined ? text : [message as ItemParam],
  };
  const readInstructions = instructionReaderOf(config, (line) => io.stderr.write(line));
  if (readInstructions !== undefined)
    Object.assign(spec, withInstructionFiles(spec.instructions, readInstructions(config.workspace.value)));
  if (flags.schema !== undefined) spec.output_schema = readSchema(flags.schema, io.cwd);
  if (flags.thread !== undefined) spec.thread = flags.thread;
  // Checked now, so a bad setting is exit 2 before any server starts.
  resolveRunSpec(spec, "the run's settings");
  return {
    config,
    spec,
    contextRuns: flags.context?.map((path) => contextFrames(path, io.cwd)),
    tools: await prepareTools(config, io, onMcpEvent),
    record: flags.record === undefined ? undefined : resolve(io.cwd, flags.record),
  };
}

/**
 * `--record` naming a `--context` tape (by any name or link): the new tape, which keeps only the
 * context rendered from it, would replace the earlier run's record. Refused before anything runs.
 */
function refuseRecordOverContext(flags: RunFlags, cwd: string): void {
  const record = flags.record;
  if (record === undefined) return;
  for (const context of flags.context ?? [])
    if (sameFile(resolve(cwd, record), resolve(cwd, context)))
      throw usageError(
        `--record ${record} is the --context tape ${context}: recording there would replace that run's record; give another --record`,
      );
}

/**
 * A `--context` tape's frames (a relative path from `cwd`); one with no run in it (cut off after
 * its header) is refused naming it.
 */
function contextFrames(path: string, cwd: string): Frame[] {
  const { frames } = readTape(resolve(cwd, path), path);
  if (!frames.some((f) => f.type === "run_started"))
    throw usageError(
      `--context ${path}: the tape has no run_started frame (cut off after its header?): give the tape of a run`,
    );
  return frames;
}

/**
 * The live side of a run of this configuration: the provider, the started tools, the policy
 * (whose approval mode the tools decided), the workspace, cancellation, the secrets to mask and
 * the config file's hook commands (run with `env`).
 */
export function runDepsOf(
  config: EffectiveConfig,
  tools: RunTools,
  provider: Provider,
  signal: AbortSignal,
  env: Env,
): RunDeps {
  const deps: RunDeps = {
    provider,
    tools: tools.registry,
    policy: policyOf(config, tools.approveMode),
    workspace: config.workspace.value,
    signal,
    secrets: [...secretsOf(config), ...tools.secrets],
  };
  if (tools.onApproval !== undefined) deps.onApproval = tools.onApproval;
  if (tools.refreshTools !== undefined) deps.refreshTools = tools.refreshTools;
  if (tools.mcpServers.length > 0) deps.mcpServers = tools.mcpServers;
  const hooks = hooksOf(config, env)?.(config.workspace.value);
  if (hooks !== undefined) deps.hooks = hooks;
  return deps;
}

/**
 * Starts the run: on its thread (`--thread`: context compiled from the thread, outcome appended
 * when it ends), from `--context` tapes, or plain.
 */
async function startRun(
  prepared: PreparedRun,
  deps: RunDeps,
  tape: string | undefined,
  say: (line: string) => void,
): Promise<RunHandle> {
  const { spec } = prepared;
  if (spec.thread !== undefined) return onThread(spec, spec.thread, deps, tape, say);
  if (prepared.contextRuns === undefined) return runAgent(spec, deps);
  const history = createRunHistory(resolveRunSpec(spec), deps);
  const context = await contextFromRuns(prepared.contextRuns, deps.workspace ?? process.cwd(), history);
  return runAgent({ ...spec, context }, { ...deps, history });
}

/** `startRun`, or undefined when Ctrl-C came before the run started (while it waited for its thread). */
async function startUnlessCancelled(
  prepared: PreparedRun,
  deps: RunDeps,
  tape: string | undefined,
  view: RunView,
  styles: Styles,
): Promise<RunHandle | undefined> {
  try {
    return await startRun(prepared, deps, tape, (line) => view.say(styles.dim(line)));
  } catch (err) {
    if (deps.signal?.aborted !== true) throw err;
    view.say(styles.yellow("■ cancelled before the run started"));
    return undefined;
  }
}

/**
 * `--thread`: the run holds its thread while it runs (context/thread-hold.ts). While a chat open
 * on it, or another run on it, holds it, the run waits (saying so once; Ctrl-C ends the wait):
 * runs a script starts at once on one thread go one after another, each with the ones before.
 */
async function onThread(
  spec: PreparedRun["spec"],
  thread: string,
  deps: RunDeps,
  tape: string | undefined,
  say: (line: string) => void,
): Promise<RunHandle> {
  const workspace = deps.workspace ?? process.cwd();
  const store = createThreadStore({ workspace });
  const hold = await waitForThread(store, thread, "eddy run", deps.signal, say);
  try {
    const handle = await runAgentOnThread(spec, deps, {
      store,
      held: true,
      ...(tape === undefined ? {} : { tape: threadTapeName(workspace, tape) }),
    });
    return { ...handle, result: handle.result.finally(() => hold.release()) };
  } catch (err) {
    await hold.release();
    throw err;
  }
}

/**
 * How a thread's log names a run's tape (at `tape`, absolute): from the workspace when it is inside
 * it, as a chat's are read back (session/waiting-run.ts resolves the name against the workspace),
 * else whole. `eddy run --record t.tape --workspace ws` logged `t.tape`, read back as `ws/t.tape`.
 */
export function threadTapeName(workspace: string, tape: string): string {
  const name = relative(workspace, tape);
  return name === "" || name === ".." || name.startsWith(`..${sep}`) || isAbsolute(name) ? tape : name;
}

/** The thread held for this run (`holder` names it to others), once no other process holds it. */
export async function waitForThread(
  store: ReturnType<typeof createThreadStore>,
  thread: string,
  holder: string,
  signal: AbortSignal | undefined,
  say: (line: string) => void,
): Promise<ThreadHold> {
  for (let said = false; ; said = true) {
    try {
      return await store.hold(thread, holder);
    } catch (err) {
      if (!EddyError.isInstance(err) || err.code !== "thread_busy") throw err;
      if (!said) say(`waiting for thread ${thread}: ${err.message.split(": leave")[0]} (Ctrl-C stops)`);
    }
    await abortableSleep(THREAD_WAIT_MS, signal);
  }
}

/** How often a run waiting for its thread asks again. */
const THREAD_WAIT_MS = 100;

/** `--context`: the tapes' runs compiled into a bundle (stored under `.eddy/bundles`), rendered by the run's manager. */
async function contextFromRuns(
  runs: Frame[][],
  workspace: string,
  history: ReturnType<typeof createRunHistory>,
): Promise<NonNullable<RunSpec["context"]>> {
  const bundle = await compileContextBundle(runs, { manager: history });
  const store = createThreadStore({ workspace });
  const { rendered, compiled } = await renderCompiledContext(bundle, await store.saveBundle(bundle), history);
  // Said as a thread's are: a tape whose run is over the budget was left out without a word.
  if (runs.length > compiled.runs) compiled.runs_left_out = runs.length - compiled.runs;
  return { items: rendered.items, compiled };
}

/** The tape header of a CLI run: its spec as run, the provider and profile, the policy, the MCP tools. */
export function tapeHeaderOf(
  spec: RunSpec,
  deps: RunDeps,
  config: EffectiveConfig,
  tools: Pick<RunTools, "mcpServers" | "mcpTools">,
): TapeHeader {
  return createTapeHeader(spec, {
    provider: deps.provider,
    providerName: config.target.kind === "mock" ? "mock" : config.target.profile.name,
    validate: config.validate.value,
    ...(deps.policy === undefined ? {} : { policy: deps.policy }),
    mcpServers: tools.mcpServers,
    mcpTools: tools.mcpTools,
    agents: agentSummaries(config.agents),
  });
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

/** The human view's renderer for a run of this configuration. */
export function humanRenderer(
  io: CliIo,
  styles: Styles,
  config: EffectiveConfig,
  images: ImageSaver,
): HumanRenderer {
  return new HumanRenderer({
    stdout: io.stdout,
    stderr: io.stderr,
    styles,
    now: () => performance.now(),
    imagePath: (id) => images.pathOf(id),
    ...(config.target.kind === "http" ? { authHint: keyHint(config.target) } : {}),
  });
}

/** The largest prompt read from stdin. */
export const PROMPT_MAX_BYTES = 32 * 1024 * 1024;

async function readPrompt(prompt: string | undefined, io: CliIo): Promise<string> {
  if (prompt !== undefined) {
    if (prompt.trim() === "") throw usageError("the prompt is empty");
    return prompt;
  }
  if (io.stdinIsTTY) throw usageError('no prompt: give it as an argument (eddy run "…") or on stdin');
  const read = await io.readStdin(PROMPT_MAX_BYTES);
  // `cat /dev/zero | eddy run` read until memory ran out.
  if (read === undefined)
    throw usageError(
      `the prompt on stdin is larger than ${sizeText(PROMPT_MAX_BYTES)}, the most eddy reads there: attach a large file with --file`,
    );
  const text = read.trim();
  if (text === "") throw usageError("no prompt: stdin was empty");
  return text;
}

/**
 * Reads and checks a `--schema` file: a relative `path` from `cwd` (the command's directory, not
 * the process's), named in messages as given.
 */
export function readSchema(path: string, cwd: string): NonNullable<RunSpecInput["output_schema"]> {
  const text = readRegularTextSync(resolve(cwd, path), {
    what: "the --schema file",
    maxBytes: 1024 * 1024,
    name: path,
  });
  let schema: unknown;
  try {
    schema = JSON.parse(text);
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
  compileSchema(`the --schema file ${path}`, outputSchema.schema, { untrusted: true });
  return outputSchema;
}
