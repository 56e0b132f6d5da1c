/**
 * From probe results to capabilities: the one place where what `runProbes` saw a server do
 * decides what a run assumes of it. Settings left on `auto` follow the capabilities — the history
 * strategy (`nativeToolHistory`: native items or text-embed, src/history/strategies.ts), the
 * continuation mode (`previousResponseId`: chained or stateless) — so whether a server takes tool
 * history as native items (docs/decisions.md #17) is decided by evidence, not set by hand.
 *
 * Only verdicts are evidence: `ok` turns a capability on, `unsupported` off; `failed` (inconclusive)
 * and `skipped` leave the profile's value.
 */
import type { CapabilityKey, ProviderCapabilities } from "../capabilities.js";
import type { DoctorReport, ProbeName, ProbeResult } from "./types.js";

/** Which probe decides which capability. */
const DECIDES: readonly (readonly [ProbeName, CapabilityKey])[] = [
  ["previous_response_id", "previousResponseId"],
  ["function_call_input", "nativeToolHistory"],
  ["encrypted_reasoning", "encryptedReasoning"],
  ["compaction", "compaction"],
];

/** The capabilities the probe results show, and only those (see the module comment). */
export function evidenceOf(report: Pick<DoctorReport, "probes">): Partial<ProviderCapabilities> {
  const status = (name: ProbeName): ProbeResult | undefined => report.probes.find((p) => p.name === name);
  const out: Partial<ProviderCapabilities> = {};
  for (const [probe, capability] of DECIDES) {
    const result = status(probe);
    if (result?.status === "ok") out[capability] = true;
    else if (result?.status === "unsupported") out[capability] = false;
  }
  // The tool round trip tries a chained follow-up first whenever chaining works: when its output
  // had to go another way, the server chains text but refuses a chained function_call_output, and
  // a run's follow-ups (which carry tool outputs) must be stateless.
  const toolCall = status("tool_call");
  if (out.previousResponseId === true && toolCall?.status === "ok" && toolCall.follow_up !== "chained")
    out.previousResponseId = false;
  return out;
}

/**
 * `capabilities` (a profile's) with the evidence of a probe report applied; `capabilities` as
 * they are when there is no report.
 *
 * @example
 * ```ts
 * const capabilities = capabilitiesWithEvidence(profile.capabilities, cachedReport);
 * const provider = createOpenResponsesProvider({ baseURL, capabilities });
 * ```
 */
export function capabilitiesWithEvidence(
  capabilities: ProviderCapabilities,
  report: Pick<DoctorReport, "probes"> | undefined,
): ProviderCapabilities {
  return report === undefined ? capabilities : { ...capabilities, ...evidenceOf(report) };
}

/** One capability the evidence changes. */
export interface EvidenceChange {
  capability: CapabilityKey;
  value: boolean;
}

/** The capabilities the evidence changes against `capabilities`; empty when it changes none. */
export function evidenceChanges(
  capabilities: ProviderCapabilities,
  report: Pick<DoctorReport, "probes"> | undefined,
): EvidenceChange[] {
  const applied = capabilitiesWithEvidence(capabilities, report);
  return (Object.keys(applied) as CapabilityKey[])
    .filter((key) => applied[key] !== capabilities[key])
    .map((key) => ({ capability: key, value: applied[key] }));
}
