import { describe, expect, it } from "vitest";
import { durationText, reasonLabel, summaryLabel } from "./labels.js";

describe("the batch page's words", () => {
  it.each([
    ["completed", "Completed"],
    ["max_turns", "Max turns"],
    ["provider_error", "Provider error"],
    ["", "Unknown"],
  ])("reason %s → %s", (reason, label) => {
    expect(reasonLabel(reason)).toBe(label);
  });

  it.each([
    ["by_reason.completed", "Completed"],
    ["by_reason.max_tool_calls", "Max tool calls"],
    ["usage.input_tokens", "Tokens in"],
    ["duration_ms.p95", "Duration p95"],
    ["wall_ms", "Wall time"],
    ["runs", "Runs"],
    ["failed", "Not completed"],
    ["counts.completed", "Counts completed"],
    ["p50_ms", "P50 ms"],
  ])("summary key %s → %s", (key, label) => {
    expect(summaryLabel(key)).toBe(label);
  });

  it.each([
    [340, "340 ms"],
    [5100, "5.10 s"],
    [42_000, "42.0 s"],
    [123_000, "2 min 03 s"],
  ])("%d ms → %s", (ms, text) => {
    expect(durationText(ms)).toBe(text);
  });
});
