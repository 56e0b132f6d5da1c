import { mkdtempSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { validateInputItem } from "../protocol/validate.js";
import {
  attachmentPart,
  MAX_INLINE_FILE_BYTES,
  MAX_INLINE_IMAGE_BYTES,
  mimeTypeOf,
  userMessageWithAttachments,
} from "./attachments.js";

const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==",
  "base64",
);
const dir = mkdtempSync(join(tmpdir(), "eddy-attach-"));
writeFileSync(join(dir, "photo.txt"), PNG); // the name lies; the content decides
writeFileSync(
  join(dir, "doc.pdf"),
  Buffer.from("%PDF-1.4\n%âãÏÓ\n1 0 obj\n<<>>\nendobj\ntrailer\n<<>>\n%%EOF\n", "latin1"),
);
writeFileSync(join(dir, "data.csv"), "a,b\n1,2\n");

describe("attachments", () => {
  it("a local image is sent inline as a data URL typed by its content; the message validates", async () => {
    const message = await userMessageWithAttachments("what?", [{ kind: "image", source: "photo.txt" }], dir);
    expect(validateInputItem(message)).toBeUndefined();
    expect((message.content as unknown[])[1]).toEqual({
      type: "input_image",
      image_url: `data:image/png;base64,${PNG.toString("base64")}`,
    });
  });

  it("files keep their name and get a MIME type from the content (text by extension)", async () => {
    expect(await attachmentPart({ kind: "file", source: "doc.pdf" }, dir)).toMatchObject({
      type: "input_file",
      filename: "doc.pdf",
      file_data: expect.stringMatching(/^data:application\/pdf;base64,/),
    });
    expect(await mimeTypeOf(Buffer.from("a,b\n"), "data.csv")).toBe("text/csv");
    expect(await mimeTypeOf(Buffer.from("plain"), "notes")).toBe("text/plain");
    expect(await mimeTypeOf(Buffer.from([0, 159, 146, 150]), "blob")).toBe("application/octet-stream");
  });

  it("URLs pass through", async () => {
    expect(await attachmentPart({ kind: "image", source: "https://example.com/cat.jpg" })).toEqual({
      type: "input_image",
      image_url: "https://example.com/cat.jpg",
    });
    expect(await attachmentPart({ kind: "file", source: "https://example.com/papers/a.pdf" })).toEqual({
      type: "input_file",
      filename: "a.pdf",
      file_url: "https://example.com/papers/a.pdf",
    });
  });

  it("refuses, with a clear message: a missing file, a file over the spec's limit, an image that is not one", async () => {
    await expect(attachmentPart({ kind: "file", source: "nope.pdf" }, dir)).rejects.toThrow(
      "cannot read --file nope.pdf: ENOENT",
    );
    const big = join(dir, "big.png");
    writeFileSync(big, PNG);
    truncateSync(big, MAX_INLINE_IMAGE_BYTES + 1); // sparse: the size is checked before reading
    await expect(attachmentPart({ kind: "image", source: big })).rejects.toThrow(
      /--image .*big\.png is larger than 15\.0 MiB, the spec's limit on inline \(base64\) data: give a URL instead/,
    );
    await expect(attachmentPart({ kind: "image", source: "data.csv" }, dir)).rejects.toThrow(
      "--image data.csv: the content is text/csv, not an image (attach it with --file instead)",
    );
    expect(MAX_INLINE_FILE_BYTES).toBeGreaterThan(MAX_INLINE_IMAGE_BYTES);
  });
});
