/**
 * Where one agent turn's CPU goes, by phase, with warm and with evicted CPU caches (bench/README.md,
 * "The turn's phases, warm and cold"). In one process, over in-memory reply chunks (each behind an
 * await, as in-process.ts), the floor-loop and eddy (validation on and off) run interleaved in a
 * shuffled order; each run is cut at the two requests and the two ends of the bodies:
 *
 *   A  = start → request #1 (eddy: the run's start and request #1 built)
 *   B1 = request #1 → its body read to the end (13 events)
 *   C  = end of body #1 → request #2 (the tool call and request #2 built)
 *   B2 = request #2 → its body read to the end (51 events)
 *   E  = end of body #2 → the run resolved
 *
 * `--evict MB` writes that many megabytes of memory just before each request, and `--evict-chunk KB`
 * that many kilobytes before each chunk of a body, outside the timed phases: the CPU caches then
 * hold what a socket read and the kernel left, as over HTTP, where each phase starts after a wait
 * on the network. What a contender loses to cold caches grows with the code and data it touches,
 * not with the work it does.
 *
 *   npm run bench:loop-phases -- [--evict 8] [--evict-chunk 512] [--writes event|whole] [--runs 4000]
 */

import type { Transport } from "../../src/provider/transport.js";
import type * as RegistryModule from "../../src/tools/registry.js";
import { importBuilt } from "../built.js";
import type { Poster } from "../provider/floor.js";
import type { Reply } from "../provider/responder.js";
import { EDDY_OFF, EDDY_ON, eddyLoop, eddyNoop, FLOOR_LOOP, floorLoop } from "./contenders.js";
import { answerEvents, callEvents, MODEL, toReply, type Writes } from "./responses.js";

const { createToolRegistry } = await importBuilt<typeof RegistryModule>("tools/registry.js");

function option(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? fallback : (process.argv[i + 1] ?? fallback);
}

const evictMb = Number(option("evict", "0"));
const evictChunkKb = Number(option("evict-chunk", "0"));
const writes = option("writes", "event") as Writes;
const runs = Number(option("runs", "4000"));
if (!(evictMb >= 0) || !(evictChunkKb >= 0) || !(runs >= 10) || (writes !== "event" && writes !== "whole")) {
  console.error(
    "usage: npm run bench:loop-phases -- [--evict MB] [--evict-chunk KB] [--writes event|whole] [--runs N≥10]",
  );
  process.exit(2);
}

/** The replies of in-process.ts: the call, then the answer to a request carrying its output. */
function replies(): (body: string) => Reply {
  const tools = createToolRegistry([eddyNoop]).declarations();
  const base = { model: MODEL, instructions: null, tools };
  const call = toReply(callEvents(1, { ...base, previousResponseId: null, followUp: false }), writes);
  const answer = toReply(
    answerEvents(2, { ...base, previousResponseId: "resp_bench_1", followUp: true }),
    writes,
  );
  return (body) => (body.includes('"function_call_output"') ? answer : call);
}

/**
 * The marks of the run going on: each request's start, before and after the eviction, and each
 * body's end.
 */
const marks: number[] = [];
/** How long the evictions inside each body took (left out of B1 and B2). */
const bodyEvictions: number[] = [];
const junk = new Float64Array((Math.max(evictMb * 1024, evictChunkKb) * 1024) / 8);

/** Writes every cache line (64 bytes = 8 doubles) of the first `kb` kilobytes of `junk`. */
function evict(kb: number): void {
  const end = (kb * 1024) / 8;
  for (let i = 0; i < end; i += 8) junk[i] = i;
}

function requestStarts(): void {
  marks.push(performance.now());
  evict(evictMb * 1024);
  marks.push(performance.now());
}

async function* chunks(reply: Reply): AsyncGenerator<Uint8Array> {
  let evicting = 0;
  for (const chunk of reply.chunks) {
    const from = performance.now();
    evict(evictChunkKb);
    evicting += performance.now() - from;
    yield chunk;
  }
  marks.push(performance.now());
  bodyEvictions.push(evicting);
}

const HEADERS = {
  get: (name: string) => (name.toLowerCase() === "content-type" ? "text/event-stream" : null),
};

function transport(pick: (body: string) => Reply): Transport {
  return async (request) => {
    requestStarts();
    return { status: 200, headers: HEADERS, body: chunks(pick(request.body)), cancel: () => {} };
  };
}

function poster(pick: (body: string) => Reply): Poster {
  return async (body, onChunk) => {
    requestStarts();
    for await (const chunk of chunks(pick(body))) onChunk(chunk);
  };
}

const pick = replies();
const contenders: Record<string, (onDelta: (d: string) => void) => Promise<string>> = {
  [FLOOR_LOOP]: floorLoop(poster(pick)),
  [EDDY_ON]: eddyLoop({ baseURL: "http://in-process.invalid/v1", transport: transport(pick) }),
  [EDDY_OFF]: eddyLoop({
    baseURL: "http://in-process.invalid/v1",
    transport: transport(pick),
    validate: false,
  }),
};
const PHASES = ["A", "B1", "C", "B2", "E", "total"] as const;
const samples = new Map<string, number[][]>(Object.keys(contenders).map((name) => [name, []]));
const warmup = Math.min(2000, runs >> 1);

for (let i = 0; i < warmup + runs; i++) {
  for (const name of Object.keys(contenders).sort(() => Math.random() - 0.5)) {
    marks.length = 0;
    bodyEvictions.length = 0;
    const start = performance.now();
    await contenders[name]?.(() => {});
    const end = performance.now();
    const [req1, sent1, body1, req2, sent2, body2] = marks as [
      number,
      number,
      number,
      number,
      number,
      number,
    ];
    if (marks.length !== 6) throw new Error(`${name}: ${marks.length} marks, expected 6`);
    const [evicted1, evicted2] = bodyEvictions as [number, number];
    const phases = [
      req1 - start,
      body1 - sent1 - evicted1,
      req2 - body1,
      body2 - sent2 - evicted2,
      end - body2,
    ];
    if (i >= warmup) samples.get(name)?.push([...phases, phases.reduce((a, b) => a + b, 0)]);
  }
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[sorted.length >> 1] as number;
}

console.log(
  `µs per run, medians of ${runs} runs; writes ${writes}; evicted: ${evictMb} MB before each request, ${evictChunkKb} KB before each chunk`,
);
console.log(`| contender | ${PHASES.join(" | ")} | × floor |`);
console.log(`| --- | ${PHASES.map(() => "--:").join(" | ")} | --: |`);
const floorTotal = median((samples.get(FLOOR_LOOP) ?? []).map((s) => s[5] as number));
for (const [name, rows] of samples) {
  const medians = PHASES.map((_, j) => median(rows.map((r) => r[j] as number)));
  const cells = medians.map((m) => (m * 1000).toFixed(0));
  console.log(`| ${name} | ${cells.join(" | ")} | ${((medians[5] as number) / floorTotal).toFixed(2)} |`);
}
