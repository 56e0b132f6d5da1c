import { describe, expect, it } from "vitest";
import { MCP_DEFAULTS } from "./defaults.js";
import {
  acrossWarning,
  boundedAcross,
  boundedTools,
  boundsWarning,
  cutText,
  offeredBytes,
} from "./tool-size.js";

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

describe("boundedAcross: the tools of all servers of a run together (docs/pitfalls.md #121)", () => {
  const tool = (name: string, description: string) => ({
    name,
    description,
    inputSchema: { type: "object" as const },
  });
  /** A tool of exactly `bytes` as offered. */
  const sized = (name: string, bytes: number) =>
    tool(name, "x".repeat(bytes - (offeredBytes([tool(name, "")])[0] ?? 0)));

  it("counts each tool as boundedTools does: the same total for one server", () => {
    const tools = ["a", "b", "c"].map((n) => tool(n, "é".repeat(300)));
    const sum = offeredBytes(tools).reduce((a, b) => a + b, 0);
    expect(boundedTools(tools, sum).left).toEqual([]);
    expect(boundedTools(tools, sum - 1).left).toEqual(["c"]);
    expect(boundedAcross([{ server: "s", tools }], sum)).toEqual({ kept: [3], left: [] });
    expect(boundedAcross([{ server: "s", tools }], sum - 1).kept).toEqual([2]);
  });

  it("several servers over the total: filled in configuration order, the rest left out whole, one warning", () => {
    const servers = ["a", "b", "c", "d"].map((server) => ({
      server,
      tools: [0, 1, 2].map((i) => sized(`${server}${i}`, 1000)),
    }));
    const run = boundedAcross(servers, 6500);
    // 6 tools take 6000 bytes; the seventh passes 6500; a smaller tool after it is left out too.
    expect(run.kept).toEqual([3, 3, 0, 0]);
    expect(run.left).toEqual([
      { server: "c", tools: ["c0", "c1", "c2"] },
      { server: "d", tools: ["d0", "d1", "d2"] },
    ]);
    expect(acrossWarning(run)).toBe(
      `the tools of the MCP servers take more than ${MCP_DEFAULTS.maxTotalToolsBytes} bytes together: 6 tools past the first ones, in mcp_servers order, are left out: 3 of MCP server "c" ("c0", "c1", "c2"), 3 of MCP server "d" ("d0", "d1", "d2")`,
    );
    const small = [
      ...servers.slice(0, 2),
      { server: "c", tools: [sized("big", 600)] },
      { server: "d", tools: [tool("t", "")] },
    ];
    expect(boundedAcross(small, 6500).kept).toEqual([3, 3, 0, 0]);
  });

  it("exactly at MCP_DEFAULTS.maxTotalToolsBytes every tool is offered; one byte more leaves the last out", () => {
    const max = MCP_DEFAULTS.maxTotalToolsBytes;
    // Four servers of 16 tools of 64 KiB each: 4 MiB.
    const servers = ["a", "b", "c", "d"].map((server) => ({
      server,
      tools: Array.from({ length: 16 }, (_, i) => sized(`${server}${i}`, 64 * 1024)),
    }));
    const all = servers.flatMap((s) => s.tools);
    expect(offeredBytes(all).reduce((a, b) => a + b, 0)).toBe(max);
    expect(boundedAcross(servers)).toEqual({ kept: [16, 16, 16, 16], left: [] });
    expect(acrossWarning(boundedAcross(servers))).toBeUndefined();
    const over = [
      ...servers.slice(0, 3),
      { server: "d", tools: [...all.slice(48, 63), sized("d15", 64 * 1024 + 1)] },
    ];
    expect(boundedAcross(over)).toEqual({ kept: [16, 16, 16, 15], left: [{ server: "d", tools: ["d15"] }] });
  });

  it("a re-listing is a new listing: counted again, and past the total it is left out", () => {
    const a = { server: "a", tools: [sized("a0", 1000)] };
    const b = { server: "b", tools: [sized("b0", 1000)] };
    expect(boundedAcross([a, b], 2500).left).toEqual([]);
    // Server a lists again, a larger tool: the later server's tool no longer fits.
    const relisted = { server: "a", tools: [sized("a0", 2000)] };
    expect(boundedAcross([relisted, b], 2500)).toEqual({
      kept: [1, 0],
      left: [{ server: "b", tools: ["b0"] }],
    });
  });

  it("names at most five servers and three tools each, quoted and shortened", () => {
    const servers = Array.from({ length: 7 }, (_, i) => ({
      server: i === 0 ? `s\u001b[2J${"n".repeat(100)}` : `s${i}`,
      tools: ["x", "y", "z", "w"].map((n) => tool(n, "")),
    }));
    const warning = acrossWarning(boundedAcross(servers, 0)) ?? "";
    expect(warning).toContain("28 tools past the first ones");
    expect(warning).toContain('4 of MCP server "s\\u001b[2J');
    expect(warning).toContain('("x", "y", "z", …)');
    expect(warning).toMatch(/4 of MCP server "s4" \("x", "y", "z", …\), and tools of 2 more servers$/);
    expect(warning).not.toContain("\u001b");
  });
});
