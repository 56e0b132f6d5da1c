/**
 * The function tools a client of the Open Responses face declares (`tools` of a create request):
 * offered to the upstream model beside the server's own tools, but never run here — a call to one
 * is deferred (`needsApproval` + an approver that answers `defer`), so the run ends and the
 * response hands the `function_call` to the client, which answers it with a
 * `function_call_output` and `previous_response_id` (docs/decisions.md, "The Open Responses face").
 *
 * A declared name that is one of the server's tools is refused (400: it would shadow a tool that
 * runs here); a name the server's policy forbids (`shell` without `--allow-shell`) is refused with
 * 403 naming the flag: a request never widens the policy.
 */
import { EddyError } from "../errors.js";
import type { ApprovalHandler } from "../loop/approvals.js";
import { checkPolicy, type Policy } from "../loop/policy.js";
import { httpProblem, invalidRequest } from "../mock/http-error.js";
import type { MockRequestBody } from "../mock/request.js";
import type { FunctionToolParam } from "../protocol/types.js";
import type { TapeClientTool } from "../replay/tape-header.js";
import { createToolRegistry, type ToolRegistry } from "../tools/registry.js";
import type { ToolDefinition } from "../tools/tool.js";

/** The client's tools, checked, and what the run needs to offer them. */
export interface ClientTools {
  /** Their names, in declaration order. */
  names: string[];
  /** The server's tools and the client's, as one registry (disposing it disposes the server's). */
  registry: ToolRegistry;
  /** Defers every client call; the server's own calls that need approval are decided by its policy. */
  onApproval: ApprovalHandler;
  /** The client's tools as the run's tape records them (`TapeHeader.client_tools`). */
  recorded: TapeClientTool[];
}

/** Checks the request's function tools against the server's tools and policy (see the module comment). */
export function clientTools(body: MockRequestBody, server: ToolRegistry, policy: Policy): ClientTools {
  const declared = (body.tools ?? []) as FunctionToolParam[];
  declared.forEach((tool, index) => {
    if (server.resolve(tool.name) !== undefined)
      throw invalidRequest(
        `tools[${index}].name: ${JSON.stringify(tool.name)} is one of this server's own tools (it runs here, server-side); leave it out or rename yours`,
        `tools[${index}].name`,
        "tool_name_taken",
      );
  });
  const names = declared.map((t) => t.name);
  const problems = checkPolicy(names, policy);
  if (problems.length > 0)
    throw httpProblem({
      status: 403,
      error: {
        type: "permission_error",
        code: "policy_denied",
        message: `this server does not allow it: ${problems.map((p) => p.message).join("; ")} — the server's own flags decide what runs here`,
        param: "tools",
      },
    });
  const recorded = declared.map(
    (tool): TapeClientTool => ({
      name: tool.name,
      description: tool.description ?? "",
      parameters: (tool.parameters ?? { type: "object", properties: {} }) as Record<string, unknown>,
      ...(typeof tool.strict === "boolean" ? { strict: tool.strict } : {}),
    }),
  );
  const own = clientRegistry(recorded);
  const clientNames = new Set(names);
  const onApproval: ApprovalHandler = (request) =>
    clientNames.has(request.name) ? "defer" : policy.approve === "auto" ? "allow" : "deny";
  return { names, registry: joined(server, own), onApproval, recorded };
}

/**
 * A client's tools as tools of a run: declared to the model as the client declared them, each
 * call needing approval (which the face defers: the call goes to the client), never run here.
 * Also how `eddy replay` rebuilds them from a tape's `client_tools`.
 */
export function clientToolDefinitions(declared: readonly TapeClientTool[]): ToolDefinition[] {
  return declared.map(
    (tool): ToolDefinition => ({
      name: tool.name,
      description: tool.description,
      parameters: tool.parameters,
      ...(tool.strict === undefined ? {} : { strict: tool.strict }),
      needsApproval: true,
      execute: () => {
        throw new EddyError("tool_failed", "a client's tool runs on the client", { fault: "user" });
      },
    }),
  );
}

function clientRegistry(declared: readonly TapeClientTool[]): ToolRegistry {
  try {
    return createToolRegistry(clientToolDefinitions(declared));
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    throw invalidRequest(`tools: ${message.slice(0, 300)}`, "tools", "invalid_tools");
  }
}

/** `first`'s tools, then `second`'s (names never overlap: checked above). */
function joined(first: ToolRegistry, second: ToolRegistry): ToolRegistry {
  return {
    declarations: () => [...first.declarations(), ...second.declarations()],
    resolve: (name) => first.resolve(name) ?? second.resolve(name),
    lookup(name) {
      const found = first.lookup(name);
      return found.kind === "unknown" ? second.lookup(name) : found;
    },
    names: () => [...first.names(), ...second.names()],
    disabledNames: () => first.disabledNames(),
    ...(first.secrets === undefined ? {} : { secrets: first.secrets }),
    dispose: () => first.dispose(),
  };
}
