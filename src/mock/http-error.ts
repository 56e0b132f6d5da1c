/**
 * JSON error answers in the shape real providers use (spec §8.5): `{"error": {message, type, param,
 * code}}`. Inside the handler a refusal is thrown as an `EddyError` carrying the HTTP status and
 * payload in `details`, and turned into an answer (`MockReply`, reply.ts) at the top.
 */
import { EddyError } from "../errors.js";
import type { ErrorPayload } from "../protocol/types.js";
import { safeJson } from "../util/control-chars.js";
import { type MockReply, toResponse } from "./reply.js";

/** The body of a JSON error answer. */
export interface ErrorBody {
  error: ErrorPayload;
}

/** What a refused request is answered with. */
export interface HttpProblem {
  status: number;
  error: ErrorPayload;
  headers?: Record<string, string>;
}

const PROBLEM = "mockHttpProblem";

/** An `EddyError` that the handler answers with `problem` (status, JSON error body, headers). */
export function httpProblem(problem: HttpProblem): EddyError {
  return new EddyError("invalid_argument", `${problem.status} ${problem.error.message}`, {
    fault: "user",
    details: { [PROBLEM]: problem },
  });
}

/** Shorthand for the common 400 `invalid_request_error`. */
export function invalidRequest(message: string, param: string | null, code: string | null = null): EddyError {
  return httpProblem({ status: 400, error: { type: "invalid_request_error", code, message, param } });
}

/** Shorthand for a 429 `rate_limit_error` with a `Retry-After` (in seconds). */
export function tooManyRequests(code: string, message: string, retryAfterSeconds: number): EddyError {
  return httpProblem({
    status: 429,
    error: { type: "rate_limit_error", code, message, param: null },
    headers: { "retry-after": String(retryAfterSeconds) },
  });
}

/** The problem carried by an error made with `httpProblem`, if it is one. */
export function problemOf(error: unknown): HttpProblem | undefined {
  if (!EddyError.isInstance(error)) return undefined;
  const problem = error.details[PROBLEM];
  return problem !== null && typeof problem === "object" ? (problem as HttpProblem) : undefined;
}

/** The 500 `server_error` an unexpected failure (a bug in the mock) is answered with. */
export function serverProblem(error: unknown): HttpProblem {
  return {
    status: 500,
    error: {
      type: "server_error",
      code: "server_error",
      message: `mock server error: ${error instanceof Error ? error.message : String(error)}`,
      param: null,
    },
  };
}

/**
 * The JSON answer for `problem`. Its message often quotes the client's own ids
 * (`previous_response_id`, a `call_id`): their C1 and direction characters, which `JSON.stringify`
 * leaves raw, are written as `\u` escapes (`safeJson`), so a client printing the answer is not
 * steered by them.
 */
export function problemReply(problem: HttpProblem, extraHeaders: Record<string, string> = {}): MockReply {
  return {
    status: problem.status,
    headers: { "content-type": "application/json", ...extraHeaders, ...problem.headers },
    body: safeJson({ error: problem.error } satisfies ErrorBody),
  };
}

/** `problemReply` as a fetch `Response` (`eddy serve`'s handler answers with these). */
export function problemResponse(problem: HttpProblem, extraHeaders: Record<string, string> = {}): Response {
  return toResponse(problemReply(problem, extraHeaders));
}

/** A JSON answer with the given status and headers. */
export function jsonReply(status: number, body: unknown, headers: Record<string, string> = {}): MockReply {
  return { status, headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) };
}

/** `jsonReply` as a fetch `Response`. */
export function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return toResponse(jsonReply(status, body, headers));
}

/** The error `type` a provider reports with each status (for fault bodies that name none). */
export function errorTypeForStatus(status: number): string {
  if (status === 401) return "invalid_request_error";
  if (status === 403) return "permission_error";
  if (status === 404) return "not_found";
  if (status === 408) return "timeout";
  if (status === 409) return "conflict";
  if (status === 429) return "too_many_requests";
  if (status >= 500) return "server_error";
  return "invalid_request_error";
}
