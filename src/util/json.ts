/** Small JSON helpers shared across layers. */

/** A JSON object: a plain `{…}` value, not null and not an array. */
export type JsonRecord = { [key: string]: unknown };

/** True for a JSON object (not null, not an array, not a primitive). */
export function isJsonObject(value: unknown): value is JsonRecord {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** `text` parsed, when it is a JSON object; undefined for invalid JSON or any other JSON value. */
export function parseJsonObject(text: string): JsonRecord | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return isJsonObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** Lone UTF-16 surrogates (half a pair): JSON may carry them, RFC 8785 and UTF-8 cannot. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * `value` with every lone surrogate in its strings and keys replaced by U+FFFD (as
 * `String.prototype.toWellFormed` does). Copy on write: a clean value comes back as it is.
 */
export function wellFormed<T>(value: T): T {
  return wellFormedValue(value) as T;
}

function wellFormedValue(value: unknown): unknown {
  if (typeof value === "string") return value.replace(LONE_SURROGATE, "\ufffd");
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) {
    const mapped = value.map(wellFormedValue);
    return mapped.some((v, i) => v !== value[i]) ? mapped : value;
  }
  let changed = false;
  const entries = Object.entries(value).map(([k, v]) => {
    const key = k.replace(LONE_SURROGATE, "\ufffd");
    const fixed = wellFormedValue(v);
    if (key !== k || fixed !== v) changed = true;
    return [key, fixed] as const;
  });
  return changed ? Object.fromEntries(entries) : value;
}
