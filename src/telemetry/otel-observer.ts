/**
 * OpenTelemetry spans of a run, built by observing its frames and nothing else: a frame observer
 * (pass it as `onFrame`, or call it for each frame you iterate) that turns a run into one
 * `invoke_agent` span, a `chat {model}` span per model request (all its retries inside, as the
 * GenAI conventions ask) and an `execute_tool {name}` span per tool call, with the GenAI
 * attributes (src/telemetry/genai.ts, src/telemetry/run-trace.ts). Because frames are the only input, the same observer fed a
 * tape's frames traces a past run.
 *
 * `@opentelemetry/api` is an optional peer dependency: eddy never imports it unless a program asks
 * for an observer, and with no tracer provider registered (or a run not sampled) the observer
 * compares one string per frame and does nothing else.
 *
 * Content — prompts, instructions, answers, tool arguments and outputs — is recorded only with
 * `captureContent`, and every value is bounded (8 KiB a string, 128 items an array by default:
 * src/telemetry/limits.ts). Secrets are never recorded: frames carry none by construction (keys travel in
 * headers, which frames do not hold), and the observer reads nothing but frames.
 */
import type { Context, Tracer } from "@opentelemetry/api";
import { EddyError } from "../errors.js";
import type { Frame } from "../frames/frame.js";
import { importPackage } from "../util/import-package.js";
import { EDDY_VERSION } from "../version.js";
import { attributeLimitsOf } from "./limits.js";
import { type RunTrace, startRun, type TraceShared } from "./run-trace.js";

/** Sees every frame of one or more runs (frames of different runs are told apart by `run_id`). */
export type OtelFrameObserver = (frame: Frame) => void;

/** Options of the OpenTelemetry observer. */
export interface OtelObserverOptions {
  /** The tracer spans are made with. @defaultValue `trace.getTracer("eddy", EDDY_VERSION)` (the global tracer provider) */
  tracer?: Tracer;
  /**
   * Record prompts, instructions, answers, tool arguments and tool outputs as span attributes
   * (`gen_ai.input.messages`, `gen_ai.output.messages`, `gen_ai.tool.call.arguments`, …).
   * @defaultValue false
   */
  captureContent?: boolean;
  /** `gen_ai.provider.name` (and `gen_ai.system`), e.g. `openai`. @defaultValue "openresponses" */
  providerName?: string;
  /** `gen_ai.agent.name`; the run span is then named `invoke_agent {agentName}`. @defaultValue none */
  agentName?: string;
  /** The context the run span is a child of. @defaultValue the active context when `run_started` is seen */
  parentContext?: Context;
  /**
   * Longest string attribute value, in characters (each string of an array, and a span's status
   * message, too); a longer one is cut, ending with `…`, a JSON-valued one kept JSON
   * (src/telemetry/limits.ts). 0 records every string empty; `Infinity` keeps everything.
   * @defaultValue 8192
   */
  attributeValueLengthLimit?: number;
  /** Most items an array attribute keeps. `Infinity` keeps every one. @defaultValue 128 */
  attributeArrayLengthLimit?: number;
}

/** The parts of `@opentelemetry/api` the observer uses. */
export type OtelApi = Pick<
  typeof import("@opentelemetry/api"),
  "trace" | "context" | "SpanKind" | "SpanStatusCode"
>;

/** Loads `@opentelemetry/api` (an optional peer dependency) and returns the observer. */
export async function createOtelObserver(options: OtelObserverOptions = {}): Promise<OtelFrameObserver> {
  let api: OtelApi;
  try {
    api = await importPackage<OtelApi>("@opentelemetry/api");
  } catch (err) {
    throw new EddyError(
      "invalid_config",
      "OpenTelemetry tracing needs the @opentelemetry/api package: npm install @opentelemetry/api",
      { fault: "user", cause: err },
    );
  }
  return createOtelObserverFromApi(api, options);
}

/** The observer over an `@opentelemetry/api` module the caller already imported. */
export function createOtelObserverFromApi(
  api: OtelApi,
  options: OtelObserverOptions = {},
): OtelFrameObserver {
  const provider = options.providerName ?? "openresponses";
  const shared: TraceShared = {
    api,
    tracer: options.tracer ?? api.trace.getTracer("eddy", EDDY_VERSION),
    provider,
    content: options.captureContent === true,
    options,
    // Checked here: a bad bound is refused when the observer is made, not at a run's first span.
    limits: attributeLimitsOf(options),
  };
  // A run that is not recorded (no tracer provider, or not sampled) maps to null.
  const runs = new Map<string, RunTrace | null>();
  // Frames come in runs of the same run_id: the last lookup is kept, so the hot path is one
  // string comparison per frame.
  let lastId = "";
  let last: RunTrace | null | undefined;

  return (frame) => {
    const type = frame.type;
    if (type === "run_started") {
      const trace = startRun(shared, frame);
      const recording = trace.span.isRecording();
      if (!recording) trace.span.end();
      runs.set(frame.run_id, recording ? trace : null);
      lastId = frame.run_id;
      last = recording ? trace : null;
      return;
    }
    if (frame.run_id !== lastId) {
      lastId = frame.run_id;
      last = runs.get(lastId);
    }
    last?.observe(frame);
    if (type === "run_ended") {
      runs.delete(lastId);
      last = undefined;
    }
  };
}
