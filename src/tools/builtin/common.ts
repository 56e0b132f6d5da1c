/**
 * Small helpers shared by the built-in tools: typed failures, file-system error messages, binary
 * sniffing and glob matching. Nothing here touches a path the workspace check has not approved.
 */
import { createRequire } from "node:module";
import type picomatch from "picomatch";
import type * as Re2js from "re2js";
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
 * .gitignore; dot-files match (hidden entries are filtered separately). Throws `tool_input_invalid`
 * (naming `tool`) for a glob whose matching could take unbounded time (see `compileGlob`).
 */
export function globMatcher(globs: Globs, tool: string): ((path: string) => boolean) | undefined {
  const list = (typeof globs === "string" ? [globs] : (globs ?? [])).filter((g) => g !== "");
  if (list.length === 0) return undefined;
  // picomatch's own `basename` option also applies to globs with a `/` (and then never matches
  // them), so the two kinds are split here.
  const full = list.filter((g) => g.includes("/")).map((g) => compileGlob(g, tool));
  const base = list.filter((g) => !g.includes("/")).map((g) => compileGlob(g, tool));
  return (path) => {
    if (full.some((match) => match(path))) return true;
    if (base.length === 0) return false;
    const name = path.slice(path.lastIndexOf("/") + 1);
    return base.some((match) => match(name));
  };
}

/** Most `*` wildcards a glob that picomatch runs (one with `[ ] { } ( ) ! + @ \\`) may hold. */
export const MAX_GLOB_STARS = 3;
/** A glob of literal characters, `?`, `*` and `**` segments only: matched in linear time. */
const PLAIN_GLOB = /^[^[\]{}()!+@\\]*$/;

/**
 * One glob as a matcher. picomatch turns a glob into a backtracking regular expression, which
 * on the main thread (list_dir) can run for hours: `*?` ×22 + `*Q` over 45-character names, or
 * `*a` ×12 + `*b` over a name of 64 `a`s (docs/pitfalls.md #79). So a run of `*` and `?` is first
 * rewritten to its equivalent `?…?*`; a plain glob (literals, `?`, `*`, `**`) is then translated to
 * RE2 syntax and run by re2js, in linear time; any other glob goes to picomatch, refused when it
 * holds more than `MAX_GLOB_STARS` `*` wildcards.
 */
function compileGlob(raw: string, tool: string): (path: string) => boolean {
  const glob = raw.includes("\\") || raw.includes("[") ? raw : collapseWildcards(raw);
  if (PLAIN_GLOB.test(glob) && !glob.split("/").some((seg) => seg === "" || seg === "." || seg === "..")) {
    return plainGlob(glob);
  }
  const stars = glob.match(/\*+/g)?.length ?? 0;
  if (stars > MAX_GLOB_STARS) {
    throw toolFailure(
      "tool_input_invalid",
      `${tool}: the glob ${JSON.stringify(raw)} has ${stars} * wildcards and uses [ ] { } ( ) ! + @ or \\; such a glob may have at most ${MAX_GLOB_STARS} (its matching time grows with each): simplify it, or split it into several globs`,
    );
  }
  // picomatch loads with the first such glob, not with every run.
  const picomatchOf = createRequire(import.meta.url)("picomatch") as typeof picomatch;
  return picomatchOf(glob, { dot: true });
}

/** Each run of `*` and `?` holding a `*` (not a `**` segment) as its equivalent: its `?`s, then one `*`. */
function collapseWildcards(glob: string): string {
  return glob
    .split("/")
    .map((seg) =>
      seg === "**" ? seg : seg.replace(/[*?]*\*[*?]*/g, (run) => `${"?".repeat(run.split("?").length - 1)}*`),
    )
    .join("/");
}

/**
 * A plain glob as an RE2 expression, matched whole: `?` one character but `/`, `*` any run of them,
 * a `**` segment any number of whole segments (`**\/x` also matches `x`, `a/**` also `a`).
 */
function plainGlob(glob: string): (path: string) => boolean {
  // `**/**` is one `**`.
  const segments = glob.split("/").filter((seg, i, all) => !(seg === "**" && all[i - 1] === "**"));
  let source = "";
  segments.forEach((seg, i) => {
    const last = i === segments.length - 1;
    if (seg === "**") {
      if (segments.length === 1) source += ".*";
      else if (last) source += "(?:/.*)?";
      else source += i === 0 ? "(?:.*/)?" : "/(?:.*/)?";
      return;
    }
    if (i > 0 && segments[i - 1] !== "**") source += "/";
    source += seg.replace(/[*?]|[^*?]+/g, (part) =>
      part === "*" ? "[^/]*" : part === "?" ? "[^/]" : part.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&"),
    );
  });
  const { RE2JS } = createRequire(import.meta.url)("re2js") as typeof Re2js;
  const re = RE2JS.compile(`^(?:${source})$`, RE2JS.DOTALL);
  return (path) => re.matches(path);
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
