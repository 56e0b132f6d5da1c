import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { withCapabilities } from "../provider/capabilities.js";
import type { DoctorReport } from "../provider/probe/index.js";
import { resolveConfig } from "./config.js";
import {
  DOCTOR_CACHE_MAX_AGE_MS,
  doctorCacheKey,
  doctorCachePath,
  doctorEvidence,
  evidenceNotice,
  readDoctorCache,
  writeDoctorReport,
} from "./doctor-cache.js";
import { httpProvider } from "./target-provider.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "eddy-doctor-cache-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const NOW = Date.parse("2026-12-01T12:00:00.000Z");

function report(overrides: Partial<DoctorReport> = {}): DoctorReport {
  return {
    provider: "generic",
    base_url: "http://127.0.0.1:9/v1",
    model: "m",
    api: "responses",
    probes: [
      { name: "auth", status: "ok", detail: "the key was accepted", ms: 10 },
      {
        name: "function_call_input",
        status: "unsupported",
        detail: "refused",
        hint: "text-embed",
        ms: 5,
      },
    ],
    cached_at: new Date(NOW - 60_000).toISOString(),
    ...overrides,
  };
}

const KEY = doctorCacheKey({
  provider: "generic",
  baseURL: "http://127.0.0.1:9/v1",
  model: "m",
  api: "responses",
});

describe("doctor cache", () => {
  it("lives in XDG_CACHE_HOME, else ~/.cache; nowhere without either", () => {
    expect(doctorCachePath({ XDG_CACHE_HOME: "/x", HOME: "/h" })).toBe(join("/x", "eddy", "doctor.json"));
    expect(doctorCachePath({ HOME: "/h" })).toBe(join("/h", ".cache", "eddy", "doctor.json"));
    expect(doctorCachePath({})).toBeUndefined();
  });

  it("ignores a relative XDG_CACHE_HOME or HOME (the cache would land wherever eddy was started)", () => {
    expect(doctorCachePath({ XDG_CACHE_HOME: "cache", HOME: "/h" })).toBe(
      join("/h", ".cache", "eddy", "doctor.json"),
    );
    expect(doctorCachePath({ XDG_CACHE_HOME: "", HOME: "/h" })).toBe(
      join("/h", ".cache", "eddy", "doctor.json"),
    );
    expect(doctorCachePath({ XDG_CACHE_HOME: "./x", HOME: "h" })).toBeUndefined();
  });

  it("writes atomically and reads its reports back", () => {
    const path = join(dir, "eddy", "doctor.json");
    expect(writeDoctorReport(path, KEY, report())).toEqual([]);
    expect(readDoctorCache(path)).toEqual({ entries: { [KEY]: report() }, notes: [] });
    expect(readdirSync(dirname(path))).toEqual(["doctor.json"]); // no temporary file left behind
    writeDoctorReport(path, "other", report({ provider: "other" }));
    expect(Object.keys(readDoctorCache(path).entries).sort()).toEqual([KEY, "other"].sort());
  });

  it.each([
    ["not JSON", "{ nope", /it is not JSON/],
    ["another shape", JSON.stringify([1, 2]), /not a format-1 cache/],
    ["another format", JSON.stringify({ format: 2, entries: {} }), /not a format-1 cache/],
  ])("a file that is %s is ignored with a note, never a crash", (_label, text, note) => {
    const path = join(dir, "doctor.json");
    writeFileSync(path, text);
    const cache = readDoctorCache(path);
    expect(cache.entries).toEqual({});
    expect(cache.notes).toHaveLength(1);
    expect(cache.notes[0]).toMatch(note);
    // eddy doctor rewrites it, saying what it dropped.
    expect(writeDoctorReport(path, KEY, report())).toEqual(cache.notes);
    expect(readDoctorCache(path).entries[KEY]).toEqual(report());
  });

  it("drops an entry that does not validate, keeping the others, with a note naming the field", () => {
    const path = join(dir, "doctor.json");
    const bad = { ...report(), probes: [{ name: "auth", status: "great", detail: "", ms: 1 }] };
    const injected = { ...report(), capabilities: { nativeToolHistory: true } };
    writeFileSync(path, JSON.stringify({ format: 1, entries: { [KEY]: report(), bad, injected } }));
    const cache = readDoctorCache(path);
    expect(Object.keys(cache.entries)).toEqual([KEY]);
    expect(cache.notes.join("\n")).toMatch(/"bad" was ignored \(probes\.0\.status/);
    expect(cache.notes.join("\n")).toMatch(/"injected" was ignored/);
  });

  it("ignores a file too big to be a cache", () => {
    const path = join(dir, "doctor.json");
    writeFileSync(path, " ".repeat(1024 * 1024 + 1));
    expect(readDoctorCache(path).notes[0]).toMatch(/over 1048576 bytes/);
  });

  it("ignores what is not a regular file at once, and writing replaces it", () => {
    const path = join(dir, "fifo", "eddy", "doctor.json");
    mkdirSync(dirname(path), { recursive: true });
    spawnSync("mkfifo", [path]);
    // Reading a FIFO blocked every run and `eddy doctor` until a writer came.
    expect(readDoctorCache(path).notes[0]).toMatch(
      /ignored: it is a FIFO \(named pipe\), not a regular file/,
    );
    writeDoctorReport(path, KEY, report());
    expect(Object.keys(readDoctorCache(path).entries)).toEqual([KEY]);
    expect(readDoctorCache(dir).notes[0]).toMatch(/ignored: it is a directory/);
  });

  it("gives a run the evidence for its endpoint, model and API only, and not once it is too old", () => {
    const env = { XDG_CACHE_HOME: dir };
    const path = doctorCachePath(env) as string;
    writeDoctorReport(path, KEY, report());
    const config = resolveConfig({ baseUrl: "http://127.0.0.1:9/v1", model: "m" }, env, dir);
    expect(config.doctor?.report).toEqual(report());
    expect(
      resolveConfig({ baseUrl: "http://127.0.0.1:9/v1", model: "other" }, env, dir).doctor,
    ).toBeUndefined();
    expect(
      resolveConfig({ baseUrl: "http://127.0.0.1:9/v1", model: "m", api: "chat-completions" }, env, dir)
        .doctor,
    ).toBeUndefined();
    expect(resolveConfig({}, env, dir).doctor).toBeUndefined(); // the embedded mock
    const target = config.target;
    const old = doctorEvidence(env, target, "responses", "m", NOW + DOCTOR_CACHE_MAX_AGE_MS);
    expect(old?.report).toBeUndefined();
    expect(old?.note).toMatch(/was not used: run eddy doctor again/);
  });

  it("applies the evidence to the run's provider, and says so on stderr", () => {
    const env = { XDG_CACHE_HOME: dir };
    writeDoctorReport(doctorCachePath(env) as string, KEY, report({ cached_at: new Date().toISOString() }));
    const config = resolveConfig({ baseUrl: "http://127.0.0.1:9/v1", model: "m" }, env, dir);
    expect(httpProvider(config).capabilities.nativeToolHistory).toBe(false);
    const without = resolveConfig(
      { baseUrl: "http://127.0.0.1:9/v1", model: "m" },
      { HOME: join(dir, "none") },
      dir,
    );
    expect(httpProvider(without).capabilities.nativeToolHistory).toBe(true);
    expect(evidenceNotice(withCapabilities(), config.doctor)).toMatch(
      /^eddy: capabilities from eddy doctor \(\d+ s ago\): nativeToolHistory false — settings left on auto follow them$/,
    );
    expect(evidenceNotice(withCapabilities({ nativeToolHistory: false }), config.doctor)).toBeUndefined();
  });

  it("a corrupt cache reaches a run as a note, not an error", () => {
    const env = { XDG_CACHE_HOME: dir };
    const path = doctorCachePath(env) as string;
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, "\u0000garbage");
    const config = resolveConfig({ baseUrl: "http://127.0.0.1:9/v1", model: "m" }, env, dir);
    expect(config.doctor?.report).toBeUndefined();
    expect(evidenceNotice(withCapabilities(), config.doctor)).toMatch(/ignored: it is not JSON/);
    expect(readFileSync(path, "utf8")).toBe("\u0000garbage"); // a run only reads
  });
});
