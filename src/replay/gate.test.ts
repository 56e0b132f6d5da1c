import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Frame } from "../frames/frame.js";
import { createFrameGate } from "./gate.js";

const frame = {} as Frame;

describe("createFrameGate", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("releases a wait as soon as the frames before it are emitted, with no stall", async () => {
    const gate = createFrameGate({ stallMs: 1000 });
    let released = false;
    const waiting = gate.wait(2).then(() => {
      released = true;
    });
    gate.observer(frame);
    await vi.advanceTimersByTimeAsync(0);
    expect(released).toBe(false);
    gate.observer(frame);
    await waiting;
    expect(gate.stalls).toBe(0);
  });

  it("spends the stall budget once per replay: after one stall, later waits give up at once", async () => {
    // A tape with frames the loop cannot produce: each wait finds nothing emitted.
    const gate = createFrameGate({ stallMs: 1000 });
    const start = Date.now(); // the fake clock
    let released = 0;
    const waits = (async () => {
      for (let seq = 1; seq <= 20; seq++) {
        await gate.wait(seq);
        released++;
      }
    })();
    await vi.advanceTimersByTimeAsync(999);
    expect(released).toBe(0);
    // Timer by timer, not "run every timer": files share their worker (vitest.config.ts), and a
    // timer another file left running (the Agents SDK's trace export loop reschedules itself) would
    // make that loop for ever.
    for (let step = 0; step < 1000 && released < 20; step++) await vi.advanceTimersToNextTimerAsync();
    await waits;
    expect(released).toBe(20);
    // One budget, then the other 19 at once (each stalled 1000 ms before: 20 s in all).
    expect(Date.now() - start).toBe(1000);
    expect(gate.stalls).toBe(20);
    // Nothing of the gate's is left to fire: a minute later, no wait has moved.
    await vi.advanceTimersByTimeAsync(60_000);
    expect(released).toBe(20);
    expect(gate.stalls).toBe(20);
  });

  it("after the one stall, a later stall waits for no timer (a timer's least delay is 1 ms)", async () => {
    // Only timers are faked: a stall that waited for one (even of 0 ms) would never end here.
    vi.useRealTimers();
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const gate = createFrameGate({ stallMs: 1000 });
    let released = 0;
    const waits = (async () => {
      for (let seq = 1; seq <= 20; seq++) {
        await gate.wait(seq);
        released++;
      }
    })();
    vi.advanceTimersByTime(1000);
    for (let turn = 0; turn < 200 && released < 20; turn++) await new Promise((r) => setImmediate(r));
    expect(released).toBe(20);
    await waits;
    expect(gate.stalls).toBe(20);
  });
});
