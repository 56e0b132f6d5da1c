/**
 * A tape → the `RunView` the page renders: header facts, turns with their attempts and output,
 * tool calls with outcomes, the timeline's spans and markers, findings and notes. One pass over
 * the frames, frame by frame (a tape is never held whole), tolerant of everything a tape can be:
 * cut by a crash (no `run_ended`), from a newer eddy (unknown frame types become notes), a bare
 * frame log without a header, hand-edited or hostile (any field of any type and size: limits.ts).
 * Tapes recorded before eddy derived `item_done` and its kin get them derived here
 * (src/replay/upgrade-frames.ts).
 */

import { assertNever } from "../errors.js";
import type { Frame, FrameOf, RunEndedFrame, RunStartedFrame } from "../frames/frame.js";
import { envelopeProblem } from "../frames/jsonl.js";
import type { TapeHeader } from "../replay/tape.js";
import { DERIVED_FRAMES_FORMAT, FrameUpgrader } from "../replay/upgrade-frames.js";
import { isJsonObject as isObject } from "../util/json.js";
import { intOf, nameOf, namesOf, numberOf, Omitted, TextBudget, textOf, VIEW_LIMITS } from "./limits.js";
import { noteOf, shortValue } from "./notes.js";
import { type FrameRecord, knownFrame, type ViewTape } from "./read.js";
import { endToolCall, type KnownFiles, startToolCall } from "./tool-state.js";
import { type RunLimits, TurnState, tokenCounts } from "./turn-state.js";
import type { MarkerView, NoteView, RunView, TokenCounts, ToolCallView, ToolSpanView } from "./view-data.js";

/** Longest input prompt shown in the header (the raw frames hold all of it). */
const INPUT_MAX = 4_000;

/** What the reader learned of a tape besides its frames. */
export interface TapeFacts {
  header?: TapeHeader;
  /** The last line was cut mid-record. */
  cut: boolean;
  /** Frame lines read. */
  frames: number;
  /** Problems with lines that were not read as frames (too long), one line each. */
  problems?: string[];
}

/** Builds the view of one run from its tape (held in memory; `RunBuilder` takes one frame at a time). */
export function buildRunView(tape: ViewTape): RunView {
  const builder = new RunBuilder(tape.header);
  for (const record of tape.frames) builder.add(record);
  const facts: TapeFacts = { cut: tape.cut, frames: tape.frames.length };
  if (tape.header !== undefined) facts.header = tape.header;
  return builder.finish(facts);
}

/** The view of one run, built frame by frame. */
export class RunBuilder {
  private started: RunStartedFrame | undefined;
  private ended: RunEndedFrame | undefined;
  private readonly turns = new Map<number, TurnState>();
  private readonly calls = new Map<string, ToolCallView>();
  private readonly spans: ToolSpanView[] = [];
  private readonly markers: MarkerView[] = [];
  private readonly notes: NoteView[] = [];
  private readonly modeChanges: string[] = [];
  private readonly known: KnownFiles = new Map();
  private readonly depth: number = 0;
  private readonly limits: RunLimits = {
    budget: new TextBudget(),
    omitted: new Omitted(),
    items: { left: VIEW_LIMITS.items },
    findings: { left: VIEW_LIMITS.marks },
  };
  private readonly upgrader: FrameUpgrader | undefined;
  private first: number | undefined;
  private last = 0;

  /**
   * `header`: the tape's; it says whether the frames need their derived frames derived. A sub-run's
   * builder shares its parent's `limits` and knows its `depth`.
   */
  constructor(
    private readonly header?: TapeHeader,
    nested?: { limits: RunLimits; depth: number },
  ) {
    if (nested !== undefined) {
      this.limits = nested.limits;
      this.depth = nested.depth;
    }
    const format = header === undefined ? undefined : numberOf(header.format);
    if (format === undefined || format < DERIVED_FRAMES_FORMAT) {
      const provider = header !== undefined && isObject(header.provider) ? header.provider : undefined;
      const wire = provider !== undefined && isObject(provider.wire) ? provider.wire : undefined;
      this.upgrader = new FrameUpgrader(wire === undefined ? {} : { wire: wire as never });
    }
  }

  add(record: FrameRecord): void {
    this.checkSeq(record);
    this.first ??= record.ts;
    this.last = Math.max(this.last, record.ts);
    for (const r of this.upgraded(record)) this.record(r);
  }

  /** The record with the frames derived from it, when the tape predates them (see the module comment). */
  private upgraded(record: FrameRecord): FrameRecord[] {
    if (this.upgrader === undefined || knownFrame(record) === undefined) return [record];
    try {
      return this.upgrader.push(record as unknown as Frame) as unknown as FrameRecord[];
    } catch {
      // A record the assembler cannot take (a hostile tape): shown as it is, nothing derived.
      return [record];
    }
  }

  private record(record: FrameRecord): void {
    const frame = knownFrame(record);
    if (frame === undefined) this.note(record, false);
    else this.frame(frame, record);
  }

  /** The turn a frame belongs to; undefined (and the frame noted) when its `turn` is no turn number. */
  private turn(frame: Frame & { turn: number }, record: FrameRecord): TurnState | undefined {
    const n = intOf(frame.turn);
    if (n === undefined) {
      this.note(record, true);
      return undefined;
    }
    let state = this.turns.get(n);
    if (state === undefined) {
      if (this.turns.size >= VIEW_LIMITS.turns) {
        this.limits.omitted.count("frames of later turns");
        return undefined;
      }
      state = new TurnState(n, frame.seq, this.limits);
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
        // The run ended at its first run_ended: one after it (a tape eddy never writes) could
        // only hide how it ended; it is shown as a note.
        if (this.ended === undefined) this.ended = frame;
        else
          this.integrity(
            frame.seq,
            frame.ts,
            `Another run_ended after the run ended (${String(frame.reason)})`,
          );
        return;
      case "request_started":
        this.turn(frame, record)?.requestStarted(frame);
        return;
      case "response_headers":
        this.turn(frame, record)?.responseHeaders(frame);
        return;
      case "provider_event":
        this.turn(frame, record)?.providerEvent(frame);
        return;
      case "output_text_delta":
        this.turn(frame, record)?.textDelta(frame);
        return;
      case "reasoning_delta":
        this.turn(frame, record)?.reasoningDelta(frame);
        return;
      case "item_done":
        this.turn(frame, record)?.itemDone(frame);
        return;
      case "response_ended":
        this.turn(frame, record)?.responseEnded(frame);
        return;
      case "request_failed":
        this.turn(frame, record)?.requestFailed(frame);
        return;
      case "retry":
        this.retried(frame, record);
        return;
      case "turn_ended":
        this.turn(frame, record)?.turnEnded(frame);
        return;
      case "tool_call":
      case "tool_started":
      case "tool_ended":
        this.toolFrame(frame, record);
        return;
      case "mode_changed":
        this.modeChanged(frame, record);
        return;
      case "cancel_requested":
        this.marker({ ts: frame.ts, kind: "cancel", label: `cancel: ${nameOf(frame.reason)}` }, record);
        this.note(record, true);
        return;
      case "history_repaired":
      case "approval_requested":
      case "approval_decided":
      case "hook_decided":
      case "turn_prepared":
      case "guardrail_checked":
      case "steered":
      case "context_compiled":
      case "context_compacted":
      case "tool_deferred":
        this.note(record, true);
        return;
      default:
        assertNever(frame, "frame");
    }
  }

  /** A call's sub-run (`tool_ended.subrun`), built as a run of its own: untrusted, bounded, nested at most `subrunDepth` deep. */
  private subrun(call: ToolCallView, value: unknown): void {
    const { omitted } = this.limits;
    if (!isObject(value) || !Array.isArray(value.frames)) {
      omitted.count("sub-runs that are not sub-runs");
      return;
    }
    if (this.depth + 1 >= VIEW_LIMITS.subrunDepth) {
      omitted.count("sub-runs nested too deep");
      return;
    }
    const builder = new RunBuilder(this.header, { limits: this.limits, depth: this.depth + 1 });
    let frames = 0;
    for (const f of value.frames as unknown[]) {
      if (frames >= VIEW_LIMITS.subrunFrames) {
        omitted.count("sub-run frames");
        continue;
      }
      if (!isObject(f) || envelopeProblem(f) !== undefined) {
        omitted.count("sub-run frames that are not frames");
        continue;
      }
      frames++;
      builder.add(f as FrameRecord);
    }
    call.subrun = { agent: nameOf(value.agent), view: builder.finish({ cut: false, frames }) };
  }

  private marker(marker: MarkerView, record: FrameRecord): void {
    const turn = intOf(record.turn);
    if (turn !== undefined) marker.turn = turn;
    this.limits.omitted.push(this.markers, marker, VIEW_LIMITS.marks, "timeline markers");
  }

  private modeChanged(frame: FrameOf<"mode_changed">, record: FrameRecord): void {
    const change = `${nameOf(frame.from)} → ${nameOf(frame.to)}`;
    this.limits.omitted.push(this.modeChanges, change, VIEW_LIMITS.listEntries, "mode changes");
    this.marker({ ts: frame.ts, kind: "mode_changed", label: `${change}: ${nameOf(frame.reason)}` }, record);
    this.note(record, true);
  }

  /** A retry on the turn, and its marker on the timeline (a fallback when the reason says so). */
  private retried(frame: FrameOf<"retry">, record: FrameRecord): void {
    this.turn(frame, record)?.retry(frame);
    const reason = nameOf(frame.reason);
    const fallback = reason.startsWith("fallback:");
    this.marker(
      {
        ts: frame.ts,
        kind: fallback ? "fallback" : "retry",
        label: fallback
          ? `fallback to ${reason.slice("fallback:".length)} (attempt ${nameOf(frame.attempt)})`
          : `retry ${nameOf(frame.attempt)} in ${numberOf(frame.delay_ms) ?? 0} ms (${reason})`,
      },
      record,
    );
  }

  /** A tool call's frames: the call on its turn, then its span on the timeline. */
  private toolFrame(frame: FrameOf<"tool_call" | "tool_started" | "tool_ended">, record: FrameRecord): void {
    const callId = nameOf(frame.call_id);
    if (frame.type === "tool_call") {
      const turn = this.turn(frame, record);
      if (turn === undefined) return;
      if (this.limits.items.left <= 0) {
        this.limits.omitted.count("tool calls");
        return;
      }
      this.limits.items.left--;
      const call = startToolCall(frame, this.known, this.limits.budget);
      this.calls.set(callId, call);
      turn.calls.push(call);
      return;
    }
    const call = this.calls.get(callId);
    const turn = intOf(frame.turn) ?? 0;
    if (frame.type === "tool_started") {
      if (call !== undefined) call.started = frame.ts;
      const span = { turn, call_id: callId, name: nameOf(frame.name), start: frame.ts };
      this.limits.omitted.push(this.spans, span, VIEW_LIMITS.marks, "tool spans");
      return;
    }
    if (call !== undefined) endToolCall(call, frame, this.known, this.limits.budget);
    if (call !== undefined && (record as { subrun?: unknown }).subrun !== undefined)
      this.subrun(call, (record as { subrun?: unknown }).subrun);
    const span = this.spans.findLast((s) => s.call_id === callId && s.end === undefined);
    if (span !== undefined) {
      span.end = frame.ts;
      span.ok = frame.ok === true;
    }
  }

  /** A frame shown as a note: on its tool call (approvals), its turn, or the run. */
  private note(record: FrameRecord, known: boolean): void {
    const note = noteOf(record, known);
    if (record.type.startsWith("approval_") && typeof record.call_id === "string") {
      const call = this.calls.get(nameOf(record.call_id));
      if (call !== undefined) {
        if ((call.approval?.length ?? 0) < VIEW_LIMITS.listEntries)
          call.approval = [...(call.approval ?? []), note];
        return;
      }
    }
    if (record.type.startsWith("context_") || !known) {
      this.marker({ ts: record.ts, kind: "note", label: note.title }, record);
    }
    this.limits.omitted.push(this.notes, note, VIEW_LIMITS.marks, "notes");
  }

  /** The `seq` of the last record added (a tape eddy wrote counts up by one from 0). */
  private lastSeq: number | undefined;
  private seqNoted = false;

  /** The first break in `seq` (a gap, a repeat, a step back) is noted: eddy replay refuses such a tape. */
  private checkSeq(record: FrameRecord): void {
    const expected = this.lastSeq === undefined ? 0 : this.lastSeq + 1;
    if (record.seq !== expected && !this.seqNoted) {
      this.seqNoted = true;
      const after = this.lastSeq === undefined ? "as the first frame" : `after seq ${this.lastSeq}`;
      this.integrity(record.seq, record.ts, `seq ${record.seq} ${after}: the frames are not contiguous`);
    }
    this.lastSeq = typeof record.seq === "number" ? record.seq : this.lastSeq;
  }

  /** A note that the tape is not as eddy writes it (eddy replay would refuse or diverge). */
  private integrity(seq: number, ts: number, title: string): void {
    const note: NoteView = { seq, ts, type: "tape_integrity", title, fields: [], known: true };
    this.limits.omitted.push(this.notes, note, VIEW_LIMITS.marks, "notes");
  }

  /** The run's view, once every frame was added. */
  finish(facts: TapeFacts): RunView {
    for (const r of this.upgrader?.end() ?? []) this.record(r as unknown as FrameRecord);
    const header = facts.header;
    // Notes go to their turn when the tape has it (a frame may name a turn before its request starts).
    const runNotes = this.notes.filter((n) => {
      const turn = n.turn === undefined ? undefined : this.turns.get(n.turn);
      turn?.notes.push(n);
      return turn === undefined;
    });
    const turnViews = [...this.turns.values()].sort((a, b) => a.turn - b.turn).map((t) => t.finish());
    const start = this.first ?? 0;
    const end = Math.max(this.last, start);
    const view: RunView = {
      ...this.runFacts(header, turnViews),
      mode_changes: this.modeChanges,
      start,
      end,
      duration_ms: end - start,
      turn_views: turnViews,
      tool_spans: this.spans,
      markers: this.markers,
      notes: runNotes,
      findings: turnViews.reduce((n, t) => n + t.findings.length, 0),
      frames: facts.frames,
      partial: facts.cut || this.ended === undefined,
    };
    this.headerFacts(view, header);
    const omitted = [...(facts.problems ?? []), ...this.limits.omitted.lines()];
    if (omitted.length > 0) view.omitted = omitted;
    return view;
  }

  /** What `run_started` and `run_ended` say (else the header, else the turns). */
  private runFacts(header: TapeHeader | undefined, turnViews: RunView["turn_views"]) {
    const started = this.started;
    const ended = this.ended;
    const { budget } = this.limits;
    const tokens: TokenCounts = ended !== undefined ? tokenCounts(ended.usage) : sumTokens(turnViews);
    const lastMessage = turnViews
      .flatMap((t) => t.items)
      .reverse()
      .find((i) => i.kind === "message");
    const model = started?.model ?? header?.spec.model;
    return {
      run_id: nameOf(started?.run_id ?? header?.run_id ?? ""),
      model: typeof model === "string" ? nameOf(model) : null,
      reason: ended !== undefined ? nameOf(ended.reason) : "unfinished",
      turns: intOf(ended?.turns) ?? turnViews.length,
      tool_calls: intOf(ended?.tool_calls) ?? this.calls.size,
      tokens,
      input: inputText(started?.input ?? header?.spec.input ?? ""),
      tools: namesOf(started?.tools ?? header?.spec.tools ?? []),
      answer:
        ended !== undefined
          ? budget.take(textOf(ended.output_text), VIEW_LIMITS.answerChars)
          : lastMessage?.kind === "message"
            ? lastMessage.text
            : "",
    };
  }

  /** Mode, provider, version, instructions, MCP servers, the error and the result. */
  private headerFacts(view: RunView, header: TapeHeader | undefined): void {
    const { budget } = this.limits;
    const started = this.started;
    const ended = this.ended;
    const mode = started?.mode ?? (header?.spec.mode === "auto" ? undefined : header?.spec.mode);
    if (mode !== undefined) view.mode = nameOf(mode);
    if (header !== undefined) {
      const provider = isObject(header.provider) ? header.provider.name : undefined;
      if (provider !== undefined) view.provider = nameOf(provider);
      view.eddy_version = nameOf(header.eddy_version);
    }
    const instructions = started?.instructions ?? header?.spec.instructions;
    if (instructions !== undefined) view.instructions = budget.take(textOf(instructions));
    const mcp = (started as Record<string, unknown> | undefined)?.mcp_servers;
    if (mcp !== undefined) view.mcp_servers = mcpServers(mcp);
    if (ended?.error !== undefined) {
      const error: Record<string, unknown> = isObject(ended.error) ? ended.error : { message: ended.error };
      view.error = {
        code: nameOf(error.code ?? "error"),
        message: budget.take(textOf(error.message), 4_000),
      };
    }
    if (ended !== undefined && "result" in ended && ended.result !== undefined) {
      view.result = budget.take(JSON.stringify(ended.result, null, 2) ?? "");
    }
  }
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
  const lines = input.slice(0, VIEW_LIMITS.listEntries).map((item) => {
    if (!isObject(item)) return shortValue(item, 200);
    if (item.type === "message" || (item.type === undefined && typeof item.role === "string")) {
      const content =
        typeof item.content === "string"
          ? item.content
          : Array.isArray(item.content)
            ? item.content
                .filter(isObject)
                .map((p) => (typeof p.text === "string" ? p.text : `[${nameOf(p.type)}]`))
                .join(" ")
            : "";
      return `${nameOf(item.role ?? "?")}: ${shortValue(content, INPUT_MAX)}`;
    }
    return `[${nameOf(item.type)}]`;
  });
  return shortValue(lines.join("\n"), INPUT_MAX);
}

/** `run_started.mcp_servers` as names: strings as they are, objects by their `name` (else as JSON). */
function mcpServers(value: unknown): string[] {
  return namesOf(Array.isArray(value) || isObject(value) ? value : [value]);
}
