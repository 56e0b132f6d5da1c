/**
 * `npm run bench -- chat`: the Chat Completions path next to the Open Responses path and the AI
 * SDK's openai-compatible provider (issue 11).
 *
 * 1. Per event, over HTTP: a replay server (worker thread, node:http on 127.0.0.1) serves a
 *    generated stream as chat chunks, and the same content as an Open Responses stream, in 16 KiB
 *    writes; each contender POSTs, reads everything and returns the assembled text and call
 *    arguments. Reported per delta (both streams carry the same deltas) and per SSE message.
 * 2. Per turn, in-process: one agent turn (2 requests + 1 tool call) over pre-generated chunks, as
 *    bench/loop's in-process table.
 * Method in ../harness.ts and ../loop/measure.ts.
 */
import { fixedChunks } from "../../test/support/chunking.js";
import {
  type Benchmark,
  collectGarbage,
  describeEnvironment,
  environment,
  type Headline,
  headlineLines,
  logEnd,
  markdownTable,
  median,
  num,
  numRange,
  pct,
  relativeIqr,
  runRounds,
  type Samples,
  textTable,
} from "../harness.js";
import { noopLog } from "../loop/contenders.js";
import { type LoopSamples, measureLoop, medianOf, paired } from "../loop/measure.js";
import { ANSWER } from "../loop/responses.js";
import { isFrame, type ProviderContender } from "../provider/contenders.js";
import { startReplayServer } from "../provider/replay-server.js";
import { endsOf, type ServedStream } from "../provider/responder.js";
import { type GeneratedStream, generateStream } from "../sse/stream.js";
import {
  AI_SDK,
  chatEventContenders,
  chatTurnContenders,
  EDDY_CHAT_OFF,
  EDDY_CHAT_ON,
  EDDY_RESPONSES,
  FLOOR_CHAT,
  responsesKey,
} from "./contenders.js";
import { type ChatStream, chatStreamOf } from "./streams.js";

const ROUNDS: Record<number, number> = { 1000: 21, 10000: 9 };
const TURN = { rounds: 10, runsPerRound: 100, warmupRuns: 200 };
const TURN_QUICK = { rounds: 2, runsPerRound: 10, warmupRuns: 10 };
const WRITE = fixedChunks(16 * 1024);

interface Content {
  deltas: number;
  key: string;
  generated: GeneratedStream;
  chat: ChatStream;
}

interface Cell extends Content {
  samples: Samples[];
}

const label = (deltas: number) => (deltas >= 1000 ? `${deltas / 1000}k` : String(deltas));

export const chatBenchmark: Benchmark = {
  name: "chat",
  title: "Chat Completions: bytes → assembled response, and one agent turn",
  async run(ctx) {
    const started = Date.now();
    const envStart = environment();
    ctx.log(`## ${this.title}\n${describeEnvironment(envStart)}`);
    const contents: Content[] = (ctx.quick ? [1_000] : [1_000, 10_000]).map((deltas) => {
      const generated = generateStream(deltas);
      return { deltas, key: `chat-${label(deltas)}`, generated, chat: chatStreamOf(generated) };
    });
    const served: ServedStream[] = contents.flatMap((c) => [
      { key: c.key, bytes: c.chat.bytes, ends: endsOf(WRITE.split(c.chat.bytes)) },
      { key: responsesKey(c.key), bytes: c.generated.bytes, ends: endsOf(WRITE.split(c.generated.bytes)) },
    ]);
    const server = await startReplayServer(new URL("../provider/responder.ts", import.meta.url), served);
    const cells: Cell[] = [];
    let eventContenders: ProviderContender[];
    let correctness: string[][];
    try {
      eventContenders = chatEventContenders(server.origin);
      correctness = await checkEvents(eventContenders, contents);
      ctx.log(`\n### Correctness\n${textTable(["contender", ...contents.map((c) => c.key)], correctness)}`);
      if (correctness.some((row) => row.slice(1).some((cell) => cell !== "ok")))
        throw new Error("chat contenders failed verification");
      ctx.log("\nJIT warm-up …");
      const deadline = Date.now() + (ctx.quick ? 500 : 3000);
      while (Date.now() < deadline) for (const c of eventContenders) await c.request(contents[0]?.key ?? "");
      for (const content of contents) {
        collectGarbage();
        const samples = await runRounds(
          eventContenders.map((c) => ({ name: c.name, run: () => c.request(content.key).then(() => {}) })),
          {
            rounds: ctx.quick ? 3 : (ROUNDS[content.deltas] ?? 7),
            baseline: FLOOR_CHAT,
            seed: content.deltas,
          },
        );
        const cell = { ...content, samples };
        cells.push(cell);
        ctx.log(`\n${textTable(EVENT_HEADER, eventRows(cell))}`);
      }
    } finally {
      await server.close();
    }

    const plan = ctx.quick ? TURN_QUICK : TURN;
    const turnContenders = chatTurnContenders();
    const turnCheck = await checkTurns(turnContenders);
    ctx.log(`\n### Turn correctness\n${textTable(["contender", "check"], turnCheck)}`);
    if (turnCheck.some((row) => row[1] !== "ok")) throw new Error("turn contenders failed verification");
    ctx.log(`\nper turn, in-process: warm-up and ${plan.rounds} rounds × ${plan.runsPerRound} runs …`);
    const turns = await measureLoop(turnContenders, { ...plan, seed: 11 });
    ctx.log(`\n${textTable(TURN_HEADER, turnRows(turns))}`);

    const verdict = summary(cells, turns);
    const { envEnd, seconds } = logEnd(ctx, started, verdict);
    const sizes = contents.map(
      (c) =>
        `${label(c.deltas)} deltas: chat ${c.chat.chunks} chunks, ${(c.chat.bytes.length / 1e6).toFixed(2)} MB; Responses ${c.generated.events.length} events, ${(c.generated.bytes.length / 1e6).toFixed(2)} MB`,
    );
    return [
      `## ${this.title}`,
      "",
      describeEnvironment(envStart),
      "",
      `Streams: bench/sse/stream.ts's generated content (80% text deltas, 20% argument deltas of one call) as OpenAI-style chat chunks (bench/chat/streams.ts: a role chunk, one chunk per delta, a finish chunk, a usage chunk, \`[DONE]\`) and as the Open Responses stream it came from; ${sizes.join("; ")}. Served by the replay server (worker thread, node:http on 127.0.0.1) in 16 KiB writes. ${ROUNDS[1000]} rounds at 1k, ${ROUNDS[10000]} at 10k; every contender once per round in a fresh shuffled order; ns/delta = median over rounds ÷ deltas (the same count for both formats); ns/message = median ÷ that format's SSE messages; x floor = median over rounds of t/t(floor-chat) in the same round.`,
      "",
      markdownTable(
        ["contender", "version", "transport", "what it does"],
        eventContenders.map((c) => [c.name, c.version, c.transport, c.what.replaceAll("|", "\\|")]),
        [1, 2, 3],
      ),
      "",
      "### Summary",
      "",
      ...verdict.map((v) => `- ${v}`),
      "",
      "### Per event, over HTTP",
      "",
      markdownTable(EVENT_HEADER, cells.flatMap(eventRows)),
      "",
      "### Per turn, in-process (no socket)",
      "",
      `One agent turn: request #1 → \`noop({"n":1})\` in 3 fragments → the tool runs → request #2 with the assistant tool_calls and the tool message → a 160-character answer in 40 deltas (bench/chat/streams.ts; the Responses row plays bench/loop/responses.ts's same turn as Open Responses events). Transports return pre-generated chunks, one per SSE message, each behind an await. Warm-up ${plan.warmupRuns} runs per contender, then ${plan.rounds} rounds × ${plan.runsPerRound} runs, the contenders alternating run by run in a fresh shuffled order; µs/run = median of all runs; x floor and − floor = median over rounds of the ratio / difference of round medians to floor-chat.`,
      "",
      markdownTable(
        ["contender", "version", "what it does"],
        turnContenders.map((c) => [c.name, c.version, c.what.replaceAll("|", "\\|")]),
        [1, 2],
      ),
      "",
      markdownTable(TURN_HEADER, turnRows(turns)),
      "",
      "### Correctness before timing",
      "",
      'ok = the assembled text and call arguments equal the generated ones (eddy: one provider_event per SSE message plus `[DONE]`, no validation error); per turn: the exact answer and noop called once with {"n":1}, 3 runs each.',
      "",
      markdownTable(["contender", ...contents.map((c) => c.key)], correctness),
      "",
      `Total wall time ${seconds.toFixed(1)} s; loadavg at end ${envEnd.loadavg}.`,
      "",
      headlineLines([headline(cells, turns)], envStart),
    ].join("\n");
  },
};

const isResponses = (name: string) => name === EDDY_RESPONSES;

async function checkEvents(contenders: readonly ProviderContender[], contents: readonly Content[]) {
  const rows: string[][] = [];
  for (const c of contenders) {
    const row = [c.name];
    for (const content of contents) row.push((await verify(c, content)) ?? "ok");
    rows.push(row);
  }
  return rows;
}

async function verify(contender: ProviderContender, content: Content): Promise<string | undefined> {
  let messages = 0;
  let problem: string | undefined;
  const observe = (item: unknown) => {
    if (!isFrame(item)) return;
    if (item.type !== "provider_event") return;
    messages++;
    if (item.errors !== undefined) problem ??= `frame ${item.seq}: ${item.errors.join("; ")}`;
  };
  let result: Awaited<ReturnType<ProviderContender["request"]>>;
  try {
    result = await contender.request(content.key, observe);
  } catch (err) {
    return `threw ${err instanceof Error ? err.message : String(err)}`;
  }
  if (problem !== undefined) return problem;
  const want = (isResponses(contender.name) ? content.generated.events.length : content.chat.chunks) + 1;
  if (contender.name.startsWith("eddy") && messages !== want)
    return `${messages} provider_events, want ${want}`;
  if (result.text !== content.chat.text)
    return `text differs (${result.text.length} vs ${content.chat.text.length} chars)`;
  if (result.arguments !== content.chat.arguments) return "call arguments differ";
  return undefined;
}

async function checkTurns(contenders: ReturnType<typeof chatTurnContenders>): Promise<string[][]> {
  const rows: string[][] = [];
  for (const c of contenders) {
    let problem: string | undefined;
    for (let i = 0; i < 3 && problem === undefined; i++) {
      noopLog.recording = true;
      noopLog.calls = [];
      let deltas = "";
      try {
        const text = await c.run((d) => {
          deltas += d;
        });
        if (text !== ANSWER) problem = `answer differs: ${JSON.stringify(text.slice(0, 40))}`;
        else if (deltas !== ANSWER) problem = "streamed deltas differ from the answer";
        else if (JSON.stringify(noopLog.calls) !== '[{"n":1}]')
          problem = `noop calls ${JSON.stringify(noopLog.calls)}`;
      } catch (err) {
        problem = `threw ${err instanceof Error ? err.message : String(err)}`;
      } finally {
        noopLog.recording = false;
      }
    }
    rows.push([c.name, problem ?? "ok"]);
  }
  return rows;
}

const EVENT_HEADER = ["deltas", "contender", "ns/delta", "ns/message", "x floor-chat", "IQR", "rounds"];

function eventRows(cell: Cell): string[][] {
  return cell.samples.map((s) => {
    const t = median(s.times);
    const messages = isResponses(s.name) ? cell.generated.events.length : cell.chat.chunks;
    return [
      label(cell.deltas),
      s.name,
      num(t / cell.deltas),
      num(t / messages),
      num(median(s.ratios), 2),
      pct(relativeIqr(s.times)),
      String(s.times.length),
    ];
  });
}

const TURN_HEADER = ["contender", "µs/run", "x floor-chat", "− floor-chat µs", "TTFT µs"];

function turnRows(samples: readonly LoopSamples[]): string[][] {
  const floor = samples.find((s) => s.name === FLOOR_CHAT);
  if (floor === undefined) throw new Error("no floor-chat samples");
  const run = (r: { run: number }) => r.run;
  return samples.map((s) => {
    const ratio = paired(s, floor, run, (a, b) => a / b);
    const diff = paired(s, floor, run, (a, b) => a - b);
    return [
      s.name,
      num(medianOf(s, "run") / 1000, 1),
      num(ratio.median, 2),
      num(diff.median / 1000, 1),
      num(medianOf(s, "ttft") / 1000, 1),
    ];
  });
}

/**
 * README's row: eddy's Chat Completions provider per delta (the largest cell) and per in-process
 * turn, and the AI SDK against it in every cell and per turn — the medians of the summary lines.
 */
function headline(cells: readonly Cell[], turns: readonly LoopSamples[]): Headline {
  const t = (cell: Cell, name: string) => median(cell.samples.find((s) => s.name === name)?.times ?? []);
  const turn = (name: string) => medianOf(turns.find((s) => s.name === name) as LoopSamples, "run") / 1000;
  const largest = [...cells].sort((a, b) => b.deltas - a.deltas)[0];
  const perDelta = largest === undefined ? Number.NaN : t(largest, EDDY_CHAT_ON) / largest.deltas / 1000;
  const sdk = cells.map((c) => t(c, AI_SDK) / t(c, EDDY_CHAT_ON));
  return {
    what: `Chat Completions: bytes → assembled response over HTTP, per delta (${largest === undefined ? "" : `${label(largest.deltas)} deltas`}) / one turn in-process`,
    eddy: `${num(perDelta, 1)} µs per delta; ${num(turn(EDDY_CHAT_ON) / 1000, 2)} ms per turn`,
    peers: `AI SDK openai-compatible ${numRange(sdk, 1)}× per delta, \`streamText\` ${num(turn(AI_SDK) / turn(EDDY_CHAT_ON), 1)}× per turn`,
  };
}

/** The comparisons the issue asks for, one line each. */
function summary(cells: readonly Cell[], turns: readonly LoopSamples[]): string[] {
  const lines: string[] = [];
  const t = (cell: Cell, name: string) => median(cell.samples.find((s) => s.name === name)?.times ?? []);
  for (const cell of cells) {
    const chat = t(cell, EDDY_CHAT_ON);
    lines.push(
      `${label(cell.deltas)} deltas, per delta: eddy chat ${num(chat / cell.deltas)} ns (validate off ${num(t(cell, EDDY_CHAT_OFF) / cell.deltas)} ns), eddy Responses on the same content ${num(t(cell, EDDY_RESPONSES) / cell.deltas)} ns, AI SDK openai-compatible ${num(t(cell, AI_SDK) / cell.deltas)} ns (${num(t(cell, AI_SDK) / chat, 1)}× eddy chat), floor ${num(t(cell, FLOOR_CHAT) / cell.deltas)} ns`,
    );
  }
  const turn = (name: string) => medianOf(turns.find((s) => s.name === name) as LoopSamples, "run") / 1000;
  lines.push(
    `per turn (in-process): eddy chat ${num(turn(EDDY_CHAT_ON), 1)} µs, eddy Responses ${num(turn(EDDY_RESPONSES), 1)} µs, AI SDK streamText ${num(turn(AI_SDK), 1)} µs (${num(turn(AI_SDK) / turn(EDDY_CHAT_ON), 1)}× eddy chat), floor ${num(turn(FLOOR_CHAT), 1)} µs`,
  );
  return lines;
}
