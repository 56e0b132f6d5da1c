/**
 * The data a view page carries: what the Node side (run-model.ts, batch.ts) computes from tapes and
 * what the browser side (client/) renders. Plain JSON, no functions, so it crosses into the page as
 * is. The client imports this file too (esbuild bundles the one constant and erases the types).
 */

/** Ids and types of the page's data blocks, written by page.ts and read by client/payload.ts. */
export const PAGE_IDS = {
  index: "eddy-index",
  runPrefix: "eddy-run-",
  payloadType: "application/gzip+base64",
} as const;

/** Token counts summed over a run (from `run_ended.usage`, else the turns' usage). */
export interface TokenCounts {
  input: number;
  output: number;
  /** `input_tokens_details.cached_tokens`, when reported. */
  cached?: number;
  /** `output_tokens_details.reasoning_tokens`, when reported. */
  reasoning?: number;
}

/** One frame the view shows as a labelled note: a frame type it has no section for, or an event of the run. */
export interface NoteView {
  seq: number;
  ts: number;
  turn?: number;
  type: string;
  /** A readable label for the frame type ("Context compiled", "Mode changed", or the type itself). */
  title: string;
  /** Payload fields (envelope and `type` removed), values shortened. */
  fields: Array<[string, string]>;
  /** Whether the view knows this frame type (unknown types come from a newer eddy or a hand-edited tape). */
  known: boolean;
}

/** One HTTP attempt of a model request. */
export interface AttemptView {
  attempt: number;
  /** `request_started` time. */
  start: number;
  /** `response_headers` time (first byte). */
  headers?: number;
  http_status?: number;
  request_id?: string;
  /** First provider event of the attempt. */
  first_event?: number;
  /** First output delta (text, refusal, reasoning or arguments) of the attempt. */
  first_token?: number;
  /** Last frame of the attempt (its failure, or the turn's end). */
  end?: number;
  /** The model requested (it changes on a fallback to another provider's model). */
  model?: string;
  failed?: { code: string; message: string; kind: string; http_status?: number };
  /** The `retry` that followed this attempt. */
  retry?: { delay_ms: number; reason: string; ts: number; fallback?: string };
}

/** A validation finding on a provider event (recorded, never fatal). */
export interface FindingView {
  seq: number;
  turn: number;
  /** The event's `type` (or SSE event name, or the message status for undecodable ones). */
  event: string;
  messages: string[];
}

/** A file write shown as a diff: `before` is the content the run last saw (a full read or a write), else null. */
export interface FileDiffView {
  path: string;
  before: string | null;
  after: string;
  append: boolean;
}

/** One tool call with its outcome. */
export interface ToolCallView {
  seq: number;
  call_id: string;
  name: string;
  /** The arguments string exactly as the model produced it. */
  arguments: string;
  /** The parsed arguments, when they are JSON. */
  args?: unknown;
  started?: number;
  ended?: number;
  ok?: boolean;
  /** Exactly the string sent to the model (cut when it is too long for the page: `output_cut`). */
  output?: string;
  /** The full length in characters of an output cut for the page. */
  output_cut?: number;
  /** The output's parsed JSON, when it is JSON (eddy's built-ins answer `{tool, ok, exit_code, stdout, stderr, …}`). */
  output_json?: unknown;
  duration_ms?: number;
  truncated?: boolean;
  /** Size in characters of the uncapped output, when the output was capped. */
  full_output_chars?: number;
  /** `write_file` as a diff against what the run last saw of that file. */
  file_diff?: FileDiffView;
  /** `apply_patch`'s patch text (already a diff). */
  patch?: string;
  /** Approval frames for this call. */
  approval?: NoteView[];
  /** Seq of `tool_ended` (for the raw-frame link). */
  ended_seq?: number;
  /** The sub-agent's run (`agentTool`), recorded inside `tool_ended.subrun`, as a run of its own. */
  subrun?: SubRunView;
}

/** A sub-agent's run nested under the call that ran it: the agent's name and its run's view. */
export interface SubRunView {
  agent: string;
  view: RunView;
}

/** What a response put out, in output order. */
export type OutputItemView =
  | { kind: "message"; item_id: string; text: string; refusal?: string; phase?: string }
  | { kind: "reasoning"; item_id: string; summary: string[]; content: string[]; encrypted: boolean }
  | { kind: "tool"; call: ToolCallView }
  /** A function call the loop did not run (never done, or done `incomplete`). */
  | { kind: "unrun_call"; item_id: string; name: string; arguments: string; status: string }
  /** Any other item (hosted tools, provider extensions): its type and JSON. */
  | { kind: "other"; item_id: string; type: string; json: string };

/** One model request (a turn) and what came of it. */
export interface TurnView {
  turn: number;
  attempts: AttemptView[];
  response_id: string | null;
  model?: string;
  /** The response status at `turn_ended` (`completed`, `incomplete`, `failed`, `error`), absent if the tape stops first. */
  status?: string;
  usage?: TokenCounts;
  end?: number;
  items: OutputItemView[];
  findings: FindingView[];
  notes: NoteView[];
  /** Seq of the turn's first frame (for the raw-frame link). */
  seq: number;
}

/** One tool execution on the timeline. */
export interface ToolSpanView {
  turn: number;
  call_id: string;
  name: string;
  start: number;
  end?: number;
  ok?: boolean;
}

/** A point on the timeline: a retry, a fallback, a mode change, a cancel, a frame of note. */
export interface MarkerView {
  ts: number;
  turn?: number;
  kind: "retry" | "fallback" | "mode_changed" | "cancel" | "note";
  label: string;
}

/** Everything the page shows about one run. */
export interface RunView {
  run_id: string;
  model: string | null;
  provider?: string;
  mode?: string;
  /** Mode changes in order (`chained → stateless`). */
  mode_changes: string[];
  /** `run_ended.reason`, or `unfinished` when the tape has no `run_ended` (a crash, a cut file). */
  reason: string;
  error?: { code: string; message: string };
  turns: number;
  tool_calls: number;
  tokens: TokenCounts;
  start: number;
  end: number;
  duration_ms: number;
  input: string;
  instructions?: string;
  tools: string[];
  /** `run_started.mcp_servers`, as given (names or descriptions). */
  mcp_servers?: string[];
  /** The final answer (`run_ended.output_text`, else the last message streamed). */
  answer: string;
  /** The terminal tool's arguments or the structured output, as pretty JSON. */
  result?: string;
  turn_views: TurnView[];
  tool_spans: ToolSpanView[];
  markers: MarkerView[];
  /** Frames that belong to no turn (before the first request, after the last, unknown types…). */
  notes: NoteView[];
  findings: number;
  frames: number;
  /** The tape ends mid-line or without `run_ended`. */
  partial: boolean;
  /**
   * What the page leaves out of a run too large for one page (src/view/limits.ts), one line per
   * kind ("1,234 tool calls not shown"); the tape holds all of it.
   */
  omitted?: string[];
  eddy_version?: string;
}

/** One line of a batch's `results.jsonl`, as the table shows it. */
export interface BatchRowView {
  id: string;
  reason: string;
  turns: number | null;
  tool_calls: number | null;
  tokens_in: number | null;
  tokens_out: number | null;
  duration_ms: number | null;
  error?: string;
  /** The first line of `output_text`, shortened. */
  output?: string;
  /** Index of this task's run in the page's run list, when its tape could be read. */
  run?: number;
  /** Why the tape is not shown, when it is not. */
  tape_problem?: string;
}

/** A batch folder (`results.jsonl`, `summary.json`, `tapes/`). */
export interface BatchView {
  dir: string;
  rows: BatchRowView[];
  /** `summary.json` as `[label, value]` tiles in words ("Wall time", "5.10 s"), when present. */
  summary: Array<[string, string]>;
  /** Lines of results.jsonl that were skipped, and why. */
  problems: string[];
}

/** One run's entry in the page index (its full view and raw frames travel compressed beside it). */
export interface RunIndexEntry {
  label: string;
  source: string;
  run_id?: string;
  reason?: string;
  model?: string | null;
  turns?: number;
  tool_calls?: number;
  tokens?: TokenCounts;
  duration_ms?: number;
  /** Why the tape could not be shown. */
  problem?: string;
}

/** The page's index: kind, run list and batch table. Each run's RunView + raw frames is a separate compressed block. */
export interface PageIndex {
  title: string;
  eddy_version: string;
  runs: RunIndexEntry[];
  batch?: BatchView;
  /**
   * A live page (`eddy view --live`): run 0 follows a running run. `events` is the page's own
   * server's stream of payloads (same origin, relative URL): each `message` event is a whole
   * `RunPayload` as JSON, `ended` says the run ended.
   */
  live?: { events: string };
}

/** What a run's compressed block holds. */
export interface RunPayload {
  view: RunView;
  /** The tape's frame lines exactly as written (the header line excluded). */
  raw: string[];
}
