import { describe, expect, it } from "vitest";
import { hasControlChars } from "../util/control-chars.js";
import { attributeValueLengthFromEnv } from "./otel-limits.js";

const GENERAL = "OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT";
const SPAN = "OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT";

describe("the attribute value length limit from the environment (docs/pitfalls.md #117)", () => {
  it("unset or empty: eddy's 8192, no warning", () => {
    expect(attributeValueLengthFromEnv({})).toEqual({ limit: 8192, warnings: [] });
    expect(attributeValueLengthFromEnv({ [GENERAL]: "", [SPAN]: "  " })).toEqual({
      limit: 8192,
      warnings: [],
    });
  });

  it.each([
    ["1000", 1000],
    [" 2048 ", 2048],
    ["0", 0],
    ["00042", 42],
    ["1048576", 1048576],
  ])("%j is taken as %i", (raw, limit) => {
    expect(attributeValueLengthFromEnv({ [GENERAL]: raw })).toEqual({ limit, warnings: [] });
    expect(attributeValueLengthFromEnv({ [SPAN]: raw })).toEqual({ limit, warnings: [] });
  });

  it("the span variable wins over the general one", () => {
    expect(attributeValueLengthFromEnv({ [SPAN]: "300", [GENERAL]: "5000" })).toEqual({
      limit: 300,
      warnings: [],
    });
  });

  it.each([
    ["abc"],
    ["-1"],
    ["1e3"],
    ["12.5"],
    ["0x10"],
    ["+5"],
    ["１２"],
    ["12\u0007"],
    ["\u001b[31m99"],
    ["9\u009b2"],
  ])("%j: one warning naming the variable and the default used, never a crash", (raw) => {
    const { limit, warnings } = attributeValueLengthFromEnv({ [GENERAL]: raw });
    expect(limit).toBe(8192);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      /^eddy: OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT=".*" is not a whole number of characters \(0 or more\); using the default, 8192$/,
    );
    expect(hasControlChars(warnings[0] ?? "")).toBe(false);
  });

  it("a bad span variable falls back to the general one, and says so", () => {
    const { limit, warnings } = attributeValueLengthFromEnv({ [SPAN]: "abc", [GENERAL]: "4096" });
    expect(limit).toBe(4096);
    expect(warnings).toEqual([
      `eddy: ${SPAN}="abc" is not a whole number of characters (0 or more); using ${GENERAL}'s 4096`,
    ]);
    const both = attributeValueLengthFromEnv({ [SPAN]: "-1", [GENERAL]: "x" });
    expect(both.limit).toBe(8192);
    expect(both.warnings).toEqual([
      `eddy: ${SPAN}="-1" is not a whole number of characters (0 or more); using the default, 8192`,
      `eddy: ${GENERAL}="x" is not a whole number of characters (0 or more); using the default, 8192`,
    ]);
  });

  it.each([["99999999999999999999"], ["1048577"], ["2147483647"], ["9".repeat(5000)]])(
    "%s, more than eddy records: capped at 1 MiB characters with a warning",
    (raw) => {
      const { limit, warnings } = attributeValueLengthFromEnv({ [GENERAL]: raw });
      expect(limit).toBe(1024 * 1024);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(
        /^eddy: OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT="\d{1,40}…?" is more than eddy records in one attribute value; using 1048576 characters$/,
      );
    },
  );
});
