/**
 * `POST /responses/compact`: `CompactResponseMethodPublicBody` in, `CompactResource` out
 * (`schemas/openresponses/openapi.json`). The conversation (`previous_response_id`'s chain, then
 * `input`, with earlier compaction items expanded) becomes the most recent user messages, kept
 * verbatim, followed by one `compaction` item whose opaque `encrypted_content` stands for the whole
 * window (see `compaction.ts`). A client starts a new chain with that output plus its new input and
 * no `previous_response_id`; the model then sees the full history again.
 *
 * Refusals are HTTP problems: no `model` → 400 `missing_required_parameter`; a field the compact
 * body does not have → 400 `unknown_parameter`; nothing to compact → 400; an unknown
 * `previous_response_id` → 404 `previous_response_not_found`. Compaction is not a scenario turn: it
 * uses none up and applies no faults.
 */
import type { components } from "../protocol/generated/openapi.js";
import { validateOutputItem } from "../protocol/validate.js";
import { encodeCompaction } from "./compaction.js";
import { MOCK_DEFAULTS } from "./defaults.js";
import { invalidRequest } from "./http-error.js";
import type { IdGenerator } from "./ids.js";
import { checkCreateBody, parseJsonBody, type RequestConformance, requireModel } from "./request.js";
import { type ConversationItem, type ResponseStore, resolveConversation } from "./state.js";
import { computeUsage } from "./usage.js";

/** The compacted conversation `POST /responses/compact` answers with. */
export type CompactResource = components["schemas"]["CompactResource"];
type OutputItem = CompactResource["output"][number];

/** The server state a compaction reads. */
export interface CompactContext {
  store: ResponseStore;
  ids: IdGenerator;
  /** Milliseconds since the epoch. */
  clock: () => number;
  /** Short forms rewritten to the spec's form, or refused (`MockOptions.conformance`). */
  conformance: RequestConformance;
}

const FIELDS = ["model", "input", "previous_response_id", "instructions", "prompt_cache_key"];

/** Answers one `POST /responses/compact` body (see the module comment); `info.model` is filled in for the log. */
export function compactResponse(
  text: string,
  ctx: CompactContext,
  info: { model?: string },
): CompactResource {
  const raw = parseJsonBody(text);
  requireModel(raw);
  for (const key of Object.keys(raw)) {
    if (!FIELDS.includes(key)) {
      throw invalidRequest(
        `Unknown parameter: '${key}'. /v1/responses/compact takes ${FIELDS.join(", ")}.`,
        key,
        "unknown_parameter",
      );
    }
  }
  // Every compact field is a CreateResponseBody field with the same schema, so the create checks apply.
  const body = checkCreateBody(raw, ctx.conformance);
  info.model = body.model;
  const { context } = resolveConversation(ctx.store, body);
  if (context.length === 0) {
    throw invalidRequest(
      "Nothing to compact: send the conversation as 'input' items, or a 'previous_response_id'.",
      "input",
      "missing_required_parameter",
    );
  }
  const output = compactWindow(context, ctx.ids);
  return {
    id: ctx.ids.next("resp"),
    object: "response.compaction",
    created_at: Math.floor(ctx.clock() / 1000),
    output,
    usage: computeUsage({
      context,
      instructions: body.instructions,
      output: output.filter((i) => i.type !== "compaction"),
      overrides: undefined,
    }),
  };
}

/** The recent user messages (as output `message` items) and the compaction item standing for all of `context`. */
function compactWindow(context: readonly ConversationItem[], ids: IdGenerator): OutputItem[] {
  const kept = new Map<number, OutputItem>();
  for (let i = context.length - 1; i >= 0 && kept.size < MOCK_DEFAULTS.compactKeepUserMessages; i--) {
    const copy = keptCopy(context[i], ids);
    if (copy !== undefined) kept.set(i, copy);
  }
  const window = context.map((item, i) => kept.get(i) ?? item);
  const recent = [...kept.entries()].sort(([a], [b]) => a - b).map(([, item]) => item);
  return [
    ...recent,
    { id: ids.next("cmp"), type: "compaction", encrypted_content: encodeCompaction(window) },
  ];
}

/** A user message as an output `message` item (with an id, content as parts), when it validates as one. */
function keptCopy(item: ConversationItem | undefined, ids: IdGenerator): OutputItem | undefined {
  if (item?.type !== "message" || item.role !== "user") return undefined;
  const content =
    typeof item.content === "string"
      ? [{ type: "input_text", text: item.content }]
      : item.content.map((part) =>
          part.type === "input_image" && part.detail == null ? { ...part, detail: "auto" } : part,
        );
  const copy = {
    type: "message",
    id: typeof item.id === "string" ? item.id : ids.next("msg"),
    status: "completed",
    role: "user",
    content,
  };
  return validateOutputItem(copy) === undefined ? (copy as OutputItem) : undefined;
}
