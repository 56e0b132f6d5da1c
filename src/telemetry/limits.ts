/**
 * Bounds on what the observer puts in a span (docs/pitfalls.md #96). A model's answer, a tool's
 * arguments or output, a provider's error message, a tool name the model made up or a run's tool
 * list land in span attributes, names and status messages; unbounded, one 1 MB answer made a 1 MB
 * span (with content capture, twice: the chat span and the run span) sent to the collector, which
 * may refuse the whole export for it. Every span the observer starts goes through `LimitedSpan`,
 * which cuts each string attribute value (and each string in an array) to
 * `attributeValueLengthLimit` characters, each array to `attributeArrayLengthLimit` items, the span
 * name and event names to `OTEL_LIMITS.nameChars`, and a status message as an attribute value.
 * The SDK's own span limit (`spanLimits.attributeValueLengthLimit`, which `eddy run --otel` sets
 * too: src/cli/otel.ts) cuts attribute strings only, and only where the program configured it.
 *
 * JSON-valued attributes (the GenAI messages, system instructions, a tool call's arguments and
 * result: `JSON_ATTRIBUTES`) are cut so that they stay JSON (src/telemetry/json-cut.ts,
 * docs/pitfalls.md #116).
 *
 * Values are cut after the frames were masked (src/loop/frame-channel.ts): a secret is replaced
 * before anything here sees it, so a cut never leaves half of one unmasked.
 */
import type {
  Attributes,
  AttributeValue,
  Context,
  Exception,
  Link,
  Span,
  SpanContext,
  SpanOptions,
  SpanStatus,
  TimeInput,
  Tracer,
} from "@opentelemetry/api";
import { EddyError } from "../errors.js";
import { capJson } from "./json-cut.js";

/** The observer's default bounds. */
export const OTEL_LIMITS = {
  /** Longest string attribute value (each string of an array too, and a status message), in UTF-16 units. */
  attributeValueLength: 8 * 1024,
  /**
   * The most `OTEL_(SPAN_)ATTRIBUTE_VALUE_LENGTH_LIMIT` is taken as (src/cli/otel-limits.ts): 1 MiB
   * characters. More would let one answer make a span of megabytes again (docs/pitfalls.md #96).
   */
  attributeValueLengthMax: 1024 * 1024,
  /** Most items an array attribute keeps (`eddy.tools` of a run with thousands of MCP tools). */
  attributeArrayLength: 128,
  /** Longest span or event name (`execute_tool {name}` with the name a model made up). */
  nameChars: 256,
} as const;

/** The bounds one observer applies. */
export interface AttributeLimits {
  valueLength: number;
  arrayLength: number;
}

/**
 * The bounds of `options`, checked: each a whole number (at least 0 for the value length, where 0
 * records every string empty; at least 1 for the array length), or `Infinity` (no bound). Anything
 * else is refused naming the option.
 */
export function attributeLimitsOf(options: {
  attributeValueLengthLimit?: unknown;
  attributeArrayLengthLimit?: unknown;
}): AttributeLimits {
  return {
    valueLength: bound(
      "attributeValueLengthLimit",
      options.attributeValueLengthLimit,
      OTEL_LIMITS.attributeValueLength,
      0,
    ),
    arrayLength: bound(
      "attributeArrayLengthLimit",
      options.attributeArrayLengthLimit,
      OTEL_LIMITS.attributeArrayLength,
      1,
    ),
  };
}

function bound(name: string, value: unknown, fallback: number, least: number): number {
  if (value === undefined) return fallback;
  if (value === Number.POSITIVE_INFINITY) return value;
  if (typeof value === "number" && Number.isSafeInteger(value) && value >= least) return value;
  const shown = typeof value === "string" ? JSON.stringify(value.slice(0, 40)) : String(value);
  throw new EddyError(
    "invalid_argument",
    `the OpenTelemetry observer's ${name} must be a whole number of at least ${least} (or Infinity), not ${shown}`,
    { fault: "user" },
  );
}

/** `text`, at most `max` characters: cut with `…`, never between the halves of a surrogate pair. */
export function capText(text: string, max: number): string {
  if (text.length <= max) return text;
  if (max <= 0) return "";
  let end = max - 1;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${text.slice(0, Math.max(0, end))}…`;
}

/**
 * The attributes whose value is JSON text. The messages and instructions are JSON eddy wrote
 * (src/telemetry/run-trace.ts); a tool call's arguments and result are JSON when they parse.
 */
export const JSON_ATTRIBUTES: ReadonlyMap<string, "json" | "maybe-json"> = new Map([
  ["gen_ai.input.messages", "json"],
  ["gen_ai.output.messages", "json"],
  ["gen_ai.system_instructions", "json"],
  ["gen_ai.tool.call.arguments", "maybe-json"],
  ["gen_ai.tool.call.result", "maybe-json"],
]);

/**
 * `text` in at most `max` characters: cut as JSON (src/telemetry/json-cut.ts) when it is JSON, as
 * plain text (`capText`, ending with `…`) when it is not (a model's tool arguments need not parse).
 */
export function capJsonOrText(text: string, max: number): string {
  if (text.length <= max) return text;
  try {
    JSON.parse(text);
  } catch {
    return capText(text, max);
  }
  return capJson(text, max);
}

/** An attribute value within `limits`; the value of a `JSON_ATTRIBUTES` key stays JSON. */
export function capValue(value: AttributeValue, limits: AttributeLimits, key?: string): AttributeValue {
  if (typeof value === "string") {
    const json = key === undefined ? undefined : JSON_ATTRIBUTES.get(key);
    if (json === undefined || value.length <= limits.valueLength) return capText(value, limits.valueLength);
    return json === "json" ? capJson(value, limits.valueLength) : capJsonOrText(value, limits.valueLength);
  }
  if (!Array.isArray(value)) return value;
  const kept = value.length > limits.arrayLength ? value.slice(0, limits.arrayLength) : value;
  return kept.map((v) => (typeof v === "string" ? capText(v, limits.valueLength) : v)) as AttributeValue;
}

/** Attributes within `limits` (a new object; `undefined` values are left out as the SDK does). */
export function capAttributes(attributes: Attributes, limits: AttributeLimits): Attributes {
  const capped: Attributes = {};
  for (const key of Object.keys(attributes)) {
    const value = attributes[key];
    if (value !== undefined) capped[key] = capValue(value, limits, key);
  }
  return capped;
}

/** Starts a span with `tracer`, its name, attributes and everything set on it later within `limits`. */
export function startLimitedSpan(
  tracer: Tracer,
  limits: AttributeLimits,
  name: string,
  options: SpanOptions,
  context: Context,
): Span {
  const bounded: SpanOptions =
    options.attributes === undefined
      ? options
      : { ...options, attributes: capAttributes(options.attributes, limits) };
  return new LimitedSpan(tracer.startSpan(capText(name, OTEL_LIMITS.nameChars), bounded, context), limits);
}

/** A span that bounds what it is given (see the module comment), the rest passed on as it is. */
class LimitedSpan implements Span {
  constructor(
    private readonly span: Span,
    private readonly limits: AttributeLimits,
  ) {}

  spanContext(): SpanContext {
    return this.span.spanContext();
  }

  setAttribute(key: string, value: AttributeValue): this {
    this.span.setAttribute(key, capValue(value, this.limits, key));
    return this;
  }

  setAttributes(attributes: Attributes): this {
    this.span.setAttributes(capAttributes(attributes, this.limits));
    return this;
  }

  addEvent(name: string, attributesOrTime?: Attributes | TimeInput, time?: TimeInput): this {
    const attributes =
      attributesOrTime !== null && typeof attributesOrTime === "object" && !isTime(attributesOrTime)
        ? capAttributes(attributesOrTime as Attributes, this.limits)
        : attributesOrTime;
    this.span.addEvent(capText(name, OTEL_LIMITS.nameChars), attributes, time);
    return this;
  }

  addLink(link: Link): this {
    this.span.addLink(link);
    return this;
  }

  addLinks(links: Link[]): this {
    this.span.addLinks(links);
    return this;
  }

  setStatus(status: SpanStatus): this {
    this.span.setStatus(
      status.message === undefined
        ? status
        : { ...status, message: capText(status.message, this.limits.valueLength) },
    );
    return this;
  }

  updateName(name: string): this {
    this.span.updateName(capText(name, OTEL_LIMITS.nameChars));
    return this;
  }

  end(endTime?: TimeInput): void {
    this.span.end(endTime);
  }

  isRecording(): boolean {
    return this.span.isRecording();
  }

  recordException(exception: Exception, time?: TimeInput): void {
    this.span.recordException(exception, time);
  }
}

/** A `TimeInput` given where event attributes may be: a Date or an `[seconds, nanos]` pair. */
function isTime(value: object): boolean {
  return (
    value instanceof Date ||
    (Array.isArray(value) && value.length === 2 && value.every((n) => typeof n === "number"))
  );
}
