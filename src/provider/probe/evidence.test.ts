import { describe, expect, it } from "vitest";
import { resolveStrategy } from "../../history/strategies.js";
import { withCapabilities } from "../capabilities.js";
import { capabilitiesWithEvidence, evidenceChanges, evidenceOf } from "./evidence.js";
import type { ProbeName, ProbeResult, ProbeStatus } from "./types.js";

function report(entries: [ProbeName, ProbeStatus, Partial<ProbeResult>?][]): { probes: ProbeResult[] } {
  return {
    probes: entries.map(([name, status, more]) => ({ name, status, detail: "", ms: 1, ...more })),
  };
}

describe("evidenceOf", () => {
  it.each([
    ["ok turns a capability on", [["function_call_input", "ok"]], { nativeToolHistory: true }],
    ["unsupported turns it off", [["function_call_input", "unsupported"]], { nativeToolHistory: false }],
    ["failed is no evidence", [["function_call_input", "failed"]], {}],
    ["skipped is no evidence", [["encrypted_reasoning", "skipped"]], {}],
    [
      "each probe decides its capability",
      [
        ["previous_response_id", "unsupported"],
        ["encrypted_reasoning", "ok"],
        ["compaction", "ok"],
        ["websocket", "unsupported"],
        ["chat_completions", "unsupported"],
      ],
      { previousResponseId: false, encryptedReasoning: true, compaction: true },
    ],
    [
      "a chain that works for text but whose tool output had to go statelessly: runs go stateless",
      [
        ["previous_response_id", "ok"],
        ["tool_call", "ok", { follow_up: "stateless" }],
      ],
      { previousResponseId: false },
    ],
    [
      "a chained tool round trip keeps chaining",
      [
        ["previous_response_id", "ok"],
        ["tool_call", "ok", { follow_up: "chained" }],
      ],
      { previousResponseId: true },
    ],
  ] as const)("%s", (_label, entries, expected) => {
    expect(
      evidenceOf(report(entries as unknown as [ProbeName, ProbeStatus, Partial<ProbeResult>?][])),
    ).toEqual(expected);
  });
});

describe("capabilitiesWithEvidence", () => {
  it("leaves the capabilities as they are without a report", () => {
    const caps = withCapabilities({ previousResponseId: false });
    expect(capabilitiesWithEvidence(caps, undefined)).toBe(caps);
  });

  it("is what history strategy auto follows: function_call input refused → text-embed", () => {
    const caps = withCapabilities();
    const refused = capabilitiesWithEvidence(caps, report([["function_call_input", "unsupported"]]));
    expect(resolveStrategy("auto", refused).name).toBe("text-embed");
    expect(resolveStrategy("native", refused).name).toBe("native");
    const accepted = capabilitiesWithEvidence(
      withCapabilities({ nativeToolHistory: false }),
      report([["function_call_input", "ok"]]),
    );
    expect(resolveStrategy("auto", accepted).name).toBe("native");
  });

  it("lists only what it changes", () => {
    const caps = withCapabilities({ compaction: false });
    const evidence = report([
      ["function_call_input", "ok"],
      ["compaction", "ok"],
      ["previous_response_id", "unsupported"],
    ]);
    expect(evidenceChanges(caps, evidence)).toEqual([
      { capability: "previousResponseId", value: false },
      { capability: "compaction", value: true },
    ]);
  });
});
