import { describe, expect, it } from "vitest";
import { type Frame, frame } from "../frames/frame.js";
import { FrameChannel } from "./frame-channel.js";

const delta = (text: string) =>
  frame("output_text_delta", { turn: 0, item_id: "m", output_index: 0, content_index: 0, delta: text });

describe("FrameChannel", () => {
  it("emitGroup stamps a group's frames with one clock reading; emit reads it per frame", async () => {
    let reads = 0;
    const channel = new FrameChannel({ runId: "run_g", clock: () => 1_000 + reads++ });
    channel.emitGroup([delta("a"), delta("b"), delta("c")]);
    channel.emit(delta("d"));
    channel.emit(delta("e"));
    channel.close();
    const frames: Frame[] = [];
    for await (const f of channel) frames.push(f);
    expect(frames.map((f) => [f.seq, f.ts])).toEqual([
      [0, 1000],
      [1, 1000],
      [2, 1000],
      [3, 1001],
      [4, 1002],
    ]);
    expect(reads).toBe(3);
  });

  it("hands buffered frames out in order and waits for more when the buffer is empty", async () => {
    const channel = new FrameChannel({ runId: "run_w", clock: () => 0 });
    const it = channel[Symbol.asyncIterator]();
    channel.emit(delta("a"));
    expect((await it.next()).value?.seq).toBe(0);
    const waiting = it.next();
    channel.emitGroup([delta("b"), delta("c")]);
    expect((await waiting).value?.seq).toBe(1);
    expect((await it.next()).value?.seq).toBe(2);
    const end = it.next();
    channel.close();
    expect((await end).done).toBe(true);
  });
});
