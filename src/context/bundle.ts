/**
 * Context bundles (`eddy.context_bundle.v1`; the adapter contract's `context.compile`, ADR-0010):
 * the conversation that spans runs comes from eddy's own record, never from provider state, which is
 * only a cache. A bundle is compiled from past runs' frames (tapes or `--json` logs) up to an
 * explicit cut, is immutable and provider-agnostic, and renders to `input` items for a new run.
 *
 * Strategy `recent_messages_v1`: the last `limit` user/assistant exchanges — each run's prompt and
 * its final answer. Tool calls and outputs of earlier runs are not carried over verbatim; with
 * `toolSummary` (default on) they are summarized into one text item per run, so the model knows what
 * was already looked at without replaying call items a provider may reject.
 */
import { EddyError } from "../errors.js";
import type { Frame } from "../frames/frame.js";
import { ToolHistoryManager, textEmbedStrategy } from "../history/tool-history.js";
import type { ItemParam, JsonObject } from "../protocol/types.js";

export const CONTEXT_BUNDLE_SCHEMA = "eddy.context_bundle.v1";

/** One entry of a context bundle: an exchange of an earlier run, or a summary of its tool calls. */
export type ContextItem =
  | { type: "message"; role: "user" | "assistant"; content: string; run_id: string }
  | { type: "summary"; content: string; run_id: string };

/**
 * A provider-agnostic record of earlier runs (`eddy.context_bundle.v1`) that a later run starts from.
 */
export interface ContextBundle {
  schema: typeof CONTEXT_BUNDLE_SCHEMA;
  compiler: {
    id: "eddy.context_compiler.v1";
    strategy: "recent_messages_v1";
    limit: number;
    tool_summary: boolean;
  };
  /** The runs the bundle was compiled from, oldest first, and the cut (last seq read) of each. */
  source: { run_id: string; to_seq: number; reason: string }[];
  items: ContextItem[];
}

/** Options of `compileContextBundle`. */
export interface CompileOptions {
  /** Exchanges (runs) kept, most recent last. @defaultValue 16 */
  limit?: number;
  /** Summarize each run's tool calls into a text item. @defaultValue true */
  toolSummary?: boolean;
}

/** Compiles a bundle from the frames of past runs (each array one run, in order; oldest first). */
export function compileContextBundle(
  runs: readonly (readonly Frame[])[],
  options: CompileOptions = {},
): ContextBundle {
  const limit = options.limit ?? 16;
  if (!Number.isInteger(limit) || limit < 1)
    throw new EddyError("invalid_argument", `limit must be an integer ≥ 1 (got ${limit})`, { fault: "user" });
  const toolSummary = options.toolSummary ?? true;
  const kept = runs.slice(-limit);
  const bundle: ContextBundle = {
    schema: CONTEXT_BUNDLE_SCHEMA,
    compiler: {
      id: "eddy.context_compiler.v1",
      strategy: "recent_messages_v1",
      limit,
      tool_summary: toolSummary,
    },
    source: [],
    items: [],
  };
  for (const frames of kept) {
    const started = frames.find((f) => f.type === "run_started");
    const ended = [...frames].reverse().find((f) => f.type === "run_ended");
    if (started === undefined || started.type !== "run_started") {
      throw new EddyError("invalid_argument", "a run to compile has no run_started frame", { fault: "user" });
    }
    const runId = started.run_id;
    bundle.source.push({
      run_id: runId,
      to_seq: frames.at(-1)?.seq ?? 0,
      reason: ended?.type === "run_ended" ? ended.reason : "unfinished",
    });
    const prompt = promptOf(started.input);
    if (prompt !== "") bundle.items.push({ type: "message", role: "user", content: prompt, run_id: runId });
    if (toolSummary) {
      const summary = summarizeTools(frames);
      if (summary !== undefined) bundle.items.push({ type: "summary", content: summary, run_id: runId });
    }
    const answer = ended?.type === "run_ended" ? ended.output_text : "";
    if (answer !== "")
      bundle.items.push({ type: "message", role: "assistant", content: answer, run_id: runId });
  }
  return bundle;
}

/** Renders a bundle as input items: messages as messages, summaries as developer notes. */
export function renderContextBundle(bundle: ContextBundle): ItemParam[] {
  if (bundle.schema !== CONTEXT_BUNDLE_SCHEMA) {
    throw new EddyError(
      "invalid_argument",
      `not a context bundle (schema ${JSON.stringify(bundle.schema)})`,
      { fault: "user" },
    );
  }
  return bundle.items.map((item) => {
    if (item.type === "summary")
      return { type: "message", role: "developer", content: item.content } as ItemParam;
    if (item.role === "assistant") {
      return {
        type: "message",
        role: "assistant",
        content: [{ type: "output_text", text: item.content, annotations: [] }],
      } as ItemParam;
    }
    return {
      type: "message",
      role: "user",
      content: [{ type: "input_text", text: item.content }],
    } as ItemParam;
  });
}

function promptOf(input: string | ItemParam[]): string {
  if (typeof input === "string") return input;
  const texts: string[] = [];
  for (const item of input as JsonObject[]) {
    if (item.type !== "message" || item.role !== "user") continue;
    if (typeof item.content === "string") texts.push(item.content);
    else if (Array.isArray(item.content)) {
      for (const part of item.content as JsonObject[])
        if (part.type === "input_text" && typeof part.text === "string") texts.push(part.text);
    }
  }
  return texts.at(-1) ?? "";
}

function summarizeTools(frames: readonly Frame[]): string | undefined {
  const calls = new Map<string, { name: string; arguments: string }>();
  const history = new ToolHistoryManager({ recentCallsToKeep: 0, truncationThreshold: 0 });
  for (const f of frames) {
    if (f.type === "tool_call") calls.set(f.call_id, { name: f.name, arguments: f.arguments });
    if (f.type === "tool_ended") {
      const call = calls.get(f.call_id);
      history.addToolCall({
        callId: f.call_id,
        name: f.name,
        arguments: call?.arguments ?? "{}",
        result: f.output,
        isError: !f.ok,
      });
    }
  }
  if (history.size === 0) return undefined;
  const [summary] = history.renderAsItems(textEmbedStrategy);
  const content = (summary as { content?: { text?: string }[] } | undefined)?.content?.[0]?.text;
  return content;
}
