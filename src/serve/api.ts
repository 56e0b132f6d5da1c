/**
 * The HTTP API of `eddy serve` as data: every route (method, path template, what it takes and
 * answers) and the zod schemas of the bodies the handler validates. The handler routes by this
 * table and `/openapi.json` is generated from it, so the description cannot drift from the server.
 */
import { z } from "zod";

/** `POST /v1/runs/ID/decisions`. */
export const decisionBody = z
  .object({
    call_id: z
      .string()
      .min(1)
      .max(256)
      .describe("The id of a call awaiting approval (run_ended.pending_calls)"),
    decision: z.enum(["allow", "deny"]),
  })
  .strict();

/** `POST /v1/runs/ID/steer` and `POST /v1/threads/NAME/steer`. */
export const steerBody = z
  .object({
    message: z
      .string()
      .min(1)
      .max(100_000)
      .refine((m) => m.trim() !== "", "the message is blank")
      .describe("What the model reads as a user message at the run's next turn boundary"),
  })
  .strict();

/** `POST /v1/threads/NAME/messages`: the message, and any run settings (a partial RunSpec's fields). */
export const messageBody = z
  .object({ input: z.string().min(1).describe("The message: the run's prompt") })
  .catchall(z.unknown());

/** A run as `GET /v1/runs/ID` shows it. */
export const runView = z.object({
  id: z.string(),
  status: z
    .string()
    .describe(
      "running, interrupted (the server died mid-run), or the run_ended reason: completed, cancelled, awaiting_approval, …",
    ),
  created_at: z.number().int(),
  model: z.string().nullable(),
  thread: z.string().nullable(),
  events: z.number().int().describe("Events recorded so far (GET /v1/runs/ID/events)"),
  usage: z.object({}).catchall(z.unknown()).nullable(),
  turns: z.number().int(),
  tool_calls: z.number().int(),
  output_text: z.string(),
  result: z.unknown().optional(),
  error: z.object({ code: z.string(), message: z.string() }).optional(),
  pending_calls: z.array(z.string()).optional(),
  undelivered_steering: z
    .array(z.string())
    .optional()
    .describe(
      "Steering messages the run accepted (POST /v1/runs/ID/steer) but ended before sending: it was cancelled, hit a limit, failed or waits for approval before its next turn boundary",
    ),
});

/** The answer of a request that started or changed a run. */
export const runStatus = z.object({ id: z.string(), status: z.string() });

/** Every error answer: `{error: {type, code, message, param}}` (the Open Responses error shape). */
export const errorBody = z.object({
  error: z.object({
    type: z.string(),
    code: z.string().nullable(),
    message: z.string(),
    param: z.string().nullable(),
  }),
});

/** What a route takes as its body. */
export type RouteBody = "run_spec" | "decision" | "message" | "steer" | "responses";

/** One route of the API. */
export interface RouteInfo {
  method: "GET" | "POST";
  /** With `{id}` / `{name}` parameters. */
  path: string;
  operationId: string;
  summary: string;
  body?: RouteBody;
  /** Status → what the answer holds. */
  responses: Record<string, { description: string; schema?: z.ZodType | "run_spec"; sse?: boolean }>;
}

const errors = {
  "400": { description: "The request is invalid (the message names the field)", schema: errorBody },
  "401": { description: "No or wrong bearer token", schema: errorBody },
} as const;
const notFound = { "404": { description: "No such run", schema: errorBody } } as const;
/** A run's start: a budget above the server's is refused too, never lowered (docs/decisions.md #41). */
const startErrors = {
  ...errors,
  "400": {
    description:
      "The request is invalid (the message names the field), or asks a budget above the server's (code budget_above_limit; the message names the field and the limit)",
    schema: errorBody,
  },
} as const;

/** Every route the handler serves. */
export const ROUTES: readonly RouteInfo[] = [
  {
    method: "POST",
    path: "/v1/runs",
    operationId: "startRun",
    summary: "Start a run from a partial RunSpec (merged over the server's; the server's policy decides)",
    body: "run_spec",
    responses: {
      "201": { description: "Started", schema: runStatus },
      ...startErrors,
      "403": { description: "The run needs more than the server's policy allows", schema: errorBody },
      "413": { description: "The body is too large", schema: errorBody },
      "429": { description: "Too many runs at once (see Retry-After)", schema: errorBody },
    },
  },
  {
    method: "GET",
    path: "/v1/runs",
    operationId: "listRuns",
    summary: "The server's runs, newest first (those recorded before a restart too)",
    responses: {
      "200": { description: "The runs", schema: z.object({ data: z.array(runView) }) },
      ...errors,
    },
  },
  {
    method: "GET",
    path: "/v1/runs/{id}",
    operationId: "getRun",
    summary: "A run: status, usage, result",
    responses: { "200": { description: "The run", schema: runView }, ...errors, ...notFound },
  },
  {
    method: "GET",
    path: "/v1/runs/{id}/events",
    operationId: "runEvents",
    summary:
      "The run's frames as SSE: one event per frame (event = frame type, id = position = the frame's seq); Last-Event-ID resumes after it",
    responses: {
      "200": { description: "text/event-stream of frames", sse: true },
      ...errors,
      ...notFound,
      "429": { description: "Too many watchers", schema: errorBody },
    },
  },
  {
    method: "POST",
    path: "/v1/runs/{id}/cancel",
    operationId: "cancelRun",
    summary: "Cancel a running run (it ends cancelled, its tape recorded)",
    responses: {
      "200": { description: "Cancelled: the run's final status, its tape closed", schema: runStatus },
      "202": { description: "Cancelling: the run had not ended within a second", schema: runStatus },
      ...errors,
      ...notFound,
      "409": { description: "The run is not running", schema: errorBody },
    },
  },
  {
    method: "POST",
    path: "/v1/runs/{id}/decisions",
    operationId: "decideCall",
    summary: "Decide a deferred approval; the run goes on once every pending call is decided",
    body: "decision",
    responses: {
      "202": { description: "Recorded", schema: runStatus.extend({ pending_calls: z.array(z.string()) }) },
      ...errors,
      ...notFound,
      "409": { description: "The run is not awaiting approval", schema: errorBody },
    },
  },
  {
    method: "POST",
    path: "/v1/runs/{id}/steer",
    operationId: "steerRun",
    summary:
      "Steer a running run: the message reaches the model as a user message at the next turn boundary (after the calls of the turn going on; a run about to complete goes on with it); a steered frame records it",
    body: "steer",
    responses: {
      "202": { description: "Queued for the next turn boundary", schema: runStatus },
      ...errors,
      ...notFound,
      "409": { description: "The run is not running", schema: errorBody },
      "413": { description: "The body is too large", schema: errorBody },
      "429": { description: "Too many steering messages waiting", schema: errorBody },
    },
  },
  {
    method: "POST",
    path: "/v1/runs/{id}/resume",
    operationId: "resumeRun",
    summary:
      "Resume a run listed interrupted (the server died mid-run) from its tape, under the server's policy: a call that had started is answered as interrupted, not run again (unless idempotent); its new events follow on the same events stream",
    responses: {
      "202": { description: "Resumed", schema: runStatus },
      ...errors,
      ...notFound,
      "403": { description: "Its tools need more than the server's policy allows", schema: errorBody },
      "409": { description: "The run is not interrupted", schema: errorBody },
      "429": { description: "Too many runs at once (see Retry-After)", schema: errorBody },
    },
  },
  {
    method: "GET",
    path: "/v1/threads",
    operationId: "listThreads",
    summary: "The threads of the server's workspace",
    responses: {
      "200": {
        description: "The threads",
        schema: z.object({
          data: z.array(
            z.object({
              name: z.string(),
              runs: z.number(),
              updated: z.number(),
              problem: z.string().optional().describe("Set when the thread's log cannot be read"),
            }),
          ),
        }),
      },
      ...errors,
    },
  },
  {
    method: "GET",
    path: "/v1/threads/{name}",
    operationId: "getThread",
    summary: "One thread: its runs' prompts and outcomes",
    responses: {
      "200": { description: "The thread", schema: z.object({}).catchall(z.unknown()) },
      ...errors,
      "404": { description: "No such thread", schema: errorBody },
    },
  },
  {
    method: "POST",
    path: "/v1/threads/{name}/messages",
    operationId: "sendMessage",
    summary:
      "Send a message on a thread (a session turn): a run on the thread, its context compiled from the earlier ones",
    body: "message",
    responses: {
      "201": { description: "Started", schema: runStatus },
      ...startErrors,
      "403": { description: "Beyond the server's policy", schema: errorBody },
      "409": { description: "A run on this thread is going on", schema: errorBody },
      "429": { description: "Too many runs at once", schema: errorBody },
    },
  },
  {
    method: "POST",
    path: "/v1/threads/{name}/steer",
    operationId: "steerThread",
    summary: "Steer the run going on on a thread (a session's running turn), as POST /v1/runs/{id}/steer",
    body: "steer",
    responses: {
      "202": { description: "Queued for the next turn boundary", schema: runStatus },
      ...errors,
      "409": { description: "No run on this thread is going on", schema: errorBody },
      "429": { description: "Too many steering messages waiting", schema: errorBody },
    },
  },
  {
    method: "GET",
    path: "/openapi.json",
    operationId: "openapi",
    summary: "This document",
    responses: { "200": { description: "OpenAPI 3.1" }, "401": errors["401"] },
  },
];

/**
 * The Open Responses face's routes (src/serve/responses.ts), listed in `/openapi.json` beside the
 * runs API. The face routes them itself (it is the mock's protocol server with the agent loop as its
 * model); `matchRoute` does not. WebSocket mode is an upgrade of `GET /v1/responses`.
 */
export const FACE_ROUTES: readonly RouteInfo[] = [
  {
    method: "POST",
    path: "/v1/responses",
    operationId: "createResponse",
    summary:
      "Open Responses: run the server's agent as a model (JSON, or SSE with stream: true); server tools run here and appear as function_call + function_call_output items, a client function tool's call ends the response for the client to answer with previous_response_id. WebSocket mode: upgrade GET /v1/responses and send response.create messages",
    body: "responses",
    responses: {
      "200": { description: "A ResponseResource (JSON), or its streaming events (SSE)" },
      ...errors,
      "403": { description: "A tool beyond the server's policy", schema: errorBody },
      "404": { description: "No such previous_response_id", schema: errorBody },
      "413": { description: "The body is too large", schema: errorBody },
      "429": { description: "Too many responses at once", schema: errorBody },
    },
  },
  {
    method: "GET",
    path: "/v1/responses/{id}",
    operationId: "getResponse",
    summary: "A stored response (store: true) of the Open Responses face",
    responses: {
      "200": { description: "The ResponseResource" },
      "401": errors["401"],
      "404": { description: "No such response", schema: errorBody },
    },
  },
  {
    method: "POST",
    path: "/v1/responses/compact",
    operationId: "compactResponse",
    summary: "Open Responses compaction: the conversation's compacted output items",
    body: "responses",
    responses: { "200": { description: "The compacted response" }, ...errors },
  },
];

/** The route `method path` matches, with its path parameters, if any. */
export function matchRoute(
  method: string,
  path: string,
): { route: RouteInfo; params: Record<string, string> } | { methods: string[] } | undefined {
  const methods: string[] = [];
  for (const route of ROUTES) {
    const params = matchPath(route.path, path);
    if (params === undefined) continue;
    if (route.method === method) return { route, params };
    methods.push(route.method);
  }
  return methods.length > 0 ? { methods } : undefined;
}

function matchPath(template: string, path: string): Record<string, string> | undefined {
  const want = template.split("/");
  const got = path.replace(/\/$/, "").split("/");
  if (want.length !== got.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const w = want[i] as string;
    const g = got[i] as string;
    if (w.startsWith("{")) {
      let value: string;
      try {
        value = decodeURIComponent(g);
      } catch {
        return undefined;
      }
      if (value === "") return undefined;
      params[w.slice(1, -1)] = value;
    } else if (w !== g) return undefined;
  }
  return params;
}
