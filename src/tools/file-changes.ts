/**
 * What a file-writing tool call changed, kept for undo: the file's content before and after, in
 * the `tool_ended` frame's `file_changes` (so it is in the tape, never sent to the model). Text
 * that is valid UTF-8 is kept as is (readable in the tape), anything else as base64; a side over
 * `FILE_CHANGE_CONTENT_CAP` bytes is not kept (`omitted: "too_large"`: that change cannot be undone).
 */
import { isUtf8 } from "node:buffer";

/** Largest content (bytes, each side) a change record keeps. */
export const FILE_CHANGE_CONTENT_CAP = 1024 * 1024;

/** One file a call changed (the `tool_ended` frame's `file_changes` entries; see src/frames/frame.ts). */
export interface FileChangeRecord {
  /** Workspace-relative, `/`-separated. */
  path: string;
  encoding: "utf8" | "base64";
  /** The content before the call; `null`: the file did not exist. Absent when omitted. */
  before?: string | null;
  /** The content after the call; `null`: the call removed the file. Absent when omitted. */
  after?: string | null;
  omitted?: "too_large";
}

/** The record of `path` going from `before` to `after` (`null`: absent). */
export function fileChangeRecord(
  path: string,
  before: Uint8Array | null,
  after: Uint8Array | string | null,
): FileChangeRecord {
  const next =
    after === null ? null : typeof after === "string" ? Buffer.from(after, "utf8") : Buffer.from(after);
  const prev = before === null ? null : Buffer.from(before);
  if ((prev?.length ?? 0) > FILE_CHANGE_CONTENT_CAP || (next?.length ?? 0) > FILE_CHANGE_CONTENT_CAP)
    return { path, encoding: "utf8", omitted: "too_large" };
  const text = [prev, next].every((b) => b === null || isUtf8(b));
  const encode = (b: Buffer | null) => (b === null ? null : b.toString(text ? "utf8" : "base64"));
  return { path, encoding: text ? "utf8" : "base64", before: encode(prev), after: encode(next) };
}

/** The bytes a recorded side stands for (`null`: absent). */
export function fileChangeBytes(record: FileChangeRecord, side: "before" | "after"): Buffer | null {
  const value = record[side];
  if (value === null || value === undefined) return null;
  return Buffer.from(value, record.encoding === "base64" ? "base64" : "utf8");
}
