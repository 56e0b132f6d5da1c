/**
 * Every behaviour-altering default of the provider layer, in one place (the CLI and the library
 * both read it). docs/decisions.md #8 sets the retry and timeout values.
 */
export const PROVIDER_DEFAULTS = {
  /** Retries after the first attempt (so 3 attempts in all). */
  maxRetries: 2,
  /** First backoff delay; doubles per retry. */
  initialBackoffMs: 500,
  /** Backoff ceiling (before jitter). */
  maxBackoffMs: 8_000,
  /** Jitter: each delay is reduced by up to this fraction at random (so retries spread out). */
  jitter: 0.25,
  /** Ceiling on a provider-requested wait (`Retry-After`, `retry-after-ms`). */
  maxRetryAfterMs: 60_000,
  /** From sending the request until the response headers arrive. */
  connectTimeoutMs: 30_000,
  /** From the headers until the first body byte (generous: reasoning models think first). */
  firstByteTimeoutMs: 120_000,
  /** Longest silence between body bytes once streaming (comments count as bytes). Paused while a tool runs. */
  idleTimeoutMs: 60_000,
  /** After the terminal event, how long to wait for `[DONE]` / end of body before closing the stream ourselves. */
  drainTimeoutMs: 2_000,
  /** Largest SSE message accepted (characters). */
  maxMessageSize: 16 * 1024 * 1024,
  /**
   * Largest streamed response body read (bytes): a provider that streams without end is stopped
   * there with `response_too_large`, before the text it sends outgrows memory (docs/pitfalls.md #73).
   */
  maxResponseBytes: 64 * 1024 * 1024,
  /** How much of an error body is read (bytes). */
  maxErrorBodyBytes: 64 * 1024,
  /** Validate every event against the schema (errors recorded in frames, never fatal). */
  validate: true,
} as const;

export type ProviderDefaults = typeof PROVIDER_DEFAULTS;

/**
 * The longest timeout a Node timer can wait (2^31 − 1 ms, ~24.8 days): a longer one fires after
 * 1 ms with a TimeoutOverflowWarning on stderr, each time it is set. The CLI refuses longer
 * provider timeouts (flags and config file).
 */
export const MAX_TIMEOUT_MS = 2 ** 31 - 1;
