/**
 * The file the CLI's code cache keeps V8's code in (code-cache.ts, docs/decisions.md #40): one file
 * per command, holding the code of each chunk of the CLI bundle that command loaded.
 *
 * What V8 is handed is code, so a file is read only from where nobody but the user can write: a
 * folder that is not a link, owned by the user and not writable by the group or others, holding a
 * regular file of the same kind, at most 64 MiB. The file carries a SHA-256 of everything after
 * it: V8 checks its own version, its flags and the source's length, but not the bytes, and a torn
 * or corrupted file must never reach it. Anything wrong reads as no cache.
 *
 * Layout: the magic line, the SHA-256 (32 bytes), the index's length (4 bytes, big-endian), the
 * index (JSON: `[{name, size, mtimeMs, length}]`, a chunk file's name, size and modification time
 * when its code was made, and the code's length), then each chunk's code in the index's order.
 *
 * No imports of eddy's but util/regular-file.ts: the launcher loads this before the CLI.
 */
import { createHash } from "node:crypto";
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  type Stats,
  unlinkSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { withRegularFileSync } from "../util/regular-file.js";

/** One chunk's code, and the chunk file it was made from. */
export interface CachedChunk {
  /** The chunk file's name in the bundle folder (`main.cjs`, `chunk-….cjs`). */
  name: string;
  size: number;
  mtimeMs: number;
  data: Buffer;
}

/** The first bytes of a cache file. */
const MAGIC = Buffer.from("eddy v8 code cache 2\n");
const DIGEST_BYTES = 32;
const HEADER_BYTES = MAGIC.length + DIGEST_BYTES + 4;
/** The largest cache file read: V8's code for the whole bundle is about the bundle's size (1 MB). */
export const MAX_CODE_CACHE_BYTES = 64 * 1024 * 1024;
/** The most chunks one file holds (the bundle has about 90). */
export const MAX_CACHED_CHUNKS = 1000;
const CHUNK_NAME = /^[\w-]{1,100}\.cjs$/;
/** The cache files' names: `cli-<key>-<command>.v8`, and a file being written. */
const FILE_NAME = /^cli-([0-9a-f]{24})-([a-z]+)\.v8(\.\d+\.tmp)?$/;

/** Whether a file or folder may hold code for this process: the user's own, writable by no one else. */
function ownedPrivately(stats: Stats): boolean {
  const uid = typeof process.getuid === "function" ? process.getuid() : undefined;
  return (uid === undefined || stats.uid === uid) && (stats.mode & 0o022) === 0;
}

/** Whether `folder` is a real folder (not a link) nobody but the user can write into. */
export function trustedFolder(folder: string): boolean {
  try {
    const stats = lstatSync(folder);
    return stats.isDirectory() && ownedPrivately(stats);
  } catch {
    return false;
  }
}

/**
 * The whole of a private regular file, or undefined: read as eddy reads any file it is given
 * (util/regular-file.ts: a regular file only, no link followed, a FIFO never waited on, bounded).
 */
function readPrivateFile(path: string): Buffer | undefined {
  try {
    const options = { what: "code cache", maxBytes: MAX_CODE_CACHE_BYTES, noFollow: true };
    const bytes = withRegularFileSync(path, options, (fd) =>
      ownedPrivately(fstatSync(fd)) ? readFileSync(fd) : undefined,
    );
    return bytes !== undefined && bytes.length > HEADER_BYTES && bytes.length <= MAX_CODE_CACHE_BYTES
      ? bytes
      : undefined;
  } catch {
    return undefined;
  }
}

function isIndexEntry(value: unknown): value is Omit<CachedChunk, "data"> & { length: number } {
  if (typeof value !== "object" || value === null) return false;
  const { name, size, mtimeMs, length } = value as Record<string, unknown>;
  return (
    typeof name === "string" &&
    CHUNK_NAME.test(name) &&
    Number.isSafeInteger(size) &&
    typeof mtimeMs === "number" &&
    Number.isFinite(mtimeMs) &&
    Number.isSafeInteger(length) &&
    (length as number) > 0
  );
}

/** The chunks' code in the cache file at `path`, by chunk name; empty when there is none to trust. */
export function readCodeCache(path: string): Map<string, CachedChunk> {
  const chunks = new Map<string, CachedChunk>();
  const bytes = readPrivateFile(path);
  if (bytes === undefined || !bytes.subarray(0, MAGIC.length).equals(MAGIC)) return chunks;
  const body = bytes.subarray(MAGIC.length + DIGEST_BYTES);
  const digest = createHash("sha256").update(body).digest();
  if (!digest.equals(bytes.subarray(MAGIC.length, MAGIC.length + DIGEST_BYTES))) return chunks;
  const indexLength = body.readUInt32BE(0);
  if (indexLength > body.length - 4) return chunks;
  let index: unknown;
  try {
    index = JSON.parse(body.subarray(4, 4 + indexLength).toString("utf8"));
  } catch {
    return chunks;
  }
  if (!Array.isArray(index) || index.length > MAX_CACHED_CHUNKS || !index.every(isIndexEntry)) return chunks;
  let at = 4 + indexLength;
  for (const { name, size, mtimeMs, length } of index) {
    if (at + length > body.length) return new Map();
    chunks.set(name, { name, size, mtimeMs, data: body.subarray(at, at + length) });
    at += length;
  }
  return at === body.length ? chunks : new Map();
}

/** The bytes of a cache file holding `chunks`. */
export function encodeCodeCache(chunks: readonly CachedChunk[]): Buffer {
  const index = Buffer.from(
    JSON.stringify(
      chunks.map(({ name, size, mtimeMs, data }) => ({ name, size, mtimeMs, length: data.length })),
    ),
  );
  const length = Buffer.alloc(4);
  length.writeUInt32BE(index.length);
  const body = Buffer.concat([length, index, ...chunks.map((chunk) => chunk.data)]);
  return Buffer.concat([MAGIC, createHash("sha256").update(body).digest(), body]);
}

/**
 * Writes a cache file holding `chunks` at `path`, whole or not at all (a private file of its own
 * first, then renamed over the old one). Returns whether it was written.
 */
export function writeCodeCache(path: string, chunks: readonly CachedChunk[]): boolean {
  const temporary = `${path}.${process.pid}.tmp`;
  let fd: number | undefined;
  try {
    const bytes = encodeCodeCache(chunks.slice(0, MAX_CACHED_CHUNKS));
    if (bytes.length > MAX_CODE_CACHE_BYTES) return false;
    fd = openSync(
      temporary,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
      0o600,
    );
    for (let done = 0; done < bytes.length; ) done += writeSync(fd, bytes, done, bytes.length - done);
    closeSync(fd);
    fd = undefined;
    renameSync(temporary, path);
    return true;
  } catch {
    if (fd !== undefined) closeSync(fd);
    try {
      unlinkSync(temporary);
    } catch {
      // never made
    }
    return false;
  }
}

/** How long the cache files of another install or runtime are kept after they were last written. */
export const STALE_AFTER_MS = 7 * 24 * 60 * 60 * 1000;

/**
 * Removes from `folder` the cache files of other keys (another eddy, Node or set of V8 flags) last
 * written more than a week ago: an upgrade leaves its old files behind, but two installs used by
 * turns each keep theirs.
 */
export function pruneCodeCache(folder: string, key: string, now = Date.now()): void {
  let names: string[];
  try {
    names = readdirSync(folder);
  } catch {
    return;
  }
  for (const name of names) {
    const match = FILE_NAME.exec(name);
    if (match === null || match[1] === key) continue;
    try {
      const path = join(folder, name);
      if (now - lstatSync(path).mtimeMs > STALE_AFTER_MS) unlinkSync(path);
    } catch {
      // removed meanwhile, or not ours to remove
    }
  }
}
