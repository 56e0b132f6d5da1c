/**
 * Small helpers shared by the built-in tools: typed failures, file-system error messages, binary
 * sniffing and glob matching. Nothing here touches a path the workspace check has not approved.
 */
import { createRequire } from "node:module";
import type picomatch from "picomatch";
import { EddyError } from "../../errors.js";
import { TOOL_DEFAULTS } from "../defaults.js";
import type { ToolError } from "../tool.js";

/** A failure the model caused or can fix: becomes an `ok:false` output with this code and message. */
export function toolFailure(code: "tool_failed" | "tool_input_invalid", message: string): EddyError {
  return new EddyError(code, message, { fault: "model" });
}

/** `error` (from `node:fs`) as a short phrase about `display`, without the absolute path. */
export function describeFsError(error: unknown, display: string): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case "ENOENT":
      return `${display}: no such file or directory`;
    case "EACCES":
    case "EPERM":
      return `${display}: permission denied`;
    case "EISDIR":
      return `${display}: is a directory`;
    case "ENOTDIR":
      return `${display}: not a directory`;
    case "EEXIST":
      return `${display}: already exists`;
    case "ENOSPC":
      return `${display}: no space left on the device`;
    case "EROFS":
      return `${display}: the file system is read-only`;
    case "ELOOP":
      return `${display}: is a symlink, which is not followed here`;
    default:
      return `${display}: ${code ?? "I/O error"}`;
  }
}

/** Rethrows `EddyError`s; turns anything else from `node:fs` into a `tool_failed` naming `display`. */
export function fsFailure(tool: string, error: unknown, display: string): EddyError {
  if (EddyError.isInstance(error)) return error;
  return toolFailure("tool_failed", `${tool}: ${describeFsError(error, display)}`);
}

/** True when the first `TOOL_DEFAULTS.binarySniffBytes` bytes hold a NUL byte (git's binary test). */
export function looksBinary(bytes: Uint8Array): boolean {
  const end = Math.min(bytes.length, TOOL_DEFAULTS.binarySniffBytes);
  return bytes.subarray(0, end).includes(0);
}

/** Globs as the model may send them: one string or a list. */
export type Globs = string | string[] | undefined;

/** JSON Schema of a glob argument: a string or an array of strings. */
export const GLOBS_SCHEMA = {
  anyOf: [{ type: "string" }, { type: "array", items: { type: "string" } }],
} as const;

/**
 * A matcher for workspace-relative paths, or `undefined` when no globs were given. A glob without
 * a `/` matches the base name at any depth (`*.ts` matches `src/a.ts`), as in ripgrep and
 * .gitignore; dot-files match (hidden entries are filtered separately).
 */
export function globMatcher(globs: Globs): ((path: string) => boolean) | undefined {
  const list = (typeof globs === "string" ? [globs] : (globs ?? [])).filter((g) => g !== "");
  if (list.length === 0) return undefined;
  // picomatch's own `basename` option also applies to globs with a `/` (and then never matches
  // them), so the two kinds are split here.
  const full = list.filter((g) => g.includes("/"));
  const base = list.filter((g) => !g.includes("/"));
  // picomatch loads with the first glob, not with every run.
  const glob = createRequire(import.meta.url)("picomatch") as typeof picomatch;
  const matchFull = full.length === 0 ? undefined : glob(full, { dot: true });
  const matchBase = base.length === 0 ? undefined : glob(base, { dot: true });
  return (path) => {
    if (matchFull?.(path)) return true;
    if (matchBase === undefined) return false;
    return matchBase(path.slice(path.lastIndexOf("/") + 1));
  };
}

/**
 * The error of a walk that could not read everything (`ok:false`, the partial output kept): the
 * first few unreadable paths and why. Never `ok:true` with "permission denied" only in stderr.
 */
export function incompleteError(tool: string, problems: readonly string[], what: string): ToolError {
  const shown = problems.slice(0, 3).join("; ");
  const more = problems.length > 3 ? ` and ${problems.length - 3} more` : "";
  return {
    code: "tool_failed",
    message: `${tool}: the ${what} is incomplete: ${shown}${more}. Check the permissions, or give a path that excludes them.`,
  };
}

/** Code-unit order: deterministic and independent of the locale. */
export function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Throws the run's cancellation if `signal` is aborted (checked between files in long walks). */
export function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw new EddyError("cancelled", "the run was cancelled");
}
