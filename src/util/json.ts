/** Small JSON helpers shared across layers. */

/** `text` parsed, when it is a JSON object; undefined for invalid JSON or any other JSON value. */
export function parseJsonObject(text: string): { [key: string]: unknown } | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === "object" && !Array.isArray(value)
      ? (value as { [key: string]: unknown })
      : undefined;
  } catch {
    return undefined;
  }
}
