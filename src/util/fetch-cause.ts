/**
 * What a failed `fetch` says went wrong: its `TypeError` ("fetch failed") carries the socket's
 * error as `cause`, whose code (`ECONNREFUSED`, `ECONNRESET`) or message is the useful part.
 */
export function fetchCause(err: unknown): string | undefined {
  const cause = (err as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause;
  if (typeof cause?.code === "string") return cause.code;
  if (typeof cause?.message === "string") return cause.message;
  return undefined;
}
