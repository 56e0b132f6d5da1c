/**
 * src/tools/builtin/generated/ holds the built-in tools' argument validators, compiled ahead of
 * time from their `parameters` by scripts/update-tool-validators.ts. A stale file is never wrong
 * (precompiled.ts then leaves the schema to ajv) but loses the start-up saving, so this fails when
 * a tool's parameters changed and nobody regenerated.
 */
import { readFileSync } from "node:fs";
import { expect, it } from "vitest";
import { generateToolValidators } from "../scripts/update-tool-validators.js";
import { BUILTIN_PARAMETERS } from "../src/tools/builtin/parameters.js";
import { registerBuiltinValidators } from "../src/tools/builtin/precompiled.js";
import { compileSchema } from "../src/util/schema.js";

it("the generated tool validators are up to date (npm run update-tool-validators)", () => {
  for (const [path, content] of generateToolValidators()) {
    expect(readFileSync(path, "utf8"), `${path}: run npm run update-tool-validators`).toBe(content);
  }
});

it("a precompiled validator checks arguments as ajv would, naming the field", () => {
  registerBuiltinValidators();
  const shell = compileSchema('tool "shell"', BUILTIN_PARAMETERS.shell);
  expect(shell.validate({ command: "ls" })).toEqual({ ok: true, value: { command: "ls" } });
  const bad = shell.validate({ command: "", extra: 1 });
  expect(bad.ok).toBe(false);
  expect(bad.ok ? [] : bad.problems.join("\n")).toMatch(/command/);
  const read = compileSchema('tool "read_file"', BUILTIN_PARAMETERS.read_file);
  expect(read.validate({ path: "a", start_line: 0 }).ok).toBe(false);
  expect(read.validate({ path: "a", start_line: 1 }).ok).toBe(true);
});
