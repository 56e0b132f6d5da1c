/**
 * The tool registry: the tools of a run in declaration order (the order given, so the `tools`
 * array is byte-identical between requests and prompt caches hit), their aliases (accepted from the
 * model, never advertised: docs/decisions.md #7) and the tools that exist but are disabled by
 * configuration (a call to one gets "write_file is disabled: …", not "unknown tool").
 */
import { EddyError } from "../errors.js";
import type { FunctionToolParam } from "../protocol/types.js";
import { type ParsedArguments, parseToolArguments } from "./arguments.js";
import { type CompiledSchema, compileToolSchema } from "./schema.js";
import type { JsonSchema, ToolDefinition } from "./tool.js";

/** The spec's function name pattern. */
export const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

/** A tool that exists but is turned off; calls to it are refused with `reason`. */
export interface DisabledTool {
  name: string;
  /** Names the model may use for it (e.g. `bash` for `shell`). */
  aliases?: readonly string[];
  /** How to enable it, e.g. "run with --allow-write to enable it". */
  reason: string;
}

/** Options of `createToolRegistry`. */
export interface ToolRegistryOptions {
  /**
   * Tools that are known but disabled. They are never declared to the model.
   * @defaultValue none
   */
  disabled?: readonly DisabledTool[];
  /**
   * Values no tool's error message may carry to the model: `executeToolCall` replaces each with
   * `[redacted]` (unless the call passes its own `redact`). The CLI passes the secret-looking
   * values of its environment (`secretValuesFromEnv`). @defaultValue none
   */
  secrets?: readonly string[];
}

/** A registered tool: its definition, its compiled schema and its request declaration. */
export interface RegisteredTool {
  /** The canonical name (the one declared to the model). */
  readonly name: string;
  readonly aliases: readonly string[];
  readonly definition: ToolDefinition;
  /** The `tools[]` entry sent to the provider. */
  readonly declaration: FunctionToolParam;
  /** The JSON Schema the model sees. */
  readonly parameters: JsonSchema;
  /** Strictly parses and validates a raw `arguments` string (docs/decisions.md #7). Never throws. */
  parseArguments(raw: string): ParsedArguments;
}

/** What a name the model used refers to. */
export type ToolLookup =
  | { kind: "tool"; tool: RegisteredTool }
  | { kind: "disabled"; name: string; reason: string }
  | { kind: "unknown"; name: string };

/** The tools of a run. Immutable once created. */
export interface ToolRegistry {
  /** The `tools` array for requests, in declaration order (a fresh array, shared entries). */
  declarations(): FunctionToolParam[];
  /** The tool a name or alias refers to, if it is registered and enabled. */
  resolve(name: string): RegisteredTool | undefined;
  /** Like `resolve`, but also tells disabled tools apart from unknown names. */
  lookup(name: string): ToolLookup;
  /** Canonical names of the enabled tools, in declaration order (aliases excluded). */
  names(): string[];
  /** Canonical names of the disabled tools. */
  disabledNames(): string[];
  /** `ToolRegistryOptions.secrets`: what `executeToolCall` masks in error messages by default. */
  readonly secrets?: readonly string[];
  /**
   * Calls every registered tool's `dispose` hook (all of them, concurrently) and waits for them;
   * call it when a run ends, whatever the outcome, so nothing a tool started outlives the run.
   * Rejects with `tool_failed` naming the tools whose hook failed, after all have run.
   */
  dispose(): Promise<void>;
}

/**
 * Builds a registry. Throws `invalid_config` (fault: user) for a bad name or alias, a name used
 * twice (tools, aliases and disabled tools share one namespace), a non-terminal tool without
 * `execute`, or a schema that cannot be compiled. Each schema is compiled here, once.
 *
 * @example
 * ```ts
 * const registry = createToolRegistry([weather, ...createBuiltinTools().tools]);
 * runAgent({ provider, model, input, tools: registry });
 * ```
 */
export function createToolRegistry(
  tools: readonly ToolDefinition[],
  options: ToolRegistryOptions = {},
): ToolRegistry {
  const byName = new Map<string, RegisteredTool>();
  const disabledByName = new Map<string, DisabledTool>();
  const owners = new Map<string, string>();
  const claim = (name: string, owner: string) => {
    checkName(name, owner);
    const previous = owners.get(name);
    if (previous !== undefined) {
      throw config(`tool name "${name}" is used twice (by ${previous} and by ${owner})`, { name });
    }
    owners.set(name, owner);
  };

  const registered: RegisteredTool[] = [];
  for (const definition of tools) {
    const tool = register(definition);
    claim(tool.name, `tool "${tool.name}"`);
    for (const alias of tool.aliases) claim(alias, `an alias of "${tool.name}"`);
    registered.push(tool);
    byName.set(tool.name, tool);
    for (const alias of tool.aliases) byName.set(alias, tool);
  }
  for (const disabled of options.disabled ?? []) {
    claim(disabled.name, `disabled tool "${disabled.name}"`);
    for (const alias of disabled.aliases ?? []) claim(alias, `an alias of disabled tool "${disabled.name}"`);
    disabledByName.set(disabled.name, disabled);
    for (const alias of disabled.aliases ?? []) disabledByName.set(alias, disabled);
  }

  const declarations = registered.map((t) => t.declaration);
  const names = registered.map((t) => t.name);
  const disabledNames = (options.disabled ?? []).map((d) => d.name);

  return {
    declarations: () => [...declarations],
    resolve: (name) => byName.get(name),
    lookup(name) {
      const tool = byName.get(name);
      if (tool !== undefined) return { kind: "tool", tool };
      const disabled = disabledByName.get(name);
      if (disabled !== undefined) return { kind: "disabled", name: disabled.name, reason: disabled.reason };
      return { kind: "unknown", name };
    },
    names: () => [...names],
    disabledNames: () => [...disabledNames],
    dispose: () => disposeAll(registered),
    secrets: [...(options.secrets ?? [])],
  };
}

async function disposeAll(tools: readonly RegisteredTool[]): Promise<void> {
  const withHook = tools.filter((t) => t.definition.dispose !== undefined);
  const settled = await Promise.allSettled(withHook.map(async (t) => t.definition.dispose?.()));
  const failed = settled.flatMap((s, i) =>
    s.status === "rejected"
      ? [`${withHook[i]?.name}: ${(s.reason as Error)?.message ?? String(s.reason)}`]
      : [],
  );
  if (failed.length > 0) {
    throw new EddyError("tool_failed", `releasing tools failed: ${failed.join("; ")}`, { fault: "system" });
  }
}

function register(definition: ToolDefinition): RegisteredTool {
  const name = definition.name;
  checkName(name, "a tool");
  if (typeof definition.description !== "string") {
    throw config(`tool "${name}": description must be a string`, { name });
  }
  if (definition.execute === undefined && definition.terminal !== true) {
    throw config(`tool "${name}" has no execute function (only terminal tools may omit it)`, { name });
  }
  if (definition.execute !== undefined && typeof definition.execute !== "function") {
    throw config(`tool "${name}": execute must be a function`, { name });
  }
  const timeout = definition.timeoutMs;
  if (timeout !== undefined && !(Number.isFinite(timeout) && timeout > 0)) {
    throw config(`tool "${name}": timeoutMs must be a positive number of milliseconds (got ${timeout})`, {
      name,
    });
  }
  const schema: CompiledSchema = compileToolSchema(name, definition.parameters);
  if (definition.freeform !== undefined && definition.freeform !== false && !hasOneStringParameter(schema)) {
    throw config(
      `tool "${name}" is free-form, so its parameters must require exactly one string property (it receives the raw input)`,
      { name },
    );
  }
  const declaration: FunctionToolParam = {
    type: "function",
    name,
    description: definition.description,
    // The generated type models `parameters` as an empty object; any JSON Schema object is valid here.
    parameters: schema.jsonSchema as FunctionToolParam["parameters"],
    strict: definition.strict ?? false,
  };
  return {
    name,
    aliases: [...(definition.aliases ?? [])],
    definition,
    declaration,
    parameters: schema.jsonSchema,
    parseArguments: (raw) => parseToolArguments(name, raw, schema),
  };
}

function hasOneStringParameter(schema: CompiledSchema): boolean {
  return oneStringParameter(schema.jsonSchema) !== undefined;
}

/**
 * The one property a parameters schema requires, when that is all it requires and it is a string
 * (`{patch}` of apply_patch, `{command}` of shell): where free-form input goes.
 */
export function oneStringParameter(parameters: JsonSchema): string | undefined {
  const json = parameters as { properties?: Record<string, { type?: unknown }>; required?: unknown };
  const required = Array.isArray(json.required) ? json.required : [];
  if (required.length !== 1 || typeof required[0] !== "string") return undefined;
  return json.properties?.[required[0]]?.type === "string" ? required[0] : undefined;
}

function checkName(name: unknown, owner: string): void {
  if (typeof name !== "string" || !TOOL_NAME_PATTERN.test(name)) {
    throw config(
      `invalid tool name ${JSON.stringify(name)} for ${owner}: names must be 1–64 characters of letters, digits, "_" or "-" (pattern ${TOOL_NAME_PATTERN.source})`,
      { name },
    );
  }
}

function config(message: string, details: Record<string, unknown>): EddyError {
  return new EddyError("invalid_config", message, { fault: "user", details });
}
