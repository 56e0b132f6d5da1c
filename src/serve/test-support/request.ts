/**
 * The requests the serve handler tests send in-process: a method and path on 127.0.0.1 with a JSON
 * body (a string is sent as it is, to test malformed bodies) and extra headers.
 */

/** A `Request` for `method path` with `body` as JSON (a string as given) and `headers` added. */
export function jsonRequest(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
  signal?: AbortSignal,
): Request {
  return new Request(`http://127.0.0.1${path}`, {
    method,
    headers: { "content-type": "application/json", ...headers },
    ...(signal === undefined ? {} : { signal }),
    ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
  });
}
