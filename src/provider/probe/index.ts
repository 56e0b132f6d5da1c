/**
 * Provider probes (`eddy doctor` over the library): `runProbes` checks what an endpoint and model
 * support, `capabilitiesWithEvidence` turns the results into capabilities, `parseDoctorReport`
 * reads a report back from untrusted storage.
 */
export { capabilitiesWithEvidence, type EvidenceChange, evidenceChanges, evidenceOf } from "./evidence.js";
export { doctorReportSchema, parseDoctorReport } from "./report.js";
export { type RunProbesOptions, runProbes } from "./run-probes.js";
export {
  type DoctorReport,
  ESSENTIAL_PROBES,
  essentialProbes,
  PROBE_DEFAULTS,
  PROBE_NAMES,
  type ProbeName,
  type ProbeResult,
  type ProbeStatus,
  type ProbeTarget,
  type ProbeToolRecord,
  type RenderToolResult,
  type ToolFollowUp,
} from "./types.js";
