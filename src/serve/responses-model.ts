/**
 * The agent as an Open Responses model: the `ResponseModel` the Open Responses face of `eddy serve`
 * plugs into the mock's protocol server (src/mock/create-response.ts). Each create request is one
 * run of the agent loop (`runAgent`) with the SERVER's provider, tools and policy, from a RunSpec
 * built out of the request: the conversation (the `previous_response_id` chain resolved by the
 * protocol server, then the new input) as `input`, `instructions`, `tool_choice`,
 * `parallel_tool_calls`, `max_tool_calls`, sampling settings, and the model — the request's, or
 * the server's own for `model: "eddy"`.
 *
 * The response's output is what the loop produced, in order: a message's or reasoning item's text
 * and a function call's arguments as the upstream streams them and,
 * after each call of a server tool, its `function_call_output` — eddy's tools act as hosted
 * tools, their call and output both in the output, both standard spec items (docs/decisions.md,
 * "The Open Responses face"). A call to a function the client declared ends the run; the
 * response completes with that `function_call` for the client to answer. A run that fails ends
 * the response `failed`; one that stops at a limit ends it `incomplete` (the reason is the
 * run's, or the upstream's: `max_output_tokens`). The request's `max_output_tokens` bounds the
 * response, not each upstream request (`outputBudget`). The run is cancelled when the client
 * goes away. Each run is recorded as a tape in the server's data folder,
 * `DATA/responses/RESPONSE-ID_….tape` (its name begins with the id of the response it answered),
 * for `eddy replay` and `eddy view`.
 */
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { fileTapeStore, type TapeStore, type TapeWriter } from "../batch/tape-store.js";
import type { Frame, ItemDoneFrame, ProviderEventFrame, RunEndedFrame } from "../frames/frame.js";
import type { RunDeps, RunResult } from "../loop/options.js";
import type { PrepareTurn } from "../loop/prepare-turn.js";
import { runAgent } from "../loop/run.js";
import {
  mergeRunSpecs,
  type PartialRunSpec,
  type RunSpec,
  resolveRunSpec,
  withinBudgets,
} from "../loop/run-spec.js";
import type { ModelRequest, ResponseModel } from "../mock/create-response.js";
import {
  createEventWriter,
  type EventWriter,
  type LiveFunctionCall,
  type LiveMessage,
  type LiveReasoning,
  terminalResource,
} from "../mock/events.js";
import { httpProblem, invalidRequest, problemOf, tooManyRequests } from "../mock/http-error.js";
import type { ReadyItem, TurnPlan } from "../mock/plan.js";
import type { ItemField, JsonObject, StreamingEvent } from "../protocol/types.js";
import { TapeWriteGuard } from "../replay/recorder.js";
import { redactSecrets } from "../util/redact.js";
import { type ClientTools, clientTools } from "./client-tools.js";
import { depsOf, runDeadline, type ServeRuntime, tapeHeaderOf, withServerInstructions } from "./runs.js";

/** The model name that means "the server's own model". */
export const SERVER_MODEL = "eddy";

/** Request settings passed through to the upstream request as they are. */
const PASSED = [
  "temperature",
  "top_p",
  "presence_penalty",
  "frequency_penalty",
  "max_output_tokens",
  "reasoning",
  "text",
] as const;

/** Run end reasons that fail the response (the others complete it, or leave it incomplete). */
const FAILED = new Set(["failed", "provider_error", "invalid_request", "cancelled"]);

/**
 * Counts the face's runs going on, against its own cap: a response is one client request (a
 * client sends many at once, as to any model), not one of the server's background runs.
 */
export interface FaceRuns {
  open: number;
  /** Most runs going on at once; one more is refused with 429 and `Retry-After`. */
  max: number;
}

/** Responses running at once on the face, by default. */
export const FACE_MAX_RESPONSES = 32;

/** The agent behind the face (see the module comment). */
export function agentModel(
  runtime: ServeRuntime,
  runs: FaceRuns = { open: 0, max: FACE_MAX_RESPONSES },
): ResponseModel {
  /** Where the face's runs are recorded (made with the first response; again after a failure). */
  let store: TapeStore | undefined;
  const tapes = () => {
    store ??= (runtime.tapeStore ?? fileTapeStore)(join(runtime.dataDir, "responses"), runtime.secrets ?? []);
    return store;
  };
  return async (request) => {
    const max = runs.max;
    if (runs.open >= max)
      throw tooManyRequests(
        "too_many_responses",
        `this server answers at most ${max} responses at once; retry when one has ended`,
        2,
      );
    const server = runtime.tools();
    let tools: ClientTools;
    let spec: RunSpec;
    try {
      tools = clientTools(request.body, server, runtime.policy);
      spec = specOf(runtime, request, tools);
    } catch (err) {
      await server.dispose().catch(() => {});
      throw refusal(err, runtime);
    }
    runs.open++;
    const release = () => {
      runs.open--;
      return tools.registry.dispose().catch(() => {});
    };
    const shown = withAllowedBudgets(request, spec);
    return unstartedCleanup(agentEvents({ runtime, request: shown, tools, spec, tapes, release }), release);
  };
}

/**
 * The request as its response reports it: a `max_output_tokens` or `max_tool_calls` above the
 * server's runs under the server's (`specOf`), and the response's fields of those names — in the
 * spec, what the model "was allowed" — carry the value the run had, not the one asked for. Here a
 * request is lowered, not refused as on `POST /v1/runs`: both fields are upper bounds clients send
 * generously (docs/decisions.md #41).
 */
function withAllowedBudgets(request: ModelRequest, spec: RunSpec): ModelRequest {
  const { body } = request;
  const lowered: { max_output_tokens?: number; max_tool_calls?: number } = {};
  const tokens = spec.request.max_output_tokens;
  if (
    typeof body.max_output_tokens === "number" &&
    typeof tokens === "number" &&
    tokens < body.max_output_tokens
  )
    lowered.max_output_tokens = tokens;
  if (typeof body.max_tool_calls === "number" && spec.max_tool_calls < body.max_tool_calls)
    lowered.max_tool_calls = spec.max_tool_calls;
  return Object.keys(lowered).length === 0 ? request : { ...request, body: { ...body, ...lowered } };
}

/**
 * `events`, with `release` called when it is stopped before its first event was asked for (a
 * client gone before the stream began): the run never started, so nothing else would release it.
 */
function unstartedCleanup(
  events: AsyncGenerator<StreamingEvent>,
  release: () => Promise<void>,
): AsyncIterator<StreamingEvent> {
  let started = false;
  return {
    next() {
      started = true;
      return events.next();
    },
    async return() {
      if (!started) {
        started = true;
        await release();
      }
      return events.return(undefined);
    },
  };
}

/** The run's spec: the server's, with what the request may set merged over it. */
function specOf(runtime: ServeRuntime, request: ModelRequest, tools: ClientTools): RunSpec {
  const { body, conversation } = request;
  if (conversation.context.length === 0) throw invalidRequest("input: give at least one item", "input");
  const base = runtime.spec ?? {};
  const over: PartialRunSpec = { input: conversation.context.map(asInput) as PartialRunSpec["input"] };
  if (body.model !== SERVER_MODEL) over.model = body.model;
  if (typeof body.instructions === "string") over.instructions = body.instructions;
  if (body.tool_choice !== undefined && body.tool_choice !== null)
    over.tool_choice = body.tool_choice as PartialRunSpec["tool_choice"];
  if (typeof body.parallel_tool_calls === "boolean") over.parallel_tool_calls = body.parallel_tool_calls;
  if (typeof body.max_tool_calls === "number") over.max_tool_calls = body.max_tool_calls;
  if (base.tools !== undefined) over.tools = [...base.tools, ...tools.names];
  const passed: Record<string, unknown> = {};
  for (const key of PASSED) if (body[key] !== undefined && body[key] !== null) passed[key] = body[key];
  if (Object.keys(passed).length > 0) over.request = { ...base.request, ...passed };
  // The response's id first (its tape is found by it), then enough randomness to stay unique
  // across restarts of the server (which numbers its responses from 1 again).
  const run_id = `${request.responseId}_${randomUUID().replace(/-/g, "").slice(0, 16)}`;
  // A request may lower the server's budgets (max_tool_calls, max_output_tokens), never raise
  // them: one above is brought down, and the response says so (`withAllowedBudgets`).
  const merged = withinBudgets(mergeRunSpecs(base, over), base);
  return resolveRunSpec({ ...withServerInstructions(runtime, merged), run_id }, "request");
}

/** A conversation item as the input schema takes it: a reasoning item's raw `content` is dropped. */
function asInput(item: object): JsonObject {
  const fields = item as JsonObject;
  if (fields.type !== "reasoning" || !("content" in fields)) return fields;
  const { content: _content, ...rest } = fields;
  return rest;
}

/** A refusal as the HTTP problem the client gets: 403 for the policy, 400 for a bad spec, no secrets. */
function refusal(err: unknown, runtime: ServeRuntime): unknown {
  if (problemOf(err) !== undefined) return err;
  const message = redactSecrets(err instanceof Error ? err.message : String(err), runtime.secrets ?? []);
  const code = err instanceof Error && "code" in err ? String(err.code) : "invalid_request";
  const status = code === "policy_denied" ? 403 : 400;
  return httpProblem({
    status,
    error: {
      type: status === 403 ? "permission_error" : "invalid_request_error",
      code,
      message: message.slice(0, 1000),
      param: null,
    },
  });
}

interface AgentRun {
  runtime: ServeRuntime;
  request: ModelRequest;
  tools: ClientTools;
  spec: RunSpec;
  /** Where the run's tape goes (throws when that folder cannot be made). */
  tapes: () => TapeStore;
  /** Counts the run as ended and disposes its tools (once the run has ended). */
  release: () => Promise<void>;
  /** Why the response fails whatever the run's end (its tape could not be started). */
  failure?: { code: string; message: string };
}

/** The response's events as the run goes (see the module comment). */
async function* agentEvents(run: AgentRun): AsyncGenerator<StreamingEvent> {
  const { runtime, request, tools, spec } = run;
  const writer = createEventWriter(request);
  yield* writer.open();
  let tape: TapeWriter | undefined;
  // A run that cannot be recorded does not go on: the response fails naming why.
  const recording = new TapeWriteGuard((problem, error) => {
    runtime.onTapeError?.(handle.runId, error);
    const reason = redactSecrets(problem, runtime.secrets ?? []);
    run.failure = { code: "tape_failed", message: `eddy serve could not record this run's tape: ${reason}` };
    handle.cancel(run.failure.message);
  });
  const deps: RunDeps = {
    ...depsOf(runtime, tools.registry),
    signal: request.signal,
    onApproval: tools.onApproval,
    onFrame: (frame) => recording.write(() => tape?.write(frame)),
  };
  const budget = outputBudget(request, spec);
  if (budget !== undefined) deps.prepareTurn = budget;
  const handle = runAgent(spec, deps);
  // Frames flow from the next tick on: the tape is open before the first one (when it cannot be,
  // the run is cancelled before its first request).
  recording.write(() => {
    const header = tapeHeaderOf(runtime, handle.spec, { clientTools: tools.recorded });
    tape = run.tapes().open(handle.runId, header, "now");
  });
  const stop = runDeadline(runtime, handle);
  const ended = handle.result
    .catch(() => undefined)
    .finally(stop)
    .finally(() => tape?.close().catch(() => {}))
    .finally(run.release);
  const events = faceEvents(writer);
  let result: RunResult | undefined;
  let last: RunEndedFrame | undefined;
  try {
    for await (const frame of handle) {
      if (frame.type === "run_ended") last = frame;
      yield* events.of(frame);
    }
    result = await handle.result;
  } catch {
    // A run that throws ends its response failed (below); its reason is in `run_ended` if it got there.
  } finally {
    // A reader that stopped early (the client went away) stops the run.
    if (last === undefined) handle.cancel("the client went away");
  }
  yield* events.end();
  const terminal = terminalOf(run, writer, result, last);
  await ended; // the run's tools are disposed before the client hears the end (and sends the next request)
  yield writer.end(terminal);
}

/**
 * The response's `max_output_tokens` bounds the response, not each upstream request
 * (docs/pitfalls.md #125): each later request may generate what the earlier ones left of it (their
 * `usage.output_tokens`, reasoning included), and with fewer tokens left than a request may ask
 * for, none is sent and the response ends `incomplete`, `max_output_tokens` (prepare-turn.ts). An
 * upstream that reports no usage leaves the bound per request. `undefined` when the response has
 * no bound (a server's own `max_output_tokens` bounds each request, as in its other runs).
 */
function outputBudget(request: ModelRequest, spec: RunSpec): PrepareTurn | undefined {
  const bound = spec.request.max_output_tokens;
  if (typeof request.body.max_output_tokens !== "number" || typeof bound !== "number") return undefined;
  return ({ usage }) =>
    usage.output_tokens > 0 ? { max_output_tokens: Math.max(0, bound - usage.output_tokens) } : undefined;
}

/**
 * The events the run's frames add to the response: a message's text and a reasoning item's text
 * as they stream (their `output_text_delta` / `reasoning_delta` frames, the item announced at its
 * first piece), a function call's arguments as they stream (from an Open Responses upstream's
 * `output_item.added` and `function_call_arguments.delta` events, the call announced when the
 * upstream announces it), every other item when it is done, and a server tool's output when it
 * ends. `end` ends the items still streaming (incomplete).
 */
function faceEvents(writer: EventWriter): {
  of(frame: Frame): StreamingEvent[];
  end(): StreamingEvent[];
} {
  /** Items streaming, by the turn and upstream output index their frames carry. */
  const live = new Map<string, Live>();
  const abandonAll = () => {
    const events = [...live.values()].flatMap((entry) => entry.live.abandon());
    live.clear();
    return events;
  };
  /**
   * The live item of a delta frame, made at its first piece; an item of the other kind at the same
   * place (an upstream that reused an output index) is ended first, its events in `ended`.
   */
  const liveOf = (
    frame: { turn: number; output_index: number; item_id: string },
    kind: "message" | "reasoning",
  ) => {
    const key = `${frame.turn}:${frame.output_index}`;
    const found = live.get(key);
    if (found !== undefined && found.kind === kind) return { entry: found, ended: [] };
    const prefix = kind === "message" ? "msg" : "rs";
    const id = frame.item_id !== "" ? frame.item_id : `${prefix}_${randomUUID().replace(/-/g, "")}`;
    const entry: Live =
      kind === "message"
        ? { kind, id, live: writer.liveMessage(id) }
        : { kind, id, live: writer.liveReasoning(id) };
    live.set(key, entry);
    return { entry, ended: found === undefined ? [] : found.live.abandon() };
  };
  return {
    of(frame) {
      if (frame.type === "output_text_delta") {
        const { entry, ended } = liveOf(frame, "message");
        if (entry.kind === "message") ended.push(...entry.live.text(frame.content_index, frame.delta));
        return ended;
      }
      if (frame.type === "reasoning_delta") {
        const { entry, ended } = liveOf(frame, "reasoning");
        if (entry.kind === "reasoning")
          ended.push(...entry.live.text(frame.channel, frame.index, frame.delta));
        return ended;
      }
      if (frame.type === "provider_event") return callEvents(frame, live, writer);
      if (frame.type === "item_done") return itemDone(frame, live, writer);
      // A new attempt starts its output over: what an earlier one streamed ends there.
      if (frame.type === "request_started") return abandonAll();
      return toolOutputEvents(frame, writer);
    },
    end: abandonAll,
  };
}

/** An item streaming on the face. */
type Live =
  | { kind: "message"; id: string; live: LiveMessage }
  | { kind: "reasoning"; id: string; live: LiveReasoning }
  | { kind: "call"; id: string; live: LiveFunctionCall };

/**
 * A function call's live events from the upstream's own: its `output_item.added` announces the
 * call, each `function_call_arguments.delta` adds a piece. Upstream data is checked field by field
 * (a wire format whose events are not Open Responses events, as Chat Completions chunks, streams
 * nothing here: its calls go out whole when done). Another item announced at the same place ends
 * the one there.
 */
function callEvents(
  frame: ProviderEventFrame,
  live: Map<string, Live>,
  writer: EventWriter,
): StreamingEvent[] {
  const data = frame.data as {
    type?: unknown;
    output_index?: unknown;
    item?: unknown;
    delta?: unknown;
  } | null;
  if (frame.status !== "event" || typeof data !== "object" || data === null) return [];
  if (typeof data.output_index !== "number") return [];
  const key = `${frame.turn}:${data.output_index}`;
  if (data.type === "response.function_call_arguments.delta") {
    const entry = live.get(key);
    return entry?.kind === "call" && typeof data.delta === "string" ? entry.live.args(data.delta) : [];
  }
  if (data.type !== "response.output_item.added") return [];
  const item = data.item as { type?: unknown; id?: unknown; call_id?: unknown; name?: unknown } | null;
  if (typeof item !== "object" || item === null || item.type !== "function_call") return [];
  if (typeof item.call_id !== "string" || typeof item.name !== "string") return [];
  const id = typeof item.id === "string" && item.id !== "" ? item.id : `fc_${randomUUID().replace(/-/g, "")}`;
  const entry: Live = {
    kind: "call",
    id,
    live: writer.liveFunctionCall({ id, call_id: item.call_id, name: item.name }),
  };
  const ended = live.get(key)?.live.abandon() ?? [];
  live.set(key, entry);
  return [...ended, ...entry.live.start()];
}

/** An upstream item is final: it ends its live form, or goes out whole. */
function itemDone(frame: ItemDoneFrame, live: Map<string, Live>, writer: EventWriter): StreamingEvent[] {
  const key = `${frame.turn}:${frame.output_index}`;
  const entry = live.get(key);
  live.delete(key);
  const ready = readyItem(frame.item);
  if (entry?.kind === "message" && ready?.type === "message")
    return entry.live.done({ ...ready, id: entry.id });
  if (entry?.kind === "reasoning" && ready?.type === "reasoning")
    return entry.live.done({ ...ready, id: entry.id });
  if (entry?.kind === "call" && ready?.type === "function_call")
    return entry.live.done({ ...ready, id: entry.id });
  const done = ready === undefined ? writer.finished(frame.item as unknown as ItemField) : writer.item(ready);
  return entry === undefined ? done : [...entry.live.abandon(), ...done];
}

/** The events of a server tool's output. */
function toolOutputEvents(frame: Frame, writer: EventWriter): StreamingEvent[] {
  if (frame.type === "tool_ended")
    return writer.finished({
      type: "function_call_output",
      id: `fco_${frame.call_id.replace(/[^A-Za-z0-9_-]/g, "").slice(0, 64)}`,
      call_id: frame.call_id,
      output: frame.output,
      status: "completed",
    });
  return [];
}

/** An upstream item the mock's event writer streams part by part; `undefined` for any other type. */
function readyItem(item: JsonObject): ReadyItem | undefined {
  const id = typeof item.id === "string" && item.id !== "" ? item.id : `item_${randomUUID()}`;
  const texts = (list: unknown) =>
    Array.isArray(list) ? list.map((p) => String((p as { text?: unknown }).text ?? "")) : [];
  switch (item.type) {
    case "message": {
      const parts = (Array.isArray(item.content) ? item.content : []).map((p) => {
        const part = p as { type?: unknown; text?: unknown; refusal?: unknown };
        return part.type === "refusal"
          ? { type: "refusal" as const, refusal: String(part.refusal ?? "") }
          : { type: "output_text" as const, text: String(part.text ?? "") };
      });
      const phase = item.phase === "commentary" || item.phase === "final_answer" ? item.phase : undefined;
      return { type: "message", id, parts, ...(phase === undefined ? {} : { phase }) };
    }
    case "function_call":
      return {
        type: "function_call",
        id,
        call_id: String(item.call_id ?? ""),
        name: String(item.name ?? ""),
        arguments: String(item.arguments ?? ""),
      };
    case "reasoning":
      return {
        type: "reasoning",
        id,
        summary: texts(item.summary),
        content: texts(item.content),
        ...(typeof item.encrypted_content === "string" ? { encrypted_content: item.encrypted_content } : {}),
      };
    default:
      return undefined;
  }
}

/** The terminal resource of the run's response (see the module comment for the status). */
function terminalOf(
  run: AgentRun,
  writer: EventWriter,
  result: RunResult | undefined,
  ended: RunEndedFrame | undefined,
) {
  const { request, runtime } = run;
  const reason = result?.reason ?? ended?.reason ?? "cancelled";
  const usage = result?.usage ?? ended?.usage;
  const plan: TurnPlan = { items: [], status: "completed" };
  if (usage !== undefined && usage !== null)
    plan.usage = {
      input_tokens: usage.input_tokens,
      output_tokens: usage.output_tokens,
      cached_tokens: usage.input_tokens_details?.cached_tokens ?? 0,
      reasoning_tokens: usage.output_tokens_details?.reasoning_tokens ?? 0,
    };
  if (run.failure !== undefined) {
    plan.status = "failed";
    plan.error = run.failure;
  } else if (FAILED.has(reason)) {
    plan.status = "failed";
    const error = result?.error ?? ended?.error;
    const message = error?.message ?? (reason === "cancelled" ? "the run was cancelled" : "the run failed");
    plan.error = {
      code: error?.code ?? reason,
      message: redactSecrets(message, runtime.secrets ?? []).slice(0, 2000),
    };
  } else if (reason !== "completed" && reason !== "terminal_tool" && reason !== "awaiting_approval") {
    plan.status = "incomplete";
    // A response the upstream left incomplete, or whose output budget ran out, names why
    // (`max_output_tokens`, `content_filter`: the run's error code); a limit of the run's is its reason.
    const code = (result?.error ?? ended?.error)?.code;
    plan.incompleteReason = reason === "incomplete" && code !== undefined ? code : reason;
  }
  const options = { ...request, plan: { ...plan, items: [] }, context: request.conversation.context };
  return terminalResource(options, writer.output);
}
