/**
 * Typed provider errors. Every way a request can fail becomes a `ProviderError` that keeps what
 * the provider said (status, `error.type`, `error.code`, `error.message`, `param`, request id),
 * says whether it may be retried, and maps to the run's end reason (docs/architecture.md, "The frame contract").
 */
import { EddyError, type EddyErrorCode } from "../errors.js";
import type { RunEndReason } from "../frames/frame.js";
import { sizeText } from "../util/regular-file.js";
import { wholeCut } from "../util/text.js";

/** What part of a request failed. */
export type ProviderErrorKind =
  /** A non-2xx HTTP answer. */
  | "http"
  /** The connection failed or broke (before or during the body). */
  | "connection"
  /** No headers / no first byte / no bytes for too long. */
  | "timeout"
  /** The stream ended without a terminal event (`[DONE]` or not). */
  | "truncated"
  /** The provider reported the response failed (`response.failed` or an `error` event). */
  | "stream_failed"
  /** The caller aborted. */
  | "cancelled"
  /** The body could not be decoded (e.g. an SSE message over the size limit). */
  | "decode"
  /** The request cannot be expressed in the provider's API (e.g. a hosted tool over Chat Completions); nothing was sent. */
  | "unsupported";

export interface ProviderErrorFields {
  kind: ProviderErrorKind;
  code: EddyErrorCode;
  message: string;
  retryable: boolean;
  status?: number;
  /** `error.code` from the provider, when it sent one. */
  providerCode?: string | null;
  /** `error.type` from the provider. */
  errorType?: string;
  param?: string | null;
  requestId?: string;
  /** The wait the provider asked for (`Retry-After`, `retry-after-ms`), in ms. */
  retryAfterMs?: number;
  cause?: unknown;
}

/** The longest provider error message kept (a server's error may be megabytes: the frames and the terminal get this much). */
export const PROVIDER_MESSAGE_MAX_CHARS = 2000;

/** `message` cut at `PROVIDER_MESSAGE_MAX_CHARS`, saying how much was left out. */
function boundedMessage(message: string): string {
  return bounded(message, PROVIDER_MESSAGE_MAX_CHARS);
}

/** `text` cut at `max` characters (never inside a surrogate pair), saying how much was left out. */
function bounded(text: string, max: number): string {
  if (text.length <= max) return text;
  const end = wholeCut(text, max);
  return `${text.slice(0, end)}… (${text.length - end} more characters cut)`;
}

/**
 * A failed request, typed: what failed (`kind`), whether a retry may help, what the provider said
 * (status, error type and code, request id) and the run end reason it means.
 */
export class ProviderError extends EddyError {
  readonly kind: ProviderErrorKind;
  readonly retryable: boolean;
  readonly status: number | undefined;
  readonly providerCode: string | null | undefined;
  readonly errorType: string | undefined;
  readonly param: string | null | undefined;
  readonly requestId: string | undefined;
  readonly retryAfterMs: number | undefined;

  constructor(fields: ProviderErrorFields) {
    super(fields.code, boundedMessage(fields.message), {
      cause: fields.cause,
      fault: fields.kind === "cancelled" ? "user" : "provider",
      details: { kind: fields.kind, status: fields.status, providerCode: fields.providerCode },
    });
    this.kind = fields.kind;
    this.retryable = fields.retryable;
    this.status = fields.status;
    this.providerCode =
      typeof fields.providerCode === "string" ? bounded(fields.providerCode, 256) : fields.providerCode;
    this.errorType = fields.errorType === undefined ? undefined : bounded(fields.errorType, 256);
    this.param = typeof fields.param === "string" ? bounded(fields.param, 256) : fields.param;
    this.requestId = fields.requestId;
    this.retryAfterMs = fields.retryAfterMs;
  }

  /**
   * The code frames and `run_ended.error` show: the provider's error code when there is one,
   * else its error type, else eddy's own (`http_503`, `stream_truncated`, `idle_timeout`, …).
   */
  get frameCode(): string {
    if (this.providerCode) return this.providerCode;
    if (this.kind === "http") return this.errorType ?? `http_${this.status ?? 0}`;
    return this.code;
  }

  /** True when the provider says the `previous_response_id` is unknown (docs/decisions.md #5). */
  get isPreviousResponseNotFound(): boolean {
    return this.providerCode === "previous_response_not_found";
  }

  /** The run end reason this error means when it ends a run (docs/architecture.md, "The frame contract"). */
  get runEndReason(): RunEndReason {
    switch (this.kind) {
      case "cancelled":
        return "cancelled";
      case "stream_failed":
        return "failed";
      case "unsupported":
        return "invalid_request";
      case "http":
        return this.status === 400 || this.status === 404 || this.status === 422
          ? "invalid_request"
          : "provider_error";
      default:
        return "provider_error";
    }
  }
}

/** A streamed response past `maxBytes` (`maxResponseBytes`): not read further (docs/pitfalls.md #73). */
export function responseTooLarge(maxBytes: number): ProviderError {
  return new ProviderError({
    kind: "decode",
    code: "response_too_large",
    message: `the response is larger than ${sizeText(maxBytes)}, the most eddy reads of one response (maxResponseBytes); it was not read further`,
    retryable: false,
  });
}

/** The error of a request that was cancelled (abort signal, or the consumer stopped iterating). */
export function cancelledError(): ProviderError {
  return new ProviderError({
    kind: "cancelled",
    code: "cancelled",
    message: "the request was cancelled",
    retryable: false,
  });
}
