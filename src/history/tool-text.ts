/**
 * The only place tool history becomes prose. Every text form of a tool call or result that eddy
 * puts in front of a model is written here: the text-embed strategy's result messages, the summary
 * message that replaces folded or dropped turns, the extractive summary, and the transcript handed
 * to a summarization model. `test/history-architecture.test.ts` fails when another file in `src/`
 * formats tool history as text, so the forms cannot drift apart again.
 */
import type { ItemParam, JsonObject } from "../protocol/types.js";

/** A tool call paired with its result, as the text forms need it. */
export interface ToolCallRecord {
  callId: string;
  name: string;
  /** The arguments JSON string, as the model produced it. */
  arguments: string;
  /** The result: a string, or content parts (`input_text`, `input_image`, `input_file`). */
  output: string | readonly JsonObject[];
  /** The tool reported a failure. */
  failed: boolean;
}

/** A user message holding `text`: how summaries and embedded results reach the model. */
export function userTextMessage(text: string, more: readonly JsonObject[] = []): ItemParam {
  return {
    type: "message",
    role: "user",
    content: [{ type: "input_text", text }, ...more],
  } as ItemParam;
}

/**
 * The text-embed form of one result: a user message, the call itself omitted so the model cannot
 * imitate call syntax in prose. Image and file parts of a result follow the text as parts.
 */
export function embeddedResultMessage(record: ToolCallRecord): ItemParam {
  const head = `Context (tool result of ${record.name}${record.failed ? ", failed" : ""}):`;
  if (typeof record.output === "string") return userTextMessage(`${head}\n${record.output}`);
  const texts = record.output.filter((p) => p.type === "input_text").map((p) => String(p.text ?? ""));
  const media = record.output.filter((p) => p.type !== "input_text");
  return userTextMessage(`${head}\n${texts.join("\n")}`, media);
}

/** The message put in place of turns that were summarized or dropped. */
export function summaryMessage(summary: string): ItemParam {
  return userTextMessage(`${SUMMARY_HEADING}\n${summary}`);
}

/** The first line of every summary message (recognised when a summary is itself summarized). */
export const SUMMARY_HEADING =
  "Summary of the earlier conversation (older turns were condensed to save context):";

/** How a failed result is carried where the history has no failure flag (foreign histories). */
export function failedResultText(text: string): string {
  return `${FAILED_PREFIX} ${text}`;
}

/** The first word of a failed result's text. */
export const FAILED_PREFIX = "Error:";

/** The first words of the notice put in place of dropped turns. */
export const DROPPED_HEADING = "Earlier turns were removed to fit the context window:";

/** The message put in place of dropped turns when no summary is written. */
export function droppedNoticeMessage(items: number, calls: number): ItemParam {
  return userTextMessage(
    `${DROPPED_HEADING} ${items} item${items === 1 ? "" : "s"} (${calls} tool call${calls === 1 ? "" : "s"}). Ask again or re-run a tool if you need them.`,
  );
}

/** Whether a message is a summary or notice eddy put in place of removed turns (not something the user said). */
export function isCompactionText(text: string): boolean {
  return text.startsWith(SUMMARY_HEADING) || text.startsWith(DROPPED_HEADING);
}

/** One line naming a call: `read_file({"path":"a"})`, arguments clipped to 60 characters. */
export function callLine(record: Pick<ToolCallRecord, "name" | "arguments">): string {
  const oneLine = record.arguments.replace(/\s+/g, " ");
  return `${record.name}(${oneLine.length > 60 ? `${oneLine.slice(0, 59)}…` : oneLine})`;
}

const CATEGORIES: [string, RegExp][] = [
  ["read", /read|cat|open|view|get_file|fetch/i],
  ["write", /write|patch|edit|create|delete|move/i],
  ["terminal", /shell|bash|exec|run|terminal|command/i],
  ["search", /grep|search|find|list|ls|glob/i],
];

/** One piece of the material a summary is written from, in conversation order. */
export type SummaryEntry =
  | { kind: "previous"; text: string }
  | { kind: "request"; text: string }
  | { kind: "answer"; text: string }
  | { kind: "call"; record: ToolCallRecord };

/**
 * The deterministic summary: earlier summaries, then the user's requests and the assistant's
 * answers in order (clipped), then the tool calls grouped by kind (read / write / terminal / search
 * / other) with failures counted. Same material, same text.
 */
export function extractiveSummaryText(material: readonly SummaryEntry[]): string {
  const lines: string[] = [];
  const calls: ToolCallRecord[] = [];
  for (const e of material) {
    if (e.kind === "previous") lines.push(e.text);
    else if (e.kind === "request") lines.push(`- The user asked: ${clip(e.text, 200)}`);
    else if (e.kind === "answer") lines.push(`- The assistant said: ${clip(e.text, 300)}`);
    else calls.push(e.record);
  }
  if (calls.length > 0) {
    lines.push(`- Tool calls (${calls.length}):`);
    const groups = new Map<string, ToolCallRecord[]>();
    for (const c of calls) {
      const kind = CATEGORIES.find(([, re]) => re.test(c.name))?.[0] ?? "other";
      groups.set(kind, [...(groups.get(kind) ?? []), c]);
    }
    for (const kind of ["read", "write", "terminal", "search", "other"]) {
      const list = groups.get(kind);
      if (list === undefined) continue;
      const failed = list.filter((c) => c.failed).length;
      const names = [...new Set(list.map(callLine))].slice(0, 8);
      lines.push(
        `  - ${kind}: ${list.length} call${list.length === 1 ? "" : "s"}${failed ? `, ${failed} failed` : ""}: ${names.join(", ")}`,
      );
    }
  }
  return lines.join("\n");
}

/**
 * The transcript a summarization model reads: one block per piece, in order, each result clipped
 * to `maxResultChars`. The newest material is kept when the whole exceeds `maxChars`.
 */
export function summaryTranscript(
  material: readonly SummaryEntry[],
  maxChars: number,
  maxResultChars = 2_000,
): string {
  const blocks = material.map((e) => {
    if (e.kind === "previous") return `Earlier summary:\n${e.text}`;
    if (e.kind === "request") return `User: ${e.text}`;
    if (e.kind === "answer") return `Assistant: ${e.text}`;
    const c = e.record;
    const text =
      typeof c.output === "string"
        ? c.output
        : c.output
            .map((p) => (p.type === "input_text" ? String(p.text ?? "") : `[${String(p.type)}]`))
            .join("\n");
    return `Tool call ${callLine(c)}${c.failed ? " (failed)" : ""} returned:\n${clip(text, maxResultChars)}`;
  });
  const out = blocks.join("\n\n");
  return out.length > maxChars ? `[…older material cut…]\n${out.slice(out.length - maxChars)}` : out;
}

function clip(text: string, max: number): string {
  const oneLine = text.replace(/\s+/g, " ").trim();
  return oneLine.length > max ? `${oneLine.slice(0, max - 1)}…` : oneLine;
}
