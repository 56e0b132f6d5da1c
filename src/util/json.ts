/** Small JSON helpers shared across layers. */

/** Whether a value is a JSON object (not null, not an array). */
export function isJsonObject(value: unknown): value is { [key: string]: unknown } {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** `text` parsed, when it is a JSON object; undefined for invalid JSON or any other JSON value. */
export function parseJsonObject(text: string): { [key: string]: unknown } | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return isJsonObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}
