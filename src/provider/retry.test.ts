import { describe, expect, it } from "vitest";
import { parseRetryAfter } from "./retry.js";

const headers = (h: Record<string, string>) => ({ get: (name: string) => h[name] ?? null });
const NOW = Date.parse("2026-11-29T00:00:00Z");

describe("parseRetryAfter", () => {
  it.each([
    [{ "retry-after-ms": "250" }, 250],
    [{ "retry-after": "3" }, 3000],
    [{ "retry-after": "0" }, 0],
    [{ "retry-after": " 1.5 " }, 1500],
    [{ "retry-after-ms": "12.5" }, 12.5],
    [{ "retry-after": "Sun, 29 Nov 2026 00:00:05 GMT" }, 5000],
    [{ "retry-after": "Sat, 28 Nov 2026 00:00:05 GMT" }, 0],
  ] as const)("reads %j", (h, ms) => {
    expect(parseRetryAfter(headers(h), NOW)).toBe(ms);
  });

  it.each(["-5", "-0.5", "1e400", "NaN", "soon", "", "  ", "12abc", "0x10", "1e2", "Infinity", "0b11", "+3"])(
    "ignores Retry-After %j (the usual backoff applies; -5 had meant at once)",
    (value) => {
      expect(parseRetryAfter(headers({ "retry-after": value }), NOW)).toBeUndefined();
    },
  );

  it.each(["-10", "0x10", "1e2", "Infinity", ""])("ignores retry-after-ms %j", (value) => {
    expect(parseRetryAfter(headers({ "retry-after-ms": value }), NOW)).toBeUndefined();
  });
});
