import { describe, expect, it } from "vitest";
import { cappedFetch } from "./capped-fetch.js";

/** A fetch answering `chunks` with `contentType`. */
function serving(chunks: string[], contentType: string) {
  return async () =>
    new Response(
      new ReadableStream<Uint8Array>({
        start(controller) {
          for (const c of chunks) controller.enqueue(new TextEncoder().encode(c));
          controller.close();
        },
      }),
      { status: 200, headers: { "content-type": contentType } },
    );
}

async function read(chunks: string[], contentType: string, limit = 100) {
  const reasons: string[] = [];
  const response = await cappedFetch(
    (r) => reasons.push(r),
    limit,
    serving(chunks, contentType),
  )("http://x/");
  const text = await response.text().catch((error: Error) => `failed: ${error.message}`);
  return { text, reasons };
}

describe("cappedFetch", () => {
  it("caps each event of an event stream, whatever its lines end with", async () => {
    const event = (end: string) => `data: ${"y".repeat(80)}${end}${end}`;
    const many = [event("\n"), event("\r\n"), event("\r"), event("\n")];
    expect((await read(many, "text/event-stream")).reasons).toEqual([]);
    const long = await read(
      [`data: ${"y".repeat(60)}\n`, `data: ${"y".repeat(60)}\n\n`],
      "text/event-stream",
    );
    expect(long.text).toBe("failed: the server sent a message over the 100-byte limit and was stopped");
    expect(long.reasons).toEqual(["sent a message over the 100-byte limit and was stopped"]);
  });

  it("caps any other body as a whole", async () => {
    expect((await read(["a".repeat(60), "\n\n", "a".repeat(30)], "application/json")).reasons).toEqual([]);
    const over = await read(["a".repeat(60), "\n\n", "a".repeat(60)], "application/json");
    expect(over.text).toMatch(/^failed: the server sent a message over the 100-byte limit/);
  });
});
