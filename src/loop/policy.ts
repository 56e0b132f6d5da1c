/**
 * `Policy`: what this machine allows a run to do — write files, run shell commands (under a
 * sandbox or not), which MCP servers may be started, how calls that need approval are approved —
 * taken only from the local invocation (CLI flags and config file, a library argument, the
 * server's own settings), never from a spec, a tape or a queue job (docs/architecture.md, "One
 * home for a run's settings"). A tape records the policy a run had, for audit only.
 *
 * `checkPolicy` is the one place that decides whether a spec's tools fit a policy: `eddy run`,
 * `batch`, `worker`, `resume`, `chat` and `serve` all go through it (via `runAgent`, or before
 * anything starts). Each problem names the flag that grants the permission.
 */
import { EddyError } from "../errors.js";
import { sanitizeNamePart } from "../util/name-part.js";
import type { HostedTool } from "./tool-declarations.js";

/**
 * How calls that need approval (writers, `shell`, MCP server tools: src/tools/mcp/offline.ts) are decided:
 * `ask` (the `RunDeps.onApproval` handler — a terminal prompt in the CLI), `auto` (they run),
 * `deny` (they are refused with a reason the model reads), `defer` (the run ends
 * `awaiting_approval`; a later process decides, `eddy resume --decide`).
 */
export type ApproveMode = "ask" | "auto" | "deny" | "defer";

/** Every approval mode, for flag and config validation. */
export const APPROVE_MODES = ["ask", "auto", "deny", "defer"] as const satisfies readonly ApproveMode[];

/** What the local invocation allows (see the module comment). */
export interface Policy {
  /** `write_file` and `apply_patch` may run (CLI `--allow-write`). @defaultValue false */
  allowWrite: boolean;
  /** `shell` may run (CLI `--allow-shell`). @defaultValue false */
  allowShell: boolean;
  /** `shell` runs under bubblewrap: read-only system, writable workspace, no network (CLI `--sandbox`). @defaultValue false */
  sandbox: boolean;
  /** @defaultValue "auto" */
  approve: ApproveMode;
  /** Names of the MCP servers the run may start; their tools are offered as `NAME__TOOL`. @defaultValue [] */
  mcpServers: readonly string[];
  /**
   * On resume, a call that had started when the process died runs again (else it is answered as
   * interrupted; tools declared idempotent always run again). CLI `--rerun-interrupted`.
   * @defaultValue false
   */
  rerunInterrupted: boolean;
  /**
   * The hosted tools (`--tool NAME[:ARG]`, the config file's `tools`) a run may declare to the
   * provider, which runs them on this invocation's key: a spec from a queue job, a task file, a tape
   * or a request may use one only when it is declared here, field for field (a remote MCP
   * `server_url`, `require_approval`, a vector store id). Absent in policies recorded before it
   * existed. @defaultValue []
   */
  hostedTools?: readonly HostedTool[];
}

/** The policy of a library call that gives none: read-only, nothing asked, no MCP server. */
export const DEFAULT_POLICY: Readonly<Policy> = Object.freeze({
  allowWrite: false,
  allowShell: false,
  sandbox: false,
  approve: "auto",
  mcpServers: Object.freeze([]) as readonly string[],
  rerunInterrupted: false,
  hostedTools: Object.freeze([]) as readonly HostedTool[],
});

/**
 * A policy with the given fields over `DEFAULT_POLICY`. Each field is checked (a policy may come
 * from plain JS or a parsed file): `"false"` is not false, `"Deny"` is not a mode — a wrong type
 * or value throws `invalid_argument` rather than granting anything.
 */
export function createPolicy(fields: Partial<Policy> = {}): Policy {
  const problem = policyProblem(fields);
  if (problem !== undefined) throw new EddyError("invalid_argument", `policy: ${problem}`, { fault: "user" });
  return {
    ...DEFAULT_POLICY,
    ...fields,
    mcpServers: [...(fields.mcpServers ?? DEFAULT_POLICY.mcpServers)],
    hostedTools: [...(fields.hostedTools ?? [])],
  };
}

const POLICY_FLAGS = ["allowWrite", "allowShell", "sandbox", "rerunInterrupted"] as const;

/** What is wrong with a policy's fields, if anything. */
function policyProblem(fields: Partial<Policy>): string | undefined {
  if (fields === null || typeof fields !== "object") return "give the fields as an object";
  for (const flag of POLICY_FLAGS)
    if (fields[flag] !== undefined && typeof fields[flag] !== "boolean")
      return `${flag}: must be true or false, got ${JSON.stringify(fields[flag])}`;
  if (fields.approve !== undefined && !(APPROVE_MODES as readonly unknown[]).includes(fields.approve))
    return `approve: ${JSON.stringify(fields.approve)} is not an approval mode (use ${APPROVE_MODES.map((m) => `"${m}"`).join(", ")})`;
  const servers = fields.mcpServers;
  if (servers !== undefined && (!Array.isArray(servers) || servers.some((n) => typeof n !== "string")))
    return "mcpServers: must be a list of server names";
  if (fields.hostedTools !== undefined && !Array.isArray(fields.hostedTools))
    return "hostedTools: must be a list of hosted tool declarations";
  return undefined;
}

/**
 * The policy a recorded run is replayed under: what its spec needs — its tools, their MCP servers,
 * its hosted tools — since a replay runs nothing live (tools answer from the tape, the tape is the
 * provider); approvals come from the tape (src/replay/replay.ts).
 */
export function replayPolicy(spec: {
  tools?: readonly string[];
  hosted_tools?: readonly HostedTool[];
}): Policy {
  const servers = (spec.tools ?? []).flatMap((name) => {
    const permission = toolPermission(name);
    return permission?.server === undefined ? [] : [permission.server];
  });
  return createPolicy({
    allowWrite: true,
    allowShell: true,
    mcpServers: [...new Set(servers)],
    hostedTools: [...(spec.hosted_tools ?? [])],
  });
}

/** The permission a tool needs, and the flag that grants it. */
export interface ToolPermission {
  permission: "allowWrite" | "allowShell" | "mcpServer" | "hostedTool";
  /** The CLI flag that grants it (`--allow-write`, `--allow-shell`, `--mcp NAME=…`, `--tool NAME…`). */
  flag: string;
  /** The MCP server, for `mcpServer`. */
  server?: string;
}

const WRITERS = new Set(["write_file", "apply_patch"]);
const SHELLS = new Set(["shell", "bash"]);

/**
 * What a tool of this name needs beyond the read-only default: the writers `--allow-write`,
 * `shell` (alias `bash`) `--allow-shell`, an MCP tool (`NAME__TOOL`) its server `NAME`; undefined
 * for the read-only built-ins and the run's own tools.
 */
export function toolPermission(name: string): ToolPermission | undefined {
  if (WRITERS.has(name)) return { permission: "allowWrite", flag: "--allow-write" };
  if (SHELLS.has(name)) return { permission: "allowShell", flag: "--allow-shell" };
  const separator = name.indexOf("__");
  if (separator > 0) {
    const server = name.slice(0, separator);
    return { permission: "mcpServer", flag: `--mcp ${server}=…`, server };
  }
  return undefined;
}

/** One way a spec or a run goes beyond its policy. */
export interface PolicyProblem {
  /** The tool that needs the permission. */
  tool: string;
  permission: ToolPermission;
  /** `shell needs --allow-shell`-style, one line. */
  message: string;
}

/**
 * Whether `policy` allows each of `tools` (the tools a spec selects, or the tools a run would offer
 * or call): the problems, one per tool that needs a permission the policy does not grant. MCP
 * tools are checked only against servers: a tool name with `__` whose server the policy does not
 * list is refused.
 */
export function checkPolicy(tools: readonly string[], policy: Policy): PolicyProblem[] {
  const problems: PolicyProblem[] = [];
  for (const tool of tools) {
    const permission = toolPermission(tool);
    if (permission === undefined || allows(policy, permission)) continue;
    const what =
      permission.permission === "mcpServer"
        ? `the MCP server ${JSON.stringify(permission.server)}, which this invocation does not start`
        : permission.flag;
    problems.push({ tool, permission, message: `${tool} needs ${what}` });
  }
  return problems;
}

/**
 * The hosted tools of `hosted` (a spec's `hosted_tools`) that `policy.hostedTools` does not declare
 * field for field (key order aside): one problem each, named `NAME` or `mcp:LABEL`.
 */
export function checkHostedTools(hosted: readonly HostedTool[], policy: Policy): PolicyProblem[] {
  const allowed = new Set((policy.hostedTools ?? []).map(sortedJson));
  const problems: PolicyProblem[] = [];
  for (const tool of hosted) {
    if (allowed.has(sortedJson(tool))) continue;
    const label =
      typeof tool.server_label === "string" ? `${tool.type}:${tool.server_label}` : String(tool.type);
    problems.push({
      tool: label,
      permission: { permission: "hostedTool", flag: hostedFlag(tool.type) },
      message: `the hosted tool ${JSON.stringify(label.slice(0, 80))} is not one this invocation declares, field for field`,
    });
  }
  return problems;
}

/** The flag that declares a hosted tool of each type eddy knows (hosted-tools.ts). */
const HOSTED_FLAGS: Readonly<Record<string, string>> = {
  web_search: "--tool web_search",
  code_interpreter: "--tool code_interpreter",
  image_generation: "--tool image_generation",
  file_search: "--tool file_search:VECTOR_STORE_ID",
  mcp: "--tool mcp:LABEL=URL",
};

/** The flag for a hosted tool's type (a type from a job may be any string, `constructor` included). */
function hostedFlag(type: string): string {
  return Object.hasOwn(HOSTED_FLAGS, type) ? (HOSTED_FLAGS[type] as string) : "--tool NAME[:ARG]";
}

/** JSON with every object's keys sorted: equal for values equal field for field. */
function sortedJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        )
      : v,
  );
}

/**
 * Throws `policy_denied` (fault `user`) when `checkPolicy` (and, given `hosted`, `checkHostedTools`)
 * finds problems: one line naming each tool and the flag to add, prefixed by `context` ("the
 * tape's run offers …").
 */
export function assertPolicy(
  tools: readonly string[],
  policy: Policy,
  context: string,
  hosted: readonly HostedTool[] = [],
): void {
  const problems = [...checkPolicy(tools, policy), ...checkHostedTools(hosted, policy)];
  if (problems.length === 0) return;
  const flags = [...new Set(problems.map((p) => p.permission.flag))];
  throw new EddyError(
    "policy_denied",
    `${context}: ${problems.map((p) => p.message).join("; ")} — run with ${flags.join(" and ")} to allow it, or leave the tool out`,
    { fault: "user", details: { tools: problems.map((p) => p.tool), flags } },
  );
}

function allows(policy: Policy, permission: ToolPermission): boolean {
  switch (permission.permission) {
    // Strictly true: a policy that is not createPolicy's ("false" from a file) grants nothing.
    case "allowWrite":
      return policy.allowWrite === true;
    case "allowShell":
      return policy.allowShell === true;
    case "mcpServer": {
      // A tool is offered as SERVER__TOOL with the server's name fitted to a function name
      // (tools/mcp/names.ts): server "docs.v2" offers docs_v2__search, so names are compared so.
      const server = permission.server;
      return server !== undefined && policy.mcpServers.some((name) => sanitizeNamePart(name) === server);
    }
    case "hostedTool":
      return false;
  }
}
