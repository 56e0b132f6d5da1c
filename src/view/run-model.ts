/**
 * A tape → the `RunView` the page renders: header facts, turns with their attempts and output,
 * tool calls with outcomes, the timeline's spans and markers, findings and notes. One pass over
 * the frames, tolerant of everything a tape can be: cut by a crash (no `run_ended`), from a newer
 * eddy (unknown frame types become notes), or a bare frame log without a header.
 */

import { assertNever } from "../errors.js";
import type { Frame, FrameOf, RunEndedFrame, RunStartedFrame } from "../frames/frame.js";
import { isJsonObject as isObject } from "../util/json.js";
import { noteOf, shortValue } from "./notes.js";
import { type FrameRecord, knownFrame, type ViewTape } from "./read.js";
import { endToolCall, type KnownFiles, startToolCall } from "./tool-state.js";
import { TurnState, tokenCounts } from "./turn-state.js";
import type { MarkerView, NoteView, RunView, TokenCounts, ToolCallView, ToolSpanView } from "./view-data.js";

/** Longest input prompt shown in the header (the raw frames hold all of it). */
const INPUT_MAX = 4_000;

/** Builds the view of one run from its tape. */
export function buildRunView(tape: ViewTape): RunView {
  const builder = new RunBuilder();
  for (const record of tape.frames) builder.add(record);
  return builder.finish(tape);
}

class RunBuilder {
  private started: RunStartedFrame | undefined;
  private ended: RunEndedFrame | undefined;
  private readonly turns = new Map<number, TurnState>();
  private readonly calls = new Map<string, ToolCallView>();
  private readonly spans: ToolSpanView[] = [];
  private readonly markers: MarkerView[] = [];
  private readonly notes: NoteView[] = [];
  private readonly modeChanges: string[] = [];
  private readonly known: KnownFiles = new Map();
  private first: number | undefined;
  private last = 0;

  add(record: FrameRecord): void {
    this.first ??= record.ts;
    this.last = Math.max(this.last, record.ts);
    const frame = knownFrame(record);
    if (frame === undefined) this.note(record, false);
    else this.frame(frame, record);
  }

  private turn(n: number, seq: number): TurnState {
    let state = this.turns.get(n);
    if (state === undefined) {
      state = new TurnState(n, seq);
      this.turns.set(n, state);
    }
    return state;
  }

  private frame(frame: Frame, record: FrameRecord): void {
    switch (frame.type) {
      case "run_started":
        this.started = frame;
        return;
      case "run_ended":
        this.ended = frame;
        return;
      case "request_started":
        this.turn(frame.turn, frame.seq).requestStarted(frame);
        return;
      case "response_headers":
        this.turn(frame.turn, frame.seq).responseHeaders(frame);
        return;
      case "provider_event":
        this.turn(frame.turn, frame.seq).providerEvent(frame);
        return;
      case "output_text_delta":
        this.turn(frame.turn, frame.seq).textDelta(frame);
        return;
      case "request_failed":
        this.turn(frame.turn, frame.seq).requestFailed(frame);
        return;
      case "retry":
        this.retried(frame);
        return;
      case "turn_ended":
        this.turn(frame.turn, frame.seq).turnEnded(frame);
        return;
      case "tool_call":
      case "tool_started":
      case "tool_ended":
        this.toolFrame(frame);
        return;
      case "mode_changed":
        this.modeChanges.push(`${frame.from} → ${frame.to}`);
        this.markers.push({
          ts: frame.ts,
          turn: frame.turn,
          kind: "mode_changed",
          label: `${frame.from} → ${frame.to}: ${frame.reason}`,
        });
        this.note(record, true);
        return;
      case "cancel_requested":
        this.markers.push({
          ts: frame.ts,
          turn: frame.turn,
          kind: "cancel",
          label: `cancel: ${frame.reason}`,
        });
        this.note(record, true);
        return;
      case "history_repaired":
      case "approval_requested":
      case "approval_decided":
      case "hook_decided":
      case "turn_prepared":
      case "guardrail_checked":
      case "context_compiled":
      case "context_compacted":
        this.note(record, true);
        return;
      default:
        assertNever(frame, "frame");
    }
  }

  /** A retry on the turn, and its marker on the timeline (a fallback when the reason says so). */
  private retried(frame: FrameOf<"retry">): void {
    this.turn(frame.turn, frame.seq).retry(frame);
    const fallback = frame.reason.startsWith("fallback:");
    this.markers.push({
      ts: frame.ts,
      turn: frame.turn,
      kind: fallback ? "fallback" : "retry",
      label: fallback
        ? `fallback to ${frame.reason.slice("fallback:".length)} (attempt ${frame.attempt})`
        : `retry ${frame.attempt} in ${frame.delay_ms} ms (${frame.reason})`,
    });
  }

  /** A tool call's frames: the call on its turn, then its span on the timeline. */
  private toolFrame(frame: FrameOf<"tool_call" | "tool_started" | "tool_ended">): void {
    if (frame.type === "tool_call") {
      const call = startToolCall(frame, this.known);
      this.calls.set(frame.call_id, call);
      this.turn(frame.turn, frame.seq).calls.push(call);
      return;
    }
    const call = this.calls.get(frame.call_id);
    if (frame.type === "tool_started") {
      if (call !== undefined) call.started = frame.ts;
      this.spans.push({ turn: frame.turn, call_id: frame.call_id, name: frame.name, start: frame.ts });
      return;
    }
    if (call !== undefined) endToolCall(call, frame, this.known);
    const span = this.spans.findLast((s) => s.call_id === frame.call_id && s.end === undefined);
    if (span !== undefined) {
      span.end = frame.ts;
      span.ok = frame.ok;
    }
  }

  /** A frame shown as a note: on its tool call (approvals), its turn, or the run. */
  private note(record: FrameRecord, known: boolean): void {
    const note = noteOf(record, known);
    if (record.type.startsWith("approval_") && typeof record.call_id === "string") {
      const call = this.calls.get(record.call_id);
      if (call !== undefined) {
        call.approval = [...(call.approval ?? []), note];
        return;
      }
    }
    if (record.type.startsWith("context_") || !known) {
      this.markers.push({ ts: record.ts, kind: "note", label: note.title, ...turnOf(record) });
    }
    this.notes.push(note);
  }

  finish(tape: ViewTape): RunView {
    const started = this.started;
    const ended = this.ended;
    const header = tape.header;
    // Notes go to their turn when the tape has it (a frame may name a turn before its request starts).
    const runNotes = this.notes.filter((n) => {
      const turn = n.turn === undefined ? undefined : this.turns.get(n.turn);
      turn?.notes.push(n);
      return turn === undefined;
    });
    const turnViews = [...this.turns.values()].sort((a, b) => a.turn - b.turn).map((t) => t.finish());
    const start = this.first ?? 0;
    const end = Math.max(this.last, start);
    const tokens: TokenCounts = ended !== undefined ? tokenCounts(ended.usage) : sumTokens(turnViews);
    const lastMessage = turnViews
      .flatMap((t) => t.items)
      .reverse()
      .find((i) => i.kind === "message");
    const view: RunView = {
      run_id: started?.run_id ?? header?.run_id ?? tape.frames[0]?.run_id ?? "",
      model: started?.model ?? header?.spec.model ?? null,
      mode_changes: this.modeChanges,
      reason: ended?.reason ?? "unfinished",
      turns: ended?.turns ?? turnViews.length,
      tool_calls: ended?.tool_calls ?? this.calls.size,
      tokens,
      start,
      end,
      duration_ms: end - start,
      input: inputText(started?.input ?? header?.spec.input ?? ""),
      tools: started?.tools ?? header?.spec.tools ?? [],
      answer: ended?.output_text ?? (lastMessage?.kind === "message" ? lastMessage.text : ""),
      turn_views: turnViews,
      tool_spans: this.spans,
      markers: this.markers,
      notes: runNotes,
      findings: turnViews.reduce((n, t) => n + t.findings.length, 0),
      frames: tape.frames.length,
      partial: tape.cut || ended === undefined,
    };
    const mode = started?.mode ?? (header?.spec.mode === "auto" ? undefined : header?.spec.mode);
    if (mode !== undefined) view.mode = mode;
    if (header !== undefined) {
      view.provider = header.provider.name;
      view.eddy_version = header.eddy_version;
    }
    const instructions = started?.instructions ?? header?.spec.instructions;
    if (instructions !== undefined) view.instructions = instructions;
    const mcp = (started as Record<string, unknown> | undefined)?.mcp_servers;
    if (mcp !== undefined) view.mcp_servers = mcpServers(mcp);
    if (ended?.error !== undefined) view.error = { code: ended.error.code, message: ended.error.message };
    if (ended !== undefined && "result" in ended && ended.result !== undefined) {
      view.result = JSON.stringify(ended.result, null, 2);
    }
    return view;
  }
}

function turnOf(record: FrameRecord): { turn?: number } {
  return typeof record.turn === "number" ? { turn: record.turn } : {};
}

function sumTokens(turns: Array<{ usage?: TokenCounts }>): TokenCounts {
  const sum: TokenCounts = { input: 0, output: 0 };
  for (const t of turns) {
    sum.input += t.usage?.input ?? 0;
    sum.output += t.usage?.output ?? 0;
  }
  return sum;
}

/** The run's input as text: the prompt, or its items one per line (`role: text`, `[type]`). */
function inputText(input: unknown): string {
  if (typeof input === "string") return shortValue(input, INPUT_MAX);
  if (!Array.isArray(input)) return shortValue(input, INPUT_MAX);
  const lines = input.map((item) => {
    if (!isObject(item)) return shortValue(item, 200);
    if (item.type === "message" || (item.type === undefined && typeof item.role === "string")) {
      const content =
        typeof item.content === "string"
          ? item.content
          : Array.isArray(item.content)
            ? item.content
                .filter(isObject)
                .map((p) => (typeof p.text === "string" ? p.text : `[${String(p.type)}]`))
                .join(" ")
            : "";
      return `${String(item.role ?? "?")}: ${content}`;
    }
    return `[${String(item.type)}]`;
  });
  return shortValue(lines.join("\n"), INPUT_MAX);
}

/** `run_started.mcp_servers` as names: strings as they are, objects by their `name` (else as JSON). */
function mcpServers(value: unknown): string[] {
  const list = Array.isArray(value) ? value : isObject(value) ? Object.keys(value) : [value];
  return list.map((s) =>
    typeof s === "string" ? s : isObject(s) && typeof s.name === "string" ? s.name : shortValue(s, 200),
  );
}
