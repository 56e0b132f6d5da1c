/**
 * `eddy serve [--host 127.0.0.1] [--port N] [--token T]`: the runtime as a service (src/serve/).
 * Its runs use this invocation's provider, tools, spec and policy — the same flags, config and
 * environment as `eddy run` (run-settings.ts, through batch-run.ts's `startBatchRuntime`); a
 * request never widens them. `--approve ask` means "ask the client": calls that need approval end
 * their run `awaiting_approval` (as `defer`) and `POST /v1/runs/ID/decisions` answers them.
 *
 * The token comes from `--token` or `EDDY_SERVE_TOKEN`; without one the server listens on a
 * loopback address only. SIGINT/SIGTERM cancels the running runs (their tapes record
 * `run_ended: cancelled`), closes the listener and exits 130.
 */
import { join, resolve } from "node:path";
import { describeError } from "../errors.js";
import { createServeHandler } from "../serve/handler.js";
import { listen } from "../serve/listener.js";
import { createResponsesFace } from "../serve/responses.js";
import { createRunService } from "../serve/runs.js";
import { tapeExtrasFor } from "./batch-command.js";
import { startBatchRuntime } from "./batch-run.js";
import type { EffectiveConfig, RunFlags } from "./config.js";
import { resolveConfig } from "./config.js";
import { CANCELLED } from "./exit-codes.js";
import { assertReadyToRun, checkWorkspace, usageError } from "./preflight.js";
import type { CliIo } from "./run-command.js";
import { mcpEventLine } from "./run-view.js";
import { secretsOf, startTargetProvider } from "./target-provider.js";
import { stylesFor, terminalSafe } from "./terminal.js";

/** Flags of `eddy serve` (the run settings of `eddy run`, plus the server's own). */
export interface ServeFlags extends RunFlags {
  host?: string;
  port?: number;
  token?: string;
  dataDir?: string;
  maxRuns?: number;
  runTimeout?: number;
  corsOrigin?: string;
}

/** Runs the server until SIGINT/SIGTERM (see the module comment). */
export async function serveCommand(flags: ServeFlags, io: CliIo): Promise<number> {
  const config = askMeansDefer(resolveConfig(flags, io.env, io.cwd));
  checkWorkspace(config.workspace.value);
  assertReadyToRun(requestModelsAllowed(config), io.env);
  const token = flags.token ?? io.env.EDDY_SERVE_TOKEN;
  if (token !== undefined) checkServeToken(token, flags.token !== undefined ? "--token" : "EDDY_SERVE_TOKEN");
  const styles = stylesFor(io.stderr, io.env);
  const controller = new AbortController();
  const runtime = await startBatchRuntime({
    config,
    io,
    styles,
    command: "serve",
    signal: controller.signal,
    onMcpEvent: (event) => io.stderr.write(`${mcpEventLine(event, styles)}\n`),
  });
  if (runtime === undefined) return CANCELLED;
  const target = await startTargetProvider(config);
  const workspace = config.workspace.value;
  const secrets = [...secretsOf(config), ...runtime.secrets, ...(token === undefined ? [] : [token])];
  const service = createRunService({
    provider: target.provider,
    spec: runtime.spec,
    policy: runtime.policy,
    // The per-task registry of a batch, made fresh for each run (its shell jobs end with the run).
    tools: () => runtime.tools({ id: "serve", spec: {} }, workspace),
    workspace,
    dataDir: resolve(io.cwd, flags.dataDir ?? join(workspace, ".eddy", "serve")),
    secrets,
    mcpServers: runtime.mcpServers,
    ...(runtime.hooks === undefined ? {} : { hooks: runtime.hooks(workspace) }),
    ...(runtime.instructionFiles === undefined ? {} : { instructionFiles: runtime.instructionFiles }),
    tapeExtras: tapeExtrasFor(config, runtime.mcpTools),
    onTapeError: (runId, err) =>
      io.stderr.write(`eddy serve: run ${runId} stopped: cannot write its tape: ${describeError(err)}\n`),
    onSkippedTape: (_file, reason) =>
      io.stderr.write(
        `${terminalSafe(`eddy serve: a run not listed (its file is left as it is): ${reason}`, { oneLine: true })}\n`,
      ),
    ...(flags.maxRuns === undefined ? {} : { maxConcurrentRuns: flags.maxRuns }),
    ...(flags.runTimeout === undefined ? {} : { runTimeoutMs: flags.runTimeout }),
  });
  const face = createResponsesFace(service.runtime, token === undefined ? {} : { token });
  const handler = createServeHandler(service, {
    extra: face.handle,
    ...(token === undefined ? {} : { token }),
    ...(flags.corsOrigin === undefined ? {} : { corsOrigin: flags.corsOrigin }),
    onError: (err) =>
      io.stderr.write(`eddy serve: internal error: ${err instanceof Error ? err.message : String(err)}\n`),
  });
  try {
    const server = await listen(handler, {
      host: flags.host ?? "127.0.0.1",
      port: flags.port ?? 0,
      authenticated: token !== undefined,
      websocket: face.websocket,
    });
    if (target.notice !== undefined) io.stderr.write(`${styles.dim(target.notice)}\n`);
    io.stderr.write(
      `eddy serve: listening on ${server.url} (API at ${server.url}/v1, description at ${server.url}/openapi.json)${token === undefined ? "" : "; bearer token required"}; Ctrl-C stops it\n`,
    );
    await new Promise<void>((done) => {
      const remove = io.onSignal(() => {
        remove();
        done();
      });
    });
    io.stderr.write(`eddy serve: stopping (${service.running()} running run(s) cancelled)\n`);
    await service.shutdown("the server is stopping");
    face.close();
    await server.close();
    return CANCELLED;
  } finally {
    controller.abort("the server is stopping");
    await target.close();
    await runtime.close();
  }
}

/** `ask` (the configured or flagged mode) asks the client: deferred calls wait for `POST …/decisions`. */
function askMeansDefer(config: EffectiveConfig): EffectiveConfig {
  if (config.approve.value !== "ask") return config;
  return { ...config, approve: { ...config.approve, value: "defer" } };
}

/** A request may name its own model: only the key check applies up front. */
function requestModelsAllowed(config: EffectiveConfig): EffectiveConfig {
  return config.model.value === null
    ? { ...config, model: { value: "(per request)", source: "default" } }
    : config;
}

/**
 * Throws a usage error for a token no client can present: shorter than 8 characters, or holding
 * what an `Authorization` header cannot carry as sent (a control character such as a copied line
 * break, a character past U+007E, a space at either end, which fetch trims). Such a token started
 * the server, and every request was then a 401.
 */
function checkServeToken(token: string, where: string): void {
  if (token.length < 8) throw usageError(`${where}: use at least 8 characters (a long random string)`);
  if (!/^[\x21-\x7e]+$/.test(token))
    throw usageError(
      `${where} holds a space, a control or a non-ASCII character, which no client can send in its Authorization header: use printable ASCII characters only, without spaces (e.g. openssl rand -hex 16)`,
    );
}
