/**
 * The tools of a recorded CLI run, rebuilt for `eddy replay` without starting anything: the
 * built-ins as the header's `tool_set` configured them, and the MCP tools from the header's
 * `mcp_tools` (`offlineMcpTools`: same names, descriptions and schemas, no server). When a server
 * changed its tools mid-run (`tools/list_changed`), the tools of each later turn are read back from
 * the `tools` its recorded request declared, so the replayed requests declare the same.
 */
import { EddyError } from "../errors.js";
import type { Frame } from "../frames/frame.js";
import { toolPermission } from "../loop/policy.js";
import type { FunctionToolParam } from "../protocol/types.js";
import type { TapeHeader } from "../replay/tape.js";
import { clientToolDefinitions } from "../serve/client-tools.js";
import { createBuiltinTools } from "../tools/builtin/index.js";
import { secretValuesFromEnv } from "../tools/execute.js";
import type { McpToolInfo } from "../tools/mcp/mcp-tools.js";
import { offlineMcpTools } from "../tools/mcp/offline.js";
import type { ToolRegistry } from "../tools/registry.js";
import { recordedAgentTools } from "./agent-tools.js";
import type { Env } from "./config.js";
import { registryOf } from "./run-tools.js";

/** The registry a replay starts with, and the per-turn refresh when the recorded tools changed. */
export interface ReplayTools {
  registry: ToolRegistry;
  refreshTools: (() => ToolRegistry | undefined) | undefined;
}

/** The recorded run's tools that are not built-ins: its MCP tools (offline) and sub-agents. */
function recordedTools(header: TapeHeader, frames: readonly Frame[]) {
  // A sub-agent or a client's tool (a run of `eddy serve`'s face) never changes during a run.
  const agents = [...recordedAgentTools(header.agents), ...clientToolDefinitions(header.client_tools ?? [])];
  // A tool is asked about as the recording asked: every MCP tool since eddy stopped trusting
  // servers' read-only hints, those not marked read-only before (offlineMcpTools).
  const asked = new Set(frames.flatMap((f) => (f.type === "approval_requested" ? [f.name] : [])));
  const offline = (mcp: readonly McpToolInfo[]) => offlineMcpTools(mcp, { askedAbout: asked });
  return { agents, asked, offline };
}

/** What this invocation of `eddy replay --live-tools` lets a tool do (the tape grants nothing). */
export interface LivePermissions {
  allowWrite: boolean;
  allowShell: boolean;
  /** Run `shell` in the bubblewrap sandbox (also when the tape was recorded with it). */
  sandbox: boolean;
}

/**
 * The built-ins a replay runs live with, as this invocation allows them: `write_file`,
 * `apply_patch` and `shell` stay disabled without `--allow-write` / `--allow-shell`, whatever the
 * tape's header says (a tape is untrusted: its calls could be anything). Refuses up front
 * (`policy_denied`, exit 2) a tape whose calls need a permission not given, naming the flag.
 */
export function liveReplayRegistry(
  header: TapeHeader,
  frames: readonly Frame[],
  env: Env,
  path: string,
  permissions: LivePermissions,
): ToolRegistry {
  const called = [...new Set(frames.flatMap((f) => (f.type === "tool_call" ? [f.name] : [])))];
  const needed = called.flatMap((name) => {
    const permission = toolPermission(name);
    if (
      permission === undefined ||
      (permission.permission !== "allowWrite" && permission.permission !== "allowShell")
    )
      return [];
    return permissions[permission.permission] ? [] : [`${name} (${permission.flag})`];
  });
  if (needed.length > 0)
    throw new EddyError(
      "policy_denied",
      `${path}: running its tools live would run ${needed.join(", ")}, which this command does not allow; the tape grants nothing: give the flag to allow it (and --sandbox to contain the shell), or replay without --live-tools`,
      { fault: "user" },
    );
  let builtins: ReturnType<typeof createBuiltinTools>;
  try {
    builtins = createBuiltinTools({
      allowWrite: permissions.allowWrite,
      allowShell: permissions.allowShell,
      shellEnv: { source: env },
      ...(permissions.sandbox ? { shellSandbox: "bubblewrap" as const } : {}),
    });
  } catch (error) {
    throw new EddyError("invalid_config", `${path}: cannot run its tools live: ${(error as Error).message}`, {
      fault: "user",
    });
  }
  const { agents, offline } = recordedTools(header, frames);
  return registryOf(builtins, [...offline(header.mcp_tools ?? []), ...agents], secretValuesFromEnv(env));
}

/**
 * Rebuilds the recorded run's tools. Nothing runs unless the replay runs tools live, so every
 * built-in is built (the spec's `tools` selects the recorded ones), `shell` as the recorded policy
 * described it (under `--sandbox` its description differs). Throws `tape_invalid`/`invalid_config`
 * (exit 2) when it cannot.
 */
export function replayTools(
  header: TapeHeader,
  frames: readonly Frame[],
  env: Env,
  path: string,
): ReplayTools {
  let builtins: ReturnType<typeof createBuiltinTools>;
  try {
    builtins = createBuiltinTools({
      allowWrite: true,
      allowShell: true,
      shellEnv: { source: env },
      ...(header.policy?.sandbox === true ? { shellSandbox: "bubblewrap" as const } : {}),
    });
  } catch (error) {
    throw new EddyError(
      "invalid_config",
      `${path} was recorded with --sandbox, whose shell tool is described differently: ${(error as Error).message}`,
      { fault: "user" },
    );
  }
  const infos = header.mcp_tools ?? [];
  const secrets = secretValuesFromEnv(env);
  const { agents, asked, offline } = recordedTools(header, frames);
  const registry = registryOf(builtins, [...offline(infos), ...agents], secrets);
  const missing = (header.spec.tools ?? []).filter((name) => registry.resolve(name) === undefined);
  if (missing.length > 0) {
    throw new EddyError(
      "tape_invalid",
      `${path}: the recorded run used tools that are neither eddy's built-ins nor recorded MCP tools, sub-agents or a client's tools (${missing.join(", ")}); replay it from the library with those tools`,
      { fault: "user" },
    );
  }
  const declaredByTurn = declaredTools(frames);
  if (declaredByTurn.size === 0) return { registry, refreshTools: undefined };

  // The sub-agents never change either: they are compared and rebuilt as the header has them.
  const builtinNames = new Set([...builtins.tools.map((t) => t.name), ...agents.map((t) => t.name)]);
  const known = new Map(infos.map((i) => [i.name, i]));
  let current = registry;
  let turn = 0;
  return {
    registry,
    refreshTools: () => {
      const declared = declaredByTurn.get(turn++);
      // Only the MCP tools change mid-run: built-ins may be declared as native tools (--native-tools).
      const mcpOnly = (tools: readonly FunctionToolParam[]) =>
        tools.filter((d) => d.type === "function" && !builtinNames.has(d.name));
      if (declared === undefined || sameDeclarations(mcpOnly(declared), mcpOnly(current.declarations())))
        return undefined;
      // A tool that appeared mid-run needed approval exactly when the tape asked about one of its calls.
      const mcp = mcpOnly(declared).map((d) => known.get(d.name) ?? infoOf(d, !asked.has(d.name)));
      current = registryOf(builtins, [...offline(mcp), ...agents], secrets);
      return current;
    },
  };
}

/** The `tools` of the first recorded request of each turn that sent them. */
function declaredTools(frames: readonly Frame[]): Map<number, FunctionToolParam[]> {
  const byTurn = new Map<number, FunctionToolParam[]>();
  for (const f of frames) {
    if (f.type !== "request_started" || byTurn.has(f.turn)) continue;
    // A tape is untrusted: a request without a body, or a body whose tools are not objects, declares nothing.
    const body: unknown = f.body;
    const tools = body !== null && typeof body === "object" ? (body as { tools?: unknown }).tools : undefined;
    // Native and hosted tool declarations (`{type: "apply_patch"}`, …) have no name and are not
    // registry tools: only function declarations are compared and rebuilt.
    if (Array.isArray(tools))
      byTurn.set(
        f.turn,
        tools.filter(
          (t): t is FunctionToolParam =>
            t !== null && typeof t === "object" && t.type === "function" && typeof t.name === "string",
        ),
      );
  }
  return byTurn;
}

function sameDeclarations(a: readonly FunctionToolParam[], b: readonly FunctionToolParam[]): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function infoOf(declaration: FunctionToolParam, readOnly: boolean): McpToolInfo {
  const [server = "", ...rest] = declaration.name.split("__");
  return {
    name: declaration.name,
    server,
    tool: rest.join("__"),
    description: declaration.description ?? "",
    parameters: (declaration.parameters ?? { type: "object" }) as McpToolInfo["parameters"],
    readOnly,
  };
}
