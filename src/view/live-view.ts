/**
 * The view of a run whose frames are still arriving (`eddy view --live`), in bounded memory and
 * bounded time per redraw however long the run goes on (docs/pitfalls.md, "The run viewer").
 *
 * Every frame goes once into a `RunBuilder` (itself bounded by limits.ts) and into the page's raw
 * lines (`RawLines`, bounded). A builder's `finish` is final, so a view of the run so far is built
 * again from the frames kept for it — parsed records, never re-read text — up to `LIVE_LIMITS`;
 * past them the page stops changing (it says so) and keeps what it showed, and the whole run's view,
 * from the builder that saw every frame, comes when the run ends.
 */
import { RawLines } from "./raw-lines.js";
import type { FrameRecord } from "./read.js";
import { RunBuilder, type TapeFacts } from "./run-model.js";
import type { RunPayload } from "./view-data.js";

/** How much of a run the view so far is rebuilt from while frames come. */
export const LIVE_LIMITS = {
  /** Frames kept for the view so far (a rebuild takes about a microsecond a frame). */
  frames: 100_000,
  /** Characters of frame lines kept for it. */
  chars: 32 * 1024 * 1024,
} as const;

/** A live run's view (see the module comment). */
export class LiveRunView {
  private readonly builder = new RunBuilder();
  private readonly raw = new RawLines();
  private kept: FrameRecord[] = [];
  private keptChars = 0;
  private frames = 0;
  /** The frame count at which the view so far stopped following, once it has. */
  private pausedAt: number | undefined;
  private pauseNoted = false;
  private last: RunPayload | undefined;
  private ended = false;

  constructor(private readonly limits: { frames: number; chars: number } = LIVE_LIMITS) {}

  /** A frame, checked (`record`) and as its line. */
  add(record: FrameRecord, line: string): void {
    if (this.ended) return;
    this.frames++;
    this.builder.add(record);
    this.raw.add(line, record);
    if (this.pausedAt !== undefined) return;
    if (this.kept.length >= this.limits.frames || this.keptChars + line.length > this.limits.chars) {
      this.pausedAt = this.frames - 1;
      this.kept = [];
      return;
    }
    this.kept.push(record);
    this.keptChars += line.length;
  }

  /** The view now: of the run so far, or, once paused, the last one built (with a note saying so). */
  snapshot(): RunPayload | undefined {
    if (this.ended || this.frames === 0) return this.last;
    if (this.pausedAt === undefined) {
      const builder = new RunBuilder();
      for (const record of this.kept) builder.add(record);
      this.last = this.raw.payload(builder.finish({ cut: false, frames: this.frames }));
    } else if (!this.pauseNoted) {
      this.pauseNoted = true;
      const before = this.last ?? { view: new RunBuilder().finish({ cut: false, frames: 0 }), raw: [] };
      const omitted = [...(before.view.omitted ?? []), this.pauseNote()];
      this.last = { ...before, view: { ...before.view, omitted } };
    }
    return this.last;
  }

  /** The run's stream ended: the view of every frame, final. */
  end(): RunPayload | undefined {
    if (this.ended) return this.last;
    this.ended = true;
    this.kept = [];
    if (this.frames === 0) return undefined;
    const facts: TapeFacts = { cut: false, frames: this.frames };
    this.last = this.raw.payload(this.builder.finish(facts));
    return this.last;
  }

  private pauseNote(): string {
    const frames = this.limits.frames.toLocaleString("en-US");
    const mb = Math.round(this.limits.chars / (1024 * 1024)).toLocaleString("en-US");
    return `live updates paused after ${(this.pausedAt ?? 0).toLocaleString("en-US")} frames (more than ${frames} frames or ${mb} MB): this is the run until then; the whole run's view comes when it ends (its tape has every frame)`;
  }
}
