import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  truncateSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  type CachedChunk,
  encodeCodeCache,
  MAX_CODE_CACHE_BYTES,
  pruneCodeCache,
  readCodeCache,
  STALE_AFTER_MS,
  trustedFolder,
  writeCodeCache,
} from "./code-cache-file.js";

const root = mkdtempSync(join(tmpdir(), "eddy-code-cache-file-"));
let count = 0;
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A fresh private folder. */
function folder(): string {
  const dir = join(root, `f${count++}`);
  mkdirSync(dir, { mode: 0o700 });
  return dir;
}

const chunks: CachedChunk[] = [
  { name: "main.cjs", size: 10, mtimeMs: 1234.5, data: Buffer.from("main code") },
  { name: "chunk-AB12.cjs", size: 20, mtimeMs: 99, data: Buffer.from("chunk code") },
];

const asRoot = typeof process.getuid === "function" && process.getuid() === 0;

describe("writeCodeCache and readCodeCache", () => {
  it("read back what was written, chunk by chunk, in a private file", () => {
    const path = join(folder(), "cli-0123456789abcdef01234567-run.v8");
    expect(writeCodeCache(path, chunks)).toBe(true);
    const read = readCodeCache(path);
    expect([...read.keys()]).toEqual(["main.cjs", "chunk-AB12.cjs"]);
    expect(read.get("chunk-AB12.cjs")).toEqual(chunks[1]);
    expect(readFileSync(path).length).toBe(encodeCodeCache(chunks).length);
    expect(readdirSync(join(path, "..")).filter((name) => name.endsWith(".tmp"))).toEqual([]);
  });

  it("read a missing, empty, cut, corrupted or foreign file as no cache", () => {
    const dir = folder();
    const path = join(dir, "cache.v8");
    expect(readCodeCache(path).size).toBe(0);
    writeFileSync(path, "", { mode: 0o600 });
    expect(readCodeCache(path).size).toBe(0);
    writeFileSync(path, encodeCodeCache(chunks), { mode: 0o600 });
    truncateSync(path, readFileSync(path).length - 1);
    expect(readCodeCache(path).size).toBe(0);
    // Every single flipped byte, anywhere: the checksum or the layout refuses it.
    const good = encodeCodeCache(chunks);
    for (let at = 0; at < good.length; at++) {
      const bad = Buffer.from(good);
      bad[at] = (bad[at] ?? 0) ^ 0x41;
      writeFileSync(path, bad, { mode: 0o600 });
      expect(readCodeCache(path).size, `byte ${at}`).toBe(0);
    }
    writeFileSync(path, `\u001b[31m${"x".repeat(100)}`, { mode: 0o600 });
    expect(readCodeCache(path).size).toBe(0);
  });

  it("refuse an index that lies: wrong types, path tricks, lengths past the end, too many chunks", () => {
    const path = join(folder(), "cache.v8");
    const withIndex = (index: unknown, blobs = Buffer.alloc(0)) => {
      const json = Buffer.from(JSON.stringify(index));
      const good = encodeCodeCache([]);
      const magic = good.subarray(0, good.length - 32 - 4 - 2); // the magic line
      const length = Buffer.alloc(4);
      length.writeUInt32BE(json.length);
      const body = Buffer.concat([length, json, blobs]);
      return Buffer.concat([magic, createHash("sha256").update(body).digest(), body]);
    };
    const entry = { name: "main.cjs", size: 1, mtimeMs: 1, length: 3 };
    writeFileSync(path, withIndex([entry], Buffer.from("abc")), { mode: 0o600 });
    expect(readCodeCache(path).size).toBe(1); // the hand-made file is well formed
    for (const index of [
      { not: "an array" },
      [{ ...entry, name: "../../etc/passwd.cjs" }],
      [{ ...entry, name: "main.js" }],
      [{ ...entry, name: `a\u0000.cjs` }],
      [{ ...entry, size: "1" }],
      [{ ...entry, mtimeMs: null }],
      [{ ...entry, length: 4 }],
      [{ ...entry, length: 2 }],
      [{ ...entry, length: -3 }],
      [{ ...entry, length: 1.5 }],
      Array.from({ length: 1001 }, () => entry),
    ]) {
      writeFileSync(path, withIndex(index, Buffer.from("abc")), { mode: 0o600 });
      expect(readCodeCache(path).size, JSON.stringify(index).slice(0, 80)).toBe(0);
    }
  });

  it("read nothing through a link, from a FIFO, a folder, a file others may write, or past 64 MiB", () => {
    const dir = folder();
    const real = join(dir, "real.v8");
    writeCodeCache(real, chunks);
    const link = join(dir, "link.v8");
    symlinkSync(real, link);
    expect(readCodeCache(link).size).toBe(0);
    const fifo = join(dir, "fifo.v8");
    execFileSync("mkfifo", [fifo]);
    expect(readCodeCache(fifo).size).toBe(0); // and returns at once: nothing waits on a writer
    expect(readCodeCache(dir).size).toBe(0);
    chmodSync(real, 0o622);
    expect(readCodeCache(real).size).toBe(0);
    chmodSync(real, 0o600);
    expect(readCodeCache(real).size).toBe(2);
    const huge = join(dir, "huge.v8");
    writeFileSync(huge, encodeCodeCache(chunks), { mode: 0o600 });
    truncateSync(huge, MAX_CODE_CACHE_BYTES + 1);
    expect(readCodeCache(huge).size).toBe(0);
  });

  it.runIf(asRoot)("read nothing from a file another user owns", () => {
    const path = join(folder(), "theirs.v8");
    writeCodeCache(path, chunks);
    chownSync(path, 65534, 65534);
    expect(readCodeCache(path).size).toBe(0);
  });

  it("write nothing where the file cannot be made, and leave no temporary file", () => {
    const dir = folder();
    expect(writeCodeCache(join(dir, "missing", "cache.v8"), chunks)).toBe(false);
    const taken = join(dir, "taken.v8");
    mkdirSync(taken);
    expect(writeCodeCache(taken, chunks)).toBe(false);
    expect(readdirSync(dir).sort()).toEqual(["taken.v8"]);
  });
});

describe("trustedFolder", () => {
  it("trusts the user's own private folder, not a link to it, a file, or a folder others may write", () => {
    const dir = folder();
    expect(trustedFolder(dir)).toBe(true);
    const link = join(root, `link${count++}`);
    symlinkSync(dir, link);
    expect(trustedFolder(link)).toBe(false);
    expect(trustedFolder(join(dir, "missing"))).toBe(false);
    writeFileSync(join(dir, "file"), "");
    expect(trustedFolder(join(dir, "file"))).toBe(false);
    chmodSync(dir, 0o777);
    expect(trustedFolder(dir)).toBe(false);
    chmodSync(dir, 0o770);
    expect(trustedFolder(dir)).toBe(false);
    chmodSync(dir, 0o755);
    expect(trustedFolder(dir)).toBe(true);
  });

  it.runIf(asRoot)("does not trust a folder another user owns", () => {
    const dir = folder();
    chownSync(dir, 65534, 65534);
    expect(trustedFolder(dir)).toBe(false);
  });
});

describe("pruneCodeCache", () => {
  it("removes other keys' files older than a week, keeps this key's, recent ones and other files", () => {
    const dir = folder();
    const key = "aaaaaaaaaaaaaaaaaaaaaaaa";
    const other = "bbbbbbbbbbbbbbbbbbbbbbbb";
    const names = [
      `cli-${key}-run.v8`,
      `cli-${other}-run.v8`,
      `cli-${other}-help.v8.123.tmp`,
      `cli-${other}-chat.v8`,
      "notes.txt",
    ];
    for (const name of names) writeFileSync(join(dir, name), "x");
    const old = (Date.now() - STALE_AFTER_MS - 60_000) / 1000;
    for (const name of [names[0], names[1], names[2], names[4]]) utimesSync(join(dir, name ?? ""), old, old);
    pruneCodeCache(dir, key);
    expect(readdirSync(dir).sort()).toEqual([`cli-${key}-run.v8`, `cli-${other}-chat.v8`, "notes.txt"]);
    pruneCodeCache(join(dir, "missing"), key); // no folder: nothing to do, no error
    expect(existsSync(dir)).toBe(true);
  });
});
