/**
 * Where a turn's time over HTTP sits on the client's critical path (bench/README.md, "2026-11-29:
 * the turn's critical path"). floor-loop node:http and one eddy contender alternate run by run
 * against the replay server (writes `event` or `whole`), alone in this process. Each run is cut
 * at the client's own calls into node:http — `http.request`, `ClientRequest#end` (the request
 * handed to the socket) and each response's `data` events — and at the server's records:
 *
 *   start→request  run start → http.request() for request #1 (the run's start, request #1 built)
 *   request→end    http.request() → end(): the request object, headers and body handed over
 *   end→server     end() → the server has request #1 (socket, kernel, the server's parser)
 *   B              the server's window for response #1
 *   #1 data→end2   the last `data` event of response #1 → end() of request #2 (events of #1
 *                  that waited, the tool call, request #2 built)
 *   D              the server's window for response #2
 *   #2 data→done   the last `data` event of response #2 → the run resolved
 *
 * A `data` event is the moment node:http hands a body chunk to its listeners; what a client does
 * with it may come later (eddy queues it and reads in a microtask), so the columns after a `data`
 * mark hold the parsing of whatever was still waiting.
 *
 *   node --import tsx bench/loop/critical-path.ts [--writes event|whole] [--runs 2000] [--contender NAME]
 */
import http from "node:http";
import { syncBuiltinESMExports } from "node:module";
import { median } from "../harness.js";
import { startReplayServer } from "../provider/replay-server.js";
import { EDDY_ON, FLOOR_LOOP_NODE, type LoopContender, loopContenders } from "./contenders.js";

const COLUMNS = [
  "start→request",
  "request→end",
  "end→server",
  "B",
  "#1 data→end2",
  "D",
  "#2 data→done",
  "run",
] as const;

function option(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? fallback : (process.argv[i + 1] ?? fallback);
}

/** The client's marks in one run, in ns on the server's clock. */
interface Marks {
  requests: number[];
  ends: number[];
  data: number[];
}

/** Wraps node:http's request and end so each run's marks land in `marks()` (restored never: a bench process). */
function instrument(now: () => number): () => Marks {
  let marks: Marks = { requests: [], ends: [], data: [] };
  const request = http.request;
  const patched = ((...args: Parameters<typeof http.request>) => {
    marks.requests.push(now());
    return request(...args);
  }) as typeof http.request;
  (http as { request: typeof http.request }).request = patched;
  syncBuiltinESMExports();
  const end = http.ClientRequest.prototype.end;
  http.ClientRequest.prototype.end = function (this: http.ClientRequest, ...args: unknown[]) {
    marks.ends.push(now());
    this.once("response", (res: http.IncomingMessage) => res.on("data", () => marks.data.push(now())));
    return (end as (...a: unknown[]) => http.ClientRequest).apply(this, args);
  } as typeof end;
  return () => {
    const taken = marks;
    marks = { requests: [], ends: [], data: [] };
    return taken;
  };
}

async function main(): Promise<void> {
  const writes = option("writes", "event");
  const runs = Number(option("runs", "2000"));
  const server = await startReplayServer(new URL("./responses.ts", import.meta.url), writes);
  const take = instrument(server.now);
  const all = loopContenders(server.origin);
  const pick = (name: string): LoopContender => {
    const found = all.find((c) => c.name === name);
    if (found === undefined) throw new Error(`no loop contender named ${JSON.stringify(name)}`);
    return found;
  };
  const contenders = [pick(FLOOR_LOOP_NODE), pick(option("contender", EDDY_ON))];
  const rows = new Map<string, number[][]>(contenders.map((c) => [c.name, []]));
  const warmup = 200;
  try {
    for (let i = 0; i < warmup + runs; i++) {
      for (const c of i % 2 === 0 ? contenders : [...contenders].reverse()) {
        const before = server.served();
        take();
        const start = server.now();
        await c.run(() => {});
        const done = server.now();
        const m = take();
        if (!server.waitServed(before + 2)) throw new Error(`${c.name}: the server saw no second request`);
        if (i < warmup) continue;
        const r1 = server.record(before);
        const r2 = server.record(before + 1);
        const [req1, , end1, end2] = [m.requests[0], m.requests[1], m.ends[0], m.ends[1]] as number[];
        const last1 = m.data.filter((t) => t < (end2 as number)).at(-1) as number;
        const last2 = m.data.at(-1) as number;
        rows
          .get(c.name)
          ?.push([
            (req1 as number) - start,
            (end1 as number) - (req1 as number),
            r1.arrived - (end1 as number),
            r1.lastWrite - r1.arrived,
            (end2 as number) - last1,
            r2.lastWrite - r2.arrived,
            done - last2,
            done - start,
          ]);
      }
    }
  } finally {
    await server.close();
  }
  console.log(`µs, medians of ${runs} runs each, writes ${writes}, alternating run by run`);
  console.log(`| contender | ${COLUMNS.join(" | ")} |`);
  console.log(`| :-- |${COLUMNS.map(() => " --: |").join("")}`);
  for (const [name, samples] of rows) {
    const cells = COLUMNS.map((_, j) => (median(samples.map((s) => s[j] as number)) / 1000).toFixed(0));
    console.log(`| ${name} | ${cells.join(" | ")} |`);
  }
}

await main();
process.exit(0);
