/**
 * `POST /responses`: validate the body, resolve the conversation, let `turn.ts` pick the turn and
 * plan the answer (scenario or demo model, tool policy), and answer as JSON or as an SSE stream
 * with the turn's faults. The turn counter advances only for requests that reach the model: a body
 * refused with 400, an unknown `previous_response_id` (404) or an input over the scenario's
 * `contextWindow` (400 `context_length_exceeded`) does not use up a turn.
 */
import type { JsonObject, ResponseResource } from "../protocol/types.js";
import { parseJsonObject } from "../util/json.js";
import { type ResponseEventsOptions, responseEvents, terminalResource } from "./events.js";
import { errorEventPayload, type MockFaults } from "./faults.js";
import { invalidRequest, jsonResponse } from "./http-error.js";
import type { IdGenerator } from "./ids.js";
import { assignIds } from "./plan.js";
import type { MockRequestLog } from "./recording.js";
import { type MockRequestBody, parseCreateBody } from "./request.js";
import type { Scenario } from "./scenario.js";
import { type Conversation, type ResponseStore, resolveConversation } from "./state.js";
import { connectionDropped, createSseBody, type StreamOutcome } from "./stream-writer.js";
import { toolPolicy } from "./tool-policy.js";
import { decideTurn } from "./turn.js";

/** The server state a request works with. */
export interface CreateContext {
  store: ResponseStore;
  ids: IdGenerator;
  scenario: Scenario | undefined;
  /** Hands out the next turn number. */
  nextTurn: () => number;
  /** The turn number `nextTurn` would hand out, without taking it. */
  peekTurn: () => number;
  /** Milliseconds since the epoch. */
  clock: () => number;
  /** Aborted when the server closes or the client goes away. */
  signal: AbortSignal;
  /** Headers every answer carries (`x-request-id`). */
  headers: Record<string, string>;
}

/** What the log line needs; filled in as the request goes. */
export type CreateInfo = Pick<MockRequestLog, "model" | "turn" | "stream" | "responseId" | "faults">;

/** The answer, and a promise of how it ended (a stream ends later than the `Response` is returned). */
export interface CreateResult {
  response: Response;
  ended: Promise<StreamOutcome | "answered">;
}

const SSE_HEADERS = { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" };

/** Answers one `POST /responses` (see the module comment). Refusals are thrown as HTTP problems. */
export async function createResponse(
  text: string,
  ctx: CreateContext,
  info: CreateInfo,
): Promise<CreateResult> {
  const body = parseCreateBody(text);
  info.model = body.model;
  info.stream = body.stream === true;
  const policy = toolPolicy(body);
  const conversation = resolveConversation(ctx.store, body);
  const decision = await decideTurn({ api: "responses", body, sent: body, conversation, policy }, ctx, info);
  if (decision.kind === "answered") return answered(decision.response);
  if (decision.kind === "raw") return rawAnswer(decision.raw, decision.faults, body, conversation, ctx, info);
  const { plan, faults } = decision;
  const options: ResponseEventsOptions = {
    plan: assignIds(plan, ctx.ids),
    body,
    responseId: ctx.ids.next("resp"),
    createdAt: seconds(ctx.clock()),
    now: () => seconds(ctx.clock()),
    context: conversation.context,
  };
  info.responseId = options.responseId;
  const keep = (resource: ResponseResource) => {
    if (body.store !== false) ctx.store.put({ resource, context: conversation.context });
  };
  if (body.stream !== true) {
    const events = responseEvents(options);
    let next = events.next();
    while (next.done !== true) next = events.next();
    return jsonAnswer(next.value, faults, keep, ctx);
  }
  const fail = (done: ResponseResource["output"], error: { code: string; message: string }) => {
    const resource = terminalResource(options, done, error);
    keep(resource);
    return resource;
  };
  return streamAnswer(keepTerminal(responseEvents(options), keep), faults, fail, ctx);
}

/** A replayed capture (`rawEvents`): sent exactly; its last terminal snapshot is stored. */
function rawAnswer(
  raw: Array<JsonObject | string>,
  faults: MockFaults,
  body: MockRequestBody,
  conversation: Conversation,
  ctx: CreateContext,
  info: CreateInfo,
): CreateResult {
  const keep = (resource: ResponseResource) => {
    info.responseId = resource.id;
    if (body.store !== false) ctx.store.put({ resource, context: conversation.context });
  };
  const objects = raw.map((e) => (typeof e === "string" ? parseJsonObject(e) : e));
  if (body.stream !== true) {
    const last = objects.filter(isLifecycle).pop();
    if (last === undefined)
      throw invalidRequest(
        "Scenario rawEvents hold no response.* event to answer a non-streaming request with.",
        null,
        "scenario_mismatch",
      );
    return jsonAnswer(last.response as ResponseResource, faults, keep, ctx);
  }
  function* events() {
    for (const [i, event] of raw.entries()) {
      const parsed = objects[i];
      if (parsed !== undefined && isLifecycle(parsed) && isTerminalType(parsed.type))
        keep(parsed.response as ResponseResource);
      yield event;
    }
  }
  const fail = (
    done: ResponseResource["output"],
    error: { code: string; message: string },
    last?: JsonObject,
  ) =>
    last === undefined
      ? undefined
      : { ...last, status: "failed", error, output: done, usage: last.usage ?? null };
  return streamAnswer(events(), faults, fail, ctx);
}

function jsonAnswer(
  resource: ResponseResource,
  faults: MockFaults,
  keep: (resource: ResponseResource) => void,
  ctx: CreateContext,
): CreateResult {
  if (faults.dropAfterEvents !== undefined) {
    throw connectionDropped(0);
  }
  if (faults.errorEvent !== undefined) {
    return answered(jsonResponse(500, { error: errorEventPayload(faults.errorEvent) }, ctx.headers));
  }
  keep(resource);
  return answered(jsonResponse(200, resource, ctx.headers));
}

/** A streamed answer: the SSE body of `events` with the turn's faults, and how it ended. */
export function streamAnswer(
  events: Iterator<JsonObject | string, unknown>,
  faults: MockFaults,
  failedResponse: Parameters<typeof createSseBody>[0]["failedResponse"],
  ctx: CreateContext,
): CreateResult {
  let resolveEnded: (outcome: StreamOutcome) => void = () => {};
  const ended = new Promise<StreamOutcome>((resolve) => {
    resolveEnded = resolve;
  });
  const body = createSseBody({ events, faults, failedResponse, signal: ctx.signal, onEnd: resolveEnded });
  return {
    response: new Response(body, { status: 200, headers: { ...SSE_HEADERS, ...ctx.headers } }),
    ended,
  };
}

/** Stores the terminal snapshot as soon as the terminal event is produced. */
function* keepTerminal(
  events: Generator<JsonObject, ResponseResource>,
  keep: (resource: ResponseResource) => void,
): Generator<JsonObject> {
  for (let next = events.next(); next.done !== true; next = events.next()) {
    const event = next.value;
    if (isLifecycle(event) && isTerminalType(event.type)) keep(event.response as ResponseResource);
    yield event;
  }
}

/** An answer that is complete when returned (JSON or an error). */
export function answered(response: Response): CreateResult {
  return { response, ended: Promise.resolve("answered") };
}

function isLifecycle(
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

function isTerminalType(type: string): boolean {
  return type === "response.completed" || type === "response.failed" || type === "response.incomplete";
}

function seconds(ms: number): number {
  return Math.floor(ms / 1000);
}
