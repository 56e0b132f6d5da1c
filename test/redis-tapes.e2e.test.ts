/**
 * A tape written to Redis while the connection drops between a write and its answer: the client
 * (ioredis) sends again, on reconnect, every command Redis had not answered — Redis had stored
 * them, so each of those lines was stored twice, and the tape no longer read ("frame N has seq
 * N-1"). A worker resuming it then started the task over, running its recorded calls' side effects
 * again. The crash soak (test/support/crash-soak.ts) found it with a Redis restart. Each line now
 * has its own entry id, and a repeat is refused by Redis and ignored.
 */
import { createConnection, createServer, type Server, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { collectedTape, connectRedis } from "../src/batch/queue.js";
import { dropTape, readTapeText, redisTapeStore } from "../src/batch/redis-tapes.js";
import type { Frame } from "../src/frames/frame.js";
import { runAgent } from "../src/loop/run.js";
import { createMockServer } from "../src/mock/index.js";
import { createOpenResponsesProvider } from "../src/provider/open-responses.js";
import { createTapeHeader } from "../src/replay/header.js";
import { HAVE_REDIS, startRedis } from "./support/redis.js";

const cleanups: (() => Promise<void> | void)[] = [];
const UUID = "0b0f4c3e-2a1d-4e5f-9a8b-7c6d5e4f3a2b";
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/**
 * A TCP proxy to Redis that, once, passes a chunk holding an XADD on, waits for Redis's answer,
 * and then drops both connections without passing the answer back.
 */
async function answerDroppingProxy(port: number): Promise<{ port: number; dropped: () => boolean }> {
  let dropped = false;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = createConnection({ port, host: "127.0.0.1" });
    sockets.add(client);
    sockets.add(upstream);
    let swallowing = false;
    client.on("data", (chunk: Buffer) => {
      if (!dropped && /xadd/i.test(chunk.toString("latin1"))) {
        dropped = true;
        swallowing = true;
      }
      upstream.write(chunk);
    });
    upstream.on("data", (chunk: Buffer) => {
      if (!swallowing) {
        client.write(chunk);
        return;
      }
      // Redis did the writes and answered: the answer is lost with the connection.
      client.destroy();
      upstream.destroy();
    });
    for (const s of [client, upstream]) s.on("error", () => {});
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  );
  const address = server.address();
  return { port: typeof address === "object" && address !== null ? address.port : 0, dropped: () => dropped };
}

describe.skipIf(!HAVE_REDIS)("tapes in Redis across a dropped connection (redis-server)", () => {
  it("a line Redis stored but whose answer was lost is stored once: the tape reads back whole", async () => {
    const redis = await startRedis();
    cleanups.push(() => redis.stop());
    const server = await createMockServer({
      scenario: { turns: [{ items: [{ type: "message", text: "done" }], repeat: true }] },
    });
    cleanups.push(() => server.close());
    const provider = createOpenResponsesProvider({ baseURL: server.url, apiKey: "k", name: "mock" });
    const handle = runAgent({ model: "m", input: "hi" }, { provider });
    const frames: Frame[] = [];
    for await (const frame of handle) frames.push(frame);
    expect(frames.length).toBeGreaterThan(4);

    const proxy = await answerDroppingProxy(redis.port);
    const client = connectRedis(`redis://127.0.0.1:${proxy.port}`);
    client.on("error", () => {});
    cleanups.push(() => void client.disconnect());
    await client.ping();
    const store = redisTapeStore(client, "eddy:batch:tapetest");
    const writer = store.open("t1", createTapeHeader(handle.spec, { provider }), "now");
    for (const frame of frames) writer.write(frame);
    await writer.close();
    expect(proxy.dropped()).toBe(true);

    const tape = await store.read("t1");
    expect(tape?.frames.map((f) => f.seq)).toEqual(frames.map((f) => f.seq));
    expect(tape?.frames.at(-1)?.type).toBe("run_ended");
  }, 60_000);
});

describe.skipIf(!HAVE_REDIS)("reading a tape back from Redis (redis-server)", () => {
  it("is read a page at a time, whole and in order; one over the bound is refused by size, not a crash", async () => {
    const redis = await startRedis();
    cleanups.push(() => redis.stop());
    const client = connectRedis(redis.url);
    cleanups.push(() => void client.disconnect());
    const prefix = "eddy:batch:pagetest";
    // 2,500 lines: more than two pages.
    const lines = Array.from({ length: 2_500 }, (_, i) => JSON.stringify({ n: i, pad: "x".repeat(100) }));
    for (let i = 0; i < lines.length; i += 500)
      await Promise.all(
        lines
          .slice(i, i + 500)
          .map((l, j) => client.xadd(`${prefix}:tape:${UUID}`, `0-${i + j + 1}`, "l", l)),
      );
    await client.hset(`${prefix}:tapes`, "t1", `${prefix}:tape:${UUID}`);
    const text = await readTapeText(client, prefix, "t1");
    expect(text).toBe(`${lines.join("\n")}\n`);
    expect(await readTapeText(client, prefix, "none")).toBeUndefined();
    await expect(readTapeText(client, prefix, "t1", 100_000)).rejects.toThrow(
      'the tape of task "t1" in Redis is larger than 100,000 characters; it is not read',
    );
  }, 60_000);

  it("a pointer another client planted is neither followed out of the batch's tapes nor deleted; a wrong-type tape is the task's problem, not the batch's", async () => {
    const redis = await startRedis();
    cleanups.push(() => redis.stop());
    const client = connectRedis(redis.url);
    cleanups.push(() => void client.disconnect());
    const prefix = "eddy:batch:hostile";
    await client.set("victim", "keep me");
    await client.hset(`${prefix}:tapes`, "t1", "victim");
    await expect(readTapeText(client, prefix, "t1")).rejects.toThrow(
      /its pointer names no tape of this batch/,
    );
    await dropTape(client, prefix, "t1");
    expect(await client.get("victim")).toBe("keep me");
    expect(await client.hget(`${prefix}:tapes`, "t1")).toBeNull();
    // A tape key of the batch's form holding a string: Redis answers WRONGTYPE.
    await client.set(`${prefix}:tape:${UUID}`, "not a stream");
    await client.hset(`${prefix}:tapes`, "t2", `${prefix}:tape:${UUID}`);
    const notices: unknown[] = [];
    expect(await collectedTape(client, prefix, "t2", (n) => notices.push(n))).toBeUndefined();
    expect(notices).toEqual([
      { type: "tape_not_kept", id: "t2", reason: expect.stringMatching(/WRONGTYPE/) },
    ]);
  }, 60_000);
});
