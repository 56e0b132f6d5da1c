import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { Watchdog, WatchdogFired, type WatchdogPhase } from "./watchdog.js";

const LIMITS = { connectMs: 300, firstByteMs: 1_000, idleMs: 500, drainMs: 50 };

function watchdog(isBusy: () => boolean = () => false) {
  const controller = new AbortController();
  const dog = new Watchdog(controller, LIMITS, isBusy, () => Date.now());
  const fired = () => {
    const reason: unknown = controller.signal.reason;
    return reason instanceof WatchdogFired ? `${reason.phase}:${reason.limitMs}` : undefined;
  };
  return { dog, fired };
}

describe("Watchdog", () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 0 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("a later phase with a longer limit keeps the armed timer and still fires at its own limit", () => {
    const { dog, fired } = watchdog();
    dog.start("connect");
    vi.advanceTimersByTime(200);
    dog.start("first_byte"); // 1,000 ms from t=200; the connect timer (t=300) stays armed
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(999);
    expect(fired()).toBeUndefined();
    vi.advanceTimersByTime(1);
    expect(fired()).toBe("first_byte:1000");
  });

  it("a phase with a shorter limit than the armed timer's re-arms: drain fires on time", () => {
    const { dog, fired } = watchdog();
    dog.start("idle");
    vi.advanceTimersByTime(100);
    dog.start("drain");
    vi.advanceTimersByTime(49);
    expect(fired()).toBeUndefined();
    vi.advanceTimersByTime(1);
    expect(fired()).toBe("drain:50");
  });

  it("activity keeps the idle phase alive; quiet for its whole limit ends it", () => {
    const { dog, fired } = watchdog();
    dog.start("idle");
    for (let i = 0; i < 10; i++) {
      vi.advanceTimersByTime(400);
      dog.touch();
    }
    expect(fired()).toBeUndefined();
    vi.advanceTimersByTime(500);
    expect(fired()).toBe("idle:500");
  });

  it("the idle timeout waits while a tool runs", () => {
    let busy = true;
    const { dog, fired } = watchdog(() => busy);
    dog.start("idle");
    vi.advanceTimersByTime(5_000);
    expect(fired()).toBeUndefined();
    busy = false;
    vi.advanceTimersByTime(1_000);
    expect(fired()).toBe("idle:500");
  });

  it("stop() clears the timer; a phase started after it arms a fresh one", () => {
    const { dog, fired } = watchdog();
    for (const phase of ["connect", "first_byte"] as WatchdogPhase[]) dog.start(phase);
    dog.stop();
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(10_000);
    expect(fired()).toBeUndefined();
    dog.start("drain");
    vi.advanceTimersByTime(50);
    expect(fired()).toBe("drain:50");
  });
});
