import { describe, expect, it } from "vitest";
import { formatRequestLog, type MockRequestLog } from "./recording.js";

const LOG: MockRequestLog = {
  method: "POST",
  path: "/v1/responses",
  transport: "http",
  status: 200,
  turn: 0,
  stream: true,
  faults: [],
  outcome: "finished",
  durationMs: 12,
};

describe("formatRequestLog", () => {
  it("shows a plain model as it is", () => {
    expect(formatRequestLog({ ...LOG, model: "gpt-5-mini" })).toBe(
      "POST /v1/responses 200 model=gpt-5-mini turn=0 stream 12ms",
    );
  });

  it("shows a model holding control, direction or separator characters inert, as JSON (found by a probe: a request's model set the terminal's title and cleared its screen)", () => {
    const model = "a\u001b]0;pwned\u0007\u001b[2J\u009b31m\u202eb\u2028c";
    const line = formatRequestLog({ ...LOG, model });
    expect(line).toBe(
      'POST /v1/responses 200 model="a\\u001b]0;pwned\\u0007\\u001b[2J\\u009b31m\\u202eb\\u2028c" turn=0 stream 12ms',
    );
  });

  it("cuts a long model (a 60 MB model was a 60 MB log line)", () => {
    const line = formatRequestLog({ ...LOG, model: "m".repeat(1_000_000) });
    expect(line).toBe(`POST /v1/responses 200 model="${"m".repeat(200)}…" turn=0 stream 12ms`);
  });
});
