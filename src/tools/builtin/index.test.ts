import { describe, expect, it } from "vitest";
import { createToolRegistry } from "../registry.js";
import { BUILTIN_TOOL_NAMES, createBuiltinTools } from "./index.js";

/** docs/architecture.md, "The CLI contract": the names and arguments the model sees (binding). */
const CONTRACT: Record<string, { properties: string[]; required: string[] }> = {
  read_file: { properties: ["path", "start_line", "end_line", "max_bytes"], required: ["path"] },
  list_dir: {
    properties: ["path", "recursive", "max_depth", "include", "exclude", "include_hidden", "include_ignored"],
    required: [],
  },
  grep: {
    properties: ["pattern", "path", "regex", "case_sensitive", "include", "max_results", "include_ignored"],
    required: ["pattern"],
  },
  write_file: { properties: ["path", "content", "append"], required: ["path", "content"] },
  apply_patch: { properties: ["patch"], required: ["patch"] },
  shell: { properties: ["command", "cwd", "timeout_ms"], required: ["command"] },
};

describe("createBuiltinTools", () => {
  it.each<[string, { allowWrite?: boolean; allowShell?: boolean }, string[], string[]]>([
    ["read-only by default", {}, ["read_file", "list_dir", "grep"], ["write_file", "apply_patch", "shell"]],
    [
      "with allowWrite",
      { allowWrite: true },
      ["read_file", "list_dir", "grep", "write_file", "apply_patch"],
      ["shell"],
    ],
    [
      "with allowShell",
      { allowShell: true },
      ["read_file", "list_dir", "grep", "shell"],
      ["write_file", "apply_patch"],
    ],
    ["with both", { allowWrite: true, allowShell: true }, [...BUILTIN_TOOL_NAMES], []],
  ])("%s", (_label, options, enabled, disabled) => {
    const builtins = createBuiltinTools(options);
    const registry = createToolRegistry(builtins.tools, { disabled: builtins.disabled });
    expect(registry.declarations().map((d) => d.name)).toEqual(enabled);
    expect(registry.disabledNames()).toEqual(disabled);
  });

  it("declares exactly the names and arguments of docs/architecture.md#the-cli-contract, strict:false, additionalProperties:false", () => {
    const builtins = createBuiltinTools({ allowWrite: true, allowShell: true });
    for (const declaration of createToolRegistry(builtins.tools).declarations()) {
      const contract = CONTRACT[declaration.name];
      expect(contract, declaration.name).toBeDefined();
      const parameters = declaration.parameters as unknown as {
        properties: object;
        required?: string[];
        additionalProperties: unknown;
      };
      expect(Object.keys(parameters.properties)).toEqual(contract?.properties);
      expect(parameters.required ?? []).toEqual(contract?.required);
      expect(parameters.additionalProperties).toBe(false);
      expect(declaration.strict).toBe(false);
      expect(declaration.description?.length).toBeGreaterThan(20);
    }
  });

  it("bash is accepted for shell but never advertised; disabled, it says how to enable it", () => {
    const on = createBuiltinTools({ allowShell: true });
    const registry = createToolRegistry(on.tools, { disabled: on.disabled });
    expect(registry.resolve("bash")?.name).toBe("shell");
    expect(registry.declarations().map((d) => d.name)).not.toContain("bash");
    const off = createBuiltinTools();
    expect(createToolRegistry(off.tools, { disabled: off.disabled }).lookup("bash")).toEqual({
      kind: "disabled",
      name: "shell",
      reason: "run with --allow-shell to enable it",
    });
  });
});
