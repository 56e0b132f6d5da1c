/**
 * Atomic file replacement for the writing tools: write a temporary file in the same directory,
 * then `rename` it over the target, so a reader (or a crash) sees the old content or the new,
 * never half of it. An existing file keeps its permission bits.
 */
import { randomBytes } from "node:crypto";
import { chmod, mkdir, rename, rm, stat, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

/** Writes `content` to `absolute` atomically. The parent directory must exist. */
export async function writeFileAtomic(absolute: string, content: string | Uint8Array): Promise<void> {
  const temp = join(
    dirname(absolute),
    `.${basename(absolute)}.eddy-${process.pid}-${randomBytes(6).toString("hex")}.tmp`,
  );
  let mode: number | undefined;
  try {
    mode = (await stat(absolute)).mode & 0o7777;
  } catch {
    // A new file: default permissions (umask applies).
  }
  try {
    await writeFile(temp, content, { flag: "wx" });
    if (mode !== undefined) await chmod(temp, mode);
    await rename(temp, absolute);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}

/**
 * Creates `dir` and any missing parents; returns the topmost directory it created (to remove on
 * rollback), or `undefined` when it already existed.
 */
export async function ensureDir(dir: string): Promise<string | undefined> {
  return mkdir(dir, { recursive: true });
}
