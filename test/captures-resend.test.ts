/**
 * Stateless resends of real output: every response of every capture in test/fixtures/captures is
 * assembled, its output items are turned into the input items a stateless follow-up sends
 * (history/items.ts `toInputItem`), and each one whose type has an input-item schema in
 * schemas/openresponses/openapi.json must validate against `ItemParam` and hold no field that
 * schema does not declare (the schemas allow extra fields, so validation alone would pass a call
 * resent with `status: "ready"` or a text part with `logprobs`). Types with no input schema
 * (hosted tool calls) must go back exactly as received.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { toInputItem } from "../src/history/items.js";
import type { JsonObject } from "../src/protocol/types.js";
import { validateInputItem } from "../src/protocol/validate.js";
import { createAssembly, finishAssembly, step } from "../src/provider/assembler/index.js";
import { captureLines, listCaptures, splitResponses } from "./support/captures.js";

const SPEC = join(dirname(fileURLToPath(import.meta.url)), "..", "schemas", "openresponses", "openapi.json");
const schemas = (
  JSON.parse(readFileSync(SPEC, "utf8")) as { components: { schemas: Record<string, Schema> } }
).components.schemas;

interface Schema {
  properties?: Record<string, unknown>;
}

/** The input-item schema of each output item type that has one. */
const INPUT_SCHEMA: Record<string, string> = {
  message: "AssistantMessageItemParam",
  function_call: "FunctionCallItemParam",
  reasoning: "ReasoningItemParam",
  compaction: "CompactionSummaryItemParam",
};
const PART_SCHEMA: Record<string, string> = {
  output_text: "OutputTextContentParam",
  refusal: "RefusalContentParam",
  summary_text: "ReasoningSummaryContentParam",
  url_citation: "UrlCitationParam",
};

/** Fields of `value` (and of its content, summary and annotation parts) its schema does not declare. */
function undeclared(value: JsonObject, schemaName: string, path: string): string[] {
  const declared = Object.keys(schemas[schemaName]?.properties ?? {});
  const out = Object.keys(value)
    .filter((k) => !declared.includes(k))
    .map((k) => `${path}.${k}`);
  for (const key of ["content", "summary", "annotations"]) {
    const parts = value[key];
    if (!Array.isArray(parts)) continue;
    parts.forEach((part, i) => {
      const p = part as JsonObject;
      const name = PART_SCHEMA[String(p.type)];
      if (name === undefined) out.push(`${path}.${key}[${i}] has type ${String(p.type)}`);
      else out.push(...undeclared(p, name, `${path}.${key}[${i}]`));
    });
  }
  return out;
}

function outputItems(lines: string[]): JsonObject[] {
  const state = createAssembly();
  for (const line of lines) {
    try {
      step(state, JSON.parse(line));
    } catch {
      // One capture has lines that are not JSON (see test/support/captures.ts); the stream skips them.
    }
  }
  return finishAssembly(state).items;
}

describe("stateless resends of every capture's output fit the input-item schemas", () => {
  const captures = listCaptures();
  const counts = { checked: 0, opaque: 0, dropped: 0 };

  it("covers the 47 Responses captures", () => {
    expect(captures).toHaveLength(47);
  });

  for (const name of captures) {
    it(name, () => {
      for (const lines of splitResponses(captureLines(name))) {
        for (const item of outputItems(lines)) {
          for (const keepItemIds of [true, false]) {
            const input = toInputItem(item, { keepItemIds });
            const schema = INPUT_SCHEMA[String(item.type)];
            if (input === undefined) {
              counts.dropped++;
              continue;
            }
            if (schema === undefined) {
              counts.opaque++;
              const { id: _id, ...rest } = item;
              expect(input).toEqual(keepItemIds ? item : rest);
              continue;
            }
            counts.checked++;
            const where = `${name} ${String(item.type)} ${String(item.id)}`;
            expect(validateInputItem(input), where).toBeUndefined();
            expect(undeclared(input, schema, String(item.type)), where).toEqual([]);
            expect("id" in input, where).toBe(keepItemIds && typeof item.id === "string");
          }
        }
      }
    });
  }

  it("checked real items of every kind", () => {
    // Runs after the per-capture cases (vitest runs a file's tests in order).
    expect(counts.checked).toBeGreaterThan(100);
    expect(counts.opaque).toBeGreaterThan(0);
    expect(counts.dropped).toBeGreaterThan(0);
  });
});
