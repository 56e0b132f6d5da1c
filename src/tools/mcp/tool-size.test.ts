import { describe, expect, it } from "vitest";
import { MCP_DEFAULTS } from "./defaults.js";
import { boundedTools, boundsWarning, cutText } from "./tool-size.js";

const MAX = MCP_DEFAULTS.maxDescriptionBytes;

describe("cutText", () => {
  it("keeps a text of at most the limit as it is, the same string", () => {
    const exact = "é".repeat(MAX / 2);
    expect(cutText(exact, MAX)).toBe(exact);
    expect(cutText(undefined, MAX)).toBeUndefined();
    expect(cutText("", MAX)).toBe("");
  });

  it("cuts one byte over the limit to at most the limit, never inside a character", () => {
    for (const unit of ["x", "é", "€", "🦀"]) {
      const text = `y${unit.repeat(MAX)}`;
      const cut = cutText(text, MAX) ?? "";
      expect(Buffer.byteLength(cut), unit).toBeLessThanOrEqual(MAX);
      expect(cut).not.toContain("\uFFFD");
      expect(cut.endsWith(`over the ${MAX}-byte limit]`)).toBe(true);
      expect(text.startsWith(cut.slice(0, cut.indexOf(" … [cut by eddy")))).toBe(true);
    }
  });
});

describe("boundedTools", () => {
  it("leaves tools within the bounds untouched (the same objects) and says nothing", () => {
    const tools = [{ name: "a", description: "d", inputSchema: { type: "object" as const } }];
    const bounded = boundedTools(tools);
    expect(bounded.tools[0]).toBe(tools[0]);
    expect(boundsWarning('MCP server "h"', bounded)).toBeUndefined();
  });

  it("names at most three tools in its one warning, each name shortened and quoted", () => {
    const long = "n".repeat(10_000);
    const tools = [long, "b\u001b[2J", "c", "d"].map((name) => ({
      name,
      description: "x".repeat(MAX + 1),
      inputSchema: { type: "object" as const },
    }));
    const warning = boundsWarning('MCP server "h"', boundedTools(tools)) ?? "";
    expect(warning).toMatch(
      /^MCP server "h": the descriptions of 4 tools \("n{64}…", "b\\u001b\[2J", "c", …\) are over 8192 bytes and are cut$/,
    );
  });
});
