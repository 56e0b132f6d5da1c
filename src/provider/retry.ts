/**
 * Retry policy (docs/decisions.md #8): which failures may be retried and how long to wait.
 * Waits are exponential (0.5 s doubling to 8 s) with jitter, unless the provider asked for a
 * specific wait (`retry-after-ms`, `Retry-After` in seconds or as an HTTP date, Azure's
 * `x-ms-retry-after-ms`), which wins, capped at 60 s. `x-should-retry` overrides the status rule.
 */
import { PROVIDER_DEFAULTS } from "./defaults.js";

/** How failed attempts are retried: how often, and the backoff between them. */
export interface RetryPolicy {
  maxRetries: number;
  initialBackoffMs: number;
  maxBackoffMs: number;
  jitter: number;
  maxRetryAfterMs: number;
}

/**
 * 2 retries, 0.5 s doubling to 8 s with 25% jitter; a provider-requested wait wins, capped at 60 s.
 */
export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxRetries: PROVIDER_DEFAULTS.maxRetries,
  initialBackoffMs: PROVIDER_DEFAULTS.initialBackoffMs,
  maxBackoffMs: PROVIDER_DEFAULTS.maxBackoffMs,
  jitter: PROVIDER_DEFAULTS.jitter,
  maxRetryAfterMs: PROVIDER_DEFAULTS.maxRetryAfterMs,
};

/** Provider error codes that no retry can fix (billing, policy, bad input, lost state). */
const NON_RETRYABLE_CODES: ReadonlySet<string> = new Set([
  "insufficient_quota",
  "billing_hard_limit_reached",
  "content_filter",
  "content_policy_violation",
  "context_length_exceeded",
  "invalid_prompt",
  "invalid_api_key",
  "model_not_found",
  "previous_response_not_found",
  "invalid_encrypted_content",
]);

/** True for codes that must not be retried whatever the status or event said. */
export function isNonRetryableCode(code: string | null | undefined): boolean {
  return code !== null && code !== undefined && NON_RETRYABLE_CODES.has(code);
}

/** 408, 409, 429 and 5xx may be retried; every other status (400, 401, 403, 404, 422, …) may not. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

export interface HeaderSource {
  get(name: string): string | null;
}

/** The wait the provider asked for, in ms, or undefined. `now` is unix ms (for HTTP dates). */
export function parseRetryAfter(headers: HeaderSource, now: number): number | undefined {
  for (const name of ["retry-after-ms", "x-ms-retry-after-ms"]) {
    const value = headers.get(name);
    // Plain decimal digits only: `Number` also reads "0x10", "1e2" and "Infinity".
    if (value !== null && /^\s*\d+(\.\d+)?\s*$/.test(value)) return Number(value);
  }
  const value = headers.get("retry-after");
  if (value === null) return undefined;
  // delay-seconds is 1*DIGIT (RFC 9110 §10.2.3; a decimal fraction is taken too); "0x10", "1e2"
  // and "Infinity", which `Number` reads, are not.
  if (/^\s*\d+(\.\d+)?\s*$/.test(value)) return Number(value) * 1000;
  // An HTTP-date names its day ("Wed, 21 Oct 2015 07:28:00 GMT"); V8 reads "-5" as a date in year
  // -5, which made a negative value mean "retry at once".
  if (!/[a-z]/i.test(value)) return undefined;
  const date = Date.parse(value);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/** `x-should-retry: true|false` when the provider sent it. */
export function parseShouldRetry(headers: HeaderSource): boolean | undefined {
  const value = headers.get("x-should-retry");
  if (value === "true") return true;
  if (value === "false") return false;
  return undefined;
}

/**
 * The delay before retry number `retry` (1-based). `random` returns [0, 1) and is injected so
 * tests (and replays) are deterministic.
 */
export function backoffDelayMs(
  policy: RetryPolicy,
  retry: number,
  random: () => number,
  retryAfterMs?: number,
): number {
  if (retryAfterMs !== undefined) return Math.min(Math.ceil(retryAfterMs), policy.maxRetryAfterMs);
  const base = Math.min(policy.initialBackoffMs * 2 ** (retry - 1), policy.maxBackoffMs);
  return Math.round(base * (1 - random() * policy.jitter));
}
