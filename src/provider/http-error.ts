/**
 * Non-2xx answers → `ProviderError`. Error bodies follow `{"error": {"message", "type", "param",
 * "code"}}` (spec §8.5), but real servers also send flat `{message, code}`, plain text or HTML;
 * every shape gives a readable one-line message with a hint about what to do.
 */
import { redactSecrets } from "../util/redact.js";
import { ProviderError } from "./errors.js";
import { isNonRetryableCode, isRetryableStatus } from "./retry.js";

export interface HttpErrorInput {
  status: number;
  bodyText: string;
  url: string;
  /** The path eddy appends to a base URL (`/v1/responses`), for the 404 hint. @defaultValue "/v1/responses" */
  endpoint?: string;
  requestId?: string | undefined;
  retryAfterMs?: number | undefined;
  shouldRetry?: boolean | undefined;
  secrets: readonly (string | undefined)[];
  /** The `Location` header of a redirect, for its hint. @defaultValue none */
  location?: string | undefined;
}

interface ParsedErrorBody {
  message?: string;
  type?: string;
  code?: string | null;
  param?: string | null;
}

export function parseErrorBody(text: string): ParsedErrorBody {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return {};
  }
  if (json === null || typeof json !== "object") return {};
  const outer = json as Record<string, unknown>;
  const inner =
    outer.error !== null && typeof outer.error === "object"
      ? (outer.error as Record<string, unknown>)
      : outer;
  const out: ParsedErrorBody = {};
  if (typeof inner.message === "string") out.message = inner.message;
  else if (typeof outer.error === "string") out.message = outer.error;
  if (typeof inner.type === "string") out.type = inner.type;
  if (typeof inner.code === "string" || inner.code === null) out.code = inner.code as string | null;
  if (typeof inner.code === "number") out.code = String(inner.code);
  if (typeof inner.param === "string" || inner.param === null) out.param = inner.param as string | null;
  return out;
}

export function providerErrorFromHttp(input: HttpErrorInput): ProviderError {
  const { status } = input;
  const body = parseErrorBody(input.bodyText);
  const detail = body.message ?? snippet(input.bodyText);
  const code = body.code ?? undefined;
  let retryable = input.shouldRetry ?? isRetryableStatus(status);
  if (isNonRetryableCode(code) || isNonRetryableCode(body.type)) retryable = false;
  const message = redactSecrets(
    `HTTP ${status}${describe(body)}: ${detail}${hint(status, input, body)}`,
    input.secrets,
  );
  const fields: ConstructorParameters<typeof ProviderError>[0] = {
    kind: "http",
    code: status === 404 && code !== "previous_response_not_found" ? "provider_not_found" : "provider_http",
    message,
    retryable,
    status,
  };
  if (code !== undefined) fields.providerCode = code;
  if (body.type !== undefined) fields.errorType = body.type;
  if (body.param !== undefined) fields.param = body.param;
  if (input.requestId !== undefined) fields.requestId = input.requestId;
  if (input.retryAfterMs !== undefined) fields.retryAfterMs = input.retryAfterMs;
  return new ProviderError(fields);
}

function describe(body: ParsedErrorBody): string {
  const parts = [body.type, body.code].filter((p): p is string => typeof p === "string" && p !== "");
  const unique = [...new Set(parts)];
  return unique.length > 0 ? ` ${unique.join("/")}` : "";
}

function hint(status: number, input: HttpErrorInput, body: ParsedErrorBody): string {
  if (body.code === "previous_response_not_found") return "";
  switch (status) {
    case 401:
      return " — check the API key (--api-key, OPENRESPONSES_API_KEY or OPENAI_API_KEY)";
    case 403:
      return " — the API key is not allowed to use this model or endpoint";
    case 404:
      return ` — POST ${input.url} was not found: check --base-url (eddy appends ${input.endpoint ?? "/v1/responses"} unless the base URL already ends in /v1) and the model name`;
    case 429:
      return body.code === "insufficient_quota" ? " — the account is out of quota; check billing" : "";
    case 301:
    case 302:
    case 303:
    case 307:
    case 308: {
      const to = input.location === undefined ? "another URL" : snippet(input.location);
      return ` — the server redirects to ${to}; eddy does not follow redirects (the API key would go along): set --base-url to the URL it points to`;
    }
    default:
      return "";
  }
}

function snippet(text: string): string {
  const oneLine = text.replace(/\s+/g, " ").trim();
  if (oneLine === "") return "(empty body)";
  return oneLine.length > 300 ? `${oneLine.slice(0, 300)}…` : oneLine;
}
