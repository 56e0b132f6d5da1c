/**
 * Approvals: asking before a call runs. A tool says it needs approval (`needsApproval` on its
 * definition: the built-in writers and `shell` do, as does every MCP server's tool); the run's
 * `onApproval` decides. Without a handler nothing is asked (the library's default, the CLI's
 * `--approve auto`). Requests are made one at a time, in the order the calls reach their turn to
 * run, so a terminal prompt never interleaves; `allow_always` approves the tool for the rest of
 * the run. An `mcp_approval_request` (a remote MCP tool the provider calls, asking first) goes
 * through the same flow; without a handler it is approved.
 */
import type { AssembledCall } from "../provider/assembler/index.js";
import { customArguments } from "../tools/native-calls.js";
import type { ToolRegistry } from "../tools/registry.js";

/**
 * What the approver answers. `allow_always` also approves later calls of the same tool in this
 * run; `defer` leaves the call unanswered and ends the run `awaiting_approval` once the turn's
 * other calls are done (`approve: "defer"`: a later process decides, `eddy resume --decide`).
 */
export type ApprovalDecision = "allow" | "deny" | "allow_always" | "defer";

/** A call waiting for approval. */
export interface ApprovalRequest {
  turn: number;
  callId: string;
  /** The tool's canonical name. */
  name: string;
  /** The arguments exactly as the model produced them. */
  arguments: string;
  /** The arguments parsed (`{}` for an empty string). */
  args: unknown;
  /**
   * The item type the call came from when it is not a `function_call` (e.g. `apply_patch_call`,
   * or `mcp_approval_request` for a remote MCP tool the provider is about to call).
   */
  itemType?: string;
  /** The tool's description. */
  description: string;
  /** Aborted when the run is cancelled: stop asking. */
  signal: AbortSignal;
}

/** Decides whether a call may run. May take as long as a person needs. */
export type ApprovalHandler = (request: ApprovalRequest) => Promise<ApprovalDecision> | ApprovalDecision;

/** The approval state of one run. */
export class Approvals {
  private readonly always = new Set<string>();
  /** The previous request, so requests are made one at a time. */
  private previous: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly registry: ToolRegistry,
    private readonly handler: ApprovalHandler | undefined,
  ) {}

  /** Whether `call` must be approved before it runs (a call that cannot run is never asked about). */
  needs(call: AssembledCall): boolean {
    if (this.handler === undefined) return false;
    if (call.itemType === "mcp_approval_request") return !this.always.has(mcpName(call));
    const tool = this.registry.resolve(call.name);
    if (tool === undefined || this.always.has(tool.name)) return false;
    const rule = tool.definition.needsApproval;
    if (rule === undefined || rule === false) return false;
    if (rule === true) return true;
    const args = parseArguments(this.argumentsOf(call));
    if (args === undefined) return false; // refused as invalid arguments anyway
    try {
      return rule(args) === true;
    } catch {
      return true; // a rule that fails asks rather than lets through
    }
  }

  /** The JSON arguments a call's tool gets (a custom tool call's free-form input mapped to its parameter). */
  private argumentsOf(call: AssembledCall): string {
    return call.itemType === "custom_tool_call" ? customArguments(this.registry, call) : call.arguments;
  }

  /** Asks the handler, after any earlier request has been answered. */
  decide(call: AssembledCall, turn: number, signal: AbortSignal): Promise<ApprovalDecision> {
    const mcp = call.itemType === "mcp_approval_request";
    const tool = mcp ? undefined : this.registry.resolve(call.name);
    const name = mcp ? mcpName(call) : (tool?.name ?? call.name);
    const request: ApprovalRequest = {
      turn,
      callId: call.callId,
      name,
      arguments: call.arguments,
      args: parseArguments(this.argumentsOf(call)),
      description: mcp
        ? `the provider asks to call ${call.name} on the remote MCP server ${String(call.item.server_label)}`
        : (tool?.definition.description ?? ""),
      signal,
    };
    if (call.itemType !== "function_call") request.itemType = call.itemType;
    const asked = this.previous.then(async () => {
      const decision = await (this.handler as ApprovalHandler)(request);
      if (decision === "allow_always") this.always.add(name);
      return decision;
    });
    this.previous = asked.catch(() => undefined);
    return asked;
  }
}

/** A remote MCP tool's name as approvals show it: `LABEL__TOOL`, like local MCP tools. */
function mcpName(call: AssembledCall): string {
  return `${String(call.item.server_label ?? "mcp")}__${call.name}`;
}

function parseArguments(raw: string): unknown {
  if (raw.trim() === "") return {};
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return undefined;
  }
}
