/**
 * The `eddy doctor` cache: the last report per endpoint and model, in
 * `$XDG_CACHE_HOME/eddy/doctor.json` (else `~/.cache/eddy/doctor.json`), and the evidence a run
 * takes from it. The file is untrusted input: it is read with a size limit and every report is
 * checked against `doctorReportSchema`; a file or entry that does not pass is ignored with a note,
 * never a crash. Writes go to a temporary file renamed over the old one, so a reader never sees
 * half a file. A report older than `DOCTOR_CACHE_MAX_AGE_MS` is not used (`eddy doctor` refreshes it).
 */
import { randomBytes } from "node:crypto";
import { renameSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { EddyError } from "../errors.js";
import type { ProviderCapabilities } from "../provider/capabilities.js";
import { evidenceChanges } from "../provider/probe/evidence.js";
import { parseDoctorReport } from "../provider/probe/report.js";
import type { DoctorReport } from "../provider/probe/types.js";
import type { ApiName } from "../provider/wire-api.js";
import { isJsonObject } from "../util/json.js";
import { makeDirSync } from "../util/make-dir.js";
import { kindOf, readRegularTextSync } from "../util/regular-file.js";
import { eddyCacheDir } from "./cache-dir.js";
import type { Env, ProviderTarget } from "./config.js";

/** Reports older than this are not used by runs (30 days). */
export const DOCTOR_CACHE_MAX_AGE_MS = 30 * 24 * 60 * 60 * 1000;
/** A cache file bigger than this is ignored (it cannot be ours). */
const MAX_CACHE_BYTES = 1024 * 1024;
/** Reports kept; the oldest go first. */
const MAX_ENTRIES = 100;
const FORMAT = 1;

/** What identifies a report: the provider (profile) name, base URL, model and API. */
export interface DoctorCacheKey {
  provider: string;
  baseURL: string;
  model: string | null;
  api: ApiName;
}

/** The cache as read: the valid reports by key, and notes on anything ignored. */
export interface DoctorCache {
  entries: Record<string, DoctorReport>;
  notes: string[];
}

/** The cached findings for a run's endpoint and model. */
export interface DoctorEvidence {
  /** The report, when there is a usable one. */
  report: DoctorReport | undefined;
  /** How old the report is, in milliseconds. */
  ageMs: number | undefined;
  /** A line worth showing (a corrupt cache ignored, a report too old to use). */
  note: string | undefined;
}

/** The cache file's path, or undefined when the environment names no cache or home directory. */
export function doctorCachePath(env: Env): string | undefined {
  const dir = eddyCacheDir(env);
  return dir === undefined ? undefined : join(dir, "doctor.json");
}

/** The key of a report in the cache. */
export function doctorCacheKey(key: DoctorCacheKey): string {
  return [key.provider, key.baseURL, key.model ?? "(server default)", key.api].join(" ");
}

/** Reads the cache; a missing file is an empty cache, anything unreadable an empty cache with a note. */
export function readDoctorCache(path: string): DoctorCache {
  const ignored = (why: string): DoctorCache => ({
    entries: {},
    notes: [`the eddy doctor cache ${path} was ignored: ${why} (eddy doctor rewrites it)`],
  });
  let text: string;
  try {
    // Opened non-blocking and checked as a regular file: a FIFO there used to block every run.
    const stats = statSync(path);
    if (!stats.isFile()) return ignored(`it is ${kindOf(stats)}, not a regular file`);
    if (stats.size > MAX_CACHE_BYTES) return ignored(`it is over ${MAX_CACHE_BYTES} bytes`);
    text = readRegularTextSync(path, { what: "the eddy doctor cache", maxBytes: MAX_CACHE_BYTES });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return { entries: {}, notes: [] };
    return ignored(EddyError.isInstance(err) ? err.message : `cannot read it (${code ?? "error"})`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return ignored("it is not JSON");
  }
  if (!isJsonObject(json) || json.format !== FORMAT || !isJsonObject(json.entries))
    return ignored(`it is not a format-${FORMAT} cache ({"format": ${FORMAT}, "entries": {…}})`);
  const cache: DoctorCache = { entries: {}, notes: [] };
  for (const [key, value] of Object.entries(json.entries)) {
    const parsed = parseDoctorReport(value);
    if ("report" in parsed) cache.entries[key] = parsed.report;
    else
      cache.notes.push(
        `the eddy doctor cache ${path}: entry ${JSON.stringify(key)} was ignored (${parsed.error})`,
      );
  }
  return cache;
}

/**
 * Stores `report` under `key`, keeping the other valid reports (at most `MAX_ENTRIES`, the newest),
 * atomically. Returns the notes on what of the old file was dropped. Throws on a file-system error
 * (the caller reports it; the probes stand).
 */
export function writeDoctorReport(path: string, key: string, report: DoctorReport): string[] {
  const { entries, notes } = readDoctorCache(path);
  entries[key] = report;
  const kept = Object.entries(entries)
    .sort(([, a], [, b]) => Date.parse(b.cached_at) - Date.parse(a.cached_at))
    .slice(0, MAX_ENTRIES);
  makeDirSync(dirname(path), 0o700);
  const temporary = `${path}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  writeFileSync(
    temporary,
    `${JSON.stringify({ format: FORMAT, entries: Object.fromEntries(kept) }, null, 2)}\n`,
    {
      mode: 0o600,
      // Never onto something already there (a FIFO would block): the name is new.
      flag: "wx",
    },
  );
  renameSync(temporary, path);
  return notes;
}

/**
 * The cached evidence for a run's target, model and API; undefined for the embedded mock (whose
 * support is known) and when there is nothing to use or say.
 */
export function doctorEvidence(
  env: Env,
  target: ProviderTarget,
  api: ApiName,
  model: string | null,
  now: number = Date.now(),
): DoctorEvidence | undefined {
  const path = doctorCachePath(env);
  if (target.kind !== "http" || path === undefined) return undefined;
  const cache = readDoctorCache(path);
  const key = doctorCacheKey({ provider: target.profile.name, baseURL: target.baseURL.value, model, api });
  const report = cache.entries[key];
  const notes = [...cache.notes];
  const ageMs = report === undefined ? undefined : now - Date.parse(report.cached_at);
  if (report !== undefined && ageMs !== undefined && ageMs > DOCTOR_CACHE_MAX_AGE_MS) {
    notes.push(
      `eddy doctor's report for this endpoint is ${formatAge(ageMs)} old and was not used: run eddy doctor again`,
    );
    return { report: undefined, ageMs, note: notes.join("; ") };
  }
  if (report === undefined && notes.length === 0) return undefined;
  return { report, ageMs, note: notes.length === 0 ? undefined : notes.join("; ") };
}

/** The stderr line a run shows about the evidence it uses: what it changes, or a note; undefined when neither. */
export function evidenceNotice(
  capabilities: ProviderCapabilities,
  evidence: DoctorEvidence | undefined,
): string | undefined {
  if (evidence === undefined) return undefined;
  const changes = evidenceChanges(capabilities, evidence.report);
  const lines: string[] = [];
  if (evidence.note !== undefined) lines.push(`eddy: ${evidence.note}`);
  if (changes.length > 0 && evidence.ageMs !== undefined)
    lines.push(
      `eddy: capabilities from eddy doctor (${formatAge(evidence.ageMs)} ago): ${changes.map((c) => `${c.capability} ${c.value}`).join(", ")} — settings left on auto follow them`,
    );
  return lines.length === 0 ? undefined : lines.join("\n");
}

/** "45 s", "12 min", "3 h", "2 days". */
export function formatAge(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.round(s / 60)} min`;
  if (s < 86_400) return `${Math.round(s / 3600)} h`;
  const days = Math.round(s / 86_400);
  return `${days} day${days === 1 ? "" : "s"}`;
}
