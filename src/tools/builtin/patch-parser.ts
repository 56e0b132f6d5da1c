/**
 * Parser for the Codex patch envelope the `apply_patch` tool takes:
 *
 * ```
 * *** Begin Patch
 * *** Add File: path        then lines starting with "+"
 * *** Delete File: path
 * *** Update File: path
 * *** Move to: new/path     (optional)
 * @@ optional context line  then hunk lines starting with " ", "-" or "+"
 * *** End of File           (optional: the hunk must match at the end of the file)
 * *** End Patch
 * ```
 *
 * Like Codex, the first hunk of an update may omit its `@@` line, an empty line inside a hunk is an
 * empty context line, and a heredoc wrapper (`<<'EOF'` … `EOF`) around the envelope is ignored.
 * Pure: text in, operations out; errors name the patch line.
 */

/** One hunk of an `*** Update File:` operation. */
export interface UpdateChunk {
  /** The text after `@@`, if any: a line to find first, to place the hunk. */
  context?: string;
  /** Context and `-` lines, in order: what must be in the file. */
  oldLines: string[];
  /** Context and `+` lines, in order: what replaces them. */
  newLines: string[];
  /** `*** End of File` followed the hunk: match it at the end of the file. */
  endOfFile: boolean;
  /** 1-based line of the patch where the hunk starts (for messages). */
  patchLine: number;
}

/** A file operation of a patch. */
export type PatchOperation =
  | { kind: "add"; path: string; contents: string }
  | { kind: "delete"; path: string }
  | { kind: "update"; path: string; moveTo?: string; chunks: UpdateChunk[] };

/** A patch that does not follow the envelope grammar. `message` says where and what was expected. */
export class PatchSyntaxError extends Error {
  override readonly name = "PatchSyntaxError";
}

const BEGIN = "*** Begin Patch";
const END = "*** End Patch";
const ADD = "*** Add File: ";
const DELETE = "*** Delete File: ";
const UPDATE = "*** Update File: ";
const MOVE = "*** Move to: ";
const EOF_MARKER = "*** End of File";

/** Parses a patch into its operations, in order. Throws `PatchSyntaxError`. */
export function parsePatch(patch: string): PatchOperation[] {
  const lines = unwrapHeredoc(patch.trim().split(/\r?\n/));
  if (lines[0]?.trim() !== BEGIN) {
    throw new PatchSyntaxError(`the first line must be "${BEGIN}" (got ${quote(lines[0] ?? "")})`);
  }
  const last = lines.length - 1;
  if (last < 1 || lines[last]?.trim() !== END) {
    throw new PatchSyntaxError(`the last line must be "${END}" (got ${quote(lines[last] ?? "")})`);
  }
  const ops: PatchOperation[] = [];
  let i = 1;
  while (i < last) {
    const line = lines[i] ?? "";
    if (line.startsWith(ADD)) {
      const path = filePath(line, ADD, i);
      i++;
      const content: string[] = [];
      while (i < last && !isHeader(lines[i] ?? "")) {
        const l = lines[i] ?? "";
        if (!l.startsWith("+")) {
          throw new PatchSyntaxError(
            `line ${i + 1}: in "*** Add File: ${path}" every line must start with "+" (got ${quote(l)})`,
          );
        }
        content.push(l.slice(1));
        i++;
      }
      ops.push({ kind: "add", path, contents: content.length === 0 ? "" : `${content.join("\n")}\n` });
    } else if (line.startsWith(DELETE)) {
      ops.push({ kind: "delete", path: filePath(line, DELETE, i) });
      i++;
    } else if (line.startsWith(UPDATE)) {
      const path = filePath(line, UPDATE, i);
      i++;
      let moveTo: string | undefined;
      if ((lines[i] ?? "").startsWith(MOVE)) {
        moveTo = filePath(lines[i] ?? "", MOVE, i);
        i++;
      }
      const chunks: UpdateChunk[] = [];
      while (i < last && !isHeader(lines[i] ?? "")) {
        const parsed = parseChunk(lines, i, last, path, chunks.length === 0);
        chunks.push(parsed.chunk);
        i = parsed.next;
      }
      if (chunks.length === 0 && moveTo === undefined) {
        throw new PatchSyntaxError(
          `line ${i}: "*** Update File: ${path}" has no hunks (add "@@" hunks with the changes)`,
        );
      }
      ops.push(
        moveTo === undefined ? { kind: "update", path, chunks } : { kind: "update", path, moveTo, chunks },
      );
    } else if (line.trim() === "") {
      i++;
    } else {
      throw new PatchSyntaxError(
        `line ${i + 1}: expected "*** Add File: ", "*** Update File: " or "*** Delete File: ", got ${quote(line)}`,
      );
    }
  }
  if (ops.length === 0) throw new PatchSyntaxError("the patch contains no file operations");
  return ops;
}

function parseChunk(
  lines: string[],
  start: number,
  last: number,
  path: string,
  first: boolean,
): { chunk: UpdateChunk; next: number } {
  let i = start;
  const header = lines[i] ?? "";
  const chunk: UpdateChunk = { oldLines: [], newLines: [], endOfFile: false, patchLine: i + 1 };
  if (header.startsWith("@@")) {
    const context = header.slice(2).trim();
    if (context !== "") chunk.context = context;
    i++;
  } else if (!first) {
    throw new PatchSyntaxError(
      `line ${i + 1}: expected "@@" to start the next hunk of ${path}, got ${quote(header)}`,
    );
  }
  let changes = 0;
  while (i < last) {
    const l = lines[i] ?? "";
    if (l.trim() === EOF_MARKER) {
      chunk.endOfFile = true;
      i++;
      break;
    }
    if (l.startsWith("@@") || isHeader(l)) break;
    const marker = l[0];
    const text = l.slice(1);
    if (l === "" || marker === " ") {
      chunk.oldLines.push(text);
      chunk.newLines.push(text);
    } else if (marker === "-") {
      chunk.oldLines.push(text);
      changes++;
    } else if (marker === "+") {
      chunk.newLines.push(text);
      changes++;
    } else {
      throw new PatchSyntaxError(
        `line ${i + 1}: unexpected line in a hunk of ${path}: ${quote(l)} (hunk lines start with " ", "-" or "+")`,
      );
    }
    i++;
  }
  if (chunk.oldLines.length === 0 && chunk.newLines.length === 0) {
    throw new PatchSyntaxError(`line ${chunk.patchLine}: empty hunk in ${path}`);
  }
  if (changes === 0) {
    throw new PatchSyntaxError(`line ${chunk.patchLine}: a hunk of ${path} has no "-" or "+" lines`);
  }
  return { chunk, next: i };
}

/** A file-operation header (the `*** End of File` marker is part of a hunk, not a header). */
function isHeader(line: string): boolean {
  return line.startsWith(ADD) || line.startsWith(DELETE) || line.startsWith(UPDATE) || line.startsWith(MOVE);
}

function filePath(line: string, prefix: string, index: number): string {
  const path = line.slice(prefix.length).trim();
  if (path === "") throw new PatchSyntaxError(`line ${index + 1}: "${prefix.trim()}" needs a path`);
  return path;
}

function unwrapHeredoc(lines: string[]): string[] {
  const first = lines[0]?.trim() ?? "";
  const last = lines[lines.length - 1]?.trim() ?? "";
  if (/^(?:apply_patch\s+)?<<\s*['"]?EOF['"]?$/.test(first) && last === "EOF") {
    return lines.slice(1, -1).map((l, i, all) => (i === 0 || i === all.length - 1 ? l.trim() : l));
  }
  return lines;
}

function quote(line: string): string {
  return JSON.stringify(line.length > 120 ? `${line.slice(0, 120)}…` : line);
}
