/**
 * `eddy run [prompt]`: resolve the configuration, start the provider (the embedded mock server when
 * none is configured), run the agent with the built-in tools, render frames (human view or JSONL),
 * record the tape, and exit with the code of the run's end reason (DESIGN.md §5).
 */
import { readFileSync, statSync } from "node:fs";
import { compileContextBundle, renderContextBundle } from "../context/bundle.js";
import { EddyError } from "../errors.js";
import type { Frame } from "../frames/frame.js";
import { userMessageItem } from "../history/items.js";
import type { RunOptions } from "../loop/options.js";
import { runAgent } from "../loop/run.js";
import { createMockServer, type MockServer } from "../mock/index.js";
import type { ItemParam } from "../protocol/types.js";
import { createFallbackProvider } from "../provider/fallback.js";
import {
  createOpenResponsesProvider,
  type OpenResponsesProviderOptions,
} from "../provider/open-responses.js";
import type { Provider } from "../provider/provider.js";
import { createTapeHeader } from "../replay/header.js";
import { createTapeRecorder, type TapeRecorder } from "../replay/recorder.js";
import { readTape } from "../replay/tape.js";
import { createBuiltinTools } from "../tools/builtin/index.js";
import { createToolRegistry } from "../tools/registry.js";
import { type EffectiveConfig, type Env, type RunFlags, resolveConfig } from "./config.js";
import { exitCodeFor, USAGE_ERROR } from "./exit-codes.js";
import { HumanRenderer } from "./render-human.js";
import { type Output, stylesFor } from "./terminal.js";

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

export async function runCommand(prompt: string | undefined, flags: RunFlags, io: CliIo): Promise<number> {
  const config = resolveConfig(flags, io.env, io.cwd);
  checkWorkspace(config.workspace.value);
  const prompt_ = await readPrompt(prompt, io);
  const input = flags.context === undefined ? prompt_ : withContext(flags.context, prompt_);
  const outputSchema = flags.schema === undefined ? undefined : readSchema(flags.schema);
  const { tools, disabled } = createBuiltinTools({
    allowWrite: config.allowWrite.value,
    allowShell: config.allowShell.value,
  });
  const registry = createToolRegistry(tools, { disabled });

  let mock: MockServer | undefined;
  let recorder: TapeRecorder | undefined;
  let removeSignal: (() => void) | undefined;
  const styles = stylesFor(io.stderr, io.env);
  try {
    let provider: Provider;
    if (config.target.kind === "mock") {
      mock = await createMockServer({});
      provider = createOpenResponsesProvider({ baseURL: mock.url, name: "mock", ...timeouts(config) });
      const note = `eddy: no provider configured — using the built-in offline demo model at ${mock.url} (set --base-url or OPENAI_API_KEY for a real one)`;
      io.stderr.write(`${styles.dim(note)}\n`);
    } else {
      provider = httpProvider(config);
    }
    const controller = new AbortController();
    const runOptions: RunOptions = {
      provider,
      model: config.model.value,
      input,
      tools: registry,
      workspace: config.workspace.value,
      signal: controller.signal,
      maxToolCalls: config.maxToolCalls.value,
      maxTurns: config.maxTurns.value,
    };
    if (config.stateless.value) runOptions.mode = "stateless";
    if (config.instructions.value !== undefined) runOptions.instructions = config.instructions.value;
    if (outputSchema !== undefined) runOptions.outputSchema = outputSchema;
    // Bad options (a missing workspace…) throw here, before any request: exit 2.
    const handle = runAgent(runOptions);
    if (flags.record !== undefined) {
      const header = createTapeHeader(runOptions, {
        runId: handle.runId,
        validate: config.validate.value,
        toolSet: { allow_write: config.allowWrite.value, allow_shell: config.allowShell.value },
      });
      header.provider.name = config.target.kind === "mock" ? "mock" : config.target.profile.name;
      const secrets = config.target.kind === "http" ? [config.target.apiKey?.value] : [];
      recorder = createTapeRecorder(flags.record, header, secrets);
    }

    let signals = 0;
    removeSignal = io.onSignal((signal) => {
      signals++;
      if (signals > 1) process.exit(130); // a second Ctrl-C: stop now
      controller.abort(signal);
    });

    const render = flags.json === true ? jsonRenderer(io.stdout) : humanRenderer(io, styles);
    for await (const frame of handle) {
      recorder?.observer(frame);
      render(frame);
    }
    const result = await handle.result;
    return exitCodeFor(result.reason);
  } finally {
    removeSignal?.();
    recorder?.close();
    await mock?.close();
  }
}

function humanRenderer(io: CliIo, styles: ReturnType<typeof stylesFor>): (frame: Frame) => void {
  const renderer = new HumanRenderer({
    stdout: io.stdout,
    stderr: io.stderr,
    styles,
    now: () => performance.now(),
  });
  return (frame) => renderer.onFrame(frame);
}

/** Frames as JSONL on stdout, one write per frame (a consumer sees each frame as it happens). */
function jsonRenderer(stdout: Output): (frame: Frame) => void {
  return (frame) => {
    stdout.write(`${JSON.stringify(frame)}\n`);
  };
}

function timeouts(config: EffectiveConfig): Partial<OpenResponsesProviderOptions> {
  return {
    validate: config.validate.value,
    retry: { maxRetries: config.maxRetries.value },
    timeouts: { firstByteMs: config.firstByteTimeoutMs.value, idleMs: config.idleTimeoutMs.value },
  };
}

function httpProvider(config: EffectiveConfig): Provider {
  const target = config.target;
  if (target.kind !== "http") throw new EddyError("invalid_config", "not an HTTP target");
  const build = (profile: typeof target.profile, baseURL: string, apiKey: string | undefined): Provider => {
    const options: OpenResponsesProviderOptions = {
      baseURL,
      name: profile.name,
      capabilities: profile.capabilities,
      ...timeouts(config),
    };
    if (apiKey !== undefined) options.apiKey = apiKey;
    if (profile.apiKeyHeader !== undefined) options.apiKeyHeader = profile.apiKeyHeader;
    if (profile.headers !== undefined) options.headers = profile.headers;
    return createOpenResponsesProvider(options);
  };
  const primary = build(target.profile, target.baseURL.value, target.apiKey?.value);
  if (target.fallbacks.length === 0) return primary;
  return createFallbackProvider([
    { provider: primary },
    ...target.fallbacks.map((f) => {
      const candidate: { provider: Provider; model?: string } = {
        provider: build(f.profile, f.baseURL, f.apiKey),
      };
      if (f.model !== undefined) candidate.model = f.model;
      return candidate;
    }),
  ]);
}

async function readPrompt(prompt: string | undefined, io: CliIo): Promise<string> {
  if (prompt !== undefined) {
    if (prompt.trim() === "") throw usage("the prompt is empty");
    return prompt;
  }
  if (io.stdinIsTTY) throw usage('no prompt: give it as an argument (eddy run "…") or on stdin');
  const text = (await io.readStdin()).trim();
  if (text === "") throw usage("no prompt: stdin was empty");
  return text;
}

function readSchema(path: string): NonNullable<RunOptions["outputSchema"]> {
  let schema: unknown;
  try {
    schema = JSON.parse(readFileSync(path, "utf8"));
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    throw usage(`cannot read the --schema file ${path}: ${reason}`);
  }
  if (schema === null || typeof schema !== "object" || Array.isArray(schema)) {
    throw usage(`the --schema file ${path} must hold a JSON Schema object`);
  }
  const name =
    typeof (schema as { title?: unknown }).title === "string"
      ? String((schema as { title: string }).title)
      : "output";
  return {
    name: name.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, 64) || "output",
    schema: schema as Record<string, unknown>,
  };
}

/** The prompt preceded by a context bundle compiled from earlier runs' tapes. */
function withContext(tapes: string[], prompt: string): ItemParam[] {
  const bundle = compileContextBundle(tapes.map((path) => readTape(path).frames));
  return [...renderContextBundle(bundle), userMessageItem(prompt) as ItemParam];
}

function checkWorkspace(path: string): void {
  let ok = false;
  try {
    ok = statSync(path).isDirectory();
  } catch {}
  if (!ok) throw usage(`workspace ${JSON.stringify(path)} does not exist or is not a directory`);
}

function usage(message: string): EddyError {
  return new EddyError("invalid_argument", message, { fault: "user", details: { exitCode: USAGE_ERROR } });
}
