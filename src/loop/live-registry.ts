/**
 * The run's registry when its tools may change between turns (`RunOptions.refreshTools`, e.g. an
 * MCP server's `tools/list_changed`): one object the loop's parts (budget, approvals, tool runner,
 * request builder) hold for the whole run, forwarding to the registry of the current turn.
 */
import type { ToolRegistry } from "../tools/registry.js";

/** A registry whose tools can be replaced between turns. */
export interface LiveRegistry {
  /** Forwards every call to the current registry. */
  readonly registry: ToolRegistry;
  /** From now on, `registry` answers from `next`. */
  replace(next: ToolRegistry): void;
}

/** Wraps `initial`; see `LiveRegistry`. */
export function liveRegistry(initial: ToolRegistry): LiveRegistry {
  let current = initial;
  const registry: ToolRegistry = {
    declarations: () => current.declarations(),
    resolve: (name) => current.resolve(name),
    lookup: (name) => current.lookup(name),
    names: () => current.names(),
    disabledNames: () => current.disabledNames(),
    dispose: () => current.dispose(),
  };
  return {
    registry,
    replace(next) {
      current = next;
    },
  };
}
