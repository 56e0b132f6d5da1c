/**
 * The search behind `grep`, run in a worker thread (`tools-worker.ts`) so that a long or
 * CPU-heavy search never blocks the run's event loop and cancellation can stop it outright.
 * Files are streamed in chunks (memory: one chunk plus the longest line), binary files are
 * skipped after a NUL sniff of their first chunk, and the search stops at `maxResults`. The walk
 * (`walk.ts`) and every file open are anchored to checked directory descriptors
 * (`workspace-fs.ts`). Files are read with blocking calls: in the worker they block nobody, and
 * for a tree of small files a thread-pool round trip per call costs more than the call itself.
 */
import { closeSync, fstatSync, readSync } from "node:fs";
import { TOOL_DEFAULTS } from "../defaults.js";
import { shortenText } from "../utf8.js";
import { type AnchoredDir, anchorDir, openChildFileSync, openForRead } from "../workspace-fs.js";
import { describeFsError, type Globs, globMatcher, looksBinary } from "./common.js";
import { compileScanner, countNewlines, type LineScanner, type PatternSpec } from "./grep-matcher.js";
import { walkRules } from "./ignore-rules.js";
import { walk } from "./walk.js";

/** One search, as the tool hands it to the worker (plain data). */
export interface GrepRequest extends PatternSpec {
  /** Real path of the workspace root. */
  root: string;
  /** The file or directory to search: its checked real path and its workspace-relative display. */
  target: { absolute: string; display: string };
  include: Globs;
  maxResults: number;
  includeIgnored: boolean;
}

/** What a search found. */
export interface GrepOutcome {
  /** `path:line:text` lines, in walk order. */
  results: string[];
  searched: number;
  binary: number;
  large: number;
  /** False when it stopped at `maxResults` with more matches left. */
  complete: boolean;
  /** Files and directories that could not be read, each with the reason. */
  unreadable: string[];
  /** Entries skipped on the way (a name that is not valid UTF-8), each with the reason. */
  skipped: string[];
  /** The target is neither a regular file nor a directory. */
  special?: true;
}

/** Bytes read from a file at a time. */
const CHUNK_BYTES = 256 * 1024;

/** Runs one search. Throws (an `EddyError` or a `node:fs` error) only when the target cannot be opened. */
export async function searchWorkspace(request: GrepRequest, signal: AbortSignal): Promise<GrepOutcome> {
  const scanner = compileScanner(request);
  const outcome: GrepOutcome = {
    results: [],
    searched: 0,
    binary: 0,
    large: 0,
    complete: true,
    unreadable: [],
    skipped: [],
  };
  const { display } = request.target;
  const opened = await openForRead(request.root, request.target.absolute, { tool: "grep", display });
  const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
  const search = (fd: number, size: number, path: string) =>
    searchFile({ fd, size, display: path, scanner, chunk, outcome, maxResults: request.maxResults });

  if (!opened.stats.isDirectory()) {
    try {
      if (!opened.stats.isFile()) return { ...outcome, special: true };
      if (opened.stats.size > TOOL_DEFAULTS.grepMaxFileBytes) outcome.large++;
      else search(opened.handle.fd, opened.stats.size, display);
      return outcome;
    } finally {
      await opened.handle.close();
    }
  }

  const start: AnchoredDir = anchorDir(opened);
  try {
    const include = globMatcher(request.include, "grep");
    for await (const entry of walk(start, display, {
      maxDepth: Number.POSITIVE_INFINITY,
      includeHidden: false,
      ignore: await walkRules(request.root, display, request.includeIgnored, "grep"),
      signal,
      onError: (message) => outcome.unreadable.push(message),
      onSkip: (message) => outcome.skipped.push(message),
    })) {
      if (entry.kind !== "file" || (include !== undefined && !include(entry.display))) continue;
      let fd: number;
      try {
        fd = openChildFileSync(entry.parent, entry.name);
      } catch (error) {
        outcome.unreadable.push(`cannot read ${describeFsError(error, entry.display)}`);
        continue;
      }
      try {
        const stats = fstatSync(fd);
        if (!stats.isFile()) continue; // swapped for something else since it was listed
        if (stats.size > TOOL_DEFAULTS.grepMaxFileBytes) {
          outcome.large++;
          continue;
        }
        search(fd, stats.size, entry.display);
      } catch (error) {
        outcome.unreadable.push(`cannot read ${describeFsError(error, entry.display)}`);
      } finally {
        closeSync(fd);
      }
      if (!outcome.complete) break;
    }
  } finally {
    await start.close();
  }
  return outcome;
}

interface FileSearch {
  fd: number;
  size: number;
  display: string;
  scanner: LineScanner;
  /** Reused read buffer. */
  chunk: Buffer;
  outcome: GrepOutcome;
  maxResults: number;
}

/** Streams one file through the scanner, block by block of whole lines (reading up to its size). */
function searchFile(s: FileSearch): void {
  const { outcome } = s;
  let line = 1; // number of the first line of the next block
  let offset = 0;
  let carry: Buffer[] = []; // the start of a line that continues in the next chunk
  let first = true;
  const onLine = (index: number, text: string): boolean => {
    if (outcome.results.length === s.maxResults) {
      outcome.complete = false;
      return false;
    }
    outcome.results.push(`${s.display}:${line + index}:${shortenText(text, TOOL_DEFAULTS.grepMaxLineChars)}`);
    return true;
  };
  while (offset < s.size) {
    const bytesRead = readSync(s.fd, s.chunk, 0, s.chunk.length, null);
    if (bytesRead === 0) break;
    offset += bytesRead;
    const data = s.chunk.subarray(0, bytesRead);
    if (first) {
      first = false;
      if (looksBinary(data)) {
        outcome.binary++;
        return;
      }
      outcome.searched++;
    }
    const lastNewline = data.lastIndexOf(0x0a);
    if (lastNewline === -1) {
      carry.push(Buffer.from(data));
      continue;
    }
    const head = data.subarray(0, lastNewline + 1);
    const block = carry.length === 0 ? head : Buffer.concat([...carry, head]);
    carry = lastNewline + 1 < bytesRead ? [Buffer.from(data.subarray(lastNewline + 1))] : [];
    if (!s.scanner.scan(block, onLine)) return;
    // Line numbers are only needed again if more of the file follows.
    if (offset < s.size || carry.length > 0) line += countNewlines(block);
  }
  if (first) outcome.searched++; // an empty file
  if (carry.length > 0) s.scanner.scan(Buffer.concat(carry), onLine);
}
