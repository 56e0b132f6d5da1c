/**
 * What the approval prompt shows about a call: for `write_file` a unified diff against the file as
 * it is now, for `apply_patch` the change the patch makes to each file (a unified diff from its
 * current content to what the whole patch leaves there, planned by the tool's own `planPatch`; the
 * patch text itself when it does not parse or apply), for `shell` the command
 * line, for anything else the arguments as indented JSON. Diffs come from the `diff` package.
 * Nothing is hidden silently (`visible-lines.ts`): control characters and long blank runs show as
 * markers (`⟨ESC⟩`, `⟨300 spaces⟩`), long lines wrap, a CRLF file's line endings are said in one
 * note instead of a `⟨CR⟩` on every line (`src/util/line-endings.ts`, shared with the viewer's page),
 * a view over `maxLines` says how many lines and characters it leaves out (a shell command is never
 * cut). Configured secrets are masked: this is a terminal, not the model's output, but keys must
 * not show up on a screen share either.
 */
import { createTwoFilesPatch } from "diff";
import type { ApprovalRequest } from "../loop/approvals.js";
import { type FileChange, planPatch } from "../tools/builtin/apply-patch.js";
import { type PatchOperation, parsePatch } from "../tools/builtin/patch-parser.js";
import { resolveInWorkspace, type WorkspacePath, workspaceRoot } from "../tools/workspace.js";
import { openForRead } from "../tools/workspace-fs.js";
import { DIFF_MAX_EDITS } from "../util/diff-bounds.js";
import { diffableEndings, shownEndings } from "../util/line-endings.js";
import { redactSecrets } from "../util/redact.js";
import { kindOf } from "../util/regular-file.js";
import { controlsShown, type Styles } from "./terminal.js";
import { capLines, visibleLines } from "./visible-lines.js";

/** Options of `describeApproval`. */
export interface ApprovalViewOptions {
  /** The run's workspace (diffs read the current files from it). */
  workspace: string;
  styles: Styles;
  /** Values masked in the view. */
  secrets: readonly string[];
  /** @defaultValue 80 */
  maxLines?: number;
}

/** Files larger than this are not read for a diff: the view says how big they are instead. */
const MAX_DIFF_FILE_BYTES = 1024 * 1024;

/** The lines that show what `request` would do (without the question). */
export async function describeApproval(
  request: ApprovalRequest,
  options: ApprovalViewOptions,
): Promise<string[]> {
  const args = (request.args ?? {}) as Record<string, unknown>;
  const shellTool = request.name === "shell" || request.name === "bash";
  // A native `shell_call` runs its `commands` one by one (src/tools/native-calls.ts).
  const commands =
    shellTool && Array.isArray(args.commands) && args.commands.every((c) => typeof c === "string")
      ? (args.commands as string[])
      : undefined;
  const isShell = shellTool && (typeof args.command === "string" || commands !== undefined);
  let body: string[];
  if (request.name === "write_file" && typeof args.path === "string" && typeof args.content === "string") {
    body = await writeFileDiff(args.path, args.content, args.append === true, options.workspace);
  } else if (request.name === "apply_patch" && typeof args.patch === "string") {
    body = await patchDiff(args.patch, options.workspace, request.signal);
  } else if (commands !== undefined) {
    body = commands.map((command) => `$ ${command}`);
  } else if (isShell) {
    body = [`$ ${args.command as string}`];
    if (typeof args.cwd === "string") body.push(`(in ${args.cwd})`);
  } else {
    body = (request.args === undefined ? request.arguments : JSON.stringify(request.args, null, 2)).split(
      "\n",
    );
  }
  // The model's arguments and the files' text are shown, never obeyed by the terminal: each
  // control character as a marker, so nothing an escape sequence encloses is hidden either.
  const masked = body.flatMap((line) => controlsShown(redactSecrets(line, options.secrets)).split("\n"));
  // Nothing that will run is hidden silently: blank runs become markers, long lines wrap, and a
  // view over the cap says how much it leaves out — a shell command is never cut at all.
  const lines = visibleLines(masked);
  const shown = isShell ? lines : capLines(lines, options.maxLines ?? 80);
  return shown.map((line) => colour(line, options.styles));
}

/** `write_file`: the file as it is → as it would be. */
async function writeFileDiff(
  path: string,
  content: string,
  append: boolean,
  workspace: string,
): Promise<string[]> {
  const current = await currentText(path, workspace);
  if (current.kind === "refused") return [`write_file ${path}: ${current.why}`];
  if (current.kind === "unreadable") return [`write_file ${path} (${current.why})`, ...plus(content)];
  const before = current.kind === "file" ? current.text : "";
  const after = append ? before + content : content;
  const from = current.kind === "file" ? path : "/dev/null";
  return unified(from, path, before, after);
}

/**
 * `apply_patch`: one diff per file, from its current content to what the patch leaves there,
 * computed by the tool's own planning (`planPatch`), so chained operations (an Add then an Update
 * of one file, a move onto an existing file) show what will be applied.
 */
async function patchDiff(patch: string, workspace: string, signal: AbortSignal): Promise<string[]> {
  let operations: PatchOperation[];
  try {
    operations = parsePatch(patch);
  } catch (error) {
    return [`(the patch does not parse: ${(error as Error).message})`, ...rawPatch(patch)];
  }
  let changes: FileChange[];
  try {
    changes = (await planPatch(operations, await workspaceRoot(workspace), signal)).changes;
  } catch (error) {
    return [`(the patch will fail: ${(error as Error).message}; the patch:)`, ...rawPatch(patch)];
  }
  return changes.flatMap(changeDiff);
}

/**
 * A patch shown as it is (no diff can be made of it): a CRLF envelope without its CRs and its
 * endings said once, a mixed one with each CR marked, as the viewer's page shows it
 * (src/util/line-endings.ts `shownEndings`, docs/pitfalls.md #122).
 */
function rawPatch(patch: string): string[] {
  const { text, note } = shownEndings(patch);
  const lines = text.split("\n");
  return note === undefined ? lines : [`(the patch: ${note})`, ...lines];
}

/** One planned file change as a diff (a move's destination diffs from the moved file). */
function changeDiff(c: FileChange): string[] {
  if (c.next === null) {
    if (c.original === null) return [];
    if (c.movedTo !== undefined) return [`${c.display}: moved to ${c.movedTo} (removed here)`];
  }
  const source = c.original === null ? c.movedFrom : undefined;
  const before = c.original ?? source?.original ?? null;
  const notes =
    c.original !== null && c.movedFrom !== undefined
      ? [`${c.display} exists: moving ${c.movedFrom.display} onto it replaces its content`]
      : [];
  const from = c.original !== null ? c.display : (source?.display ?? "/dev/null");
  const to = c.next === null ? "/dev/null" : c.display;
  const beforeText = showable(before, "replaces");
  const afterText = c.next === null ? "" : c.next;
  if (typeof beforeText !== "string") return [...notes, `${c.display}: ${beforeText.why}`];
  if (afterText.length > MAX_DIFF_FILE_BYTES)
    return [...notes, `${c.display}: writes ${afterText.length} characters (too large to show a diff)`];
  return [...notes, ...unified(from, to, beforeText, afterText)];
}

/** A file's bytes as text to diff, or why they are not shown. */
function showable(bytes: Buffer | null, verb: string): string | { why: string } {
  if (bytes === null) return "";
  if (bytes.length > MAX_DIFF_FILE_BYTES) return { why: `${verb} a file of ${bytes.length} bytes` };
  if (bytes.subarray(0, 8192).includes(0)) return { why: `${verb} a binary file of ${bytes.length} bytes` };
  return bytes.toString("utf8");
}

type Current =
  | { kind: "file"; text: string }
  | { kind: "missing" }
  | { kind: "refused"; why: string }
  | { kind: "unreadable"; why: string };

/**
 * The current text of a workspace file, for display; never reads outside the workspace. Opened as
 * the tools open what they read (`openForRead`: non-blocking, so a FIFO cannot hang the prompt),
 * and only a regular file is read, at most `MAX_DIFF_FILE_BYTES` of it.
 */
async function currentText(path: string, workspace: string): Promise<Current> {
  let root: string;
  let target: WorkspacePath;
  try {
    root = await workspaceRoot(workspace);
    target = await resolveInWorkspace(root, path, "approval");
    if (!target.exists) return { kind: "missing" };
  } catch (error) {
    return { kind: "refused", why: `${(error as Error).message} (the tool will refuse it)` };
  }
  try {
    const { handle, stats } = await openForRead(root, target.absolute, {
      tool: "approval",
      display: target.display,
    });
    try {
      if (!stats.isFile())
        return { kind: "unreadable", why: `replaces ${kindOf(stats)}, not a regular file` };
      if (stats.size > MAX_DIFF_FILE_BYTES)
        return { kind: "unreadable", why: `replaces a file of ${stats.size} bytes` };
      const buffer = Buffer.alloc(MAX_DIFF_FILE_BYTES + 1);
      let bytesRead = 0;
      while (bytesRead < buffer.length) {
        const n = (await handle.read(buffer, bytesRead, buffer.length - bytesRead, bytesRead)).bytesRead;
        if (n === 0) break;
        bytesRead += n;
      }
      if (bytesRead > MAX_DIFF_FILE_BYTES)
        return { kind: "unreadable", why: `replaces a file of over ${MAX_DIFF_FILE_BYTES} bytes` };
      const bytes = buffer.subarray(0, bytesRead);
      if (bytes.includes(0))
        return { kind: "unreadable", why: `replaces a binary file of ${bytesRead} bytes` };
      return { kind: "file", text: bytes.toString("utf8") };
    } finally {
      await handle.close();
    }
  } catch (error) {
    return { kind: "unreadable", why: (error as NodeJS.ErrnoException).code ?? "cannot be read" };
  }
}

function unified(from: string, to: string, rawBefore: string, rawAfter: string): string[] {
  if (rawBefore === rawAfter) return [`${to}: no change`];
  // A CRLF file diffs by its lines' text, its line endings said once (docs/pitfalls.md #113).
  const { before, after, note } = diffableEndings(rawBefore, rawAfter);
  const notes = note === undefined ? [] : [`(${to === "/dev/null" ? from : to}: ${note})`];
  if (before === after) return [...notes, `${to}: no other change`];
  return [...notes, ...diffLines(from, to, before, after)];
}

function diffLines(from: string, to: string, before: string, after: string): string[] {
  // Against an empty side a diff is linear: only a change between two texts is bounded.
  const bounded = before !== "" && after !== "";
  const patch = createTwoFilesPatch(from, to, before, after, undefined, undefined, {
    context: 3,
    ...(bounded ? { maxEditLength: DIFF_MAX_EDITS } : {}),
  });
  if (patch === undefined)
    return [
      `${to}: replaces ${lineCount(before)} lines with ${lineCount(after)}, too different to show as a diff; what it will hold:`,
      ...plus(after),
    ];
  // Before the ---/+++ headers come an "Index:" line (same names) and a "====" rule: dropped.
  const lines = patch.split("\n");
  const start = lines.findIndex((line) => line.startsWith("--- "));
  return lines.slice(Math.max(0, start)).filter((line, i, all) => !(line === "" && i === all.length - 1));
}

function lineCount(text: string): number {
  return text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
}

function plus(content: string): string[] {
  return content.split("\n").map((l) => `+${l}`);
}

function colour(line: string, styles: Styles): string {
  if (line.startsWith("+++") || line.startsWith("---")) return styles.bold(line);
  if (line.startsWith("@@")) return styles.cyan(line);
  if (line.startsWith("+")) return styles.green(line);
  if (line.startsWith("-")) return styles.red(line);
  if (line.startsWith("\\")) return styles.dim(line);
  return line;
}
