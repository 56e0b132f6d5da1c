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

/** The observer's default bounds. */
export const OTEL_LIMITS = {
  /** Longest string attribute value (each string of an array too, and a status message), in UTF-16 units. */
  attributeValueLength: 8 * 1024,
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
 * The bounds of `options`, checked: each a whole number of at least 1, or `Infinity` (no bound).
 * Anything else is refused naming the option.
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
    ),
    arrayLength: bound(
      "attributeArrayLengthLimit",
      options.attributeArrayLengthLimit,
      OTEL_LIMITS.attributeArrayLength,
    ),
  };
}

function bound(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (value === Number.POSITIVE_INFINITY) return value;
  if (typeof value === "number" && Number.isSafeInteger(value) && value >= 1) return value;
  const shown = typeof value === "string" ? JSON.stringify(value.slice(0, 40)) : String(value);
  throw new EddyError(
    "invalid_argument",
    `the OpenTelemetry observer's ${name} must be a whole number of at least 1 (or Infinity), not ${shown}`,
    { fault: "user" },
  );
}

/** `text`, at most `max` characters: cut with `…`, never between the halves of a surrogate pair. */
export function capText(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max - 1;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${text.slice(0, Math.max(0, end))}…`;
}

/** An attribute value within `limits`. */
export function capValue(value: AttributeValue, limits: AttributeLimits): AttributeValue {
  if (typeof value === "string") return capText(value, limits.valueLength);
  if (!Array.isArray(value)) return value;
  const kept = value.length > limits.arrayLength ? value.slice(0, limits.arrayLength) : value;
  return kept.map((v) => (typeof v === "string" ? capText(v, limits.valueLength) : v)) as AttributeValue;
}

/** Attributes within `limits` (a new object; `undefined` values are left out as the SDK does). */
export function capAttributes(attributes: Attributes, limits: AttributeLimits): Attributes {
  const capped: Attributes = {};
  for (const key of Object.keys(attributes)) {
    const value = attributes[key];
    if (value !== undefined) capped[key] = capValue(value, limits);
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
    this.span.setAttribute(key, capValue(value, this.limits));
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
