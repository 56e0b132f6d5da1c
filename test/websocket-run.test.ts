/**
 * Whole runs in WebSocket mode: the agent loop over the Open Responses provider with
 * `streamTransport: "websocket"` against the mock server's WebSocket mode — a tool loop over one
 * connection, a connection dropped mid-run (chained on a stored response: reconnect and go on;
 * chained on a `store: false` response: the run goes stateless with `mode_changed`), each replayed
 * from its tape — and the same through the CLI (`eddy run --transport websocket`, `eddy replay`).
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Frame } from "../src/frames/frame.js";
import { parseFrames } from "../src/frames/jsonl.js";
import { runAgent } from "../src/loop/run.js";
import type { RunSpecInput } from "../src/loop/run-spec.js";
import { createMockServer, type MockServer, type Scenario } from "../src/mock/index.js";
import { createOpenResponsesProvider } from "../src/provider/open-responses.js";
import type { Provider } from "../src/provider/provider.js";
import { createTapeHeader } from "../src/replay/header.js";
import { replayTape } from "../src/replay/replay.js";
import { createBuiltinTools } from "../src/tools/builtin/index.js";
import { createToolRegistry } from "../src/tools/registry.js";
import { cleanEnv, runCli } from "./support/cli.js";

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

function workspace(): string {
  const dir = mkdtempSync(join(tmpdir(), "eddy-ws-run-"));
  writeFileSync(join(dir, "package.json"), '{ "name": "demo-app", "version": "1.2.3" }\n');
  writeFileSync(join(dir, "notes.txt"), "hi from the notes\n");
  return dir;
}

async function mock(scenario?: Scenario): Promise<MockServer> {
  const server = await createMockServer(scenario === undefined ? {} : { scenario });
  closers.push(() => server.close());
  return server;
}

function wsProvider(server: MockServer): Provider {
  const provider = createOpenResponsesProvider({
    baseURL: server.url,
    name: "mock",
    streamTransport: "websocket",
    retry: { initialBackoffMs: 1, maxBackoffMs: 2 },
  });
  closers.push(async () => provider.close?.());
  return provider;
}

/** Runs the agent, then replays its tape; returns the frames and the replay's verdict. */
async function runAndReplay(options: Partial<RunSpecInput> & { provider: Provider }, dir: string) {
  const { tools } = createBuiltinTools({});
  const { provider, ...spec } = options;
  const handle = runAgent(
    { input: "hi", ...spec },
    { provider, tools: createToolRegistry(tools), workspace: dir },
  );
  const frames: Frame[] = [];
  for await (const f of handle) frames.push(f);
  const result = await handle.result;
  const header = createTapeHeader(handle.spec, { provider });
  const replay = await replayTape(
    { header, frames },
    { registry: createToolRegistry(createBuiltinTools({}).tools), workspace: dir },
  );
  return { frames, result, replay };
}

const ofType = <T extends Frame["type"]>(frames: Frame[], type: T) =>
  frames.filter((f): f is Extract<Frame, { type: T }> => f.type === type);

/** A tool call, a turn whose connection drops after 2 events, then the answer. */
function dropScenario(answerExpect: Scenario["turns"][number]["expect"]): Scenario {
  return {
    turns: [
      {
        items: [
          { type: "function_call", name: "read_file", arguments: { path: "notes.txt" }, call_id: "call_1" },
        ],
      },
      { items: [{ type: "message", text: "never seen" }], faults: { dropAfterEvents: 2 } },
      { expect: answerExpect, items: [{ type: "message", text: "The notes say hi." }] },
    ],
  };
}

describe("runs in WebSocket mode", () => {
  it("runs a multi-turn tool loop over one connection, and replays it", async () => {
    const server = await mock();
    const dir = workspace();
    const { frames, result, replay } = await runAndReplay(
      { provider: wsProvider(server), model: "eddy-demo", input: "What is in package.json and notes.txt?" },
      dir,
    );
    expect(result.reason).toBe("completed");
    expect(ofType(frames, "tool_ended").length).toBeGreaterThanOrEqual(2);
    expect(result.turns).toBeGreaterThanOrEqual(2);
    const started = ofType(frames, "request_started");
    expect(started.every((f) => f.transport === "websocket")).toBe(true);
    // Every follow-up chains on the previous response, all on one socket.
    expect(started.slice(1).every((f) => typeof f.body.previous_response_id === "string")).toBe(true);
    expect(server.stats).toMatchObject({
      connections: 1,
      websocket: { connections: 1, messages: result.turns },
    });
    expect(replay.verdict).toEqual({ match: true, frames: frames.length });
  });

  it("survives a dropped connection: reconnects and continues the chain (store true)", async () => {
    const server = await mock(dropScenario({ previousResponseId: true, functionCallOutputs: "call_1" }));
    const { frames, result, replay } = await runAndReplay(
      { provider: wsProvider(server), model: "m", input: "Read notes.txt" },
      workspace(),
    );
    expect(result.reason).toBe("completed");
    expect(result.outputText).toBe("The notes say hi.");
    const failed = ofType(frames, "request_failed");
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ turn: 1, attempt: 1, kind: "connection", retryable: true });
    expect(ofType(frames, "retry")[0]).toMatchObject({ turn: 1, attempt: 2 });
    expect(ofType(frames, "mode_changed")).toEqual([]);
    expect(server.stats.websocket.connections).toBe(2);
    expect(replay.verdict).toEqual({ match: true, frames: frames.length });
  });

  it("a dropped connection loses a store:false chain: the run resends its history statelessly", async () => {
    const server = await mock(
      dropScenario({ functionCallOutputs: "call_1", inputContains: "Read notes.txt" }),
    );
    const { frames, result, replay } = await runAndReplay(
      { provider: wsProvider(server), model: "m", input: "Read notes.txt", request: { store: false } },
      workspace(),
    );
    expect(result.reason).toBe("completed");
    const turn1 = frames.filter((f) => "turn" in f && f.turn === 1);
    expect(turn1.map((f) => f.type).filter((t) => t !== "provider_event")).toEqual([
      "request_started", // on the first connection, chained on a store:false response
      "request_failed", // dropped
      "retry",
      "request_started",
      "request_failed", // the response lived on the closed connection: not sent
      "mode_changed",
      "request_started", // the whole history, on a new connection
      "output_text_delta",
      "output_text_delta",
      "output_text_delta",
      "output_text_delta",
      "turn_ended",
    ]);
    const [, lost] = ofType(turn1, "request_failed");
    expect(lost).toMatchObject({ attempt: 2, code: "previous_response_not_found", retryable: false });
    expect(ofType(turn1, "mode_changed")[0]).toMatchObject({ from: "chained", to: "stateless" });
    const resent = ofType(turn1, "request_started")[2];
    expect(resent).toMatchObject({ attempt: 3, body: { store: false } });
    expect(resent?.body.previous_response_id).toBeUndefined();
    // The lost continuation never reached the server: 3 messages (turn 0, the dropped one, the resend).
    expect(server.stats.websocket).toMatchObject({ connections: 2, messages: 3 });
    expect(replay.verdict).toEqual({ match: true, frames: frames.length });
  });
});

describe("eddy run --transport websocket", () => {
  it("runs against eddy mock over one connection, and the tape replays", async () => {
    const server = await mock();
    const dir = workspace();
    const tape = join(dir, "run.tape");
    const r = await runCli(
      [
        "run",
        "--transport",
        "websocket",
        "--base-url",
        server.url,
        "--model",
        "eddy-demo",
        "--record",
        tape,
        "--json",
        "Read notes.txt",
      ],
      { cwd: dir },
    );
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const frames = parseFrames(r.stdout);
    expect(frames.at(-1)).toMatchObject({ type: "run_ended", reason: "completed" });
    expect(ofType(frames, "request_started").every((f) => f.transport === "websocket")).toBe(true);
    expect(ofType(frames, "tool_ended")).toHaveLength(1);
    expect(server.stats).toMatchObject({ connections: 1, websocket: { connections: 1, messages: 2 } });
    // The CLI closed its connection when the run ended.
    expect(server.stats.websocket.open).toBe(0);
    expect(readFileSync(tape, "utf8")).toContain('"transport":"websocket"');
    const replay = await runCli(["replay", tape], { cwd: dir });
    expect(replay.code).toBe(0);
  });

  it("survives a dropped connection mid-run, and the tape replays", async () => {
    const server = await mock(dropScenario({ previousResponseId: true }));
    const dir = workspace();
    const tape = join(dir, "drop.tape");
    const r = await runCli(
      [
        "run",
        "--transport",
        "websocket",
        "--base-url",
        server.url,
        "--model",
        "m",
        "--record",
        tape,
        "--json",
        "go",
      ],
      { cwd: dir },
    );
    expect(r.code).toBe(0);
    const frames = parseFrames(r.stdout);
    expect(ofType(frames, "request_failed")).toHaveLength(1);
    expect(frames.at(-1)).toMatchObject({ reason: "completed", output_text: "The notes say hi." });
    expect(server.stats.websocket.connections).toBe(2);
    expect((await runCli(["replay", tape], { cwd: dir })).code).toBe(0);
  });

  it("takes transport from the config file, and refuses websocket with chat-completions (exit 2)", async () => {
    const dir = workspace();
    writeFileSync(join(dir, "eddy.config.json"), JSON.stringify({ transport: "websocket" }));
    const config = await runCli(["config", "--base-url", "http://127.0.0.1:9/v1"], {
      cwd: dir,
      env: cleanEnv(),
    });
    expect(config.stdout).toMatch(/transport\s+websocket\s+\(config: /);
    const chat = await runCli(
      ["run", "--api", "chat-completions", "--base-url", "http://127.0.0.1:9/v1", "hi"],
      {
        cwd: dir,
      },
    );
    expect(chat.code).toBe(2);
    expect(chat.stderr).toMatch(/Chat Completions has no WebSocket mode/);
    const bad = await runCli(["run", "--transport", "carrier-pigeon", "hi"], { cwd: dir });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--transport must be sse or websocket/);
  });
});
