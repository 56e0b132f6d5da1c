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

describe("boundedTools: the tools of one server together", () => {
  const tool = (name: string, description: string) => ({
    name,
    description,
    inputSchema: { type: "object" as const },
  });

  it("leaves out whole the tools past the total, in the server's order, and says how many in its one warning", () => {
    const tools = ["a", "b", "c", "d", "e"].map((n) => tool(n, "x".repeat(400)));
    const bounded = boundedTools(tools, 1000);
    expect(bounded.tools).toEqual(tools.slice(0, 2)); // ~430 bytes each: a third passes 1000
    expect(bounded.tools[0]).toBe(tools[0]);
    expect(bounded.left).toEqual(["c", "d", "e"]);
    expect(boundsWarning('MCP server "h"', bounded)).toBe(
      `MCP server "h": its tools take more than ${MCP_DEFAULTS.maxServerToolsBytes} bytes: 3 tools ("c", "d", "e") past its first 2 are left out`,
    );
  });

  it("counts a tool as offered: its description cut, its schema opened; a small tool after a large one left out is left out too", () => {
    const big = { name: "big", description: "y".repeat(MAX * 10), inputSchema: { type: "object" as const } };
    // The cut description is MAX bytes; with its name and schema the tool is ~MAX + 40.
    const bounded = boundedTools([big, tool("small", "x".repeat(100))], MAX + 100);
    expect(bounded.tools.map((t) => t.name)).toEqual(["big"]);
    expect(bounded.cut).toEqual(["big"]);
    expect(bounded.left).toEqual(["small"]);
    // Past the total from the first tool: nothing is offered, nothing said of the cut ones.
    const none = boundedTools([big, tool("small", "s")], 10);
    expect(none).toEqual({ tools: [], cut: [], opened: [], left: ["big", "small"] });
  });

  it("counts a schema nested too deep to serialize as the open schema it will be offered as", () => {
    let schema: Record<string, unknown> = { type: "object" };
    for (let i = 0; i < 5000; i++) schema = { type: "object", properties: { a: schema } };
    const deep = { name: "deep", inputSchema: schema as { type: "object" } };
    const bounded = boundedTools([deep, tool("after", "z")], 500);
    expect(bounded.tools.map((t) => t.name)).toEqual(["deep", "after"]);
    expect(bounded.left).toEqual([]);
  });
});
