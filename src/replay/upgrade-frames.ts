/**
 * Tapes recorded before eddy derived `reasoning_delta`, `item_done` and `response_ended` frames
 * (tape formats 1 and 2) lack them. `upgradeFrames` puts them where the live stream puts them today —
 * right after the `provider_event` they come from and its `output_text_delta` — derived by the
 * same code (src/provider/derive.ts), so a replay of the upgraded frames matches and every
 * consumer (the viewer, the human view, telemetry) can rely on them.
 */
import { DERIVED_FRAME_TYPES, type Frame, type ProviderFrame } from "../frames/frame.js";
import type { CreateResponseBody } from "../protocol/types.js";
import { AttemptAssembly } from "../provider/derive.js";
import { type WireApi, type WireCodec, wireChain, wireCodec } from "../provider/wire-api.js";
import { isJsonObject } from "../util/json.js";

/** What `upgradeFrames` needs to know of the recorded run besides its frames. */
export interface UpgradeOptions {
  /**
   * The API the recorded provider spoke (the tape header's `provider.wire`): Chat Completions
   * chunks are translated to Open Responses events as the live run did.
   * @defaultValue Open Responses
   */
  wire?: WireApi;
}

/**
 * The first tape format whose frames include the derived frames: tapes of an older format are
 * upgraded when they are read.
 */
export const DERIVED_FRAMES_FORMAT = 3;

const DERIVED: ReadonlySet<string> = new Set(DERIVED_FRAME_TYPES);

/**
 * A run's frames with the derived frames of every provider event in their place and `seq`
 * renumbered from 0. Pure: the input is not changed (derived frames it already holds are derived
 * again, so upgrading twice changes nothing). Derived frames take the `run_id` and `ts` of the
 * frame before them.
 *
 * @example
 * ```ts
 * const frames = tape.header.format === 1 ? upgradeFrames(tape.frames, { wire: tape.header.provider.wire }) : tape.frames;
 * ```
 */
export function upgradeFrames(frames: readonly Frame[], options: UpgradeOptions = {}): Frame[] {
  const upgrader = new FrameUpgrader(options);
  const out: Frame[] = [];
  for (const f of frames) for (const g of upgrader.push(f)) out.push(g);
  for (const g of upgrader.end()) out.push(g);
  out.forEach((f, seq) => {
    f.seq = seq;
  });
  return out;
}

/**
 * `upgradeFrames` one frame at a time, for a reader that streams a tape: `push` returns the frames
 * that are ready (an event's derived frames wait for the text deltas that follow it), `end` the
 * rest. Frames come out as copies; derived frames carry the `seq` of the frame before them (the
 * caller renumbers, or not).
 */
export class FrameUpgrader {
  private readonly chain: WireCodec[];
  private codec: WireCodec;
  private candidate = 0;
  private attempt: AttemptAssembly;
  /** The last provider event while its text deltas may still follow, and its derived frames. */
  private event: Frame | undefined;
  private pending: ProviderFrame[] = [];

  constructor(options: UpgradeOptions = {}) {
    this.chain = wireChain(options.wire).map(wireCodec);
    this.codec = this.chain[0] as WireCodec;
    // As the assembling stream: events before any request_started are Open Responses events.
    this.attempt = new AttemptAssembly({ nativeCalls: false });
  }

  push(f: Frame): Frame[] {
    if (DERIVED.has(f.type)) return [];
    if (f.type === "output_text_delta" && this.event !== undefined) {
      // With a translator the stream derives the text deltas itself (they are among `pending`);
      // without, the SSE mapping's deltas stay right after their event, before what is derived.
      return this.attempt.translator !== undefined ? [] : [{ ...f }];
    }
    const out = this.end();
    this.track(f);
    out.push({ ...f });
    if (f.type === "provider_event") {
      this.event = f;
      this.pending = this.attempt.event(f).map((d) => stamped(d, f));
    }
    return out;
  }

  /** The frames still waiting (the derived frames of the last event). */
  end(): Frame[] {
    const out = this.pending as Frame[];
    this.pending = [];
    this.event = undefined;
    return out;
  }

  /** Follows attempts (a fresh assembly each) and the fallback chain's candidates (their API). */
  private track(f: Frame): void {
    if (f.type === "request_started") {
      const body = (isJsonObject(f.body) ? f.body : {}) as CreateResponseBody;
      this.attempt = new AttemptAssembly({
        nativeCalls: false, // promotion decides which calls run, not what is derived
        translator: this.codec.createTranslator?.({ body, turn: f.turn }),
      });
    } else if (f.type === "retry" && typeof f.reason === "string" && f.reason.startsWith("fallback:")) {
      // A fallback chain moved to its next candidate: its API from now on (as replay-provider.ts).
      this.candidate = Math.min(this.candidate + 1, this.chain.length - 1);
      this.codec = this.chain[this.candidate] as WireCodec;
    } else if (f.type === "turn_ended" || f.type === "mode_changed" || f.type === "context_compacted") {
      // The next provider stream starts at the chain's first provider again.
      this.candidate = 0;
      this.codec = this.chain[0] as WireCodec;
    }
  }
}

function stamped(derived: ProviderFrame, before: Frame): ProviderFrame {
  derived.run_id = before.run_id;
  derived.seq = before.seq;
  derived.ts = before.ts;
  return derived;
}
