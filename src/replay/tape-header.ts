/**
 * The tape header (docs/architecture.md, "The replay guarantee"): what a run was, as data. Format
 * 2 carries the run's `RunSpec` (`spec`, checked with the same schema as every other untrusted
 * spec), the provider it ran against (name, capabilities, wire API, whether events were
 * validated), the policy it had (for audit only: a replay or resume takes its permissions from its
 * own invocation), the MCP servers and tools it offered, and where it was resumed.
 *
 * A tape is a file people mail and attach to issues: every field is checked here before anything
 * reads it, and a problem names the field. Format-1 headers (eddy before RunSpec) are read through
 * `legacyHeader`, one mapping onto the format-2 shape.
 */
import { z } from "zod";
import { EddyError } from "../errors.js";
import type { McpServerSummary } from "../frames/frame.js";
import { APPROVE_MODES, type Policy } from "../loop/policy.js";
import { type RunSpec, resolveRunSpec } from "../loop/run-spec.js";
import { CAPABILITY_KEYS, type ProviderCapabilities, withCapabilities } from "../provider/capabilities.js";
import type { WireApi } from "../provider/wire-api.js";
import type { McpToolInfo } from "../tools/mcp/index.js";
import { once } from "../util/lazy-object.js";
import { zodProblems } from "../util/zod-problems.js";

/**
 * The tape format this eddy writes (it reads 1 to 3): 2 put the run's spec in the header, 3 added
 * the derived frames (`reasoning_delta`, `item_done`, `response_ended`), which older tapes get
 * when they are read (src/replay/upgrade-frames.ts).
 */
export const TAPE_FORMAT = 3;

/** The provider a recorded run streamed from: what shapes its requests and how its events are read back. */
export interface TapeProvider {
  /** The profile name (`openai`, `mock`, …). */
  name: string;
  capabilities: ProviderCapabilities;
  /** The API it speaks when that is not Open Responses (how recorded events are read back). */
  wire?: WireApi;
  /** Provider events were validated against the schema (their `errors` are in the frames). */
  validate: boolean;
}

/** The first line of a tape (see the module comment). */
export interface TapeHeader {
  type: "tape_header";
  /** The format the tape was recorded in (a format-1 header is read into this shape). */
  format: number;
  eddy_version: string;
  run_id: string;
  /** The run as data, every default applied: `replay` and `resume` rebuild the run from it. */
  spec: RunSpec;
  provider: TapeProvider;
  /** The policy the run had, recorded for audit; nothing reads permissions from it. */
  policy?: Policy;
  /** The MCP servers of the run, as `run_started` lists them. */
  mcp_servers?: McpServerSummary[];
  /** The MCP tools offered at the start (rebuilt with `offlineMcpTools` to replay without the servers). */
  mcp_tools?: McpToolInfo[];
  /**
   * The sub-agents the run offered as tools (`agentTool`, the CLI's config `agents`): name and
   * description, so `eddy replay` rebuilds the same tools (their recorded runs are in the frames).
   */
  agents?: TapeAgent[];
  /**
   * The function tools a client of the Open Responses face declared (a run of `eddy serve`'s
   * `POST /v1/responses`), so `eddy replay` offers the same tools; their calls were the client's.
   */
  client_tools?: TapeClientTool[];
  /** Always "." : tapes never hold absolute paths; replay uses the workspace it is given. */
  workspace: ".";
  /**
   * Where the run was resumed after its process died or it was cancelled (`eddy resume`, batches),
   * oldest first. The frames before `at_seq` are the earlier process's, reproduced; replay needs
   * nothing from this (the tape reads as one run).
   */
  resumes?: TapeResume[];
}

/**
 * A function tool a client of `eddy serve`'s Open Responses face declared (see
 * `TapeHeader.client_tools`): never run by eddy, its calls handed back to the client.
 */
export interface TapeClientTool {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  strict?: boolean;
}

/** A sub-agent a run offered as a tool (see `TapeHeader.agents`). */
export interface TapeAgent {
  name: string;
  description: string;
}

/** One resumption of a run (see `TapeHeader.resumes`). */
export interface TapeResume {
  /** Frames kept from the earlier tape: the resumed run reproduced them and went on live after. */
  at_seq: number;
  /** The turn the live part started in. */
  turn: number;
  /** Tool outputs taken from the earlier tape instead of running the tools again. */
  reused_tool_outputs: number;
  /** Frames of the earlier tape after `at_seq` that were dropped (an unfinished request). */
  dropped_frames: number;
  /** Tool outputs among the dropped frames (their calls run again if the model asks again). */
  dropped_tool_outputs: number;
  /** Calls that had started when the process died and were answered as interrupted (not run again). */
  interrupted_calls?: number;
  /** When the run was resumed (unix ms). */
  ts: number;
}

const capabilitiesShape = () =>
  z.strictObject(
    Object.fromEntries(CAPABILITY_KEYS.map((key) => [key, z.boolean().optional()])) as Record<
      keyof ProviderCapabilities,
      z.ZodOptional<z.ZodBoolean>
    >,
  );

/**
 * A tape header's schema, built on the first tape read: a run that only writes its tape never
 * builds it (bench/README.md, "Start-up").
 */
const headerShape = once(() => {
  const count = z.int().min(0);
  const name = z.string().min(1).max(256);
  return z.strictObject({
    type: z.literal("tape_header"),
    format: z.int().min(2).max(TAPE_FORMAT),
    eddy_version: z.string().max(64),
    run_id: z.string().regex(/^[A-Za-z0-9_-]{1,128}$/),
    spec: z.unknown(),
    provider: z.strictObject({
      name,
      capabilities: capabilitiesShape(),
      wire: z.looseObject({ api: z.string().min(1).max(64) }).optional(),
      validate: z.boolean(),
    }),
    policy: z
      .strictObject({
        allowWrite: z.boolean(),
        allowShell: z.boolean(),
        sandbox: z.boolean(),
        approve: z.enum(APPROVE_MODES),
        mcpServers: z.array(name),
        rerunInterrupted: z.boolean(),
        hostedTools: z
          .array(z.looseObject({ type: z.string().min(1).max(64) }))
          .max(64)
          .optional(),
      })
      .optional(),
    mcp_servers: z
      .array(
        z.strictObject({
          name,
          transport: z.enum(["stdio", "http"]),
          state: z.enum(["idle", "starting", "ready", "failed", "exited", "closed"]),
          tools: count,
          error: z.string().max(4096).optional(),
        }),
      )
      .optional(),
    mcp_tools: z
      .array(
        z.strictObject({
          name,
          server: name,
          tool: name,
          description: z.string(),
          parameters: z.record(z.string(), z.unknown()),
          readOnly: z.boolean(),
        }),
      )
      .optional(),
    agents: z.array(z.strictObject({ name, description: z.string() })).optional(),
    client_tools: z
      .array(
        z.strictObject({
          name,
          description: z.string(),
          parameters: z.record(z.string(), z.unknown()),
          strict: z.boolean().optional(),
        }),
      )
      .optional(),
    workspace: z.literal("."),
    resumes: z
      .array(
        z.strictObject({
          at_seq: count,
          turn: count,
          reused_tool_outputs: count,
          dropped_frames: count,
          dropped_tool_outputs: count,
          interrupted_calls: count.optional(),
          ts: z.number(),
        }),
      )
      .optional(),
  });
});

/**
 * Checks a parsed header line (format 1 to 3) and returns it in the format-2 shape (`format`
 * stays the recorded one). Throws
 * `tape_invalid` naming the field, or `tape_version_unsupported` for a newer format.
 */
export function checkTapeHeader(value: Record<string, unknown>, source: string): TapeHeader {
  if (value.type !== "tape_header")
    throw invalid(source, `line 1 is not a tape header (type ${JSON.stringify(value.type)})`);
  const format = value.format;
  if (typeof format !== "number" || !Number.isInteger(format))
    throw invalid(source, "the tape header has no integer format");
  if (format > TAPE_FORMAT)
    throw new EddyError(
      "tape_version_unsupported",
      `${source}: tape format ${format} is newer than this eddy reads (${TAPE_FORMAT}); upgrade eddy to replay it`,
      { fault: "user" },
    );
  if (format < 1) throw invalid(source, `unknown tape format ${format}`);
  const header = format === 1 ? legacyHeader(value, source) : value;
  const parsed = headerShape().safeParse(header);
  if (!parsed.success) throw invalid(source, `tape header: ${zodProblems(parsed.error, header).join("; ")}`);
  let spec: RunSpec;
  try {
    spec = resolveRunSpec(header.spec, `${source}: tape header spec`);
  } catch (err) {
    throw invalid(source, (err as Error).message.replace(`${source}: `, ""), err);
  }
  if (spec.run_id !== undefined && spec.run_id !== parsed.data.run_id)
    throw invalid(
      source,
      `tape header: spec.run_id ${spec.run_id} differs from run_id ${parsed.data.run_id}`,
    );
  const { wire, ...rest } = parsed.data.provider;
  const provider: TapeProvider = {
    ...rest,
    capabilities: withCapabilities(rest.capabilities),
    ...(wire === undefined ? {} : { wire: wire as WireApi }),
  };
  return { ...(parsed.data as Omit<TapeHeader, "spec" | "provider">), format, spec, provider };
}

/**
 * A format-1 header (settings written field by field, snake_case) in the format-2 shape: its
 * settings as a spec, `options.validate` as the provider's, `tool_set` and `options.approvals` as
 * the recorded policy. Values are not checked here: the format-2 checks run on the result.
 */
function legacyHeader(h: Record<string, unknown>, source: string): Record<string, unknown> {
  const options = record(h.options);
  const limits = record(h.limits);
  const provider = record(h.provider);
  const toolSet = record(h.tool_set);
  if (h.options === undefined || h.limits === undefined || h.provider === undefined)
    throw invalid(source, 'the format-1 tape header lacks "options", "limits" or "provider"');
  const spec: Record<string, unknown> = {
    model: h.model,
    input: h.input,
    mode: h.mode,
    tools: h.tools,
    max_tool_calls: limits.max_tool_calls,
    max_turns: limits.max_turns,
    run_id: h.run_id,
  };
  const copied = [
    "tool_choice",
    "reset_tool_choice",
    "tools_on_follow_up",
    "tool_execution",
    "parallel_tool_calls",
    "tool_concurrency",
    "request",
    "output_schema",
    "tool_timeout_ms",
    "tool_output_cap_bytes",
    "history",
    "native_tools",
    "native_shell",
    "hosted_tools",
    "continue_incomplete",
  ];
  for (const key of copied) if (options[key] !== undefined) spec[key] = options[key];
  if (h.instructions !== undefined) spec.instructions = h.instructions;
  if (h.context !== undefined) spec.context = h.context;
  const out: Record<string, unknown> = {
    type: "tape_header",
    format: 2,
    eddy_version: h.eddy_version,
    run_id: h.run_id,
    spec,
    // eddy before RunSpec read a missing `options.validate` as off.
    provider: { ...provider, validate: options.validate === true },
    policy: {
      allowWrite: toolSet.allow_write === true,
      allowShell: toolSet.allow_shell === true,
      sandbox: toolSet.sandbox === true,
      approve: options.approvals === true ? "ask" : "auto",
      mcpServers: Array.isArray(h.mcp_servers) ? h.mcp_servers.map((s) => record(s).name) : [],
      rerunInterrupted: false,
    },
    workspace: h.workspace,
  };
  for (const key of ["mcp_servers", "mcp_tools", "resumes"]) if (h[key] !== undefined) out[key] = h[key];
  return out;
}

function record(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

function invalid(source: string, message: string, cause?: unknown): EddyError {
  return new EddyError("tape_invalid", `${source}: ${message}`, { fault: "user", cause });
}
