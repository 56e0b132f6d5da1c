import { describe, expect, it } from "vitest";
import { SPEC_ENUMS } from "../protocol/generated/enums.js";
import { allowedValues, parseMetadataPair, requestFields, requestOptionProblem } from "./request-options.js";

describe("request options checked against the spec", () => {
  it("enum options take their values from the vendored spec", () => {
    expect(allowedValues("reasoningEffort")).toBe(SPEC_ENUMS.ReasoningEffortEnum);
    expect(allowedValues("serviceTier")).toEqual(["auto", "default", "flex", "priority"]);
    expect(requestOptionProblem("verbosity", "medium")).toBeUndefined();
    expect(requestOptionProblem("reasoningSummary", "brief")).toBe(
      'must be one of concise, detailed, auto (got "brief")',
    );
  });

  it.each([
    ["maxOutputTokens", 16, undefined],
    ["maxOutputTokens", 15, "must be an integer ≥ 16 (got 15)"],
    ["maxOutputTokens", 20.5, "must be an integer ≥ 16 (got 20.5)"],
    ["temperature", 2, undefined],
    ["temperature", -0.1, "must be a number from 0 to 2 (got -0.1)"],
    ["topP", Number.NaN, "must be a number from 0 to 1 (got NaN)"],
    ["promptCacheKey", "x".repeat(65), `must be 1 to 64 characters (got "${"x".repeat(65)}")`],
  ] as const)("%s = %s", (option, value, problem) => {
    expect(requestOptionProblem(option, value)).toBe(problem);
  });

  it("builds the request fields", () => {
    expect(
      requestFields({
        reasoningEffort: "high",
        reasoningSummary: "auto",
        verbosity: "low",
        maxOutputTokens: 800,
        topP: 0.9,
        include: ["message.output_text.logprobs"],
        metadata: { a: "1" },
      }),
    ).toEqual({
      reasoning: { effort: "high", summary: "auto" },
      text: { verbosity: "low" },
      max_output_tokens: 800,
      top_p: 0.9,
      include: ["message.output_text.logprobs"],
      metadata: { a: "1" },
    });
    expect(requestFields({})).toEqual({});
  });

  it("refuses with the label of where the value came from", () => {
    expect(() => requestFields({ reasoningEffort: "max" }, () => "--reasoning-effort")).toThrow(
      '--reasoning-effort must be one of none, low, medium, high, xhigh (got "max")',
    );
    const many = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, "v"]));
    expect(() => requestFields({ metadata: many }, () => "--metadata")).toThrow(
      "--metadata takes at most 16 pairs (got 17)",
    );
  });

  it("parses metadata pairs", () => {
    expect(parseMetadataPair("team=core=1")).toEqual(["team", "core=1"]);
    expect(parseMetadataPair("novalue")).toBe('must be KEY=VALUE (got "novalue")');
    expect(parseMetadataPair(`${"k".repeat(65)}=v`)).toMatch(/keys must be at most 64 characters/);
  });
});
