/**
 * One probe request, streamed to its end through a provider, and what it showed: the outcome, how
 * many events arrived and how many of them did not validate, and the terminal response as the
 * server sent it (for fields the assembler does not keep, like an echoed `previous_response_id`).
 * Also how a failed request reads as a probe verdict (`failureOf`).
 */
import type { CreateResponseBody, JsonObject } from "../../protocol/types.js";
import { isJsonObject } from "../../util/json.js";
import type { ProviderError } from "../errors.js";
import type { Provider, ProviderOutcome } from "../provider.js";

/** What one request showed. */
export interface Exchange {
  outcome: ProviderOutcome;
  /** `provider_event` frames with a parsed event. */
  events: number;
  /** Events with validation errors, and the first error. */
  invalid: number;
  firstInvalid: string | undefined;
  /** The `response` of the last lifecycle event, as sent. */
  response: JsonObject | undefined;
}

/** Sends `body` (streaming) and reads the stream to its end. Never throws for a provider failure. */
export async function exchange(provider: Provider, body: JsonObject, signal: AbortSignal): Promise<Exchange> {
  const stream = provider.stream(
    { body: { ...body, stream: true } as CreateResponseBody, turn: 0 },
    { signal },
  );
  let events = 0;
  let invalid = 0;
  let firstInvalid: string | undefined;
  let response: JsonObject | undefined;
  for await (const frame of stream) {
    if (frame.type !== "provider_event" || frame.status !== "event") continue;
    events++;
    if (frame.errors !== undefined && frame.errors.length > 0) {
      invalid++;
      firstInvalid ??= frame.errors[0];
    }
    if (isJsonObject(frame.data) && isJsonObject(frame.data.response)) response = frame.data.response;
  }
  return { outcome: await stream.result, events, invalid, firstInvalid, response };
}

/** What a failed request means for a probe. */
export type FailureKind =
  /** 401 or 403: the key. */
  | "auth"
  /** The server does not know the model. */
  | "model"
  /** 404, 405 or 501: no such endpoint. */
  | "missing"
  /** 400 or 422: the server refused what was sent. */
  | "rejected"
  /** A timeout, a broken or refused connection, 429, 5xx: says nothing about the feature. */
  | "transient"
  /** The request was cancelled (Ctrl-C, or the probe's time ran out). */
  | "cancelled"
  /** Anything else: a failed response, a truncated or undecodable stream. */
  | "other";

/** A failure, classified, with its message cut to one short line. */
export interface Failure {
  kind: FailureKind;
  message: string;
  /** The provider's `error.param`, when it named one. */
  param: string | undefined;
}

const MODEL_CODES = new Set(["model_not_found", "invalid_model", "model_not_supported"]);

/** Classifies a provider error (see `FailureKind`). */
export function failureOf(error: ProviderError): Failure {
  const message = shortMessage(error.message);
  const param = error.param ?? undefined;
  const at = (kind: FailureKind): Failure => ({ kind, message, param });
  if (error.kind === "cancelled") return at("cancelled");
  if (error.kind !== "http") {
    return at(error.kind === "timeout" || error.kind === "connection" ? "transient" : "other");
  }
  const status = error.status ?? 0;
  if (status === 401 || status === 403) return at("auth");
  if (MODEL_CODES.has(error.providerCode ?? "") || param === "model") return at("model");
  if (status === 404 || status === 405 || status === 501) return at("missing");
  if (status === 400 || status === 422) return at("rejected");
  return at("transient");
}

/** The first line of a provider message, without eddy's appended advice (" — …"), at most 200 characters. */
export function shortMessage(message: string): string {
  const line = (message.split("\n")[0] ?? "").split(" — ")[0] ?? "";
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}

/** A user message item. */
export function userMessage(text: string): JsonObject {
  return { type: "message", role: "user", content: [{ type: "input_text", text }] };
}
