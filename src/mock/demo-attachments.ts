/**
 * What the demo model can tell about the images and files of a user message without looking at
 * them: for an `input_image` given as a data URL, its MIME type, size in bytes and pixel
 * dimensions (read from the header by `image-size`, which also tells the real format when it
 * differs from the declared one); for an `input_file`, its name, MIME type and size. A part given
 * by URL is not downloaded (the mock never reaches the network): the answer says so.
 */
import { imageSize } from "image-size";

/** A content part of a user message, as the demo model reads it. */
export type AttachmentPart =
  | { type: "input_image"; image_url?: string | null }
  | { type: "input_file"; filename?: string | null; file_data?: string | null; file_url?: string | null };

/** The decoded payload of a data URL (or of bare base64, which `file_data` may be). */
interface Payload {
  mime: string | undefined;
  bytes: Uint8Array;
}

/** One sentence per image or file part (empty when the message has none). */
export function describeAttachments(parts: readonly unknown[]): string[] {
  const out: string[] = [];
  for (const part of parts) {
    if (part === null || typeof part !== "object") continue;
    const p = part as AttachmentPart;
    if (p.type === "input_image") out.push(describeImage(p.image_url ?? undefined));
    if (p.type === "input_file") out.push(describeFile(p));
  }
  return out;
}

function describeImage(url: string | undefined): string {
  if (url === undefined || url === "") return "an image given by id, which I cannot open";
  const payload = decodeDataUrl(url);
  if (payload === undefined) return `an image at ${clip(url)} (not downloaded: I work offline)`;
  const facts = [payload.mime ?? "no MIME type given", bytes(payload.bytes.length)];
  try {
    const size = imageSize(payload.bytes);
    facts.push(`${size.width}×${size.height} pixels`);
    const actual = size.type === undefined ? undefined : mimeOf(size.type);
    if (actual !== undefined && payload.mime !== undefined && actual !== payload.mime) {
      facts.push(`though the content is ${actual}`);
    }
  } catch {
    facts.push("dimensions unreadable (not an image format I know)");
  }
  return `an image: ${facts.join(", ")}`;
}

function describeFile(part: Extract<AttachmentPart, { type: "input_file" }>): string {
  const name = part.filename ? `\`${part.filename}\`` : "without a name";
  if (part.file_data) {
    const payload = decodeDataUrl(part.file_data) ?? decodeBase64(part.file_data);
    const type = payload.mime ?? "no MIME type given";
    const content = describeContent(payload);
    return `a file ${name}: ${type}, ${bytes(payload.bytes.length)}${content === undefined ? "" : `, ${content}`}`;
  }
  if (part.file_url) return `a file ${name} at ${clip(part.file_url)} (not downloaded: I work offline)`;
  return `a file ${name} with no content`;
}

/** What a file's bytes show without a model: a PDF's version and page count, a text's lines and first line. */
function describeContent({ mime, bytes: data }: Payload): string | undefined {
  const buffer = Buffer.from(data);
  const pdf = /^%PDF-(\d\.\d)/.exec(buffer.subarray(0, 16).toString("latin1"));
  if (pdf !== null) {
    const pages = buffer.toString("latin1").match(/\/Type\s*\/Page(?![a-zA-Z])/g)?.length ?? 0;
    return `a PDF ${pdf[1]} document${pages > 0 ? ` of ${pages === 1 ? "1 page" : `${pages} pages`}` : ""}`;
  }
  const textual = mime === undefined || /^text\/|[/+](?:json|xml|yaml|csv|javascript|markdown)$/.test(mime);
  if (!textual || data.length === 0 || buffer.includes(0)) return undefined;
  const text = new TextDecoder("utf-8", { fatal: false }).decode(data);
  if (text.includes("\uFFFD")) return undefined;
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  const first = lines.find((l) => l.trim() !== "")?.trim() ?? "";
  const head = first.length > 60 ? `${first.slice(0, 59)}…` : first;
  return `${lines.length === 1 ? "1 line" : `${lines.length} lines`} of text${head === "" ? "" : ` starting “${head}”`}`;
}

/** `data:image/png;base64,…` or `data:text/plain,hello%20there` → MIME type and bytes. */
function decodeDataUrl(url: string): Payload | undefined {
  const match = /^data:([^,]*?),/i.exec(url);
  if (match === null) return undefined;
  const meta = (match[1] ?? "").split(";");
  const data = url.slice(match[0].length);
  const base64 = meta.some((m) => m.toLowerCase() === "base64");
  const mime = meta[0] === "" ? undefined : meta[0]?.toLowerCase();
  if (base64) return { mime, bytes: Buffer.from(data, "base64") };
  try {
    return { mime, bytes: Buffer.from(decodeURIComponent(data)) };
  } catch {
    return { mime, bytes: Buffer.from(data) };
  }
}

function decodeBase64(data: string): Payload {
  return { mime: undefined, bytes: Buffer.from(data, "base64") };
}

/** `image-size`'s format names → MIME types (the formats a browser or a model API takes). */
function mimeOf(type: string): string | undefined {
  const known: Record<string, string> = {
    png: "image/png",
    jpg: "image/jpeg",
    gif: "image/gif",
    webp: "image/webp",
    bmp: "image/bmp",
    svg: "image/svg+xml",
    tiff: "image/tiff",
    avif: "image/avif",
    heif: "image/heif",
    ico: "image/x-icon",
  };
  return known[type];
}

function bytes(n: number): string {
  return `${n.toLocaleString("en-US")} ${n === 1 ? "byte" : "bytes"}`;
}

function clip(url: string): string {
  return url.length > 80 ? `${url.slice(0, 79)}…` : url;
}
