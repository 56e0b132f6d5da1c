import { describe, expect, it } from "vitest";
import type { Usage } from "../protocol/types.js";
import { addUsage, emptyUsage } from "./usage.js";

const usage = (input: unknown, output: unknown, total: unknown = 0): Usage =>
  ({ input_tokens: input, output_tokens: output, total_tokens: total }) as Usage;

describe("addUsage", () => {
  it("sums whole counts, partial reports included", () => {
    const sum = emptyUsage();
    addUsage(sum, usage(10, 5, 15));
    addUsage(sum, { input_tokens: 1 } as Usage);
    addUsage(sum, null);
    expect(sum).toMatchObject({ input_tokens: 11, output_tokens: 5, total_tokens: 15 });
  });

  it("counts a negative, fractional, absurd or non-number count as 0, and a sum never reaches Infinity (found by a probe)", () => {
    const sum = emptyUsage();
    addUsage(sum, usage(-5, 1.5, "12"));
    expect(sum).toMatchObject({ input_tokens: 0, output_tokens: 0, total_tokens: 0 });
    addUsage(sum, usage(1e308, 1.7e308, Number.POSITIVE_INFINITY));
    expect(sum).toMatchObject({ input_tokens: 0, output_tokens: 0, total_tokens: 0 });
    const big = Number.MAX_SAFE_INTEGER - 1;
    addUsage(sum, usage(big, big, big));
    addUsage(sum, usage(big, big, big));
    expect(sum.input_tokens).toBe(Number.MAX_SAFE_INTEGER);
    expect(JSON.parse(JSON.stringify(sum)).total_tokens).toBe(Number.MAX_SAFE_INTEGER);
  });
});
