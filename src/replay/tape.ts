/**
 * Tapes (docs/decisions.md #9; docs/architecture.md, "The replay guarantee"): the JSONL record of a run. Line 1 is a header with
 * every run option needed to rebuild the request bodies (never secrets); then every frame of the
 * run, one per line, written as the run goes so a crash leaves a valid prefix.
 */
import { EddyError } from "../errors.js";
import type { ContextCompilation, ContinuationMode, Frame, McpServerSummary } from "../frames/frame.js";
import { asFrame, parseJsonl } from "../frames/jsonl.js";
import type { ToolHistoryStrategySetting } from "../history/strategies.js";
import type { ToolExecutionPolicy, ToolsOnFollowUp } from "../loop/options.js";
import type { HostedTool, NativeShell } from "../loop/tool-declarations.js";
import type { CreateResponseBody, ItemParam, ToolChoiceParam } from "../protocol/types.js";
import type { ProviderCapabilities } from "../provider/capabilities.js";
import type { WireApi } from "../provider/wire-api.js";
import type { McpToolInfo } from "../tools/mcp/index.js";
import { readRegularTextSync } from "../util/regular-file.js";

/** The tape format this eddy writes and reads. */
export const TAPE_FORMAT = 1;

/**
 * The first line of a tape: every run option needed to rebuild the run's requests (never secrets).
 */
export interface TapeHeader {
  type: "tape_header";
  format: number;
  eddy_version: string;
  run_id: string;
  model: string | null;
  mode: ContinuationMode;
  instructions?: string;
  input: string | ItemParam[];
  /**
   * The context the run started from (`RunOptions.context`): the rendered bundle's items and the
   * `context_compiled` payload. A replay starts from exactly these items and never recompiles.
   */
  context?: { items: ItemParam[]; compiled: ContextCompilation };
  /** Names of the tools offered. */
  tools: string[];
  /** How the built-in tool set was configured (CLI runs). `sandbox`: shell ran under bubblewrap. */
  tool_set?: { allow_write: boolean; allow_shell: boolean; sandbox?: boolean };
  /** The MCP servers of the run, as `run_started` lists them. */
  mcp_servers?: McpServerSummary[];
  /** The MCP tools offered at the start (rebuilt with `offlineMcpTools` to replay without the servers). */
  mcp_tools?: McpToolInfo[];
  limits: { max_tool_calls: number; max_turns: number };
  /**
   * The provider profile name and its capabilities (they shape the request bodies), and the API it
   * speaks when that is not Open Responses (it decides how recorded events are read back).
   */
  provider: { name: string; capabilities: ProviderCapabilities; wire?: WireApi };
  options: {
    tool_choice?: ToolChoiceParam;
    reset_tool_choice: boolean;
    tools_on_follow_up: ToolsOnFollowUp;
    tool_execution: ToolExecutionPolicy;
    parallel_tool_calls: boolean;
    /** Calls that ran at once (with parallel tool calls), when not the default. */
    tool_concurrency?: number;
    /** The run asked for approvals: replay answers with the recorded decisions. */
    approvals?: boolean;
    validate: boolean;
    request?: Partial<CreateResponseBody>;
    output_schema?: { name: string; schema: Record<string, unknown>; strict: boolean; description?: string };
    tool_timeout_ms?: number;
    tool_output_cap_bytes?: number;
    /**
     * The tool-history settings (`RunOptions.history`), when not the defaults. A replay builds the
     * same manager; with a summarization model it hands back the summaries the tape recorded.
     */
    history?: {
      recent_calls_to_keep: number;
      truncation_threshold: number;
      strategy: ToolHistoryStrategySetting;
      summarization_model?: string;
    };
    /** `RunOptions.nativeTools`, when the run set it (else the capabilities' `nativeTools`). */
    native_tools?: boolean;
    /** `RunOptions.nativeShell`, when not the default. */
    native_shell?: NativeShell;
    /** `RunOptions.hostedTools`: the hosted tools declared on every request. */
    hosted_tools?: HostedTool[];
    /** `RunOptions.continueIncomplete`. */
    continue_incomplete?: boolean;
  };
  /** Always "." : tapes never hold absolute paths; replay uses the workspace it is given. */
  workspace: ".";
  /**
   * Where the run was resumed after its process died or it was cancelled (`eddy resume`, batches),
   * oldest first. The frames before `at_seq` are the earlier process's, reproduced; replay needs
   * nothing from this (the tape reads as one run).
   */
  resumes?: TapeResume[];
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
  /** When the run was resumed (unix ms). */
  ts: number;
}

/** A parsed tape: its header and the run's frames. */
export interface Tape {
  header: TapeHeader;
  frames: Frame[];
}

/** Parses a tape. A bad line, a missing header or a newer format is a clear `EddyError` (exit 2 in the CLI). */
export function parseTape(text: string, source = "tape"): Tape {
  let records: ReturnType<typeof parseJsonl>;
  try {
    records = parseJsonl(text, { allowPartialLastLine: true });
  } catch (err) {
    throw new EddyError("tape_invalid", `${source}: ${(err as Error).message}`, {
      fault: "user",
      cause: err,
    });
  }
  const first = records[0];
  if (first === undefined)
    throw new EddyError("tape_invalid", `${source}: the tape is empty`, { fault: "user" });
  const header = first.value;
  if (header.type !== "tape_header") {
    throw new EddyError(
      "tape_invalid",
      `${source}: line 1 is not a tape header (type ${JSON.stringify(header.type)})`,
      {
        fault: "user",
      },
    );
  }
  if (typeof header.format !== "number" || !Number.isInteger(header.format)) {
    throw new EddyError("tape_invalid", `${source}: the tape header has no integer format`, {
      fault: "user",
    });
  }
  if (header.format > TAPE_FORMAT) {
    throw new EddyError(
      "tape_version_unsupported",
      `${source}: tape format ${header.format} is newer than this eddy reads (${TAPE_FORMAT}); upgrade eddy to replay it`,
      { fault: "user" },
    );
  }
  if (header.format < 1)
    throw new EddyError("tape_invalid", `${source}: unknown tape format ${header.format}`, { fault: "user" });
  for (const key of ["run_id", "mode", "provider", "options", "limits"]) {
    if (!(key in header))
      throw new EddyError("tape_invalid", `${source}: the tape header lacks "${key}"`, { fault: "user" });
  }
  let frames: Frame[];
  try {
    frames = records.slice(1).map(asFrame);
  } catch (err) {
    throw new EddyError("tape_invalid", `${source}: ${(err as Error).message}`, {
      fault: "user",
      cause: err,
    });
  }
  frames.forEach((f, i) => {
    if (f.seq !== i) {
      throw new EddyError(
        "tape_invalid",
        `${source}: frame ${i} has seq ${f.seq} (seq must be contiguous from 0)`,
        { fault: "user" },
      );
    }
  });
  return { header: header as unknown as TapeHeader, frames };
}

/** The largest tape read (only a regular file is read: src/util/regular-file.ts). */
export const TAPE_MAX_BYTES = 256 * 1024 * 1024;

/** Reads and parses a tape file (a regular file of at most `TAPE_MAX_BYTES`). */
export function readTape(path: string): Tape {
  return parseTape(readTapeFileText(path), path);
}

/** The text of the tape file at `path`: a regular file, at most `TAPE_MAX_BYTES`, else `tape_invalid`. */
export function readTapeFileText(path: string): string {
  return readRegularTextSync(path, { what: "tape", maxBytes: TAPE_MAX_BYTES, code: "tape_invalid" });
}
