/**
 * The mock's own request and answer values, between the transport and the handler: what a fetch
 * `Request` or a node request carries, and what a fetch `Response` or a node response is made
 * from. The handler works on these; `handler.ts`'s fetch-style face converts at its edge and the
 * listener (`listener.ts`) writes them to the socket as they are.
 *
 * Why not fetch's own classes throughout: `Request`, `Response` and `Headers` are undici's, and the
 * first use of any of them loads it — ~50 ms on a 2-core machine, paid by every `eddy run` on the
 * embedded demo model, whose client (eddy's node:http transport) never needs it (bench/README.md,
 * "Start-up").
 */

/** A request as the handler reads it. */
export interface MockHttpRequest {
  /** `POST`, `GET`, … */
  method: string;
  /** The absolute URL, e.g. `http://127.0.0.1/v1/responses`. */
  url: string;
  /** Header values by lower-case name, a repeated header's values joined with `, ` (as `Headers` joins them). */
  headers: Readonly<Record<string, string>>;
  /** The body, decoded as UTF-8 (a leading byte order mark dropped, as `Request.text()` does); empty for GET and HEAD. */
  text: string;
  /** Aborted when the client goes away. */
  signal: AbortSignal;
}

/** An answer of the mock: a complete body (or none), or an event stream produced as it is read. */
export interface MockReply {
  status: number;
  /** Header values by lower-case name. */
  headers: Readonly<Record<string, string>>;
  body: string | ReadableStream<Uint8Array> | null;
}

/** `reply` as a fetch `Response` (loads undici: only the fetch-style handler and `eddy serve` do). */
export function toResponse(reply: MockReply): Response {
  return new Response(reply.body, { status: reply.status, headers: reply.headers });
}

/** True for a method whose body is not read (GET and HEAD), whichever transport carried it. */
export function bodyless(method: string): boolean {
  return method === "GET" || method === "HEAD";
}

/** A fetch `Request` as the handler reads it (its body read to the end). */
export async function requestOf(request: Request): Promise<MockHttpRequest> {
  const method = request.method;
  return {
    method,
    url: request.url,
    headers: Object.fromEntries(request.headers),
    text: bodyless(method) ? "" : await request.text(),
    signal: request.signal,
  };
}

const UTF8 = new TextDecoder();

/** A body's bytes as text, as `Request.text()` decodes them (UTF-8, a leading BOM dropped, bad bytes U+FFFD). */
export function bodyText(bytes: Uint8Array): string {
  return UTF8.decode(bytes);
}
