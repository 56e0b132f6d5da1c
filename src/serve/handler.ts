/**
 * `eddy serve` as a fetch-style handler: `(Request) => Promise<Response>`, testable in-process with
 * no socket (like the mock's, src/mock/handler.ts) and served over HTTP by `listener.ts`. Routes
 * come from the table in api.ts (also the source of `/openapi.json`).
 *
 * Every request is untrusted: with a token, `Authorization: Bearer <token>` is required (compared
 * in constant time; 401 otherwise); bodies are read up to `maxBodyBytes` (413 beyond), must be
 * JSON objects (400 naming the problem) and are validated with the same schemas the document
 * describes; ids and thread names are checked before anything is looked up (404); the server's
 * policy decides what a run may do (403 with the reason); too many runs or watchers → 429 with
 * `Retry-After`. No CORS header is sent unless `corsOrigin` is set. Errors answer
 * `{error: {type, code, message, param}}` and never carry a secret.
 */
import { THREAD_NAME_PATTERN } from "../context/threads.js";
import { EddyError } from "../errors.js";
import { checkPartialRunSpec, type PartialRunSpec } from "../loop/run-spec.js";
import {
  httpProblem,
  jsonResponse,
  problemOf,
  problemResponse,
  tooManyRequests,
} from "../mock/http-error.js";
import { safeJson } from "../util/control-chars.js";
import { JSON_MAX_DEPTH, nestsDeeperThan } from "../util/json.js";
import { redactSecrets } from "../util/redact.js";
import { sameSecret } from "../util/secret-compare.js";
import { decisionBody, matchRoute, messageBody, type RouteInfo, steerBody } from "./api.js";
import { openApiDocument } from "./openapi.js";
import { sseStream } from "./run-log.js";
import type { RunService, ServedRun } from "./runs.js";

/** Options of `createServeHandler`. */
export interface ServeHandlerOptions {
  /** When set, every request must carry `Authorization: Bearer <token>`. @defaultValue none */
  token?: string;
  /** Largest request body accepted (413 beyond). @defaultValue 1 MiB */
  maxBodyBytes?: number;
  /** Event streams open at once over the whole server (429 beyond). @defaultValue 1024 */
  maxWatchers?: number;
  /** Milliseconds between SSE keep-alive comments. @defaultValue 15_000 */
  keepAliveMs?: number;
  /** The origin allowed by CORS (`*` for any). @defaultValue none: no CORS header at all */
  corsOrigin?: string;
  /** Told of failures the client got a 500 for (a bug). @defaultValue none */
  onError?: (error: unknown) => void;
  /** Extra routes tried before a 404 (the Open Responses face). @defaultValue none */
  extra?: (request: Request, path: string) => Promise<Response> | undefined;
}

/** The handler: answers one request. */
export type ServeHandler = (request: Request) => Promise<Response>;

interface HandlerState {
  service: RunService;
  options: ServeHandlerOptions;
  watchers: { open: number };
  token: string | undefined;
}

/** Creates the handler (see the module comment). */
export function createServeHandler(service: RunService, options: ServeHandlerOptions = {}): ServeHandler {
  const state: HandlerState = {
    service,
    options,
    watchers: { open: 0 },
    token: options.token,
  };
  return async (request) => {
    let response: Response;
    try {
      response = await route(request, state);
    } catch (err) {
      response = errorResponse(err, state);
    }
    return withCors(response, options.corsOrigin);
  };
}

async function route(request: Request, state: HandlerState): Promise<Response> {
  const { options } = state;
  const path = new URL(request.url).pathname;
  if (request.method === "OPTIONS" && options.corsOrigin !== undefined)
    return new Response(null, { status: 204 });
  authorize(request, state);
  const matched = matchRoute(request.method, path);
  if (matched === undefined) {
    const extra = options.extra?.(request, path);
    if (extra !== undefined) return extra;
    throw problem(404, "not_found", `no route ${request.method} ${path.slice(0, 200)} (see /openapi.json)`);
  }
  if ("methods" in matched)
    return problemResponse(
      {
        status: 405,
        error: {
          type: "invalid_request_error",
          code: "method_not_allowed",
          message: `use ${matched.methods.join(" or ")}`,
          param: null,
        },
      },
      { allow: matched.methods.join(", ") },
    );
  return dispatch(request, matched.route, matched.params, state);
}

async function dispatch(
  request: Request,
  route: RouteInfo,
  params: Record<string, string>,
  state: HandlerState,
): Promise<Response> {
  const { service } = state;
  switch (route.operationId) {
    case "startRun":
      return started(await service.start(runSpecOf(await readJson(request, state))));
    case "listRuns":
      return jsonResponse(200, { data: service.list().map((r) => service.view(r)) });
    case "getRun":
      return jsonResponse(200, service.view(runOf(service, params.id as string)));
    case "runEvents":
      return events(request, runOf(service, params.id as string), state);
    case "cancelRun":
      return cancelled(service.cancel(runOf(service, params.id as string).id));
    case "decideCall":
      return decide(request, params.id as string, state);
    case "steerRun":
      return steer(request, runOf(service, params.id as string).id, state);
    case "resumeRun":
      return statusOf(202, await service.resume(runOf(service, params.id as string).id));
    case "steerThread":
      return steer(request, threadRun(service, params.name as string).id, state);
    case "listThreads":
      // An unreadable log is listed as such, without the reason: it names a path of the server's.
      return jsonResponse(200, {
        data: (await service.threads.list()).map((t) =>
          t.problem === undefined ? t : { ...t, problem: "the thread's log cannot be read" },
        ),
      });
    case "getThread":
      return thread(service, params.name as string);
    case "sendMessage":
      return sendMessage(request, params.name as string, state);
    default:
      return jsonResponse(200, openApiDocument());
  }
}

function started(run: ServedRun): Response {
  return jsonResponse(201, { id: run.id, status: run.status }, { location: `/v1/runs/${run.id}` });
}

/** How long a cancel waits for its run to end, to answer with the run's final status. */
const CANCEL_WAIT_MS = 1_000;

/**
 * A cancelled run's answer: 200 with its final status (`cancelled`) once its tape is closed, which
 * a run's cancellation takes milliseconds to reach; 202 with `running` when it did not within
 * `CANCEL_WAIT_MS` (a tool that ignores cancellation; it ends as it can).
 */
async function cancelled(run: ServedRun): Promise<Response> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    run.done,
    new Promise<void>((resolve) => (timer = setTimeout(resolve, CANCEL_WAIT_MS))),
  ]);
  clearTimeout(timer);
  return statusOf(run.status === "running" ? 202 : 200, run);
}

function statusOf(status: number, run: ServedRun): Response {
  return jsonResponse(status, { id: run.id, status: run.status });
}

function runOf(service: RunService, id: string): ServedRun {
  const run = service.get(id);
  if (run === undefined)
    throw problem(404, "run_not_found", `no run ${safeJson(id.slice(0, 100))} on this server`);
  return run;
}

/** A request's partial spec: checked like any untrusted spec; `run_id` and `context` are the server's. */
function runSpecOf(body: Record<string, unknown>): PartialRunSpec {
  for (const field of ["run_id", "context"])
    if (field in body)
      throw problem(
        400,
        "invalid_run_spec",
        `${field}: set by the server, not by a request; leave it out`,
        field,
      );
  return checkPartialRunSpec(body, "request body");
}

function events(request: Request, run: ServedRun, state: HandlerState): Response {
  const { options, watchers } = state;
  const max = options.maxWatchers ?? 1024;
  const given = request.headers.get("last-event-id") ?? new URL(request.url).searchParams.get("after");
  let after = -1;
  if (given !== null) {
    if (!/^-?\d{1,12}$/.test(given.trim()))
      throw problem(
        400,
        "invalid_last_event_id",
        "Last-Event-ID: expected an event id (a whole number)",
        "Last-Event-ID",
      );
    after = Number(given.trim());
  }
  if (watchers.open >= max)
    throw tooManyRequests("too_many_watchers", `this server streams to at most ${max} watchers at once`, 5);
  readable(run, state);
  watchers.open++;
  const body = sseStream(run.log, {
    after,
    ...(options.keepAliveMs === undefined ? {} : { keepAliveMs: options.keepAliveMs }),
    onClose: () => watchers.open--,
  });
  return new Response(body, {
    status: 200,
    headers: { "content-type": "text/event-stream", "cache-control": "no-store", "x-accel-buffering": "no" },
  });
}

/**
 * A run listed from its tape's summary has its frames read from the tape now (serve/run-log.ts,
 * `storedRunLog`); a tape that no longer reads (changed or damaged since the server started) is a
 * 500 naming no path — the operator hears why (`onError`).
 */
function readable(run: ServedRun, state: HandlerState): void {
  try {
    void run.log.frames;
  } catch (err) {
    state.options.onError?.(err);
    throw httpProblem(
      serverProblem("tape_unreadable", "this run's tape can no longer be read (the server's log says why)"),
    );
  }
}

async function decide(request: Request, id: string, state: HandlerState): Promise<Response> {
  const run = runOf(state.service, id);
  const parsed = decisionBody.safeParse(await readJson(request, state));
  if (!parsed.success) throw zodProblem(parsed.error);
  const after = await state.service.decide(run.id, parsed.data.call_id, parsed.data.decision);
  const pending = (after.ended?.pending_calls ?? []).filter((c) => after.decisions[c] === undefined);
  return jsonResponse(202, { id: after.id, status: after.status, pending_calls: pending });
}

async function steer(request: Request, id: string, state: HandlerState): Promise<Response> {
  const parsed = steerBody.safeParse(await readJson(request, state));
  if (!parsed.success) throw zodProblem(parsed.error);
  return statusOf(202, state.service.steer(id, parsed.data.message));
}

/** The run going on on a thread (409 when none is). */
function threadRun(service: RunService, name: string): ServedRun {
  const thread = threadName(name, false);
  const run = service.list().find((r) => r.status === "running" && r.spec?.thread === thread);
  if (run === undefined)
    throw problem(409, "thread_idle", `no run on thread ${thread} is going on: send a message instead`);
  return run;
}

async function sendMessage(request: Request, name: string, state: HandlerState): Promise<Response> {
  const thread = threadName(name, false);
  const body = await readJson(request, state);
  const parsed = messageBody.safeParse(body);
  if (!parsed.success) throw zodProblem(parsed.error);
  if ("thread" in body)
    throw problem(400, "invalid_run_spec", "thread: given by the path; leave it out", "thread");
  if (state.service.list().some((r) => r.status === "running" && r.spec?.thread === thread))
    throw problem(409, "thread_busy", `a run on thread ${thread} is going on; wait for it or cancel it`);
  return started(await state.service.start(runSpecOf({ ...body, thread })));
}

async function thread(service: RunService, name: string): Promise<Response> {
  const log = await service.threads.read(threadName(name, true));
  if (log.runs.length === 0)
    throw problem(404, "thread_not_found", `no thread ${safeJson(name)} on this server`);
  // An outcome's tape is a path on the server: its run's events are at /v1/runs/RUN_ID/events.
  const runs = log.runs.map((run) => {
    if (run.outcome?.tape === undefined) return run;
    const { tape: _path, ...outcome } = run.outcome;
    return { ...run, outcome };
  });
  return jsonResponse(200, { ...log, runs });
}

function threadName(name: string, mustExist: boolean): string {
  if (!THREAD_NAME_PATTERN.test(name) || name.endsWith("."))
    throw problem(
      mustExist ? 404 : 400,
      "invalid_thread_name",
      `thread name ${safeJson(name.slice(0, 100))} is not allowed: use 1–64 letters, digits, ".", "_" or "-"`,
      "name",
    );
  return name;
}

/** The body as a JSON object, read up to the limit. */
export async function readJson(
  request: Request,
  state: { options: ServeHandlerOptions },
): Promise<Record<string, unknown>> {
  const text = await readBody(request, state.options.maxBodyBytes ?? 1024 * 1024);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw problem(
      400,
      "invalid_json",
      "the body is not valid JSON: send a JSON object with Content-Type: application/json",
    );
  }
  if (value === null || typeof value !== "object" || Array.isArray(value))
    throw problem(400, "invalid_body", "the body must be a JSON object");
  // What walks the body after JSON.parse (validation, masking, the tape) is recursive: a deep one
  // overflowed the stack outside the handler and ended the server (docs/pitfalls.md #74).
  if (nestsDeeperThan(value))
    throw problem(
      400,
      "invalid_body",
      `the body nests deeper than ${JSON_MAX_DEPTH} levels of arrays and objects`,
    );
  return value as Record<string, unknown>;
}

/** The body as text, read up to `max` bytes (413 beyond: nothing more is read). */
export async function readBody(request: Request, max: number): Promise<string> {
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > max) throw tooLarge(max);
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (request.body !== null) {
    const reader = request.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > max) {
        await reader.cancel().catch(() => {});
        throw tooLarge(max);
      }
      chunks.push(value);
    }
  }
  return Buffer.concat(chunks).toString("utf8");
}

function tooLarge(max: number): EddyError {
  return problem(413, "request_too_large", `the body is larger than this server accepts (${max} bytes)`);
}

function authorize(request: Request, state: HandlerState): void {
  if (state.token === undefined) return;
  const header = request.headers.get("authorization") ?? "";
  const match = /^Bearer\s+(.+)$/i.exec(header);
  const ok = match !== null && sameSecret((match[1] as string).trim(), state.token);
  if (!ok)
    throw httpProblem({
      status: 401,
      error: {
        type: "invalid_request_error",
        code: "invalid_api_key",
        message: "a bearer token is required (Authorization: Bearer <token>)",
        param: null,
      },
      headers: { "www-authenticate": "Bearer" },
    });
}

/** An error answer, thrown from anywhere in the handler. */
export function problem(
  status: number,
  code: string,
  message: string,
  param: string | null = null,
): EddyError {
  const type = status === 404 ? "not_found" : status === 429 ? "rate_limit_error" : "invalid_request_error";
  return httpProblem({ status, error: { type, code, message, param } });
}

function zodProblem(error: {
  issues: readonly { path: readonly PropertyKey[]; message: string }[];
}): EddyError {
  const first = error.issues[0];
  const field = first?.path.map(String).join(".") ?? "";
  return problem(
    400,
    "invalid_body",
    `${field === "" ? "body" : field}: ${first?.message ?? "invalid"}`,
    field || null,
  );
}

/** A 500 of the server's own making: its reason is in the server's log, never in the answer. */
function serverProblem(code: string, message: string) {
  return { status: 500, error: { type: "server_error", code, message, param: null } };
}

/** The answer for a thrown error: its problem, a 400/403 for a user error, else a 500 without details. */
function errorResponse(err: unknown, state: HandlerState): Response {
  const secrets = state.service.runtime.secrets ?? [];
  const carried = problemOf(err);
  if (carried !== undefined) return problemResponse(carried);
  if (EddyError.isInstance(err) && err.code === "thread_busy") {
    // Its message names the server's folder: the client gets who holds it, not where.
    const thread = String(err.details.thread);
    const message = `thread ${thread} is in use by another eddy process on this server's workspace (a chat or a run): wait for it to end`;
    return problemResponse({
      status: 409,
      error: { type: "invalid_request_error", code: "thread_busy", message, param: null },
    });
  }
  if (EddyError.isInstance(err) && err.fault === "user") {
    const status = err.code === "policy_denied" ? 403 : 400;
    const field = typeof err.details.field === "string" ? err.details.field : null;
    return problemResponse({
      status,
      error: {
        type: status === 403 ? "permission_error" : "invalid_request_error",
        code: err.code,
        message: redactSecrets(err.message, secrets),
        param: field,
      },
    });
  }
  state.options.onError?.(err);
  return problemResponse(serverProblem("server_error", "internal error in eddy serve (see its log)"));
}

function withCors(response: Response, origin: string | undefined): Response {
  if (origin === undefined) return response;
  response.headers.set("access-control-allow-origin", origin);
  response.headers.set("access-control-allow-headers", "authorization, content-type, last-event-id");
  response.headers.set("access-control-allow-methods", "GET, POST, OPTIONS");
  return response;
}
