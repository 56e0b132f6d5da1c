/**
 * The attribute value length limit of `eddy … --otel` from the OpenTelemetry environment variables
 * (docs/pitfalls.md #117): `OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT`, else
 * `OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT`, else eddy's 8192 characters (src/telemetry/limits.ts). The
 * OpenTelemetry environment variable specification's rules: an empty value is as if unset; a value
 * that is not a whole number (`abc`, `-1`, `1e3`) is ignored with a warning, and the next source is
 * used. 0 records every string attribute empty. More than `OTEL_LIMITS.attributeValueLengthMax`
 * (1 MiB characters) is taken as that maximum, with a warning. Lengths are in UTF-16 code units,
 * as the OpenTelemetry JS SDK counts them.
 */
import { OTEL_LIMITS } from "../telemetry/limits.js";
import { safeJson } from "../util/control-chars.js";
import type { Env } from "./config.js";

/** The variables read, the first set to a valid value winning (the span one, as the spec says). */
export const VALUE_LENGTH_VARIABLES = [
  "OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT",
  "OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT",
] as const;

/** The limit to apply and the lines to show about the variables (each one line, safe to print). */
export interface ValueLengthSetting {
  limit: number;
  warnings: string[];
}

/** The attribute value length limit the environment asks for (see the module comment). */
export function attributeValueLengthFromEnv(env: Env): ValueLengthSetting {
  const refused: Array<[name: string, raw: string]> = [];
  for (const name of VALUE_LENGTH_VARIABLES) {
    const raw = env[name];
    if (raw === undefined || raw.trim() === "") continue;
    const text = raw.trim();
    if (!/^[0-9]+$/.test(text)) {
      refused.push([name, raw]);
      continue;
    }
    const max = OTEL_LIMITS.attributeValueLengthMax;
    const value = Number(text);
    const warnings = refused.map(([n, r]) => refusedLine(n, r, `${name}'s ${Math.min(value, max)}`));
    if (value <= max) return { limit: value, warnings };
    warnings.push(
      `eddy: ${name}=${shown(text)} is more than eddy records in one attribute value; using ${max} characters`,
    );
    return { limit: max, warnings };
  }
  const fallback = OTEL_LIMITS.attributeValueLength;
  return {
    limit: fallback,
    warnings: refused.map(([n, r]) => refusedLine(n, r, `the default, ${fallback}`)),
  };
}

function refusedLine(name: string, raw: string, used: string): string {
  return `eddy: ${name}=${shown(raw)} is not a whole number of characters (0 or more); using ${used}`;
}

/** A value as it may be printed: quoted, control characters escaped, at most 40 characters of it. */
function shown(raw: string): string {
  return safeJson(raw.length > 40 ? `${raw.slice(0, 40)}…` : raw);
}
