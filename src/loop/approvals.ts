/**
 * Approvals: asking before a call runs. A tool says it needs approval (`needsApproval` on its
 * definition: the built-in writers and `shell` do, as do MCP tools not marked read-only); the run's
 * `onApproval` decides. Without a handler nothing is asked (the library's default, the CLI's
 * `--approve auto`). Requests are made one at a time, in the order the calls reach their turn to
 * run, so a terminal prompt never interleaves; `allow_always` approves the tool for the rest of
 * the run.
 */
import type { AssembledCall } from "../provider/assembler/index.js";
import type { ToolRegistry } from "../tools/registry.js";

/** What the approver answers. `allow_always` also approves later calls of the same tool in this run. */
export type ApprovalDecision = "allow" | "deny" | "allow_always";

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
    const tool = this.registry.resolve(call.name);
    if (tool === undefined || this.always.has(tool.name)) return false;
    const rule = tool.definition.needsApproval;
    if (rule === undefined || rule === false) return false;
    if (rule === true) return true;
    const args = parseArguments(call.arguments);
    if (args === undefined) return false; // refused as invalid arguments anyway
    try {
      return rule(args) === true;
    } catch {
      return true; // a rule that fails asks rather than lets through
    }
  }

  /** Asks the handler, after any earlier request has been answered. */
  decide(call: AssembledCall, turn: number, signal: AbortSignal): Promise<ApprovalDecision> {
    const tool = this.registry.resolve(call.name);
    const name = tool?.name ?? call.name;
    const request: ApprovalRequest = {
      turn,
      callId: call.callId,
      name,
      arguments: call.arguments,
      args: parseArguments(call.arguments),
      description: tool?.definition.description ?? "",
      signal,
    };
    const asked = this.previous.then(async () => {
      const decision = await (this.handler as ApprovalHandler)(request);
      if (decision === "allow_always") this.always.add(name);
      return decision;
    });
    this.previous = asked.catch(() => undefined);
    return asked;
  }
}

function parseArguments(raw: string): unknown {
  if (raw.trim() === "") return {};
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return undefined;
  }
}
