/**
 * `POST /responses/compact` for the Open Responses provider: `CompactResponseMethodPublicBody` in,
 * `CompactResource` out (schemas/openresponses/openapi.json). One JSON exchange, no streaming and
 * no retries: a run that overflows falls back to compacting locally when the server refuses, so a
 * failure here is reported, never retried.
 */

import type { JsonObject, Usage } from "../protocol/types.js";
import { isJsonObject, JSON_MAX_DEPTH, parsedNestsTooDeep } from "../util/json.js";
import { redactSecrets } from "../util/redact.js";
import { readText } from "../util/stream.js";
import { cancelledError, ProviderError } from "./errors.js";
import type { HttpAttemptConfig } from "./http-attempt.js";
import { providerErrorFromHttp } from "./http-error.js";
import type { CompactRequest, CompactResult } from "./provider.js";
import { parseRetryAfter } from "./retry.js";
import type { TransportResponse } from "./transport.js";

/** The compact endpoint of a provider whose `/responses` URL is `responsesUrl` (query string kept). */
export function compactUrl(responsesUrl: string): string {
  const url = new URL(responsesUrl);
  url.pathname = `${url.pathname.replace(/\/+$/, "")}/compact`;
  return url.toString();
}

/** The body sent: only the fields the compact endpoint takes, `model` first. */
export function compactBody(request: CompactRequest): JsonObject {
  const body: JsonObject = {};
  if (request.model !== null) body.model = request.model;
  body.input = request.input;
  if (request.previousResponseId !== undefined) body.previous_response_id = request.previousResponseId;
  if (request.instructions !== undefined) body.instructions = request.instructions;
  return body;
}

/**
 * Sends one compaction request with the provider's transport, headers and secrets (`config.url` is
 * the compact URL). Non-2xx answers become the same `ProviderError`s a `/responses` request gets;
 * a 2xx body that is not a `response.compaction` is a `decode` error.
 */
export async function compactOverHttp(
  config: HttpAttemptConfig,
  request: CompactRequest,
  options: { signal?: AbortSignal } = {},
): Promise<CompactResult> {
  if (options.signal?.aborted) throw cancelledError();
  // Compaction is a whole-body exchange: the first-byte limit bounds it end to end.
  const timeout = AbortSignal.timeout(config.limits.connectMs + config.limits.firstByteMs);
  const signal = options.signal === undefined ? timeout : AbortSignal.any([options.signal, timeout]);
  let response: TransportResponse;
  let text: string;
  try {
    response = await config.transport({
      url: config.url,
      headers: { ...config.headers, accept: "application/json" },
      body: JSON.stringify(compactBody(request)),
      signal,
    });
    const ok = response.status >= 200 && response.status < 300;
    text = (await readText(response.body, ok ? config.maxMessageSize : config.maxErrorBodyBytes)).text;
  } catch (err) {
    if (options.signal?.aborted) throw cancelledError();
    throw new ProviderError({
      kind: timeout.aborted ? "timeout" : "connection",
      code: timeout.aborted ? "first_byte_timeout" : "provider_connection",
      message: redactSecrets(
        `compaction request to ${config.url} failed: ${timeout.aborted ? "no answer in time" : describe(err)}`,
        config.secrets,
      ),
      retryable: true,
      cause: err,
    });
  }
  if (response.status < 200 || response.status >= 300) {
    throw providerErrorFromHttp({
      status: response.status,
      bodyText: text,
      url: config.url,
      endpoint: "/v1/responses/compact",
      requestId: response.headers.get("x-request-id") ?? undefined,
      retryAfterMs: parseRetryAfter(response.headers, config.now()),
      secrets: config.secrets,
    });
  }
  return parseCompactResource(text, config);
}

function parseCompactResource(text: string, config: HttpAttemptConfig): CompactResult {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  if (!isJsonObject(json) || json.object !== "response.compaction" || !Array.isArray(json.output)) {
    throw new ProviderError({
      kind: "decode",
      code: "invalid_response",
      message: redactSecrets(
        `POST ${config.url} did not answer with a response.compaction object — the server may not support compaction (set the profile's compaction capability to false)`,
        config.secrets,
      ),
      retryable: false,
    });
  }
  // The items join the history, which is walked recursively (token counts, the tape, the next
  // request): an answer nested past the limit is refused whole, as a stream's event is
  // (docs/pitfalls.md #74), and the run compacts locally instead.
  if (parsedNestsTooDeep(text, json)) {
    throw new ProviderError({
      kind: "decode",
      code: "invalid_response",
      message: redactSecrets(
        `POST ${config.url} answered with a response.compaction that nests deeper than ${JSON_MAX_DEPTH} levels of arrays and objects`,
        config.secrets,
      ),
      retryable: false,
    });
  }
  const output = json.output.filter(isJsonObject) as JsonObject[];
  return { output, usage: isJsonObject(json.usage) ? (json.usage as unknown as Usage) : null };
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
