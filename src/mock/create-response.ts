/**
 * `POST /responses`: validate the body, resolve the conversation (a WebSocket connection's own cache
 * first), let `turn.ts` pick the turn and plan the answer (scenario or demo model, tool policy), and
 * answer as JSON or as an SSE stream with the turn's faults; `prepareResponse` is everything but the
 * transport, shared with WebSocket mode (`websocket-session.ts`). The turn counter advances only for
 * requests that reach the model: a body refused with 400, an unknown `previous_response_id` (404) or
 * an input over the scenario's `contextWindow` (400 `context_length_exceeded`) does not use up a turn.
 */
import type { JsonObject, ResponseResource } from "../protocol/types.js";
import { parseJsonObject } from "../util/json.js";
import { type ResponseEventsOptions, responseEvents, terminalResource } from "./events.js";
import { errorEventPayload, httpErrorReply, type MockFaults } from "./faults.js";
import { invalidRequest, jsonReply } from "./http-error.js";
import type { IdGenerator } from "./ids.js";
import { assignIds } from "./plan.js";
import type { MockRequestLog } from "./recording.js";
import type { MockReply } from "./reply.js";
import { checkCreateBody, type MockRequestBody, parseJsonBody, type RequestConformance } from "./request.js";
import type { Scenario } from "./scenario.js";
import { type Conversation, layeredStore, type ResponseStore, resolveConversation } from "./state.js";
import {
  connectionDropped,
  createSseBody,
  type SseBodyOptions,
  type StreamOutcome,
} from "./stream-writer.js";
import { toolPolicy } from "./tool-policy.js";
import { decideTurn, type TurnDecision } from "./turn.js";

/** The server state a request works with. */
export interface CreateContext {
  store: ResponseStore;
  /**
   * A WebSocket connection's own cache: `previous_response_id` is looked up here first, and
   * `store: false` responses are kept here (only this connection can continue them).
   */
  connection?: ResponseStore;
  ids: IdGenerator;
  scenario: Scenario | undefined;
  /** Hands out the next turn number. */
  nextTurn: () => number;
  /** The turn number `nextTurn` would hand out, without taking it. */
  peekTurn: () => number;
  /** Milliseconds since the epoch. */
  clock: () => number;
  /** Short forms rewritten to the spec's form, or refused (`MockOptions.conformance`). */
  conformance: RequestConformance;
  /** Aborted when the server closes or the client goes away. */
  signal: AbortSignal;
  /** Headers every answer carries (`x-request-id`). */
  headers: Record<string, string>;
  /**
   * Answers instead of the scenario or the demo model (`MockOptions.model`: the agent behind
   * `eddy serve`). @defaultValue none
   */
  model?: ResponseModel;
}

/** The events of a response, in order: objects are JSON-encoded, strings sent verbatim. */
export type EventSource =
  | Iterator<JsonObject | string, unknown>
  | AsyncIterator<JsonObject | string, unknown>;

/** One checked request as a pluggable model gets it: its body, conversation and response id. */
export interface ModelRequest {
  body: MockRequestBody;
  conversation: Conversation;
  responseId: string;
  /** Unix seconds. */
  createdAt: number;
  /** Unix seconds, now. */
  now: () => number;
  /** Aborted when the server closes or the client goes away. */
  signal: AbortSignal;
}

/**
 * A model other than the scenario or demo one: the spec-valid events of its response (ending
 * with exactly one terminal event), produced as they happen. It may throw an HTTP problem
 * (`http-error.ts`) before the first event to refuse the request.
 */
export type ResponseModel = (request: ModelRequest) => Promise<EventSource>;

/** What the log line needs; filled in as the request goes. */
export type CreateInfo = Pick<MockRequestLog, "model" | "turn" | "stream" | "responseId" | "faults">;

/** The answer, and a promise of how it ended (a stream ends later than its answer is returned). */
export interface CreateResult {
  reply: MockReply;
  ended: Promise<StreamOutcome | "answered">;
}

/** The `response.failed` snapshot an `errorEvent` fault ends a stream with (see `SseBodyOptions`). */
export type FailedResponse = SseBodyOptions["failedResponse"];

/**
 * One turn, planned and ready to be sent over any transport: either the `httpError` fault of its
 * scenario turn, or its events (lazy, produced as they are sent) with the turn's faults.
 */
export type PreparedResponse =
  | Extract<TurnDecision, { kind: "http_error" }>
  | {
      kind: "events";
      /** The events in order: objects are JSON-encoded, strings sent verbatim. */
      events: EventSource;
      faults: MockFaults;
      /** Stores a terminal snapshot as the request's `store` says (the server's store, or the connection's cache). */
      keep: (resource: ResponseResource) => void;
      fail: FailedResponse;
    };

const SSE_HEADERS = { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" };

/** Answers one `POST /responses` (see the module comment). Refusals are thrown as HTTP problems. */
export async function createResponse(
  text: string,
  ctx: CreateContext,
  info: CreateInfo,
): Promise<CreateResult> {
  const sent = parseJsonBody(text);
  const body = checkCreateBody(sent, ctx.conformance);
  info.stream = body.stream === true;
  const prepared = await prepareResponse(body, ctx, info, sent);
  if (prepared.kind === "http_error") return answered(httpErrorReply(prepared.fault, ctx.headers));
  if (body.stream !== true) return await jsonAnswer(prepared, ctx);
  const { events, faults, keep, fail } = prepared;
  return streamAnswer(keepTerminal(events, keep), faults, fail, ctx);
}

/**
 * Resolves the conversation (in the connection's cache, then the server's store), lets `decideTurn`
 * pick the turn and plan the answer, and readies its events and where their snapshot is stored:
 * everything but the transport. `sent` is the body as the client sent it, before its short forms
 * were rewritten (a scenario's `expect.body` is matched against it). Refusals are thrown as HTTP
 * problems.
 */
export async function prepareResponse(
  body: MockRequestBody,
  ctx: CreateContext,
  info: CreateInfo,
  sent: Record<string, unknown> = body,
): Promise<PreparedResponse> {
  info.model = body.model;
  const policy = toolPolicy(body);
  const lookup = ctx.connection === undefined ? ctx.store : layeredStore(ctx.connection, ctx.store);
  const conversation = resolveConversation(lookup, body);
  const target = body.store !== false ? ctx.store : ctx.connection;
  const keep = (resource: ResponseResource) => target?.put({ resource, context: conversation.context });
  if (ctx.model !== undefined) return modelResponse(ctx.model, { body, conversation, keep }, ctx, info);
  const decision = await decideTurn({ api: "responses", body, sent, conversation, policy }, ctx, info);
  if (decision.kind === "http_error") return decision;
  const { faults } = decision;
  if (decision.kind === "raw") {
    // A replayed capture is sent exactly (strings verbatim); the response id is the capture's own.
    const keepRaw = (resource: ResponseResource) => {
      info.responseId = resource.id;
      keep(resource);
    };
    return { kind: "events", events: decision.raw.values(), faults, keep: keepRaw, fail: rawFailure };
  }
  const options: ResponseEventsOptions = {
    plan: assignIds(decision.plan, ctx.ids),
    body,
    responseId: ctx.ids.next("resp"),
    createdAt: seconds(ctx.clock()),
    now: () => seconds(ctx.clock()),
    context: conversation.context,
  };
  info.responseId = options.responseId;
  const fail: FailedResponse = (done, error) => {
    const resource = terminalResource(options, done, error);
    keep(resource);
    return resource;
  };
  return { kind: "events", events: responseEvents(options), faults, keep, fail };
}

/** The events of a pluggable model (`CreateContext.model`): no faults, stored as the request's `store` says. */
async function modelResponse(
  model: ResponseModel,
  request: Pick<ModelRequest, "body" | "conversation"> & { keep: (resource: ResponseResource) => void },
  ctx: CreateContext,
  info: CreateInfo,
): Promise<PreparedResponse> {
  const responseId = ctx.ids.next("resp");
  info.responseId = responseId;
  const now = () => seconds(ctx.clock());
  const { body, conversation, keep } = request;
  const events = await model({ body, conversation, responseId, createdAt: now(), now, signal: ctx.signal });
  return { kind: "events", events, faults: {}, keep, fail: () => undefined };
}

/** The `response.failed` snapshot of a replayed capture: its last snapshot, failed. */
function rawFailure(
  done: ResponseResource["output"],
  error: { code: string; message: string },
  last?: JsonObject,
) {
  return last === undefined
    ? undefined
    : { ...last, status: "failed", error, output: done, usage: last.usage ?? null };
}

/** A non-streaming answer: the last lifecycle snapshot of the events, stored and sent as JSON. */
async function jsonAnswer(
  prepared: Extract<PreparedResponse, { kind: "events" }>,
  ctx: CreateContext,
): Promise<CreateResult> {
  const { faults } = prepared;
  if (faults.dropAfterEvents !== undefined) {
    throw connectionDropped(0);
  }
  if (faults.errorEvent !== undefined) {
    return answered(jsonReply(500, { error: errorEventPayload(faults.errorEvent) }, ctx.headers));
  }
  let last: JsonObject | undefined;
  for (let next = await prepared.events.next(); next.done !== true; next = await prepared.events.next()) {
    const event = typeof next.value === "string" ? parseJsonObject(next.value) : next.value;
    if (isLifecycle(event)) last = event.response;
  }
  if (last === undefined)
    throw invalidRequest(
      "Scenario rawEvents hold no response.* event to answer a non-streaming request with.",
      null,
      "scenario_mismatch",
    );
  const resource = last as ResponseResource;
  prepared.keep(resource);
  return answered(jsonReply(200, resource, ctx.headers));
}

/** A streamed answer: the SSE body of `events` with the turn's faults, and how it ended. */
export function streamAnswer(
  events: EventSource,
  faults: MockFaults,
  failedResponse: FailedResponse,
  ctx: CreateContext,
): CreateResult {
  let resolveEnded: (outcome: StreamOutcome) => void = () => {};
  const ended = new Promise<StreamOutcome>((resolve) => {
    resolveEnded = resolve;
  });
  const body = createSseBody({ events, faults, failedResponse, signal: ctx.signal, onEnd: resolveEnded });
  return {
    reply: { status: 200, headers: { ...SSE_HEADERS, ...ctx.headers }, body },
    ended,
  };
}

/**
 * Stores each terminal snapshot as soon as its event is produced (objects and verbatim strings
 * alike). Stopping it stops `events` too, even before the first event was asked for.
 */
export function keepTerminal(
  events: EventSource,
  keep: (resource: ResponseResource) => void,
): AsyncIterator<JsonObject | string, unknown> {
  return {
    async next() {
      const next = await events.next();
      if (next.done !== true) {
        const parsed = typeof next.value === "string" ? parseJsonObject(next.value) : next.value;
        if (isLifecycle(parsed) && isTerminalType(parsed.type)) keep(parsed.response as ResponseResource);
      }
      return next;
    },
    async return() {
      await events.return?.();
      return { done: true, value: undefined };
    },
  };
}

/** An answer that is complete when returned (JSON or an error). */
export function answered(reply: MockReply): CreateResult {
  return { reply, ended: Promise.resolve("answered") };
}

/** True for a `response.*` event carrying its response snapshot. */
export function isLifecycle(
  event: JsonObject | undefined,
): event is JsonObject & { type: string; response: JsonObject } {
  return (
    event !== undefined &&
    typeof event.type === "string" &&
    event.type.startsWith("response.") &&
    event.response !== null &&
    typeof event.response === "object"
  );
}

/** True for the three terminal event types. */
export function isTerminalType(type: string): boolean {
  return type === "response.completed" || type === "response.failed" || type === "response.incomplete";
}

function seconds(ms: number): number {
  return Math.floor(ms / 1000);
}
