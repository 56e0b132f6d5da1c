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
