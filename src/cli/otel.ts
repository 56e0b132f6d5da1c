/**
 * `eddy run --otel` (or OTEL_EXPORTER_OTLP_ENDPOINT set): the run's GenAI spans exported over
 * OTLP/HTTP with the official OpenTelemetry packages (a tracer provider of its own, not the global
 * one; a batch span processor; the OTLP/HTTP JSON exporter). The packages are loaded only here,
 * so a run without tracing never loads them.
 *
 * Configuration follows the OpenTelemetry environment variables: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
 * (used as is), else OTEL_EXPORTER_OTLP_ENDPOINT + `/v1/traces`, else http://localhost:4318/v1/traces;
 * OTEL_EXPORTER_OTLP_(TRACES_)HEADERS (`k=v,k2=v2`); OTEL_SERVICE_NAME (default `eddy`);
 * OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true records prompts and outputs.
 */
import type { Frame } from "../frames/frame.js";
import { EDDY_VERSION } from "../version.js";
import type { Env } from "./config.js";

/** A running export: feed it the run's frames, then shut it down to flush. */
export interface OtelExport {
  observer: (frame: Frame) => void;
  /** Flushes the spans still buffered and stops the exporter (bounded by `shutdownTimeoutMs`). */
  shutdown(): Promise<void>;
  /** Where the spans go. */
  endpoint: string;
}

/** Options of `startOtelExport`. */
export interface OtelExportOptions {
  env: Env;
  /** Record prompts and outputs. @defaultValue OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT === "true" */
  captureContent?: boolean;
  /** `gen_ai.provider.name` (the provider profile, e.g. `openai`). @defaultValue "openresponses" */
  providerName?: string;
  /** Longest wait for the last export when shutting down. @defaultValue 5000 */
  shutdownTimeoutMs?: number;
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
  const [{ TracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }, { resourceFromAttributes }, otel] =
    await Promise.all([
      import("@opentelemetry/sdk-trace"),
      import("@opentelemetry/exporter-trace-otlp-http"),
      import("@opentelemetry/resources"),
      import("../telemetry/otel-observer.js"),
    ]);
  const endpoint = tracesEndpoint(env);
  const exporter = new OTLPTraceExporter({ url: endpoint, headers: otlpHeaders(env), timeoutMillis: 5000 });
  const provider = new TracerProvider({
    resource: resourceFromAttributes({
      "service.name": nonEmpty(env.OTEL_SERVICE_NAME) ? (env.OTEL_SERVICE_NAME as string) : "eddy",
      "service.version": EDDY_VERSION,
    }),
    spanProcessors: [new BatchSpanProcessor({ exporter })],
  });
  const observer = await otel.createOtelObserver({
    tracer: provider.getTracer("eddy", EDDY_VERSION),
    captureContent:
      options.captureContent ?? env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT === "true",
    providerName: options.providerName ?? "openresponses",
  });
  const timeoutMs = options.shutdownTimeoutMs ?? 5000;
  return {
    observer,
    endpoint,
    shutdown: async () => {
      let timer: NodeJS.Timeout | undefined;
      // A collector that is down must not hold the CLI's exit longer than the timeout.
      await Promise.race([
        provider.shutdown().catch(() => {}),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, timeoutMs);
          timer.unref();
        }),
      ]);
      clearTimeout(timer);
    },
  };
}

function nonEmpty(value: string | undefined): boolean {
  return value !== undefined && value.trim() !== "";
}
