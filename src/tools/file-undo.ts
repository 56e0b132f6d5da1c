/**
 * Undoing recorded file changes (file-changes.ts): each file goes back to its content before the
 * first recorded change — or is removed when it did not exist — but only when it still holds what
 * the last recorded change left there. A file changed since (by a person, a later turn, a tool
 * that records nothing) is never overwritten: the whole undo is refused, naming the files, and
 * nothing is restored. The records may come from a tape (untrusted): each is checked — shape,
 * sizes, a workspace-relative path that stays inside the workspace, also through symlinks — and
 * every write goes through `workspace-fs.ts`, which checks the directories it opens.
 */
import { EddyError } from "../errors.js";
import { FILE_CHANGE_CONTENT_CAP, type FileChangeRecord, fileChangeBytes } from "./file-changes.js";
import { resolveWritableInWorkspace, type WorkspacePath, workspaceRoot } from "./workspace.js";
import {
  lstatChild,
  openDirForWrite,
  readChildFile,
  removeChildFile,
  splitInside,
  writeChildAtomic,
} from "./workspace-fs.js";

/** Most change records one undo takes. */
export const UNDO_MAX_CHANGES = 10_000;
/** Longest path a change record may name (characters). */
const MAX_PATH = 4096;

/** What one file goes back to: the content before the first change, expected to hold the last one's after. */
interface Restore {
  path: string;
  before: Buffer | null;
  after: Buffer | null;
  omitted: boolean;
}

/**
 * Restores the files `changes` (in the order they were made) changed, inside `workspace`.
 * Returns the restored paths. Throws `undo_conflict` (nothing restored) when a file changed
 * since, and `invalid_argument` for a record that is not a valid change inside the workspace.
 */
export async function undoFileChanges(
  changes: readonly FileChangeRecord[],
  workspace: string,
): Promise<string[]> {
  const restores = collapse(checkFileChanges(changes));
  const root = await workspaceRoot(workspace);
  const located = [];
  const conflicts: string[] = [];
  for (const r of restores) {
    if (r.omitted) {
      conflicts.push(`${r.path} (over ${FILE_CHANGE_CONTENT_CAP} bytes, its content was not recorded)`);
      continue;
    }
    const where = await locate(root, r.path);
    const current = await currentContent(root, where);
    if (!sameContent(current, r.after))
      conflicts.push(
        `${r.path} (${r.after === null ? "it was removed, and exists again" : "it changed since"})`,
      );
    located.push({ r, where });
  }
  if (conflicts.length > 0)
    throw new EddyError(
      "undo_conflict",
      `undo refused, nothing was restored: ${conflicts.join("; ")}. Restore or commit those files by hand.`,
      { fault: "user", details: { files: restores.map((r) => r.path) } },
    );
  for (const { r, where } of located) await restore(root, where, r);
  return located.map(({ r }) => r.path);
}

/** Checks records from an untrusted source: shape, path and sizes; throws naming the first bad one. */
export function checkFileChanges(changes: unknown): FileChangeRecord[] {
  if (!Array.isArray(changes)) throw badRecord("the file changes are not a list");
  if (changes.length > UNDO_MAX_CHANGES)
    throw badRecord(`${changes.length} file changes, more than the ${UNDO_MAX_CHANGES} an undo takes`);
  return changes.map((c, i) => checkRecord(c, i));
}

function checkRecord(value: unknown, index: number): FileChangeRecord {
  const at = `file change ${index}`;
  if (value === null || typeof value !== "object" || Array.isArray(value))
    throw badRecord(`${at} is not an object`);
  const r = value as Record<string, unknown>;
  const known = new Set(["path", "encoding", "before", "after", "omitted"]);
  const extra = Object.keys(r).find((k) => !known.has(k));
  if (extra !== undefined) throw badRecord(`${at} has an unknown field ${JSON.stringify(extra)}`);
  if (typeof r.path !== "string" || r.path === "" || r.path.length > MAX_PATH || r.path.includes("\0"))
    throw badRecord(`${at}: path must be a non-empty workspace-relative path`);
  if (r.encoding !== "utf8" && r.encoding !== "base64")
    throw badRecord(`${at}: encoding must be utf8 or base64`);
  if (r.omitted !== undefined && r.omitted !== "too_large")
    throw badRecord(`${at}: omitted must be "too_large"`);
  for (const side of ["before", "after"] as const) {
    const v = r[side];
    if (r.omitted === undefined && v === undefined) throw badRecord(`${at}: ${side} is missing`);
    if (v !== undefined && v !== null && typeof v !== "string")
      throw badRecord(`${at}: ${side} must be a string or null`);
    // A string of n characters holds at most 3n UTF-8 bytes; base64 decodes to at most 3/4 of its length.
    if (typeof v === "string" && v.length > FILE_CHANGE_CONTENT_CAP * 2)
      throw badRecord(`${at}: ${side} is larger than ${FILE_CHANGE_CONTENT_CAP} bytes`);
    // Node decodes any string as base64, skipping what is not: garbage would be written as bytes.
    if (typeof v === "string" && r.encoding === "base64" && !BASE64.test(v))
      throw badRecord(`${at}: ${side} is not base64 (as eddy writes it: A–Z a–z 0–9 + /, = padding)`);
  }
  const record = r as unknown as FileChangeRecord;
  for (const side of ["before", "after"] as const) {
    if ((fileChangeBytes(record, side)?.length ?? 0) > FILE_CHANGE_CONTENT_CAP)
      throw badRecord(`${at}: ${side} is larger than ${FILE_CHANGE_CONTENT_CAP} bytes`);
  }
  return record;
}

/** Standard base64 with its padding, as `Buffer.toString("base64")` writes it. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function badRecord(message: string): EddyError {
  return new EddyError("invalid_argument", `undo: ${message}`, { fault: "user" });
}

/** One restore per path: the first record's before, the last record's after. */
function collapse(changes: readonly FileChangeRecord[]): Restore[] {
  const byPath = new Map<string, Restore>();
  for (const c of changes) {
    const omitted = c.omitted !== undefined;
    const known = byPath.get(c.path);
    if (known === undefined) {
      byPath.set(c.path, {
        path: c.path,
        before: omitted ? null : fileChangeBytes(c, "before"),
        after: omitted ? null : fileChangeBytes(c, "after"),
        omitted,
      });
    } else {
      known.after = omitted ? null : fileChangeBytes(c, "after");
      known.omitted ||= omitted;
    }
  }
  return [...byPath.values()];
}

/** The path's parent (workspace-relative) and name; a path leaving the workspace is refused. */
async function locate(root: string, path: string): Promise<Where> {
  let resolved: WorkspacePath;
  try {
    resolved = await resolveWritableInWorkspace(root, path, "undo");
  } catch (error) {
    if (EddyError.isInstance(error))
      throw new EddyError("invalid_argument", error.message, { fault: "user" });
    throw error;
  }
  if (resolved.display === ".")
    throw badRecord(`${JSON.stringify(path)} names the workspace root, not a file`);
  return { ...splitInside(root, resolved.absolute), display: resolved.display };
}

/** The file's bytes now; `null` when nothing is there; a symlink or directory is refused. */
async function currentContent(root: string, where: Where) {
  const opened = await openParent(root, where, false);
  if (opened === undefined) return null;
  try {
    const stat = await lstatChild(opened.dir, where.name);
    if (stat === undefined) return null;
    if (!stat.isFile()) throw badRecord(`${where.display} is not a regular file now; it is left as it is`);
    return await readChildFile(opened.dir, where.name);
  } finally {
    await opened.dir.close();
  }
}

/** Where a change's file is: its parent folder (workspace-relative), its name, how it is shown. */
interface Where {
  parent: string;
  name: string;
  display: string;
}

/** The file's folder, opened (made when `create`); undefined when it is not there and not to be made. */
async function openParent(root: string, where: Where, create: boolean) {
  try {
    return await openDirForWrite(root, where.parent, { tool: "undo", display: where.display }, { create });
  } catch (error) {
    if (!create && (error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

function sameContent(a: Buffer | null, b: Buffer | null): boolean {
  return a === null || b === null ? a === b : a.equals(b);
}

async function restore(root: string, where: Where, r: Restore) {
  // Created when the file is to be restored; gone with the file to be absent: nothing to remove.
  const opened = await openParent(root, where, r.before !== null);
  if (opened === undefined) return;
  try {
    if (r.before === null) await removeChildFile(opened.dir, where.name);
    else {
      const stat = await lstatChild(opened.dir, where.name);
      await writeChildAtomic(
        opened.dir,
        where.name,
        r.before,
        stat === undefined ? undefined : stat.mode & 0o7777,
      );
    }
  } finally {
    await opened.dir.close();
  }
}
