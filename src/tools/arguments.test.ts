import { describe, expect, it } from "vitest";
import { z } from "zod";
import { looksCutOff } from "./arguments.js";
import { createToolRegistry, type RegisteredTool } from "./registry.js";
import { defineTool } from "./tool.js";

const readLike = defineTool<{ path: string; start_line?: number }>({
  name: "read_like",
  description: "reads",
  parameters: {
    type: "object",
    properties: { path: { type: "string" }, start_line: { type: "integer", minimum: 1 } },
    required: ["path"],
    additionalProperties: false,
  },
  execute: () => "",
});
const noArgs = defineTool({
  name: "now",
  description: "no arguments",
  parameters: { type: "object", properties: {}, additionalProperties: false },
  execute: () => "",
});
const zodTool = defineTool({
  name: "zod_tool",
  description: "zod",
  parameters: z.object({ n: z.number().int().min(1), tags: z.array(z.string()).default([]) }),
  execute: (args) => String(args.n + args.tags.length),
});

const registry = createToolRegistry([readLike, noArgs, zodTool]);
const tool = (name: string): RegisteredTool => {
  const t = registry.resolve(name);
  if (t === undefined) throw new Error(name);
  return t;
};

describe("argument parsing: refusals (docs/pitfalls.md #39, #49)", () => {
  it.each<[string, string, RegExp[]]>([
    [
      "trailing comma",
      '{"path":"a.txt",}',
      [/not valid JSON/, /trailing commas/, /began: "\{\\"path\\":\\"a.txt\\",\}"/],
    ],
    ["single quotes", "{'path':'a'}", [/not valid JSON/]],
    ["comment", '{"path":"a"} // read', [/not valid JSON/]],
    ["raw control character", '{"path":"a\nb"}', [/not valid JSON/, /Bad control character/]],
    ["null", "null", [/must be a JSON object, got null/]],
    ["array", '[{"path":"a"}]', [/must be a JSON object, got an array/]],
    ["number", "42", [/got a number/]],
    ["plain string", '"a.txt"', [/got a string\./]],
    ["double-encoded object", JSON.stringify(JSON.stringify({ path: "a" })), [/encoded twice/]],
    ["cut off inside a string", '{"path":"a.txt","content":"hello wor', [/were cut off/, /append:true/]],
    ["cut off after a comma", '{"path":"a.txt",', [/were cut off/]],
    ["cut off inside a literal", '{"path":"a.txt","start_line":tru', [/were cut off/]],
    ["missing required field", "{}", [/path: is required but missing/]],
    ["unknown field", '{"path":"a","bogus":1}', [/bogus: is not a known property/]],
    ["wrong type", '{"path":3}', [/path: must be string/]],
    ["bad integer", '{"path":"a","start_line":0}', [/start_line: must be >= 1/]],
    ["empty arguments, required fields", "", [/empty arguments, but it needs: path: is required/]],
  ])("%s", (_label, raw, patterns) => {
    const parsed = tool("read_like").parseArguments(raw);
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.error.code).toBe("tool_input_invalid");
    for (const p of patterns) expect(parsed.error.message).toMatch(p);
    // Every refusal but the cut-off one shows the schema the model should follow.
    if (!/cut off/.test(parsed.error.message)) {
      expect(parsed.error.message).toContain('Expected arguments (JSON Schema): {"type":"object"');
    }
  });

  it("quotes only a bounded prefix of huge bad arguments", () => {
    const parsed = tool("read_like").parseArguments(`{"path": "${"x".repeat(100_000)}",}`);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error.message.length).toBeLessThan(1500);
  });
});

describe("argument parsing: accepted", () => {
  it.each<[string, string, string, unknown]>([
    ["object", "read_like", '{"path":"a.txt"}', { path: "a.txt" }],
    ["object with whitespace", "read_like", ' \n{ "path" : "a.txt" }\n', { path: "a.txt" }],
    ["empty string when nothing is required (docs/decisions.md #7)", "now", "", {}],
    ["whitespace-only when nothing is required", "now", "  ", {}],
    ["empty object", "now", "{}", {}],
    ["zod: defaults applied", "zod_tool", '{"n":2}', { n: 2, tags: [] }],
  ])("%s", (_label, name, raw, expected) => {
    expect(tool(name).parseArguments(raw)).toEqual({ ok: true, value: expected });
  });

  it("zod schemas name the bad field too", () => {
    const parsed = tool("zod_tool").parseArguments('{"n":"2"}');
    expect(parsed.ok).toBe(false);
    if (!parsed.ok)
      expect(parsed.error.message).toMatch(/Invalid arguments for zod_tool: n: .*expected number/);
  });
});

describe("looksCutOff", () => {
  it.each<[string, boolean]>([
    ['{"a":"b', true],
    ['{"a":[1,2', true],
    ['{"a":"\\"', true],
    ['{"a":1,}', false],
    ['{"a":1}}', false],
    ["nonsense", false],
  ])("%j → %s", (raw, expected) => {
    expect(looksCutOff(raw)).toBe(expected);
  });
});
