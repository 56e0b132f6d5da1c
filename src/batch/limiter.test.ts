import { describe, expect, it } from "vitest";
import { createRateLimiter, requestWindow } from "./limiter.js";

describe("the batch rate limit", () => {
  it.each([
    [60, { points: 1, seconds: 1 }],
    [30, { points: 1, seconds: 2 }],
    [45, { points: 3, seconds: 4 }],
    [600, { points: 10, seconds: 1 }],
    [7, { points: 7, seconds: 60 }],
  ])("spreads %i requests a minute as %o", (rpm, window) => {
    expect(requestWindow(rpm)).toEqual(window);
  });

  it("lets requests through at the rate, not in one burst", async () => {
    const limiter = createRateLimiter({ rpm: 600 });
    const start = performance.now();
    const times: number[] = [];
    await Promise.all(
      Array.from({ length: 25 }, () => limiter.acquire().then(() => times.push(performance.now() - start))),
    );
    times.sort((a, b) => a - b);
    // 10 a second: the first ten at once, the last five two windows later.
    expect(times[9]).toBeLessThan(500);
    expect(times[10]).toBeGreaterThan(900);
    expect(times[24]).toBeGreaterThan(1900);
  });

  it("holds every request while paused; a shorter pause does not cut a longer one", async () => {
    const limiter = createRateLimiter();
    await limiter.pause(400);
    await limiter.pause(50);
    const start = performance.now();
    await limiter.acquire();
    expect(performance.now() - start).toBeGreaterThan(350);
  });

  it("waits once the minute's tokens are spent, and stops waiting when cancelled", async () => {
    const limiter = createRateLimiter({ tpm: 1000 });
    await limiter.acquire();
    await limiter.spend(600);
    await limiter.acquire();
    await limiter.spend(600);
    const controller = new AbortController();
    setTimeout(() => controller.abort("stop"), 200);
    await expect(limiter.acquire(controller.signal)).rejects.toBe("stop");
  });

  it("refuses a rate that is not a positive integer", () => {
    expect(() => createRateLimiter({ rpm: 0 })).toThrow(/rpm must be an integer ≥ 1 \(got 0\)/);
    expect(() => createRateLimiter({ tpm: 1.5 })).toThrow(/tpm must be an integer/);
  });
});
