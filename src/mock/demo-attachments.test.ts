import { describe, expect, it } from "vitest";
import { post } from "../../test/support/mock-sse.js";
import { describeAttachments } from "./demo-attachments.js";
import { createMockHandler } from "./handler.js";

/** The first bytes of a PNG: signature and IHDR (all `image-size` reads). */
function png(width: number, height: number): Buffer {
  const ihdr = Buffer.alloc(25);
  ihdr.writeUInt32BE(13, 0);
  ihdr.write("IHDR", 4, "latin1");
  ihdr.writeUInt32BE(width, 8);
  ihdr.writeUInt32BE(height, 12);
  ihdr.set([8, 6, 0, 0, 0], 16);
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), ihdr]);
}

/** A GIF header (logical screen width and height, little-endian). */
function gif(width: number, height: number): Buffer {
  const b = Buffer.alloc(13);
  b.write("GIF89a", 0, "latin1");
  b.writeUInt16LE(width, 6);
  b.writeUInt16LE(height, 8);
  return b;
}

/** A JPEG start as cameras write it: SOI, a JFIF APP0 segment, a baseline SOF0 with height and width. */
function jpeg(width: number, height: number): Buffer {
  const app0 = Buffer.from([0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0, 1, 1, 0, 0, 1, 0, 1, 0, 0]);
  const sof = Buffer.from([
    0xff, 0xc0, 0x00, 0x11, 0x08, 0, 0, 0, 0, 0x03, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1,
  ]);
  sof.writeUInt16BE(height, 5);
  sof.writeUInt16BE(width, 7);
  return Buffer.concat([Buffer.from([0xff, 0xd8]), app0, sof, Buffer.from([0xff, 0xd9])]);
}

const dataUrl = (mime: string, bytes: Buffer) => `data:${mime};base64,${bytes.toString("base64")}`;

describe("describeAttachments", () => {
  it.each([
    ["PNG", "image/png", png(640, 480), "an image: image/png, 33 bytes, 640×480 pixels"],
    ["GIF", "image/gif", gif(16, 9), "an image: image/gif, 13 bytes, 16×9 pixels"],
    ["JPEG", "image/jpeg", jpeg(1920, 1080), "an image: image/jpeg, 41 bytes, 1920×1080 pixels"],
  ])("reads a %s data URL's type, size and pixel dimensions", (_label, mime, bytes, sentence) => {
    expect(describeAttachments([{ type: "input_image", image_url: dataUrl(mime, bytes) }])).toEqual([
      sentence,
    ]);
  });

  it("says when the content is not what the data URL declares, or not an image at all", () => {
    expect(
      describeAttachments([{ type: "input_image", image_url: dataUrl("image/jpeg", png(2, 3)) }]),
    ).toEqual(["an image: image/jpeg, 33 bytes, 2×3 pixels, though the content is image/png"]);
    expect(
      describeAttachments([{ type: "input_image", image_url: "data:image/png;base64,aGVsbG8=" }]),
    ).toEqual(["an image: image/png, 5 bytes, dimensions unreadable (not an image format I know)"]);
  });

  it("does not download URLs, and describes files by name, type and size", () => {
    expect(
      describeAttachments([
        { type: "input_text", text: "ignored" },
        { type: "input_image", image_url: "https://example.com/cat.png" },
        {
          type: "input_file",
          filename: "report.pdf",
          file_data: dataUrl("application/pdf", Buffer.alloc(2048)),
        },
        { type: "input_file", filename: "notes.txt", file_data: Buffer.from("hello").toString("base64") },
        { type: "input_file", file_url: "https://example.com/a.pdf" },
        { type: "input_file", file_data: "data:text/plain,hello%20world" },
      ]),
    ).toEqual([
      "an image at https://example.com/cat.png (not downloaded: I work offline)",
      "a file `report.pdf`: application/pdf, 2,048 bytes",
      "a file `notes.txt`: no MIME type given, 5 bytes, 1 line of text starting “hello”",
      "a file without a name at https://example.com/a.pdf (not downloaded: I work offline)",
      "a file without a name: text/plain, 11 bytes, 1 line of text starting “hello world”",
    ]);
  });

  it("reads what a file's bytes show: a PDF's version and pages, a text's lines (not binary data)", () => {
    const pdf = Buffer.from(
      "%PDF-1.7\n1 0 obj <</Type /Pages /Count 2>>\n2 0 obj <</Type /Page>>\n3 0 obj <</Type/Page>>\n%%EOF\n",
    );
    expect(
      describeAttachments([
        { type: "input_file", filename: "a.pdf", file_data: dataUrl("application/pdf", pdf) },
        {
          type: "input_file",
          filename: "a.csv",
          file_data: dataUrl("text/csv", Buffer.from("x,y\n1,2\n3,4\n")),
        },
        {
          type: "input_file",
          filename: "a.bin",
          file_data: dataUrl("text/plain", Buffer.from([104, 0, 105])),
        },
      ]),
    ).toEqual([
      `a file \`a.pdf\`: application/pdf, ${pdf.length} bytes, a PDF 1.7 document of 2 pages`,
      "a file `a.csv`: text/csv, 12 bytes, 3 lines of text starting “x,y”",
      "a file `a.bin`: text/plain, 3 bytes",
    ]);
  });
});

describe("the demo model answers about images and files", () => {
  const image = dataUrl("image/png", png(64, 32));

  it("through /responses: input_image and input_file parts of the user message", async () => {
    const res = await post(createMockHandler(), {
      model: "m",
      input: [
        {
          type: "message",
          role: "user",
          content: [
            { type: "input_text", text: "What is this?" },
            { type: "input_image", image_url: image, detail: "auto" },
            {
              type: "input_file",
              filename: "cat.pdf",
              file_data: dataUrl("application/pdf", Buffer.alloc(10)),
            },
          ],
        },
      ],
    });
    const body = (await res.json()) as { output: Array<{ content: Array<{ text: string }> }> };
    const text = body.output[0]?.content[0]?.text ?? "";
    expect(text).toContain("You sent 2 attachments");
    expect(text).toContain("- an image: image/png, 33 bytes, 64×32 pixels");
    expect(text).toContain("- a file `cat.pdf`: application/pdf, 10 bytes");
  });

  it("through /chat/completions: image_url and file parts", async () => {
    const res = await post(
      createMockHandler(),
      {
        model: "m",
        messages: [
          {
            role: "user",
            content: [
              { type: "text", text: "What is this?" },
              { type: "image_url", image_url: { url: image } },
            ],
          },
        ],
      },
      { path: "/v1/chat/completions" },
    );
    const body = (await res.json()) as { choices: Array<{ message: { content: string } }> };
    expect(body.choices[0]?.message.content).toContain(
      "You sent one attachment:\n\n- an image: image/png, 33 bytes, 64×32 pixels",
    );
  });

  it("still answers tool outputs first when the attachment came with a question tools answered", async () => {
    const res = await post(createMockHandler(), {
      model: "m",
      input: [
        {
          type: "message",
          role: "user",
          content: [
            { type: "input_text", text: "Read a.txt" },
            { type: "input_image", image_url: image },
          ],
        },
        { type: "function_call", call_id: "c1", name: "read_file", arguments: '{"path":"a.txt"}' },
        { type: "function_call_output", call_id: "c1", output: "plain text" },
      ],
    });
    const body = (await res.json()) as { output: Array<{ content: Array<{ text: string }> }> };
    expect(body.output[0]?.content[0]?.text).toContain("`read_file` returned");
  });
});
