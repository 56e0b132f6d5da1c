/** Assertions every run's frames must satisfy (docs/architecture.md, "The frame contract"; docs/decisions.md #3), whatever happened. */
import { expect } from "vitest";
import { DERIVED_FRAME_TYPES, type Frame, type FrameOf, type FrameType } from "../../src/frames/frame.js";

export function assertFrameInvariants(frames: readonly Frame[]): void {
  expect(frames.length).toBeGreaterThan(1);
  expect(frames[0]?.type).toBe("run_started");
  const runId = frames[0]?.run_id;
  frames.forEach((f, i) => {
    expect(f.seq, `frame ${i} seq`).toBe(i);
    expect(f.run_id).toBe(runId);
    expect(typeof f.ts).toBe("number");
  });
  expect(frames.at(-1)?.type).toBe("run_ended");
  expect(frames.filter((f) => f.type === "run_ended")).toHaveLength(1);
  // Every tool_call is followed by its tool_started and tool_ended (or, for an agent tool whose
  // sub-agent waits for approval, tool_deferred), in that order.
  for (const [i, f] of frames.entries()) {
    if (f.type !== "tool_call") continue;
    const rest = frames.slice(i + 1);
    const started = rest.findIndex((g) => g.type === "tool_started" && g.call_id === f.call_id);
    const ended = rest.findIndex(
      (g) => (g.type === "tool_ended" || g.type === "tool_deferred") && g.call_id === f.call_id,
    );
    expect(started, `tool_started for ${f.call_id}`).toBeGreaterThanOrEqual(0);
    expect(ended, `tool_ended for ${f.call_id}`).toBeGreaterThan(started);
  }
  // Derived frames (output_text_delta, reasoning_delta, item_done, response_ended) come right
  // after their provider_event, nothing between them.
  const derived = new Set<string>(["output_text_delta", ...DERIVED_FRAME_TYPES]);
  for (const [i, f] of frames.entries()) {
    if (!derived.has(f.type)) continue;
    let j = i - 1;
    while (j >= 0 && derived.has(frames[j]?.type ?? "")) j--;
    expect(frames[j]?.type, `frame ${i} (${f.type}) right after its provider_event`).toBe("provider_event");
  }
}

export function ofType<T extends FrameType>(frames: readonly Frame[], type: T): FrameOf<T>[] {
  return frames.filter((f): f is FrameOf<T> => f.type === type);
}

/** The run_ended frame. */
export function ended(frames: readonly Frame[]): FrameOf<"run_ended"> {
  const last = frames.at(-1);
  if (last?.type !== "run_ended") throw new Error("the last frame is not run_ended");
  return last;
}
