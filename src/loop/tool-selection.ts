/**
 * `RunSpec.tools`: the names of the tools a run offers, a selection among the tools it was given
 * (`RunDeps.tools`). The selection is a view of the registry: unselected tools are not declared,
 * and a call to one is refused as a tool this run does not offer. Tools that appear later (an MCP
 * server's `tools/list_changed`) were not there to be left out, so they are offered.
 */
import { EddyError } from "../errors.js";
import type { ToolRegistry } from "../tools/registry.js";

/**
 * The names of `registry`'s tools that `names` leaves out (`names` may use aliases). Throws
 * `invalid_run_spec` naming a name the registry does not have.
 */
export function unselectedTools(registry: ToolRegistry, names: readonly string[]): Set<string> {
  const selected = new Set<string>();
  for (const name of names) {
    const tool = registry.resolve(name);
    if (tool === undefined) {
      const known = registry.names();
      throw new EddyError(
        "invalid_run_spec",
        `run spec: tools: ${JSON.stringify(name)} is not one of the run's tools (${known.length === 0 ? "it has none" : known.join(", ")})`,
        { fault: "user", details: { field: "tools", tool: name } },
      );
    }
    selected.add(tool.name);
  }
  return new Set(registry.names().filter((name) => !selected.has(name)));
}

/** `registry` without the tools named in `left` (canonical names): see the module comment. */
export function withoutTools(registry: ToolRegistry, left: ReadonlySet<string>): ToolRegistry {
  if (left.size === 0) return registry;
  const offered = (name: string) => {
    const tool = registry.resolve(name);
    return tool !== undefined && !left.has(tool.name) ? tool : undefined;
  };
  return {
    declarations: () => registry.declarations().filter((d) => !left.has(d.name)),
    resolve: offered,
    lookup(name) {
      const tool = offered(name);
      if (tool !== undefined) return { kind: "tool", tool };
      const found = registry.lookup(name);
      if (found.kind === "tool")
        return { kind: "disabled", name: found.tool.name, reason: "this run does not offer it" };
      return found;
    },
    names: () => registry.names().filter((n) => !left.has(n)),
    disabledNames: () => registry.disabledNames(),
    dispose: () => registry.dispose(),
    ...(registry.secrets === undefined ? {} : { secrets: registry.secrets }),
  };
}
