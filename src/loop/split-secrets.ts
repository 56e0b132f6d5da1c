/**
 * Secrets a streamed answer splits across deltas. Masking one frame at a time (frame-channel.ts)
 * misses a key the model quotes in pieces — `"token=sk-pro"`, `"be-SECRET-12"`, `"3456\n"` — and
 * the human view printed it whole, while the tape's deltas joined back into it.
 *
 * So the channel holds back a group of frames (a provider event and the delta derived from it)
 * while the text of its stream so far ends with the beginning of a secret. The next delta of the
 * same stream says whether the secret follows: if it does, the held deltas are rewritten together
 * — `***` in the delta where the secret starts, its other characters taken out of the deltas that
 * held them, so that joined they are the final text as masked — in both the derived frame and the provider event (so a replay derives the same
 * deltas from the tape); if not, they go as they were. Any other frame first sends what is held,
 * in order, so no frame is reordered and none is added. Frame by frame masking still applies to
 * each frame after this.
 *
 * An answer's content parts are one stream: a secret split between two parts of a message (shown
 * side by side) is masked like one split between two deltas. The message's other events that come
 * while its text is held (a part's `output_text.done`, `content_part.done`, `content_part.added`)
 * are held with it, and every part whose deltas were rewritten is rewritten the same way wherever
 * its whole text appears later (those events, `output_item.done`, `response.completed`, the
 * derived `item_done`): joined, the parts are the final text as masked, and a replay agrees.
 *
 * A call's arguments stream without derived frames: there the provider event's own fragment is the
 * piece — an Open Responses `response.function_call_arguments.delta`, the one tool call of a Chat
 * Completions chunk (`choices[0].delta.tool_calls[0].function.arguments`), an AI SDK
 * `tool-input-delta` — and only that field is rewritten; so is a refusal's (an Open Responses
 * `response.refusal.delta`, a Chat Completions chunk's `delta.refusal`). A chunk carrying fragments
 * of several calls at once, or a fragment beside text, is not guarded (no provider eddy knows sends
 * them). A reasoning delta is guarded like an answer's (its derived `reasoning_delta`), each part
 * of a summary a stream of its own: the parts are shown apart (src/cli/render-human.ts), never joined.
 *
 * What is held goes out masked too when a frame of another kind (or another stream's delta) ends
 * the hold: held text may hold a whole secret and still end like the start of one.
 */
import type { Frame } from "../frames/frame.js";
import { maskAcross } from "../util/redact.js";

/** A group of frames emitted together. */
type Group = readonly Frame[];

/** Most frames or characters held back at once (a text made only of secret beginnings). */
const MAX_HELD_GROUPS = 256;
const MAX_HELD_CHARS = 64 * 1024;

/** One piece of streamed text: its stream and its text. */
interface Piece {
  key: string;
  text: string;
  /** An answer's piece: its message and content part (`item:content_index`). */
  part?: string;
  /**
   * The provider event's data with this piece's text made `to`, for a piece no frame is derived
   * from (the text is at one known place in the event). @defaultValue every string of the data
   * equal to the text (`replaced`)
   */
  rewrite?: (data: unknown, to: string) => unknown;
}

/** A content part's text as streamed, and as it went out. */
interface PartText {
  original: string;
  masked: string;
}

/** Most rewritten parts remembered (a run that quotes a secret across parts that often is absurd). */
const MAX_REWRITTEN_PARTS = 64;

export class SplitSecretGuard {
  private held: Group[] = [];
  private heldKey: string | undefined;
  /** Each held group's piece; undefined for a message's other event held with its text. */
  private heldPieces: (Piece | undefined)[] = [];
  private heldChars = 0;
  /** The content parts of the message streaming now, by `item:content_index`. */
  private parts = new Map<string, PartText>();
  private partsItem: string | undefined;
  /** Parts whose text went out rewritten: their whole text is rewritten wherever it appears. */
  private readonly rewritten: PartText[] = [];
  /** Longest first: of two overlapping secrets, the longer is masked. */
  private readonly secrets: readonly string[];

  /** `secrets`: from `usableSecrets` (at least 4 characters each). */
  constructor(secrets: readonly string[]) {
    this.secrets = [...secrets].sort((a, b) => b.length - a.length);
  }

  /** Whether groups are held back. */
  get holding(): boolean {
    return this.held.length > 0;
  }

  /** The groups to emit now, in order, once `group` is taken (none while it is held back). */
  push(group: Group): Group[] {
    const piece = pieceOf(group);
    if (piece === undefined) {
      if (this.holding && this.heldKey === `t:${itemOfEvent(group)}`) return this.hold(group, undefined);
      const out = this.holding ? this.take() : [];
      out.push(this.scrub(group));
      return out;
    }
    const out: Group[] = this.holding && piece.key !== this.heldKey ? this.take() : [];
    if (!this.holding && !this.startsSecretAtEnd(piece.text)) {
      this.record(piece, piece.text);
      out.push(group);
      return out;
    }
    out.push(...this.hold(group, piece));
    return out;
  }

  /** Holds `group` back (a piece, or its message's other event); what goes out now, if anything. */
  private hold(group: Group, piece: Piece | undefined): Group[] {
    this.held.push(group);
    this.heldPieces.push(piece);
    if (piece !== undefined) {
      this.heldKey = piece.key;
      this.heldChars += piece.text.length;
    }
    const joined = this.heldText();
    const bounded = this.held.length < MAX_HELD_GROUPS && this.heldChars < MAX_HELD_CHARS;
    if (bounded && this.startsSecretAtEnd(joined)) return [];
    return this.release(joined);
  }

  private heldText(): string {
    let joined = "";
    for (const p of this.heldPieces) if (p !== undefined) joined += p.text;
    return joined;
  }

  /**
   * What is held (before a frame of another kind, or at the end), with every secret its deltas
   * spell out together masked: held text may hold a whole secret and still end like the start of
   * another (`"…SECRET-123456 stays"` ends in the `s` of `sk-…`), so it cannot go out as it is.
   */
  take(): Group[] {
    return this.holding ? this.release(this.heldText()) : [];
  }

  /** What is held, as it is (no secret spans its deltas). */
  private takeAsIs(): Group[] {
    const pieces = this.heldPieces;
    return this.takeHeld().map((g, i) => this.sent(g, pieces[i], undefined));
  }

  private takeHeld(): Group[] {
    const groups = this.held;
    this.held = [];
    this.heldKey = undefined;
    this.heldPieces = [];
    this.heldChars = 0;
    return groups;
  }

  /** The held groups with every secret that spans them masked across their deltas. */
  private release(joined: string): Group[] {
    const pieces = this.heldPieces;
    const texts = pieces.flatMap((p) => (p === undefined ? [] : [p.text]));
    const masked = texts.length < 2 ? undefined : maskAcross(texts, joined, this.secrets);
    if (masked === undefined) return this.takeAsIs();
    const groups = this.takeHeld();
    let next = 0;
    return groups.map((g, i) => {
      const piece = pieces[i];
      return this.sent(g, piece, piece === undefined ? undefined : masked[next++]);
    });
  }

  /** A held group as it goes out: a piece made `to` (and recorded), another event scrubbed. */
  private sent(group: Group, piece: Piece | undefined, to: string | undefined): Group {
    if (piece === undefined) return this.scrub(group);
    const text = to ?? piece.text;
    this.record(piece, text);
    return text === piece.text ? group : withPiece(group, piece, text);
  }

  /** Keeps the text of the answer's content parts, as streamed and as sent. */
  private record(piece: Piece, sent: string): void {
    if (piece.part === undefined) return;
    const item = piece.key;
    if (item !== this.partsItem) {
      this.parts = new Map();
      this.partsItem = item;
    }
    let part = this.parts.get(piece.part);
    if (part === undefined) {
      part = { original: "", masked: "" };
      this.parts.set(piece.part, part);
    }
    const clean = part.original === part.masked;
    part.original += piece.text;
    part.masked += sent;
    if (clean && part.original !== part.masked && this.rewritten.length < MAX_REWRITTEN_PARTS)
      this.rewritten.push(part);
  }

  /** `group` with every rewritten part's whole text as it was sent. */
  private scrub(group: Group): Group {
    if (this.rewritten.length === 0) return group;
    const parts = this.rewritten;
    const swap = (value: string) => parts.find((p) => p.original === value)?.masked;
    let changed = false;
    const out = group.map((frame): Frame => {
      if (frame.type === "provider_event") {
        const data = replacedWith(frame.data, swap);
        if (data === frame.data) return frame;
        changed = true;
        return { ...frame, data };
      }
      if (frame.type === "item_done") {
        const item = replacedWith(frame.item, swap) as typeof frame.item;
        if (item === frame.item) return frame;
        changed = true;
        return { ...frame, item };
      }
      return frame;
    });
    return changed ? out : group;
  }

  /** Whether `text` ends with the first characters (not all) of a secret. */
  private startsSecretAtEnd(text: string): boolean {
    if (text === "") return false;
    const last = text.charCodeAt(text.length - 1);
    for (const secret of this.secrets) {
      for (let k = Math.min(secret.length - 1, text.length); k >= 1; k--) {
        if (secret.charCodeAt(k - 1) === last && text.endsWith(secret.slice(0, k))) return true;
      }
    }
    return false;
  }
}

/** The streamed-text piece a group carries, when it is only a provider event and one delta. */
function pieceOf(group: Group): Piece | undefined {
  let piece: Piece | undefined;
  let event: Frame | undefined;
  for (const frame of group) {
    if (frame.type === "provider_event") event = frame;
    else if (frame.type === "output_text_delta" && piece === undefined)
      piece = {
        key: `t:${frame.item_id}`,
        text: frame.delta,
        part: `${frame.item_id}:${frame.content_index}`,
      };
    else if (frame.type === "reasoning_delta" && piece === undefined)
      piece = { key: `r:${frame.item_id}:${frame.channel}:${frame.index}`, text: frame.delta };
    else return undefined;
  }
  if (piece !== undefined || event?.type !== "provider_event") return piece;
  // A delta no frame is derived from (a call's arguments): the event's own text.
  return (
    eventDelta(event.data) ??
    chatArguments(event.data) ??
    chatRefusal(event.data) ??
    aiSdkToolInput(event.data)
  );
}

/** The refusal fragment of a Chat Completions chunk (`choices[0].delta.refusal`), when it carries nothing else to show. */
function chatRefusal(value: unknown): Piece | undefined {
  const choices = (value as { choices?: unknown } | null | undefined)?.choices;
  if (!Array.isArray(choices) || choices.length !== 1) return undefined;
  const choice = choices[0] as { index?: unknown; delta?: Record<string, unknown> } | null;
  const delta = choice?.delta;
  if (typeof delta?.refusal !== "string" || typeof delta.content === "string" || delta.tool_calls != null)
    return undefined;
  return {
    key: `c:refusal:${String(choice?.index)}`,
    text: delta.refusal,
    rewrite: (d, to) => {
      const chunk = d as { choices: [{ delta: object }] };
      const [c] = chunk.choices;
      return { ...chunk, choices: [{ ...c, delta: { ...c.delta, refusal: to } }] };
    },
  };
}

/** An AI SDK stream part's tool input delta (`tool-input-delta`, src/provider/ai-sdk/translator.ts). */
function aiSdkToolInput(value: unknown): Piece | undefined {
  const part = value as { type?: unknown; id?: unknown; delta?: unknown } | null | undefined;
  if (part?.type !== "tool-input-delta" || typeof part.delta !== "string") return undefined;
  return {
    key: `a:${String(part.id)}`,
    text: part.delta,
    rewrite: (d, to) => ({ ...(d as object), delta: to }),
  };
}

/** An Open Responses delta event's text (a call's argument delta). */
function eventDelta(value: unknown): Piece | undefined {
  if (!isDeltaEvent(value)) return undefined;
  const data = value as { type: string; delta: string; item_id?: unknown; output_index?: unknown };
  return {
    key: `e:${data.type}:${String(data.item_id)}:${String(data.output_index)}`,
    text: data.delta,
    rewrite: (d, to) => ({ ...(d as object), delta: to }),
  };
}

/** The one argument fragment of one tool call a Chat Completions chunk carries, and nothing else to show. */
function chatArguments(value: unknown): Piece | undefined {
  const choices = (value as { choices?: unknown } | null | undefined)?.choices;
  if (!Array.isArray(choices) || choices.length !== 1) return undefined;
  const choice = choices[0] as {
    index?: unknown;
    delta?: { content?: unknown; tool_calls?: unknown };
  } | null;
  const calls = choice?.delta?.tool_calls;
  if (!Array.isArray(calls) || calls.length !== 1 || typeof choice?.delta?.content === "string")
    return undefined;
  const call = calls[0] as { index?: unknown; function?: { arguments?: unknown } } | null;
  const text = call?.function?.arguments;
  if (typeof text !== "string") return undefined;
  return {
    key: `c:${String(choice?.index)}:${String(call?.index)}`,
    text,
    rewrite: (d, to) => {
      const chunk = d as { choices: [{ delta: { tool_calls: [{ function: object }] } }] };
      const [c] = chunk.choices;
      const [t] = c.delta.tool_calls;
      const fn = { ...t.function, arguments: to };
      const delta = { ...c.delta, tool_calls: [{ ...t, function: fn }] };
      return { ...chunk, choices: [{ ...c, delta }] };
    },
  };
}

/**
 * The group with its piece's text made `to`, in the derived delta and in the provider event's data.
 * A delta left empty stays a frame when the event is itself the Open Responses delta (eddy derives
 * one from every such event); from a translated wire (Chat Completions, AI SDK) it goes, as the
 * translator makes no delta of empty text — so a replay of the tape derives the same frames.
 */
function withPiece(group: Group, piece: Piece, to: string): Group {
  const native = group.some((f) => f.type === "provider_event" && isDeltaEvent(f.data));
  return group.flatMap((frame): Frame[] => {
    if (frame.type === "output_text_delta" || frame.type === "reasoning_delta")
      return to === "" && !native ? [] : [{ ...frame, delta: to }];
    if (frame.type === "provider_event" && piece.rewrite !== undefined)
      return [{ ...frame, data: piece.rewrite(frame.data, to) }];
    if (frame.type === "provider_event" && piece.text !== "")
      return [{ ...frame, data: replaced(frame.data, piece.text, to) }];
    return [frame];
  });
}

/** Whether an event's data is an Open Responses delta event (`response.….delta` with its text). */
function isDeltaEvent(data: unknown): boolean {
  const d = data as { type?: unknown; delta?: unknown } | null | undefined;
  return typeof d?.type === "string" && d.type.endsWith(".delta") && typeof d.delta === "string";
}

/** `value` with every string equal to `from` made `to` (copy on write). */
function replaced(value: unknown, from: string, to: string): unknown {
  return replacedWith(value, (s) => (s === from ? to : undefined));
}

/** `value` with every string `swap` gives another for replaced by it (copy on write). */
function replacedWith(value: unknown, swap: (s: string) => string | undefined): unknown {
  if (typeof value === "string") return swap(value) ?? value;
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) {
    const next = value.map((v) => replacedWith(v, swap));
    return next.some((v, i) => v !== value[i]) ? next : value;
  }
  let copy: Record<string, unknown> | undefined;
  for (const [k, v] of Object.entries(value)) {
    const w = replacedWith(v, swap);
    if (w !== v) {
      copy ??= { ...(value as Record<string, unknown>) };
      copy[k] = w;
    }
  }
  return copy ?? value;
}

/** The message item an Open Responses event of a group is about (`item_id`, or its `item`'s id). */
function itemOfEvent(group: Group): string | undefined {
  const event = group[0];
  if (event?.type !== "provider_event") return undefined;
  const data = event.data as { item_id?: unknown; item?: { id?: unknown } } | null | undefined;
  const id = data?.item_id ?? data?.item?.id;
  return typeof id === "string" ? id : undefined;
}
