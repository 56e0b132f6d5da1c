/**
 * Reading a `DoctorReport` back (from a cache file, or anything else not trusted): the schema it
 * must match, checked field by field, so a report that was edited, truncated or written by another
 * version is refused with a reason instead of steering a run.
 */
import { z } from "zod";
import { once } from "../../util/lazy-object.js";
import type { ApiName } from "../wire-api.js";
import { type DoctorReport, PROBE_NAMES } from "./types.js";

/** One probe's result in a report. */
function probeResultSchema() {
  const line = z.string().max(2_000);
  return z
    .object({
      name: z.enum(PROBE_NAMES),
      status: z.enum(["ok", "failed", "unsupported", "skipped"]),
      detail: line,
      hint: line.optional(),
      ms: z.number().finite().min(0),
      follow_up: z.enum(["chained", "stateless", "text"]).optional(),
    })
    .strict();
}

/**
 * The schema of a `DoctorReport` (extra keys refused: a report is only ever written by eddy), built
 * on the first report read (bench/README.md, "Start-up").
 */
export const doctorReportSchema = once(() =>
  z
    .object({
      provider: z.string().min(1).max(200),
      base_url: z.string().max(2_000),
      model: z.string().max(500).nullable(),
      api: z.enum(["responses", "chat-completions"] as const satisfies readonly ApiName[]),
      probes: z
        .array(probeResultSchema())
        .max(PROBE_NAMES.length)
        .refine(
          (probes) => new Set(probes.map((p) => p.name)).size === probes.length,
          "a probe is listed twice",
        ),
      cached_at: z.iso.datetime(),
    })
    .strict(),
);

/** `value` as a `DoctorReport`, or the reason it is not one (one line naming the field). */
export function parseDoctorReport(value: unknown): { report: DoctorReport } | { error: string } {
  const parsed = doctorReportSchema().safeParse(value);
  if (parsed.success) return { report: parsed.data as DoctorReport };
  const issue = parsed.error.issues[0];
  const where = issue === undefined || issue.path.length === 0 ? "the report" : issue.path.join(".");
  return { error: `${where}: ${issue?.message ?? "invalid"}` };
}
