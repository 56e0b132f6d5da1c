import { describe, expect, it } from "vitest";
import { LiveRunView } from "./live-view.js";
import { type FrameRecord, parseViewTape } from "./read.js";
import { buildRunView } from "./run-model.js";

/** A run's frames as a `--json` log would have them (envelope added). */
function frames(count: number, ended: boolean): string[] {
  const body: Record<string, unknown>[] = [
    { type: "run_started", model: "m", mode: "chained", input: "go", tools: ["read_file"] },
    { type: "request_started", turn: 1, attempt: 1, body: { model: "m", input: "go" } },
  ];
  for (let i = 0; i < count; i++)
    body.push({
      type: "output_text_delta",
      turn: 1,
      item_id: "m1",
      output_index: 0,
      content_index: 0,
      delta: `w${i} `,
    });
  if (ended)
    body.push({
      type: "run_ended",
      reason: "completed",
      output_text: "done",
      usage: null,
      turns: 1,
      tool_calls: 0,
    });
  return body.map((f, seq) => JSON.stringify({ run_id: "run_t", seq, ts: 1_800_000_000_000 + seq, ...f }));
}

function feed(view: LiveRunView, lines: string[]): void {
  for (const line of lines) view.add(JSON.parse(line) as FrameRecord, line);
}

/** What the file viewer shows of the same lines read at once. */
const whole = (lines: string[]) => buildRunView(parseViewTape(`${lines.join("\n")}\n`, "log"));

describe("LiveRunView: a run's view while its frames arrive", () => {
  it("so far and at the end, the view is the one of the same frames read whole", () => {
    const lines = frames(50, true);
    const live = new LiveRunView();
    feed(live, lines.slice(0, 20));
    expect(live.snapshot()?.view).toEqual(whole(lines.slice(0, 20)));
    expect(live.snapshot()?.raw).toEqual(lines.slice(0, 20));
    feed(live, lines.slice(20));
    const end = live.end();
    expect(end?.view).toEqual(whole(lines));
    expect(end?.view.reason).toBe("completed");
    // Ended is final: later frames and snapshots change nothing.
    feed(live, frames(3, false));
    expect(live.snapshot()).toBe(end);
  });

  it("past its limits the view so far stops changing and says so; the end still counts every frame", () => {
    const lines = frames(500, true);
    const live = new LiveRunView({ frames: 100, chars: 1_000_000 });
    feed(live, lines.slice(0, 50));
    const before = live.snapshot();
    expect(before?.view.frames).toBe(50);
    feed(live, lines.slice(50, 400));
    const paused = live.snapshot();
    expect(paused?.view.omitted?.join("\n")).toMatch(/live updates paused after 100 frames/);
    expect(paused?.view.turn_views).toEqual(before?.view.turn_views);
    expect(live.snapshot()).toBe(paused);
    feed(live, lines.slice(400));
    const end = live.end();
    expect(end?.view.frames).toBe(lines.length);
    expect(end?.view).toEqual(whole(lines));
    expect(end?.view.omitted ?? []).not.toContainEqual(expect.stringMatching(/paused/));
  });

  it("a limit on characters pauses it too, and a run with no frames has no view", () => {
    const live = new LiveRunView({ frames: 1_000, chars: 2_000 });
    expect(live.snapshot()).toBeUndefined();
    feed(live, frames(100, false));
    expect(live.snapshot()?.view.omitted?.join("\n")).toMatch(/paused after \d+ frames/);
    expect(new LiveRunView().end()).toBeUndefined();
  });
});
