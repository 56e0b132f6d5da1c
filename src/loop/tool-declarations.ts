/**
 * The `tools` array of a request: the registry's tools, in declaration order, each as a function
 * tool — or, where the run uses native tools (the `nativeTools` capability, `RunOptions.
 * nativeTools`), as the native type a model is trained on: `apply_patch` as `{type:"apply_patch"}`,
 * `shell` as `{type:"shell", environment:{type:"local"}}` (or `{type:"local_shell"}`), and
 * free-form tools as `{type:"custom"}` with their grammar. Then the hosted tools the provider runs
 * itself (`web_search`, `file_search`, `mcp`, …), passed through as given.
 */
import type { JsonObject } from "../protocol/types.js";
import { oneStringParameter, type RegisteredTool, type ToolRegistry } from "../tools/registry.js";

/** A tool the provider runs itself, declared as given (`{type:"web_search"}`, `{type:"mcp", …}`). */
export type HostedTool = { type: string } & JsonObject;

/** Which native shell type stands for `shell`. */
export type NativeShell = "shell" | "local_shell";

/** How the tools of a run are declared. */
export interface DeclarationPlan {
  /** Offer native types instead of function imitations. */
  native: boolean;
  /** @defaultValue "shell" */
  shell?: NativeShell;
  /** @defaultValue none */
  hosted?: readonly HostedTool[];
}

/** The request's `tools` (see the module comment). */
export function toolDeclarations(registry: ToolRegistry, plan: DeclarationPlan): JsonObject[] {
  const declared: JsonObject[] = [];
  for (const name of registry.names()) {
    const tool = registry.resolve(name);
    if (tool === undefined) continue;
    declared.push(
      plan.native ? nativeDeclaration(tool, plan.shell ?? "shell") : (tool.declaration as JsonObject),
    );
  }
  return [...declared, ...(plan.hosted ?? [])];
}

function nativeDeclaration(tool: RegisteredTool, shell: NativeShell): JsonObject {
  // Only tools that take what the native items carry: a patch envelope, a command line.
  const input = oneStringParameter(tool.parameters);
  if (tool.name === "apply_patch" && input === "patch") return { type: "apply_patch" };
  if (tool.name === "shell" && input === "command")
    return shell === "local_shell"
      ? { type: "local_shell" }
      : { type: "shell", environment: { type: "local" } };
  const freeform = tool.definition.freeform;
  if (freeform === undefined || freeform === false) return tool.declaration as JsonObject;
  const format: JsonObject =
    freeform === true
      ? { type: "text" }
      : { type: "grammar", syntax: freeform.syntax, definition: freeform.definition };
  return { type: "custom", name: tool.name, description: tool.definition.description, format };
}
