/**
 * `eddy run --otel` (or OTEL_EXPORTER_OTLP_ENDPOINT set): the run's GenAI spans exported over
 * OTLP/HTTP with the official OpenTelemetry packages (a tracer provider of its own, not the global
 * one; a batch span processor; the OTLP/HTTP JSON exporter). The packages are loaded only here,
 * so a run without tracing never loads them.
 *
 * Configuration follows the OpenTelemetry environment variables: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
 * (used as is), else OTEL_EXPORTER_OTLP_ENDPOINT + `/v1/traces`, else http://localhost:4318/v1/traces;
 * OTEL_EXPORTER_OTLP_(TRACES_)HEADERS (`k=v,k2=v2`); OTEL_SERVICE_NAME (default `eddy`);
 * OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true records prompts and outputs. Every string
 * attribute is at most OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT, else OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT,
 * else 8192 characters (src/cli/otel-limits.ts), every array 128 items (src/telemetry/limits.ts).
 *
 * The last flush has a budget (the command's shutdown, src/cli/shutdown.ts): a collector that
 * does not answer in time, or that refused an export, is reported in one line instead of holding
 * the exit for the exporter's own timeout.
 */
import type { SpanExporter } from "@opentelemetry/sdk-trace";
import type { Frame } from "../frames/frame.js";
import { importPackage } from "../util/import-package.js";
import { redactSecrets } from "../util/redact.js";
import { EDDY_VERSION } from "../version.js";
import type { Env } from "./config.js";

/** A running export: feed it the run's frames, then shut it down to flush. */
export interface OtelExport {
  observer: (frame: Frame) => void;
  /**
   * Flushes the spans still buffered and stops the exporter, waiting at most until `deadline` (a
   * `performance.now()` time; default: `shutdownTimeoutMs` from now). Resolves with one line
   * saying why spans may be lost (the collector did not answer in time, or refused an export),
   * else undefined. Never rejects.
   */
  shutdown(deadline?: number): Promise<string | undefined>;
  /** Where the spans go (without any credentials the URL held). */
  endpoint: string;
}

/** Options of `startOtelExport`. */
export interface OtelExportOptions {
  env: Env;
  /** Record prompts and outputs. @defaultValue OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT === "true" */
  captureContent?: boolean;
  /** `gen_ai.provider.name` (the provider profile, e.g. `openai`). @defaultValue "openresponses" */
  providerName?: string;
  /** Longest wait for the last export when `shutdown` is given no deadline. @defaultValue 5000 */
  shutdownTimeoutMs?: number;
  /** How long one export may take before it fails. @defaultValue 5000 */
  exportTimeoutMs?: number;
  /** Where a line about the configuration goes (a variable ignored or capped). @defaultValue process.stderr */
  stderr?: { write(text: string): unknown };
}

/** Whether tracing is on: the `--otel` flag, or an OTLP endpoint in the environment. */
export function otelRequested(flag: boolean | undefined, env: Env): boolean {
  return (
    flag === true ||
    nonEmpty(env.OTEL_EXPORTER_OTLP_ENDPOINT) ||
    nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)
  );
}

/** The OTLP/HTTP traces URL the environment names. */
export function tracesEndpoint(env: Env): string {
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  if (nonEmpty(traces)) return traces as string;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (nonEmpty(base)) return `${(base as string).replace(/\/+$/, "")}/v1/traces`;
  return "http://localhost:4318/v1/traces";
}

/** Parses OTLP headers (`k=v,k2=v2`, values URL-encoded). */
export function otlpHeaders(env: Env): Record<string, string> {
  const text = env.OTEL_EXPORTER_OTLP_TRACES_HEADERS ?? env.OTEL_EXPORTER_OTLP_HEADERS ?? "";
  const headers: Record<string, string> = {};
  for (const pair of text.split(",")) {
    const at = pair.indexOf("=");
    if (at <= 0) continue;
    const key = pair.slice(0, at).trim();
    const raw = pair.slice(at + 1).trim();
    let value = raw;
    try {
      value = decodeURIComponent(raw);
    } catch {}
    if (key !== "") headers[key] = value;
  }
  return headers;
}

/** Sets up the OTLP/HTTP export and returns the frame observer and its shutdown. */
export async function startOtelExport(options: OtelExportOptions): Promise<OtelExport> {
  const { env } = options;
  // OpenTelemetry, and eddy's observer of it, load only when a run exports spans.
  const [
    { TracerProvider, BatchSpanProcessor },
    { OTLPTraceExporter },
    { resourceFromAttributes },
    otel,
    { attributeValueLengthFromEnv },
  ] = await Promise.all([
    importPackage<typeof import("@opentelemetry/sdk-trace")>("@opentelemetry/sdk-trace"),
    importPackage<typeof import("@opentelemetry/exporter-trace-otlp-http")>(
      "@opentelemetry/exporter-trace-otlp-http",
    ),
    importPackage<typeof import("@opentelemetry/resources")>("@opentelemetry/resources"),
    import("../telemetry/otel-observer.js"),
    import("./otel-limits.js"),
  ]);
  const valueLength = attributeValueLengthFromEnv(env);
  for (const line of valueLength.warnings) (options.stderr ?? process.stderr).write(`${line}\n`);
  const url = tracesEndpoint(env);
  const endpoint = withoutCredentials(url);
  const headers = otlpHeaders(env);
  const exporter = watched(
    new OTLPTraceExporter({ url, headers, timeoutMillis: options.exportTimeoutMs ?? 5000 }),
    // Header values (often a key) and the URL's credentials never reach a message.
    [...Object.values(headers), ...credentialsOf(url)],
  );
  const provider = new TracerProvider({
    resource: resourceFromAttributes({
      "service.name": nonEmpty(env.OTEL_SERVICE_NAME) ? (env.OTEL_SERVICE_NAME as string) : "eddy",
      "service.version": EDDY_VERSION,
    }),
    spanProcessors: [new BatchSpanProcessor({ exporter })],
    // The SDK's own bound too (the observer bounds what it sets: src/telemetry/limits.ts), so no
    // attribute of any span of this provider is longer (docs/pitfalls.md #96). The SDK takes 0 as
    // "no limit" (with a warning per value): for a limit of 0 it is given 1, the observer's "" fits.
    spanLimits: { attributeValueLengthLimit: Math.max(1, valueLength.limit) },
  });
  const observer = await otel.createOtelObserver({
    tracer: provider.getTracer("eddy", EDDY_VERSION),
    attributeValueLengthLimit: valueLength.limit,
    captureContent:
      options.captureContent ?? env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT === "true",
    providerName: options.providerName ?? "openresponses",
  });
  const timeoutMs = options.shutdownTimeoutMs ?? 5000;
  let shutdown: Promise<string | undefined> | undefined;
  return {
    observer,
    endpoint,
    shutdown: (deadline = performance.now() + timeoutMs) => {
      shutdown ??= (async () => {
        const budgetMs = Math.max(0, Math.round(deadline - performance.now()));
        const flushed = await settlesWithin(provider.shutdown(), budgetMs);
        if (!flushed) return silentCollectorLine(endpoint, budgetMs);
        const failure = exporter.failure();
        return failure === undefined
          ? undefined
          : `eddy: could not send spans to the OTLP collector at ${endpoint}: ${failure}`;
      })();
      return shutdown;
    },
  };
}

/** The line that says a collector did not answer the last flush within `budgetMs`. */
export function silentCollectorLine(endpoint: string, budgetMs: number): string {
  return `eddy: the OTLP collector at ${endpoint} did not answer within ${Math.max(0, Math.round(budgetMs))} ms; spans of this run may be lost`;
}

/** The exporter, remembering the first export that failed (the SDK only logs it through its diag API). */
function watched(
  exporter: SpanExporter,
  secrets: readonly string[],
): SpanExporter & { failure(): string | undefined } {
  let failure: string | undefined;
  return {
    export(spans, done) {
      exporter.export(spans, (result) => {
        // ExportResultCode.SUCCESS is 0 (@opentelemetry/core, not a direct dependency).
        if (result.code !== 0)
          failure ??= redactSecrets(
            firstLine(result.error?.message ?? "the export failed"),
            secrets,
            "[redacted]",
          );
        done(result);
      });
    },
    shutdown: () => exporter.shutdown(),
    forceFlush: () => exporter.forceFlush?.() ?? Promise.resolve(),
    failure: () => failure,
  };
}

/** True when `promise` settled within `ms` (its rejection counts as settled). */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const settled = promise.then(
    () => true,
    () => true,
  );
  try {
    return await Promise.race([
      settled,
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** The URL as it may be shown: no user name or password. */
function withoutCredentials(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = "";
    parsed.password = "";
    return parsed.toString();
  } catch {
    return "(an invalid URL)";
  }
}

function credentialsOf(url: string): string[] {
  try {
    const { username, password } = new URL(url);
    return [username, password, decodeURIComponent(password)].filter((v) => v.length >= 4);
  } catch {
    return [];
  }
}

function firstLine(text: string): string {
  return (text.split("\n", 1)[0] ?? "").slice(0, 200);
}

function nonEmpty(value: string | undefined): boolean {
  return value !== undefined && value.trim() !== "";
}
