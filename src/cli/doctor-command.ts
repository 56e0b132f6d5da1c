/**
 * `eddy doctor`: probes the provider a run would use (the same flags, config and profile as
 * `eddy run`; the embedded mock when none is configured) with `runProbes` (src/provider/probe/),
 * prints a table (or `--json`: one JSON object), and caches the report for runs whose settings are
 * left on auto (doctor-cache.ts). Exit 0 when the essential probes pass, 1 otherwise, 2 for bad
 * usage, 130 when cancelled (Ctrl-C ends it at once; nothing is cached then).
 */
import { EddyError } from "../errors.js";
import { textEmbedStrategy } from "../history/strategies.js";
import { createMockServer } from "../mock/index.js";
import type { ProviderCapabilities } from "../provider/capabilities.js";
import {
  type DoctorReport,
  essentialProbes,
  PROBE_DEFAULTS,
  type ProbeName,
  type ProbeResult,
  type ProbeTarget,
  runProbes,
} from "../provider/probe/index.js";
import { safeJson } from "../util/control-chars.js";
import { DEMO_MODEL, type EffectiveConfig, type RunFlags, resolveConfig } from "./config.js";
import { doctorCacheKey, doctorCachePath, writeDoctorReport } from "./doctor-cache.js";
import { DoctorTable } from "./doctor-view.js";
import { CANCELLED, RUN_FAILED, SUCCESS } from "./exit-codes.js";
import { assertReadyToRun, keyHint } from "./preflight.js";
import { type CliIo, cancelOnSignal } from "./run-command.js";
import { endpointOptions } from "./target-provider.js";
import { stylesFor } from "./terminal.js";

/** Flags of `eddy doctor`: the target flags of `eddy run`, the output and the probe timeout. */
export type DoctorFlags = Pick<
  RunFlags,
  | "baseUrl"
  | "api"
  | "transport"
  | "apiKey"
  | "model"
  | "provider"
  | "config"
  | "workspace"
  | "json"
  | "debug"
> & {
  /** `--probe-timeout MS`: the longest one probe may take. */
  probeTimeout?: number;
};

/** What is probed, and what the report calls it. */
interface Subject {
  target: ProbeTarget;
  provider: string;
  /** The base URL the cache and the report name (the embedded mock's changes per start: "embedded"). */
  baseURL: string;
  capabilities: ProviderCapabilities | undefined;
  notice: string | undefined;
  close(): Promise<void>;
}

/** `eddy doctor`: returns the exit code. */
export async function doctorCommand(flags: DoctorFlags, io: CliIo): Promise<number> {
  const config = resolveConfig(flags, io.env, io.cwd);
  assertReadyToRun(config, io.env);
  const controller = new AbortController();
  const removeSignal = cancelOnSignal(io, controller);
  const subject = await startSubject(config);
  const table = flags.json === true ? undefined : new DoctorTable(io.stdout, stylesFor(io.stdout, io.env));
  let results: ProbeResult[];
  try {
    if (subject.notice !== undefined)
      io.stderr.write(`${stylesFor(io.stderr, io.env).dim(subject.notice)}\n`);
    table?.header(subject.provider, subject.baseURL, subject.target);
    results = await runProbes(subject.target, {
      signal: controller.signal,
      timeoutMs: flags.probeTimeout ?? PROBE_DEFAULTS.timeoutMs,
      ...(subject.capabilities === undefined ? {} : { capabilities: subject.capabilities }),
      // The text form a run sends when the server takes no tool items (history/strategies.ts).
      renderToolResult: textEmbedStrategy.renderResult,
      onResult: (result) => table?.row(result),
    });
  } catch (err) {
    if (!controller.signal.aborted) throw err;
    io.stderr.write("eddy doctor: cancelled; nothing was cached\n");
    return CANCELLED;
  } finally {
    removeSignal();
    await subject.close();
  }
  const report: DoctorReport = {
    provider: subject.provider,
    base_url: subject.baseURL,
    model: subject.target.model,
    api: subject.target.api ?? "responses",
    probes: results,
    cached_at: new Date().toISOString(),
  };
  const saved = saveReport(report, io);
  if (table === undefined) io.stdout.write(`${safeJson(report, 2)}\n`);
  const essentials = essentialProbes(subject.target);
  const passed = essentialsPass(results, essentials);
  if (table !== undefined)
    table.footer({ report, essentials, passed, capabilities: subject.capabilities, saved });
  return passed ? SUCCESS : RUN_FAILED;
}

/** Whether every essential probe passed. */
function essentialsPass(results: readonly ProbeResult[], essentials: readonly ProbeName[]): boolean {
  return essentials.every((name) => results.find((r) => r.name === name)?.status === "ok");
}

/** The probe target for the configuration: its HTTP endpoint, or the embedded mock (started here). */
async function startSubject(config: EffectiveConfig): Promise<Subject> {
  const model = config.model.value;
  const target = config.target;
  if (target.kind === "http") {
    const probeTarget: ProbeTarget = {
      endpoint: endpointOptions(target, config),
      api: config.api.value,
      model,
      transport: config.transport.value,
      keyHint: keyHint(target),
    };
    return {
      target: probeTarget,
      provider: target.profile.name,
      baseURL: target.baseURL.value,
      capabilities: target.profile.capabilities,
      notice: undefined,
      close: async () => {},
    };
  }
  const mock = await createMockServer({});
  return {
    target: {
      endpoint: { baseURL: mock.url, name: "mock" },
      api: config.api.value,
      model: model ?? DEMO_MODEL,
      transport: config.transport.value,
    },
    provider: "mock",
    baseURL: "embedded",
    capabilities: undefined,
    notice: `eddy: no provider configured — probing the built-in offline demo model at ${mock.url} (set --base-url or OPENAI_API_KEY for a real one)`,
    close: () => mock.close(),
  };
}

/** Writes the report to the cache; returns where, or undefined (with a note on stderr) when it could not. */
function saveReport(report: DoctorReport, io: CliIo): string | undefined {
  const path = doctorCachePath(io.env);
  if (path === undefined) {
    io.stderr.write("eddy doctor: not cached: set HOME or XDG_CACHE_HOME for a cache directory\n");
    return undefined;
  }
  const key = doctorCacheKey({
    provider: report.provider,
    baseURL: report.base_url,
    model: report.model,
    api: report.api,
  });
  try {
    for (const note of writeDoctorReport(path, key, report)) io.stderr.write(`eddy doctor: ${note}\n`);
    return path;
  } catch (err) {
    const reason = EddyError.isInstance(err)
      ? err.message
      : ((err as NodeJS.ErrnoException).code ?? String(err));
    io.stderr.write(
      `eddy doctor: could not write the cache ${path} (${reason}); runs will not use this report\n`,
    );
    return undefined;
  }
}
