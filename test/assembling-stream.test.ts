/**
 * The assembling stream's two ways of handing out groups (src/provider/assembling-stream.ts):
 * pulled (`frameGroups`) and pushed (`pumpGroups`, the loop's path) give the same groups and the
 * same outcome at any batching; a call is delivered right after the group that completed it, before
 * the next group of the same batch; a sink that says stop cancels the request and settles `result`.
 */
import { describe, expect, it } from "vitest";
import { frame, type ProviderFrame } from "../src/frames/frame.js";
import { sseMessageToFrames } from "../src/frames/from-sse.js";
import type { CreateResponseBody, JsonObject } from "../src/protocol/types.js";
import type { AssembledCall } from "../src/provider/assembler/index.js";
import { createAssemblingStream, type FrameSource } from "../src/provider/assembling-stream.js";
import { events } from "./support/scripted.js";

const BODY = { model: "m", input: "hi" } as CreateResponseBody;

/** Two calls and a message, as one response's provider frames, one list per SSE message. */
function responseFrames(): ProviderFrame[][] {
  const script = {
    items: [
      { type: "function_call" as const, name: "a", arguments: '{"x":1}', call_id: "call_a" },
      { type: "function_call" as const, name: "b", arguments: '{"y":2}', call_id: "call_b" },
      { type: "message" as const, text: "done" },
    ],
  };
  return events(script, "resp_1").map((e: JsonObject) =>
    sseMessageToFrames(
      { event: String(e.type), data: JSON.stringify(e), raw: "" },
      { turn: 0, validate: false },
    ),
  );
}

/** A source pushing `request_started`, then the frames of the response's messages `per` at a time. */
function source(per: number, log?: string[]): FrameSource {
  return async (_control, emit) => {
    try {
      if (!(await emit([frame("request_started", { turn: 0, attempt: 1, body: BODY })]))) return undefined;
      const all = responseFrames();
      for (let i = 0; i < all.length; i += per)
        if (!(await emit(all.slice(i, i + per).flat()))) return undefined;
      return undefined;
    } finally {
      log?.push("source closed");
    }
  };
}

const label = (group: readonly ProviderFrame[]) =>
  group
    .map((f) => (f.type === "provider_event" ? String((f.data as JsonObject | undefined)?.type) : f.type))
    .join("+");

/** The groups and calls of one stream over `source(per)`, taken pulled (`frameGroups`) or pushed (`pumpGroups`). */
async function taken(how: "pulled" | "pushed", per: number): Promise<{ log: string[]; status: string }> {
  const log: string[] = [];
  const onCall = (c: AssembledCall) => log.push(`call ${c.callId}`);
  const stream = createAssemblingStream({
    request: { body: BODY, turn: 0 },
    options: { onCall },
    source: source(per),
  });
  if (how === "pulled") for await (const g of stream.frameGroups?.() ?? []) log.push(label(g));
  else
    await stream.pumpGroups?.((g) => {
      log.push(label(g));
      return true;
    });
  const outcome = await stream.result;
  return { log, status: outcome.ok ? outcome.response.status : outcome.error.code };
}

describe("the assembling stream's groups", () => {
  it("are the same pulled and pushed, at any batching, each call right after the group that completed it", async () => {
    const reference = await taken("pulled", 1);
    expect(reference.status).toBe("completed");
    // Each call comes right after the output_item.done that completed it.
    const doneAt = reference.log.flatMap((l, i) => (l.startsWith("response.output_item.done") ? [i] : []));
    expect(reference.log[(doneAt[0] as number) + 1]).toBe("call call_a");
    expect(reference.log[(doneAt[1] as number) + 1]).toBe("call call_b");
    expect(reference.log.some((l) => l.includes("output_text.delta+output_text_delta"))).toBe(true);
    for (const per of [1, 2, 5, 1000]) {
      expect(await taken("pulled", per), `pulled, ${per} a batch`).toEqual(reference);
      expect(await taken("pushed", per), `pushed, ${per} a batch`).toEqual(reference);
    }
  });

  it("stop when the sink says so: the source is closed and result settles cancelled", async () => {
    const log: string[] = [];
    const stream = createAssemblingStream({ request: { body: BODY, turn: 0 }, source: source(1000, log) });
    let shown = 0;
    await stream.pumpGroups?.(() => ++shown < 3);
    expect(shown).toBe(3);
    expect(log).toEqual(["source closed"]);
    const outcome = await stream.result;
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) expect(outcome.error.kind).toBe("cancelled");
  });

  it("pulled, the source waits at each group until the consumer asks for the next, and a break closes it", async () => {
    const log: string[] = [];
    const all = responseFrames();
    const stream = createAssemblingStream({
      request: { body: BODY, turn: 0 },
      source: async (_control, emit) => {
        try {
          for (const [i, batch] of [
            [frame("request_started", { turn: 0, attempt: 1, body: BODY })],
            ...all,
          ].entries()) {
            log.push(`batch ${i}`);
            if (!(await emit(batch))) return undefined;
          }
          return undefined;
        } finally {
          log.push("source closed");
        }
      },
    });
    const pulled = stream.frameGroups?.();
    if (pulled === undefined) throw new Error("the assembling stream has frameGroups");
    const groups = pulled[Symbol.asyncIterator]();
    expect(label((await groups.next()).value)).toBe("request_started");
    await new Promise((resolve) => setImmediate(resolve));
    // Not asked for the next group: the source has not gone past the first batch (the request is held back).
    expect(log).toEqual(["batch 0"]);
    expect(label((await groups.next()).value)).toBe("response.created");
    await new Promise((resolve) => setImmediate(resolve));
    expect(log).toEqual(["batch 0", "batch 1"]);
    await groups.return?.(undefined);
    expect(log).toEqual(["batch 0", "batch 1", "source closed"]);
    const outcome = await stream.result;
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) expect(outcome.error.kind).toBe("cancelled");
  });

  it("a source that throws, pulled: the error reaches the consumer and result settles cancelled", async () => {
    const stream = createAssemblingStream({
      request: { body: BODY, turn: 0 },
      source: async (_control, emit) => {
        await emit([frame("request_started", { turn: 0, attempt: 1, body: BODY })]);
        throw new Error("source broke");
      },
    });
    const seen: string[] = [];
    await expect(
      (async () => {
        for await (const f of stream) seen.push(f.type);
      })(),
    ).rejects.toThrow("source broke");
    expect(seen).toEqual(["request_started"]);
    expect((await stream.result).ok).toBe(false);
  });

  it("can be taken once, either way", async () => {
    const stream = createAssemblingStream({ request: { body: BODY, turn: 0 }, source: source(1) });
    await stream.pumpGroups?.(() => true);
    expect(() => stream.frameGroups?.()).toThrow(/iterated once/);
    await expect(stream.pumpGroups?.(() => true)).rejects.toThrow(/iterated once/);
  });

  it("a sink that throws abandons the request and the error reaches the caller", async () => {
    const log: string[] = [];
    const stream = createAssemblingStream({ request: { body: BODY, turn: 0 }, source: source(4, log) });
    await expect(
      stream.pumpGroups?.(() => {
        throw new Error("sink failed");
      }),
    ).rejects.toThrow("sink failed");
    expect(log).toEqual(["source closed"]);
    expect((await stream.result).ok).toBe(false);
  });
});
