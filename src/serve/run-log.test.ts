/**
 * A stored run's log (`storedRunLog`): counted without reading its tape, read only when its frames
 * are asked for, through a cache of the few read last (`LoadedFrames`); and read once for good when
 * the run goes on again.
 */
import { describe, expect, it } from "vitest";
import type { Frame } from "../frames/frame.js";
import { LoadedFrames, sseStream, storedRunLog } from "./run-log.js";

const frameOf = (seq: number) => ({ type: "run_started", seq, ts: 0, run_id: "r" }) as unknown as Frame;

function tapes() {
  const reads: string[] = [];
  const loaded = new LoadedFrames((path) => {
    reads.push(path);
    return [frameOf(0), frameOf(1), frameOf(2)];
  }, 2);
  return { reads, loaded };
}

describe("storedRunLog", () => {
  it("is counted without a read; its frames are read when asked for, and kept among the last few", () => {
    const { reads, loaded } = tapes();
    const a = storedRunLog(3, () => loaded.frames("a"));
    const b = storedRunLog(3, () => loaded.frames("b"));
    const c = storedRunLog(3, () => loaded.frames("c"));
    expect([a.count, b.count, c.count, a.live]).toEqual([3, 3, 3, false]);
    expect(reads).toEqual([]);
    expect(a.frames).toHaveLength(3);
    expect(a.frames).toHaveLength(3);
    expect(b.frames).toHaveLength(3);
    expect(reads).toEqual(["a", "b"]);
    void c.frames; // the third one read drops the least recently read (a)
    void b.frames;
    void a.frames;
    expect(reads).toEqual(["a", "b", "c", "a"]);
  });

  it("going on again reads the tape once and appends live, waking its watchers", async () => {
    const { reads, loaded } = tapes();
    const log = storedRunLog(3, () => loaded.frames("a"));
    log.reopen();
    expect(log.live).toBe(true);
    const woke = log.changed();
    log.append(frameOf(3));
    await woke;
    expect(log.count).toBe(4);
    for (const other of ["x", "y", "z"]) loaded.frames(other); // evicts "a" from the cache
    expect(log.frames.map((f) => f.seq)).toEqual([0, 1, 2, 3]);
    expect(reads.filter((r) => r === "a")).toHaveLength(1);
    log.close();
    expect(log.live).toBe(false);
  });

  it("streams like a log held in memory, from a Last-Event-ID on", async () => {
    const { loaded } = tapes();
    const text = await new Response(
      sseStream(
        storedRunLog(3, () => loaded.frames("a")),
        { after: 0 },
      ),
    ).text();
    expect([...text.matchAll(/^id: (\d+)$/gm)].map((m) => m[1])).toEqual(["1", "2"]);
  });

  it("a tape that no longer reads throws where its frames are asked for, not where it is counted", () => {
    const log = storedRunLog(3, () => {
      throw new Error("damaged");
    });
    expect(log.count).toBe(3);
    expect(() => log.frames).toThrow(/damaged/);
  });
});
