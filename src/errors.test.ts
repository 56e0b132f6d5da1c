import { describe, expect, it } from "vitest";
import { describeError } from "./errors.js";

describe("describeError", () => {
  it("is the first line of a message", () => {
    expect(describeError(new Error("one\ntwo"))).toBe("one");
    expect(describeError("plain")).toBe("plain");
    expect(describeError({ a: 1 })).toBe('{"a":1}');
  });

  it("keeps a JSON dump the first line only opens (the MCP SDK's validation errors), on one line and cut", () => {
    const sdk = new Error(
      'MCP error -32602: Invalid tools/call result: [\n  {\n    "code": "invalid_type",\n    "path": ["content"]\n  }\n]',
    );
    expect(describeError(sdk)).toBe(
      'MCP error -32602: Invalid tools/call result: [ { "code": "invalid_type", "path": ["content"] } ]',
    );
    const long = new Error(`x: [\n${"a".repeat(2000)}\n]`);
    expect(describeError(long)).toHaveLength(500);
  });
});
