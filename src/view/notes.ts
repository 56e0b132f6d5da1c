/**
 * Frames the view has no dedicated section for become notes: a title and their payload fields.
 * That covers the frames of this round (context, approvals, mode changes) and any frame type a
 * newer eddy writes, so an unknown type is shown, never dropped and never fatal.
 */
import type { FrameRecord } from "./read.js";
import type { NoteView } from "./view-data.js";

/** Readable titles of frame types the view knows. Anything else is titled by its type. */
const TITLES: Readonly<Record<string, string>> = {
  mode_changed: "Mode changed",
  history_repaired: "History repaired",
  cancel_requested: "Cancel requested",
  context_compiled: "Context compiled",
  context_compacted: "Context compacted",
  approval_requested: "Approval requested",
  approval_decided: "Approval decided",
  hook_decided: "Hook decided",
  turn_prepared: "Turn prepared",
  guardrail_checked: "Guardrail checked",
  steered: "Steering message",
};

const ENVELOPE = new Set(["run_id", "seq", "ts", "type"]);

/** Fields shown per note. */
const FIELDS_MAX = 50;

/** Longest value shown in a note (the raw frame holds the rest). */
export const NOTE_VALUE_MAX = 400;

/** The note for a frame record. `known` says whether this eddy knows the frame type. */
export function noteOf(record: FrameRecord, known: boolean): NoteView {
  const fields: Array<[string, string]> = [];
  for (const key in record) {
    if (ENVELOPE.has(key)) continue;
    const value = record[key];
    if (value === undefined) continue;
    if (fields.length === FIELDS_MAX) {
      fields.push(["…", "more fields in the raw frame"]);
      break;
    }
    fields.push([shortValue(key, 100), shortValue(value)]);
  }
  const type = shortValue(record.type, 100);
  const note: NoteView = {
    seq: record.seq,
    ts: record.ts,
    type,
    title: Object.hasOwn(TITLES, record.type) ? (TITLES[record.type] as string) : type,
    fields,
    known: known || Object.hasOwn(TITLES, record.type),
  };
  if (Number.isSafeInteger(record.turn) && (record.turn as number) >= 0) note.turn = record.turn as number;
  return note;
}

/** A value as one short line: strings as they are, everything else as JSON, cut at `max` characters. */
export function shortValue(value: unknown, max = NOTE_VALUE_MAX): string {
  const text = typeof value === "string" ? value : (JSON.stringify(value) ?? String(value));
  return text.length > max
    ? `${text.slice(0, max)}… (${(text.length - max).toLocaleString("en-US")} more characters)`
    : text;
}
