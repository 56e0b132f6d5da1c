/**
 * Compaction items (`{type: "compaction", id, encrypted_content}`, `CompactionBody` in
 * `schemas/openresponses/openapi.json`): what `POST /responses/compact` hands out, and what the
 * mock expands again when one comes back in a later `input`, so the model (the demo model or a
 * scenario's `expect.contextContains`) sees the history it stands for.
 *
 * The content is opaque to clients but not secret: `eddy-cmp1.` + base64url(deflate(JSON window))
 * + `.` + a checksum. It needs no server state (any mock instance expands what another produced),
 * and a mangled or foreign one is refused with a 400 naming the item instead of silently losing
 * history.
 *
 * The window is the whole compacted conversation in order, including the recent user messages the
 * compact output also keeps verbatim (under the same ids). Expanding a compaction item therefore
 * drops the items before it whose ids the window holds (those kept copies) and puts the window in
 * its place: the conversation comes back in its original order.
 */
import { createHash } from "node:crypto";
import { deflateRawSync, inflateRawSync } from "node:zlib";
import { invalidRequest } from "./http-error.js";
import type { ConversationItem } from "./state.js";

const PREFIX = "eddy-cmp1.";

/** The `encrypted_content` standing for `window`. */
export function encodeCompaction(window: readonly ConversationItem[]): string {
  const payload = deflateRawSync(Buffer.from(JSON.stringify({ items: window }))).toString("base64url");
  return `${PREFIX}${payload}.${checksum(payload)}`;
}

/** The window an `encrypted_content` stands for; `undefined` when this mock did not produce it (or it was altered). */
export function decodeCompaction(content: string): ConversationItem[] | undefined {
  if (!content.startsWith(PREFIX)) return undefined;
  const [payload, sum, ...rest] = content.slice(PREFIX.length).split(".");
  if (payload === undefined || sum !== checksum(payload) || rest.length > 0) return undefined;
  try {
    const value: unknown = JSON.parse(inflateRawSync(Buffer.from(payload, "base64url")).toString("utf8"));
    const items = (value as { items?: unknown } | null)?.items;
    if (!Array.isArray(items) || !items.every((i) => i !== null && typeof i === "object")) return undefined;
    return items as ConversationItem[];
  } catch {
    return undefined;
  }
}

/**
 * `items` with every compaction item replaced by the window it stands for (see the module
 * comment). `at(i)` names item `i` in errors (`input[3]`); an item this mock cannot expand is a
 * 400 `invalid_encrypted_content`.
 */
export function expandCompactions(
  items: readonly ConversationItem[],
  at: (index: number) => string,
): ConversationItem[] {
  if (!items.some((i) => i.type === "compaction")) return [...items];
  let out: ConversationItem[] = [];
  for (const [index, item] of items.entries()) {
    if (item.type !== "compaction") {
      out.push(item);
      continue;
    }
    const window = decodeCompaction(item.encrypted_content);
    if (window === undefined) {
      throw invalidRequest(
        `Invalid '${at(index)}.encrypted_content': this compaction item was not produced by this mock server's /v1/responses/compact (or it was altered). Send compaction items back exactly as received.`,
        `${at(index)}.encrypted_content`,
        "invalid_encrypted_content",
      );
    }
    const ids = new Set(window.flatMap((i) => (typeof i.id === "string" ? [i.id] : [])));
    out = out.filter((i) => typeof i.id !== "string" || !ids.has(i.id));
    out.push(...window);
  }
  return out;
}

function checksum(payload: string): string {
  return createHash("sha256").update(PREFIX).update(payload).digest("hex").slice(0, 16);
}
