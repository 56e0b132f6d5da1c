/**
 * How close to the floor a turn can get while doing what eddy must do and the floor does not
 * (bench/README.md, "What a turn must cost"). Three contenders alternate run by run in shuffled
 * order against the loop bench's replay server (writes `event`), alone in this process:
 *
 *   floor-loop node:http   the minimal loop (bench/provider/floor.ts)
 *   floor + obligations    the same loop, plus: every event validated with eddy's own validators
 *                          (`validateStreamingEvent`), each response assembled by eddy's own
 *                          assembler (`step`, `finishAssembly`: items, calls, text), a frame made and
 *                          stamped (run id, seq, time) per event and per text delta, lifecycle frames
 *                          (run, request, tool call, run end), every frame handed to a consumer
 *                          through an async iterator (one promise per frame), the tool call bounded
 *                          by a timer, as a tool's timeout is
 *   provider + channel     the same loop over eddy's own provider (`createOpenResponsesProvider`:
 *                          transport, watchdog, retries, SSE decoding, validation, assembly, derived
 *                          frames, pushed as groups) and eddy's own `FrameChannel` (stamping,
 *                          redaction, the consumer's iterator): eddy's turn without its loop layer
 *                          (`runAgent`: the spec, registry, policy, history, tool runner, conversation)
 *   eddy (validate on)     `runAgent`, as the loop bench runs it
 *
 * The second contender is not a product: it is the lower bound of a redesigned turn — the price of
 * the work every turn needs, paid in one pass — against which eddy's layers can be judged; the
 * third splits what eddy adds over it between the provider and channel, and the loop layer. Each
 * contender's phases are printed too: from the run's start to request #1 reaching the server,
 * from response #1's last byte to request #2, and from response #2's last byte to the run's end.
 *
 *   node --import tsx bench/loop/obligations.ts [--rounds 9] [--runs 150] [--warmup 300] [--validate off]
 *
 * `node --import tsx bench/loop/footprint.ts --contenders floor,sketch,eddy` counts its footprint.
 */
import { fileURLToPath } from "node:url";
import type * as FrameModule from "../../src/frames/frame.js";
import type * as ChannelModule from "../../src/loop/frame-channel.js";
import type * as ValidateModule from "../../src/protocol/validate.js";
import type * as AssemblerModule from "../../src/provider/assembler/index.js";
import type * as OpenResponsesModule from "../../src/provider/open-responses.js";
import { importBuilt } from "../built.js";
import { median } from "../harness.js";
import { floorParser, nodeHttpPoster } from "../provider/floor.js";
import { startReplayServer } from "../provider/replay-server.js";
import {
  EDDY_ON,
  FLOOR_LOOP_NODE,
  type LoopContender,
  loopContenders,
  NOOP_DECLARATION,
} from "./contenders.js";
import { type LoopSamples, measureLoop, type RunSample, roundMedians } from "./measure.js";
import { ANSWER, MODEL, PROMPT } from "./responses.js";

const { validateStreamingEvent } = await importBuilt<typeof ValidateModule>("protocol/validate.js");
const { createAssembly, finishAssembly, step } = await importBuilt<typeof AssemblerModule>(
  "provider/assembler/index.js",
);
const { createOpenResponsesProvider } = await importBuilt<typeof OpenResponsesModule>(
  "provider/open-responses.js",
);
const { FrameChannel } = await importBuilt<typeof ChannelModule>("loop/frame-channel.js");
const { frame } = await importBuilt<typeof FrameModule>("frames/frame.js");

function option(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? fallback : (process.argv[i + 1] ?? fallback);
}

/** A frame as the sketch makes them: the envelope eddy stamps, and the payload. */
type SketchFrame = { run_id: string; seq: number; ts: number; type: string } & Record<string, unknown>;

/** The frames of one run, read by a consumer through an async iterator, one promise per frame. */
class Frames {
  private readonly frames: SketchFrame[] = [];
  private seq = 0;
  private wake: (() => void) | undefined;
  private done = false;

  emit(type: string, payload: Record<string, unknown> = {}): void {
    this.frames.push({ run_id: "run_sketch", seq: this.seq++, ts: Date.now(), type, ...payload });
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  close(): void {
    this.done = true;
    this.wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<SketchFrame> {
    for (let i = 0; ; ) {
      if (i < this.frames.length) yield this.frames[i++] as SketchFrame;
      else if (this.done) return;
      else
        await new Promise<void>((resolve) => {
          this.wake = resolve;
        });
    }
  }
}

/** The floor loop with eddy's obligations (see the module comment). */
export function withObligations(origin: string, validate: boolean): LoopContender {
  const post = nodeHttpPoster(`${origin}/v1/responses`);
  return {
    name: "floor + obligations",
    version: "-",
    what: "the floor loop plus validation, eddy's assembler, stamped frames and their consumer",
    run: async (onDelta) => {
      const frames = new Frames();
      const consumed = (async () => {
        for await (const f of frames) if (f.type === "output_text_delta") onDelta(f.delta as string);
      })();
      const exchange = async (request: Record<string, unknown>) => {
        const assembly = createAssembly();
        frames.emit("request_started", { body: request });
        const parse = floorParser((event) => {
          const errors = validate ? validateStreamingEvent(event) : undefined;
          step(assembly, event);
          frames.emit("provider_event", errors === undefined ? { data: event } : { data: event, errors });
          if (event.type === "response.output_text.delta")
            frames.emit("output_text_delta", { delta: event.delta });
        });
        await post(JSON.stringify({ ...request, stream: true }), parse);
        return finishAssembly(assembly);
      };
      frames.emit("run_started", { model: MODEL });
      const input = [{ type: "message", role: "user", content: PROMPT }];
      const first = await exchange({ model: MODEL, input, tools: [NOOP_DECLARATION] });
      const call = first.calls[0];
      if (call === undefined) throw new Error("floor + obligations: response #1 has no function call");
      frames.emit("tool_call", { call_id: call.callId, name: call.name, arguments: call.arguments });
      const output = await boundedNoop(call.arguments);
      frames.emit("tool_ended", { call_id: call.callId, output });
      const answer = { type: "function_call_output", call_id: call.callId, output };
      const second = await exchange({
        model: MODEL,
        previous_response_id: first.id,
        input: [answer],
        tools: [NOOP_DECLARATION],
      });
      frames.emit("run_ended", { output_text: second.outputText });
      frames.close();
      await consumed;
      return second.outputText;
    },
  };
}

/** The tool call as both sketches run it: the noop's arguments parsed, bounded by a timer. */
function boundedNoop(args: string): Promise<string> {
  return new Promise<string>((resolve) => {
    const timer = setTimeout(() => resolve("timed out"), 60_000);
    void Promise.resolve(JSON.parse(args)).then(() => {
      clearTimeout(timer);
      resolve("ok");
    });
  });
}

/** The sketch's loop over eddy's provider and frame channel (see the module comment). */
export function providerAndChannel(origin: string): LoopContender {
  const provider = createOpenResponsesProvider({ baseURL: `${origin}/v1` });
  const tools = [NOOP_DECLARATION];
  return {
    name: "provider + channel",
    version: "-",
    what: "the sketch's loop over eddy's provider (createOpenResponsesProvider) and FrameChannel",
    run: async (onDelta) => {
      const channel = new FrameChannel({ runId: "run_sketch" });
      const consumed = (async () => {
        for await (const f of channel) if (f.type === "output_text_delta") onDelta(f.delta);
      })();
      const exchange = async (body: Record<string, unknown>, turn: number) => {
        const stream = provider.stream({ body: body as never, turn, firstAttempt: 1 }, {});
        if (stream.pumpGroups === undefined) throw new Error("provider + channel: no pumpGroups");
        await stream.pumpGroups((group) => {
          channel.emitGroup(group);
          return true;
        });
        const outcome = await stream.result;
        if (!outcome.ok) throw new Error(`provider + channel: ${outcome.error.message}`);
        return outcome.response;
      };
      channel.emit(frame("run_started", { model: MODEL, mode: "chained", input: PROMPT, tools: ["noop"] }));
      const input = [{ type: "message", role: "user", content: PROMPT }];
      const first = await exchange({ model: MODEL, input, tools }, 0);
      const call = first.calls[0];
      if (call === undefined) throw new Error("provider + channel: response #1 has no function call");
      const { callId, name } = call;
      const { itemId: item_id, outputIndex: output_index } = call;
      const args = call.arguments;
      channel.emit(
        frame("tool_call", { turn: 0, call_id: callId, item_id, name, arguments: args, output_index }),
      );
      const began = performance.now();
      const output = await boundedNoop(args);
      const duration_ms = performance.now() - began;
      channel.emit(frame("tool_ended", { turn: 0, call_id: callId, name, ok: true, output, duration_ms }));
      const answer = { type: "function_call_output", call_id: callId, output };
      const second = await exchange(
        { model: MODEL, previous_response_id: first.id, input: [answer], tools },
        1,
      );
      channel.emit(frame("run_ended", { reason: "completed", output_text: second.outputText } as never));
      channel.close();
      await consumed;
      return second.outputText;
    },
  };
}

/** µs medians of the phases eddy's layers add to (see the module comment). */
function phases(s: LoopSamples): string {
  const at = (value: (r: RunSample) => number) => (median(roundMedians(s, value)) / 1000).toFixed(0);
  return `| ${s.name} | ${at((r) => r.a)} | ${at((r) => r.c)} | ${at((r) => r.e)} |`;
}

async function main(): Promise<void> {
  const rounds = Number(option("rounds", "9"));
  const runsPerRound = Number(option("runs", "150"));
  const warmupRuns = Number(option("warmup", "300"));
  const validate = option("validate", "on") !== "off";
  const server = await startReplayServer(new URL("./responses.ts", import.meta.url), "event");
  try {
    const all = loopContenders(server.origin);
    const pick = (name: string) => {
      const found = all.find((c) => c.name === name);
      if (found === undefined) throw new Error(`no loop contender named ${name}`);
      return found;
    };
    const contenders = [
      pick(FLOOR_LOOP_NODE),
      withObligations(server.origin, validate),
      providerAndChannel(server.origin),
      pick(EDDY_ON),
    ];
    // Checked before timing: each gives the answer, with its deltas, over exactly two requests.
    for (const c of contenders) {
      const deltas: string[] = [];
      const before = server.served();
      const text = await c.run((d) => deltas.push(d));
      if (text !== ANSWER || deltas.join("") !== ANSWER || !server.waitServed(before + 2))
        throw new Error(`${c.name}: wrong answer or requests (${JSON.stringify(text.slice(0, 40))})`);
    }
    const samples = await measureLoop(contenders, { rounds, runsPerRound, warmupRuns, seed: 11, server });
    const [floor, ...rest] = samples.map((s) => roundMedians(s, (r) => r.run)) as [number[], ...number[][]];
    console.log(`${rounds} rounds × ${runsPerRound} runs after ${warmupRuns} warm-up runs, writes event`);
    console.log(`| contender | µs a turn | × floor-loop node:http |`);
    console.log(`| :-- | --: | --: |`);
    console.log(`| ${FLOOR_LOOP_NODE} | ${(median(floor) / 1000).toFixed(0)} | 1.00 |`);
    rest.forEach((times, i) => {
      const ratio = median(times.map((t, r) => t / (floor[r] as number)));
      const name = contenders[i + 1]?.name ?? "?";
      const label = name === "floor + obligations" && !validate ? `${name} (validation off)` : name;
      console.log(`| ${label} | ${(median(times) / 1000).toFixed(0)} | ${ratio.toFixed(2)} |`);
    });
    console.log("\n| contender | start → request #1 (µs) | response #1 → request #2 | response #2 → end |");
    console.log("| :-- | --: | --: | --: |");
    for (const s of samples) console.log(phases(s));
  } finally {
    await server.close();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await main();
  process.exit(0);
}
