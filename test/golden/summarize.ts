/**
 * The golden summary of a capture's frames: small enough to check in and read in a diff, precise
 * enough that any change in framing, validation messages or derived frames shows up. One line per
 * frame; validation messages and item ids are listed once and referenced by index:
 *
 *   event response.created !0           provider_event, status event, event_name, errors[0]
 *   delta #0 1/0                        output_text_delta: item_ids[0], output_index/content_index
 *   invalid_json - raw=512 chars !1     no event_name; the raw text is in the capture, not here
 *   done - raw="[DONE]"
 *   reasoning #0 1/summary:0            reasoning_delta: item_ids[0], output_index/channel:index
 *   item_done 1 message:completed       item_done: output_index, the item's type:status
 *   response_ended completed            response_ended: status (and incomplete reason or error code)
 *
 * Runs of a repeated line, or of a repeated pair of lines, are folded: "<line> ×N",
 * "<line> ; <line> ×N". The delta texts are not repeated per frame (the capture has them, and the
 * suite checks each derived frame against its event): `texts` holds what they add up to per
 * item_ids index/output_index/content_index.
 */
import type { ProviderFrame } from "../../src/frames/frame.js";

/** A frame of a capture: the SSE mapping's, or one the assembling stream derives from them. */
export type GoldenFrame = Exclude<
  ProviderFrame,
  { type: "request_started" | "response_headers" | "request_failed" | "retry" }
>;

/** A checked-in golden file: test/golden/frames/<provider>/<name>.json. */
export interface GoldenSummary {
  capture: string;
  /** Event lines in the capture (the SSE body adds one `[DONE]`). */
  events: number;
  frames: number;
  /** Distinct validation messages, referenced from `lines` as `!<index>`. */
  errors: string[];
  /** Distinct `item_id`s of output_text_delta and reasoning_delta frames, referenced from `lines` as `#<index>`. */
  item_ids: string[];
  lines: string[];
  /**
   * The output_text_delta texts concatenated per `#<item> <output_index>/<content_index>`, and the
   * reasoning_delta texts per `#<item> <output_index>/<channel>:<index>`.
   */
  texts: Record<string, string>;
}

const INVALID_JSON = "data is not valid JSON: ";

/**
 * JSON.parse's wording differs between V8 versions (Node 20 vs 22), so the golden keeps only our
 * prefix of an invalid-JSON message.
 */
export function stableMessage(message: string): string {
  return message.startsWith(INVALID_JSON) ? `${INVALID_JSON}…` : message;
}

/** Summarizes the frames of one capture. */
export function summarizeFrames(
  capture: string,
  events: number,
  frames: readonly GoldenFrame[],
): GoldenSummary {
  const errors: string[] = [];
  const itemIds: string[] = [];
  const indexOf = (list: string[], value: string): number => {
    const i = list.indexOf(value);
    if (i !== -1) return i;
    list.push(value);
    return list.length - 1;
  };
  const raw: string[] = [];
  const texts: Record<string, string> = {};
  for (const f of frames) {
    if (f.type === "output_text_delta") {
      const key = `#${indexOf(itemIds, f.item_id)} ${f.output_index}/${f.content_index}`;
      raw.push(`delta ${key}`);
      texts[key] = (texts[key] ?? "") + f.delta;
      continue;
    }
    if (f.type === "reasoning_delta") {
      const key = `#${indexOf(itemIds, f.item_id)} ${f.output_index}/${f.channel}:${f.index}`;
      raw.push(`reasoning ${key}`);
      texts[key] = (texts[key] ?? "") + f.delta;
      continue;
    }
    if (f.type === "item_done") {
      raw.push(`item_done ${f.output_index} ${String(f.item.type)}:${String(f.item.status ?? "-")}`);
      continue;
    }
    if (f.type === "response_ended") {
      const why = f.incomplete_reason ?? f.error?.code;
      raw.push(`response_ended ${f.status}${why === undefined ? "" : ` ${why}`}`);
      continue;
    }
    let line = `${f.status} ${f.event_name ?? "-"}`;
    const type = (f.data as { type?: unknown } | undefined)?.type;
    if (f.status === "event" && type !== f.event_name) line += ` type=${JSON.stringify(type)}`;
    if (f.raw !== undefined) {
      line += f.status === "invalid_json" ? ` raw=${f.raw.length} chars` : ` raw=${JSON.stringify(f.raw)}`;
    }
    for (const e of f.errors ?? []) line += ` !${indexOf(errors, stableMessage(e))}`;
    raw.push(line);
  }
  return { capture, events, frames: frames.length, errors, item_ids: itemIds, lines: fold(raw), texts };
}

/** Folds runs of one repeated line ("a ×3") or of a repeated pair ("a ; b ×3"). */
export function fold(raw: readonly string[]): string[] {
  const lines: string[] = [];
  let i = 0;
  while (i < raw.length) {
    let single = 1;
    while (raw[i + single] === raw[i]) single++;
    let pairs = 1;
    if (raw[i + 1] !== raw[i]) {
      while (
        raw[i + 2 * pairs] === raw[i] &&
        raw[i + 2 * pairs + 1] === raw[i + 1] &&
        i + 2 * pairs + 1 < raw.length
      )
        pairs++;
    }
    if (pairs > 1 && 2 * pairs > single) {
      lines.push(`${raw[i]} ; ${raw[i + 1]} ×${pairs}`);
      i += 2 * pairs;
    } else {
      lines.push(single === 1 ? (raw[i] as string) : `${raw[i]} ×${single}`);
      i += single;
    }
  }
  return lines;
}
