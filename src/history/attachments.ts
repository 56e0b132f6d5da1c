/**
 * Images and files in the first user message: each attachment becomes an `input_image` or
 * `input_file` content part (spec `InputImageContentParamAutoParam`, `InputFileContentParam`). A
 * URL is passed as is (`image_url`, `file_url`); a local file is read and sent inline as a base64
 * data URL whose MIME type comes from the content, not the name: `file-type` (magic numbers of a
 * few hundred formats, maintained, no native code) reads it, and text it does not know (it only
 * knows binary formats) is `text/plain` when it is valid UTF-8, refined by extension for the
 * common text types. Inline data is bounded by the spec's own limits (`image_url` ≤ 20 MiB,
 * `file_data` ≤ 32 MiB of characters, base64 included): a file over them is refused with a
 * clear error before anything is sent.
 */
import { basename, extname } from "node:path";
import { EddyError } from "../errors.js";
import { INPUT_FILE_DATA_MAX_LENGTH, INPUT_IMAGE_URL_MAX_LENGTH } from "../protocol/generated/enums.js";
import type { JsonObject } from "../protocol/types.js";
import { importPackage } from "../util/import-package.js";
import { readRegularFileSync } from "../util/regular-file.js";

/** What to attach: an image or a file, by local path or URL. */
export interface Attachment {
  kind: "image" | "file";
  /** A path (relative to `cwd`) or an `http(s)://` / `data:` URL. */
  source: string;
}

/** Text types known by extension, for text content `file-type` does not identify. */
const TEXT_TYPES: Readonly<Record<string, string>> = {
  ".md": "text/markdown",
  ".csv": "text/csv",
  ".json": "application/json",
  ".html": "text/html",
  ".htm": "text/html",
  ".xml": "application/xml",
  ".yaml": "application/yaml",
  ".yml": "application/yaml",
};

/** Bytes of raw data whose base64 data URL fits in `maxChars` with room for its header. */
function maxBytesFor(maxChars: number): number {
  return Math.floor((maxChars - 128) / 4) * 3;
}

/** The largest local image that can be sent inline, in bytes. */
export const MAX_INLINE_IMAGE_BYTES = maxBytesFor(INPUT_IMAGE_URL_MAX_LENGTH);
/** The largest local file that can be sent inline, in bytes. */
export const MAX_INLINE_FILE_BYTES = maxBytesFor(INPUT_FILE_DATA_MAX_LENGTH);

/**
 * The content part for one attachment. Throws `invalid_argument` (a usage error) for a missing or
 * unreadable file, a file over the size limit, or an `--image` that is not an image.
 */
export async function attachmentPart(attachment: Attachment, cwd = "."): Promise<JsonObject> {
  const { kind, source } = attachment;
  const flag = kind === "image" ? "--image" : "--file";
  if (/^https?:\/\//i.test(source)) {
    if (kind === "image") return { type: "input_image", image_url: source };
    const name = basename(new URL(source).pathname);
    return { type: "input_file", ...(name === "" ? {} : { filename: name }), file_url: source };
  }
  if (/^data:/i.test(source)) {
    return kind === "image"
      ? { type: "input_image", image_url: source }
      : { type: "input_file", file_data: source };
  }
  const bytes = readLocal(
    source,
    cwd,
    flag,
    kind === "image" ? MAX_INLINE_IMAGE_BYTES : MAX_INLINE_FILE_BYTES,
  );
  const mime = await mimeTypeOf(bytes, source);
  if (kind === "image" && !mime.startsWith("image/")) {
    throw usage(`${flag} ${source}: the content is ${mime}, not an image (attach it with --file instead)`);
  }
  const dataUrl = `data:${mime};base64,${bytes.toString("base64")}`;
  if (kind === "image") return { type: "input_image", image_url: dataUrl };
  return { type: "input_file", filename: basename(source), file_data: dataUrl };
}

/** A user message: the text, then the attachments' parts in order. */
export async function userMessageWithAttachments(
  text: string,
  attachments: readonly Attachment[],
  cwd = ".",
): Promise<JsonObject> {
  const parts: JsonObject[] = [{ type: "input_text", text }];
  for (const a of attachments) parts.push(await attachmentPart(a, cwd));
  return { type: "message", role: "user", content: parts };
}

/** The MIME type of `bytes` from its content (see the module comment). */
export async function mimeTypeOf(bytes: Uint8Array, name = ""): Promise<string> {
  // file-type loads with the first attachment, not with every run.
  const { fileTypeFromBuffer } = await importPackage<typeof import("file-type")>("file-type");
  const detected = await fileTypeFromBuffer(bytes);
  if (detected !== undefined) return detected.mime;
  if (isUtf8Text(bytes)) return TEXT_TYPES[extname(name).toLowerCase()] ?? "text/plain";
  return "application/octet-stream";
}

function isUtf8Text(bytes: Uint8Array): boolean {
  if (bytes.includes(0)) return false;
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

function readLocal(source: string, cwd: string, flag: string, maxBytes: number): Buffer {
  return readRegularFileSync(source.startsWith("/") ? source : `${cwd}/${source}`, {
    what: flag,
    name: source,
    maxBytes,
    limitReason: "the spec's limit on inline (base64) data: give a URL instead",
  });
}

function usage(message: string): EddyError {
  return new EddyError("invalid_argument", message, { fault: "user" });
}
