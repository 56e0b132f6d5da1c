/**
 * `read_file {path, start_line?, end_line?, max_bytes?}`: a 1-based inclusive line range of a text
 * file, capped in bytes on a line boundary, with a note that says where to continue. Reads in
 * chunks, so a huge file costs a scan, never its size in memory. Refuses directories and binary
 * files (a NUL byte in the first 8 KiB, or in the text it would return) — except images (PNG,
 * JPEG, GIF, WebP, told by their content through `file-type`), which are shown to the model as an
 * image where the provider takes images in tool output, and described in a note where not.
 */
import type { FileHandle } from "node:fs/promises";
import { INPUT_IMAGE_URL_MAX_LENGTH } from "../../protocol/generated/enums.js";
import { importPackage } from "../../util/import-package.js";
import { TOOL_DEFAULTS } from "../defaults.js";
import { type ToolContext, type ToolDefinition, type ToolResult, toolResult } from "../tool.js";
import { utf8Head } from "../utf8.js";
import { resolveInWorkspace, workspaceRoot } from "../workspace.js";
import { openForRead } from "../workspace-fs.js";
import { fsFailure, looksBinary, throwIfAborted, toolFailure } from "./common.js";

/** Arguments of `read_file`. */
export interface ReadFileArgs {
  path: string;
  start_line?: number;
  end_line?: number;
  max_bytes?: number;
}

const CHUNK_BYTES = 64 * 1024;

/** The `read_file` tool. */
export const readFileTool: ToolDefinition<ReadFileArgs> = {
  name: "read_file",
  readOnly: true,
  description:
    "Read a text file in the workspace. Returns the file's lines start_line..end_line (1-based, inclusive) as they are, " +
    `up to max_bytes (default ${TOOL_DEFAULTS.readMaxBytes}); when it stops early, stderr says which start_line to continue from. ` +
    "Artifacts give total_lines. Refuses directories (use list_dir) and binary files.",
  parameters: {
    type: "object",
    properties: {
      path: { type: "string", description: "File path relative to the workspace root." },
      start_line: { type: "integer", minimum: 1, description: "First line to return (1-based). Default 1." },
      end_line: {
        type: "integer",
        minimum: 1,
        description: "Last line to return (1-based, inclusive). Default: the end of the file.",
      },
      max_bytes: {
        type: "integer",
        minimum: 1,
        maximum: TOOL_DEFAULTS.readMaxBytesLimit,
        description: `Most bytes to return. Default ${TOOL_DEFAULTS.readMaxBytes}.`,
      },
    },
    required: ["path"],
    additionalProperties: false,
  },
  truncationHint: "read a smaller range with start_line/end_line",
  async execute(args, context) {
    const { workspace, signal } = context;
    const startLine = args.start_line ?? 1;
    const endLine = args.end_line ?? Number.POSITIVE_INFINITY;
    if (endLine < startLine) {
      throw toolFailure(
        "tool_input_invalid",
        `read_file: end_line (${endLine}) is before start_line (${startLine})`,
      );
    }
    const maxBytes = args.max_bytes ?? TOOL_DEFAULTS.readMaxBytes;
    const root = await workspaceRoot(workspace);
    const target = await resolveInWorkspace(root, args.path, "read_file");
    let handle: FileHandle;
    try {
      // Opened (non-blocking, so a FIFO cannot hang it) and then checked: the file read is the file
      // whose real path was checked, whatever is swapped in at that path meanwhile.
      const opened = await openForRead(root, target.absolute, { tool: "read_file", display: target.display });
      handle = opened.handle;
      if (!opened.stats.isFile()) {
        await handle.close();
        throw toolFailure(
          "tool_failed",
          opened.stats.isDirectory()
            ? `read_file: ${target.display} is a directory; use list_dir to see its entries`
            : `read_file: ${target.display} is not a regular file`,
        );
      }
    } catch (error) {
      throw fsFailure("read_file", error, target.display);
    }
    try {
      const scan = await scanLines(handle, { startLine, endLine, maxBytes, signal });
      if (scan.binary) {
        const image = await imageResult(handle, target.display, context);
        if (image !== undefined) return image;
        throw toolFailure(
          "tool_failed",
          `read_file: ${target.display} looks like a binary file (it contains NUL bytes); read_file only reads text files`,
        );
      }
      if (startLine > Math.max(scan.totalLines, 1)) {
        throw toolFailure(
          "tool_input_invalid",
          `read_file: start_line ${startLine} is past the end of ${target.display} (${scan.totalLines} lines)`,
        );
      }
      const text = Buffer.concat(scan.chunks);
      // A cut first line counts as shown (partly); otherwise the last whole line returned.
      const shownEnd = scan.lineCut
        ? startLine
        : scan.truncated
          ? scan.lastLine
          : Math.min(endLine, scan.totalLines);
      let stderr = "";
      if (scan.truncated) {
        stderr = scan.lineCut
          ? `read_file: line ${startLine} alone is longer than max_bytes (${maxBytes}); showing its first ${text.length} bytes.`
          : `read_file: stopped at max_bytes (${maxBytes}) after line ${scan.lastLine} of ${scan.totalLines}; call read_file with start_line=${scan.lastLine + 1} to continue.`;
      }
      return toolResult({
        ok: true,
        stdout: text.toString("utf8"),
        stderr,
        artifacts: {
          path: target.display,
          bytes: text.length,
          total_lines: scan.totalLines,
          start_line: startLine,
          end_line: shownEnd,
          truncated: scan.truncated,
        },
      });
    } catch (error) {
      throw fsFailure("read_file", error, target.display);
    } finally {
      await handle.close();
    }
  },
};

/** Image types a model takes (`input_image`). */
const IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

/** The largest image shown inline: its base64 data URL must fit the spec's `image_url` limit. */
const MAX_IMAGE_BYTES = Math.floor((INPUT_IMAGE_URL_MAX_LENGTH - 128) / 4) * 3;

/** For an image file, the answer: the image itself where the provider takes it, else a note. */
async function imageResult(
  handle: FileHandle,
  display: string,
  context: ToolContext,
): Promise<ToolResult | undefined> {
  const { size } = await handle.stat();
  const head = Buffer.alloc(Math.min(size, 4100));
  await handle.read(head, 0, head.length, 0);
  // file-type loads with the first binary file, not with every read.
  const { fileTypeFromBuffer } = await importPackage<typeof import("file-type")>("file-type");
  const mime = (await fileTypeFromBuffer(head))?.mime;
  if (mime === undefined || !IMAGE_TYPES.has(mime)) return undefined;
  const artifacts = { path: display, mime_type: mime, bytes: size };
  const what = `${display} is an image (${mime}, ${size} bytes)`;
  if (context.imagesInOutput !== true) {
    return toolResult({
      ok: true,
      stdout: `${what}. This provider cannot take images in tool output, so it is not shown.`,
      artifacts,
    });
  }
  if (size > MAX_IMAGE_BYTES) {
    throw toolFailure(
      "tool_failed",
      `read_file: ${what}, too large to show (at most ${MAX_IMAGE_BYTES} bytes)`,
    );
  }
  const bytes = Buffer.alloc(size);
  await handle.read(bytes, 0, size, 0);
  return toolResult({
    ok: true,
    stdout: `${what}; it is shown below.`,
    artifacts,
    imageUrl: `data:${mime};base64,${bytes.toString("base64")}`,
  });
}

interface ScanOptions {
  startLine: number;
  endLine: number;
  maxBytes: number;
  signal: AbortSignal;
}

interface Scan {
  chunks: Buffer[];
  totalLines: number;
  /** Last whole line returned (startLine - 1 when none). */
  lastLine: number;
  truncated: boolean;
  /** The first requested line did not fit and was cut. */
  lineCut: boolean;
  binary: boolean;
}

/**
 * One pass over the file: collects the requested lines (whole lines while they fit in maxBytes),
 * counts all lines, and sniffs for NUL bytes.
 */
async function scanLines(handle: FileHandle, o: ScanOptions): Promise<Scan> {
  const scan: Scan = {
    chunks: [],
    totalLines: 0,
    lastLine: o.startLine - 1,
    truncated: false,
    lineCut: false,
    binary: false,
  };
  let collected = 0;
  let line = 1; // number of the line the next byte belongs to
  let pending: Buffer[] = []; // parts of the current in-range line
  let pendingBytes = 0;
  let sawBytes = false;
  let lastByteWasNewline = false;
  let first = true;
  const buffer = Buffer.allocUnsafe(CHUNK_BYTES);

  const completeLine = () => {
    if (line >= o.startLine && line <= o.endLine && !scan.truncated) {
      if (collected + pendingBytes <= o.maxBytes) {
        scan.chunks.push(...pending);
        collected += pendingBytes;
        scan.lastLine = line;
      } else {
        scan.truncated = true;
        if (collected === 0) {
          scan.chunks.push(Buffer.from(utf8Head(Buffer.concat(pending), o.maxBytes), "utf8"));
          scan.lineCut = true;
        }
      }
    }
    pending = [];
    pendingBytes = 0;
  };

  for (;;) {
    throwIfAborted(o.signal);
    const { bytesRead } = await handle.read(buffer, 0, CHUNK_BYTES, null);
    if (bytesRead === 0) break;
    const chunk = buffer.subarray(0, bytesRead);
    if (first && looksBinary(chunk)) return { ...scan, binary: true };
    first = false;
    sawBytes = true;
    lastByteWasNewline = chunk[bytesRead - 1] === 0x0a;
    let pos = 0;
    while (pos < chunk.length) {
      const nl = chunk.indexOf(0x0a, pos);
      const end = nl === -1 ? chunk.length : nl + 1;
      const wanted = line >= o.startLine && line <= o.endLine && !scan.truncated;
      if (wanted) {
        const part = chunk.subarray(pos, end);
        if (part.includes(0)) return { ...scan, binary: true };
        // Keep at most maxBytes + 1 of one line: enough to know it does not fit.
        if (pendingBytes <= o.maxBytes) {
          pending.push(Buffer.from(part));
          pendingBytes += part.length;
        }
      }
      if (nl === -1) break;
      completeLine();
      line++;
      pos = end;
    }
  }
  if (sawBytes && !lastByteWasNewline) completeLine();
  scan.totalLines = !sawBytes ? 0 : lastByteWasNewline ? line - 1 : line;
  return scan;
}
