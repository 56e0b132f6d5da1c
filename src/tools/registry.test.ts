import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { EddyError } from "../errors.js";
import { createToolRegistry } from "./registry.js";
import { defineTool, type ToolDefinition } from "./tool.js";

const schema = { type: "object", properties: { q: { type: "string" } }, additionalProperties: false };
const tool = (name: string, extra: Partial<ToolDefinition> = {}): ToolDefinition => ({
  name,
  description: `the ${name} tool`,
  parameters: schema,
  execute: () => "ok",
  ...extra,
});

function configError(fn: () => unknown): EddyError {
  try {
    fn();
  } catch (error) {
    expect(EddyError.isInstance(error)).toBe(true);
    const e = error as EddyError;
    expect(e.code).toBe("invalid_config");
    return e;
  }
  throw new Error("expected an invalid_config error");
}

describe("createToolRegistry: registration", () => {
  it.each([[""], ["has space"], ["dots.not.allowed"], ["x".repeat(65)], ["ünïcode"], ["slash/name"]])(
    "rejects the name %j with a clear error",
    (name) => {
      expect(configError(() => createToolRegistry([tool(name)])).message).toMatch(
        /invalid tool name .*\^\[a-zA-Z0-9_-\]\{1,64\}\$/,
      );
    },
  );

  it.each([["a"], ["read_file"], ["x-y_Z9"], ["x".repeat(64)]])("accepts the name %j", (name) => {
    expect(createToolRegistry([tool(name)]).names()).toEqual([name]);
  });

  it.each<[string, () => unknown, RegExp]>([
    ["duplicate names", () => createToolRegistry([tool("a"), tool("a")]), /"a" is used twice/],
    [
      "alias = another tool",
      () => createToolRegistry([tool("a"), tool("b", { aliases: ["a"] })]),
      /"a" is used twice/,
    ],
    [
      "alias = a disabled tool",
      () => createToolRegistry([tool("a", { aliases: ["w"] })], { disabled: [{ name: "w", reason: "r" }] }),
      /"w" is used twice/,
    ],
    ["invalid alias", () => createToolRegistry([tool("a", { aliases: ["b c"] })]), /invalid tool name "b c"/],
    [
      "no execute",
      () => createToolRegistry([{ name: "a", description: "", parameters: schema }]),
      /no execute function/,
    ],
    ["bad timeout", () => createToolRegistry([tool("a", { timeoutMs: -1 })]), /timeoutMs must be a positive/],
    [
      "non-object schema",
      () => createToolRegistry([tool("a", { parameters: { type: "string" } })]),
      /must describe a JSON object/,
    ],
    [
      "invalid JSON Schema",
      () =>
        createToolRegistry([tool("a", { parameters: { type: "object", properties: { q: { type: 7 } } } })]),
      /not a valid JSON Schema/,
    ],
    [
      "zod schema with no JSON Schema form",
      () => createToolRegistry([tool("a", { parameters: z.object({ d: z.date() }) })]),
      /cannot be expressed as JSON Schema/,
    ],
  ])("rejects %s", (_label, build, message) => {
    expect(configError(build).message).toMatch(message);
  });

  it("accepts a terminal tool without execute", () => {
    const r = createToolRegistry([
      { name: "submit", description: "done", parameters: schema, terminal: true },
    ]);
    expect(r.names()).toEqual(["submit"]);
  });

  it("compiles each schema object once, at its first registration", () => {
    const compile = vi.spyOn(Ajv2020.prototype, "compile");
    try {
      const own = { type: "object", properties: { q: { type: "string" } } };
      const r = createToolRegistry([tool("a", { parameters: own }), tool("b", { parameters: { ...own } })]);
      expect(compile).toHaveBeenCalledTimes(2);
      for (let i = 0; i < 5; i++) r.resolve("a")?.parseArguments('{"q":"x"}');
      expect(compile).toHaveBeenCalledTimes(2);
      // runAgent({tools: [...]}) builds a registry per run: the same schema objects compile nothing again.
      createToolRegistry([tool("a", { parameters: own })]);
      expect(compile).toHaveBeenCalledTimes(2);
    } finally {
      compile.mockRestore();
    }
  });

  it("lets two tools share a schema $id", () => {
    const withId = { $id: "https://example.com/args", ...schema };
    expect(() =>
      createToolRegistry([tool("a", { parameters: withId }), tool("b", { parameters: withId })]),
    ).not.toThrow();
  });
});

describe("createToolRegistry: declarations and lookup", () => {
  const registry = createToolRegistry(
    [
      tool("zeta"),
      tool("alpha", { aliases: ["a1", "a2"], strict: true }),
      defineTool({
        name: "zod",
        description: "z",
        parameters: z.object({ n: z.number() }),
        execute: () => "",
      }),
    ],
    {
      disabled: [
        { name: "write_file", reason: "run with --allow-write to enable it" },
        { name: "shell", aliases: ["bash"], reason: "r" },
      ],
    },
  );

  it("declares tools in the order given, aliases and disabled tools never advertised", () => {
    const declarations = registry.declarations();
    expect(declarations.map((d) => d.name)).toEqual(["zeta", "alpha", "zod"]);
    expect(declarations[0]).toEqual({
      type: "function",
      name: "zeta",
      description: "the zeta tool",
      parameters: schema,
      strict: false,
    });
    expect(Object.keys(declarations[0] ?? {})).toEqual([
      "type",
      "name",
      "description",
      "parameters",
      "strict",
    ]);
    expect(declarations[1]?.strict).toBe(true);
    expect(JSON.stringify(declarations)).not.toMatch(/a1|a2|write_file|bash/);
    expect(registry.names()).toEqual(["zeta", "alpha", "zod"]);
  });

  it("is byte-identical between calls (prompt-cache friendly) and not mutable from outside", () => {
    const first = registry.declarations();
    first.pop();
    expect(JSON.stringify(registry.declarations())).toBe(
      JSON.stringify(
        createToolRegistry([
          tool("zeta"),
          tool("alpha", { aliases: ["a1", "a2"], strict: true }),
          defineTool({
            name: "zod",
            description: "z",
            parameters: z.object({ n: z.number() }),
            execute: () => "",
          }),
        ]).declarations(),
      ),
    );
  });

  it("converts zod with zod's own JSON Schema export, without $schema", () => {
    expect(registry.resolve("zod")?.declaration.parameters).toEqual({
      type: "object",
      properties: { n: { type: "number" } },
      required: ["n"],
    });
  });

  it("resolves aliases to the canonical tool", () => {
    expect(registry.resolve("a2")?.name).toBe("alpha");
    expect(registry.resolve("alpha")?.name).toBe("alpha");
    expect(registry.resolve("nope")).toBeUndefined();
  });

  it("tells disabled tools (and their aliases) apart from unknown ones", () => {
    expect(registry.lookup("write_file")).toEqual({
      kind: "disabled",
      name: "write_file",
      reason: "run with --allow-write to enable it",
    });
    expect(registry.lookup("bash")).toMatchObject({ kind: "disabled", name: "shell" });
    expect(registry.lookup("nope")).toEqual({ kind: "unknown", name: "nope" });
    expect(registry.resolve("write_file")).toBeUndefined();
    expect(registry.disabledNames()).toEqual(["write_file", "shell"]);
  });
});

describe("createToolRegistry: dispose", () => {
  it("calls every tool's dispose hook, once per call, and waits for them", async () => {
    const order: string[] = [];
    const slow = tool("slow", {
      dispose: () => new Promise<void>((resolve) => setTimeout(() => resolve(void order.push("slow")), 20)),
    });
    const fast = tool("fast", { dispose: () => void order.push("fast") });
    const registry = createToolRegistry([slow, tool("plain"), fast]);
    await registry.dispose();
    expect(order.sort()).toEqual(["fast", "slow"]);
    await registry.dispose();
    expect(order).toHaveLength(4);
  });

  it("runs them all even when one fails, then rejects naming it", async () => {
    const released = vi.fn();
    const registry = createToolRegistry([
      tool("broken", {
        dispose: () => {
          throw new Error("socket already closed");
        },
      }),
      tool("fine", { dispose: released }),
    ]);
    await expect(registry.dispose()).rejects.toThrow("releasing tools failed: broken: socket already closed");
    expect(released).toHaveBeenCalledOnce();
  });
});
