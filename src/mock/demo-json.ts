/**
 * Structured output for the demo model: when a request asks for `text.format: json_schema`, the
 * answer is a JSON value built from the schema (required properties only, first `enum`/`const`
 * value, `default` when given, minimal arrays), with the demo's reply text in the first string
 * slot. Enough for a client to exercise its schema path offline; not a general generator.
 */

/** A value matching (the common subset of) `schema`; `text` fills the first free string. */
export function sampleFromSchema(schema: unknown, text: string): unknown {
  const slot = { text: text as string | undefined };
  return sample(schema, slot, 0);
}

function sample(schema: unknown, slot: { text: string | undefined }, depth: number): unknown {
  if (schema === null || typeof schema !== "object" || depth > 8) return null;
  const s = schema as Record<string, unknown>;
  if ("const" in s) return s.const;
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0];
  if ("default" in s) return s.default;
  for (const key of ["anyOf", "oneOf", "allOf"]) {
    const options = s[key];
    if (Array.isArray(options) && options.length > 0) return sample(options[0], slot, depth + 1);
  }
  const type = Array.isArray(s.type) ? s.type.find((t) => t !== "null") : s.type;
  switch (type) {
    case "object": {
      const properties = (s.properties ?? {}) as Record<string, unknown>;
      const required = Array.isArray(s.required)
        ? s.required.filter((k): k is string => typeof k === "string")
        : [];
      const keys = required.length > 0 ? required : Object.keys(properties);
      const out: Record<string, unknown> = {};
      for (const key of keys) out[key] = sample(properties[key] ?? {}, slot, depth + 1);
      return out;
    }
    case "array": {
      const min = typeof s.minItems === "number" ? s.minItems : 0;
      return Array.from({ length: Math.min(min, 3) }, () => sample(s.items ?? {}, slot, depth + 1));
    }
    case "string": {
      const text = slot.text;
      slot.text = undefined;
      return text ?? "";
    }
    case "integer":
    case "number":
      return typeof s.minimum === "number" ? s.minimum : 0;
    case "boolean":
      return false;
    case "null":
      return null;
    default:
      return slot.text === undefined ? null : sample({ type: "string" }, slot, depth);
  }
}
