/**
 * The package as users get it: `npm pack`, unpacked into a fresh consumer project, imported by
 * its public entries (`eddy`, `eddy/mock`, `eddy/replay`, `eddy/protocol`, `eddy/sse`, `eddy/mcp`,
 * `eddy/ai-sdk`) — type-checked
 * with the consumer's own strict tsconfig and run with node. Nothing is downloaded: the
 * package's dependencies are linked from this repository's node_modules.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
  dependencies: Record<string, string>;
  exports: Record<string, unknown>;
};

const CONSUMER_TS = `
import { createBuiltinTools, createOpenResponsesProvider, createToolRegistry, runAgent, type Frame, type RunResult } from "eddy";
import { createMockServer, type Scenario } from "eddy/mock";
import { createTapeHeader, createTapeRecorder, readTape, replayTape, type ReplayVerdict } from "eddy/replay";
import { validateStreamingEvent, type CreateResponseBody } from "eddy/protocol";
import { createSseDecoder, type SseMessage } from "eddy/sse";
import { runBatch, type BatchResult } from "eddy/batch";
import { createMcpTools, type McpTools } from "eddy/mcp";
import { createAiSdkProvider, type AiSdkLanguageModel } from "eddy/ai-sdk";
import { createServeClient, type RunEvent, type ServeClient } from "eddy/client";

const mcp: McpTools = createMcpTools({ fs: { command: "node", args: ["server.js"] } }, { env: {} });
// Any AI SDK 6 model fits the structural type; no AI SDK package is needed to type-check this.
const model: AiSdkLanguageModel = {
  specificationVersion: "v3",
  provider: "test",
  modelId: "m",
  doStream: async () => ({ stream: new ReadableStream() }),
};
const aiSdk = createAiSdkProvider({ model, name: "test" });
const scenario: Scenario = { turns: [{ items: [{ type: "message", text: "typed" }] }] };
const body: CreateResponseBody = { model: "m", input: "hi" };
const messages: SseMessage[] = [];
createSseDecoder({ onMessage: (m) => messages.push(m) });
const errors: string[] | undefined = validateStreamingEvent({ type: "nope" }) ?? undefined;
async function main(): Promise<RunResult> {
  const server = await createMockServer({ scenario });
  const provider = createOpenResponsesProvider({ baseURL: server.url });
  const { tools, disabled } = createBuiltinTools();
  const run = runAgent({ model: body.model ?? null, input: "hi" }, { provider, tools: createToolRegistry(tools, { disabled }) });
  const frames: Frame[] = [];
  for await (const f of run) frames.push(f);
  await server.close();
  return run.result;
}
const client: ServeClient = createServeClient({ baseUrl: "http://127.0.0.1:7341", token: "t" });
async function follow(id: string): Promise<RunEvent[]> {
  const seen: RunEvent[] = [];
  for await (const e of client.events(id, { after: 3 })) seen.push(e);
  return seen;
}
const verdict: ReplayVerdict | undefined = undefined;
const finished: BatchResult[] = [];
export { main, follow, errors, mcp, aiSdk, verdict, finished, runBatch, createTapeHeader, createTapeRecorder, readTape, replayTape };
`;

const CONSUMER_MJS = `
import { createBuiltinTools, createOpenResponsesProvider, createToolRegistry, resolveRunSpec, runAgent } from "eddy";
import { createMockServer } from "eddy/mock";
import { createTapeHeader, createTapeRecorder, readTape, replayTape } from "eddy/replay";
import { validateStreamingEvent } from "eddy/protocol";
import { createSseDecoder } from "eddy/sse";

const server = await createMockServer();
const provider = createOpenResponsesProvider({ baseURL: server.url, name: "mock" });
const { tools, disabled } = createBuiltinTools();
const registry = createToolRegistry(tools, { disabled });
const spec = resolveRunSpec({ model: "eddy-demo", input: "What is in package.json?", run_id: "run_pack" });
const recorder = createTapeRecorder("run.tape", createTapeHeader(spec, { provider, validate: true }));
const run = runAgent(spec, { provider, tools: registry, workspace: process.cwd(), onFrame: recorder.observer });
for await (const _ of run);
recorder.close();
const result = await run.result;
await server.close();
const replayed = await replayTape(readTape("run.tape"), { registry, workspace: process.cwd() });
const seen = [];
const decoder = createSseDecoder({ onMessage: (m) => seen.push(m.data) });
decoder.feed("data: a\\n\\ndata: b\\n\\n");
decoder.end();
console.log(JSON.stringify({
  reason: result.reason,
  toolCalls: result.toolCalls,
  replay: replayed.verdict.match,
  invalid: validateStreamingEvent({ type: "response.output_text.delta" }) !== undefined,
  sse: seen,
}));
`;

let consumer: string;

beforeAll(() => {
  const tmp = mkdtempSync(join(tmpdir(), "eddy-pack-"));
  const packed = execFileSync("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", tmp], {
    cwd: ROOT,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "ignore"],
  });
  const [{ filename }] = JSON.parse(packed) as [{ filename: string }];
  consumer = join(tmp, "consumer");
  const modules = join(consumer, "node_modules");
  mkdirSync(join(modules, "eddy"), { recursive: true });
  execFileSync("tar", ["-xzf", join(tmp, filename), "-C", join(modules, "eddy"), "--strip-components=1"]);
  // The package's dependencies (and types for node), linked from this repository.
  for (const dep of [...Object.keys(pkg.dependencies), "@types/node"]) {
    mkdirSync(dirname(join(modules, dep)), { recursive: true });
    symlinkSync(join(ROOT, "node_modules", dep), join(modules, dep), "dir");
  }
  writeFileSync(
    join(consumer, "package.json"),
    JSON.stringify({ name: "consumer", type: "module", private: true }),
  );
  writeFileSync(
    join(consumer, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        target: "ES2023",
        module: "NodeNext",
        moduleResolution: "NodeNext",
        strict: true,
        noEmit: true,
        types: ["node"],
        // Only this project's own code is checked, as a user's would be.
        skipLibCheck: false,
      },
      files: ["index.ts"],
    }),
  );
  writeFileSync(join(consumer, "index.ts"), CONSUMER_TS);
  writeFileSync(join(consumer, "run.mjs"), CONSUMER_MJS);
}, 120_000);

describe("the packed package in a fresh project", () => {
  it("declares the entries", () => {
    expect(Object.keys(pkg.exports).sort()).toEqual(
      [
        ".",
        "./ai-sdk",
        "./batch",
        "./client",
        "./mcp",
        "./mock",
        "./package.json",
        "./protocol",
        "./replay",
        "./sse",
        "./telemetry",
      ].sort(),
    );
  });

  it("type-checks a consumer importing every entry, with the package's own declaration files", () => {
    // TypeScript 7, what `npm i typescript` installs today (TypeScript 5 checked it the same way in four
    // times the CPU time: bench/README.md, "The test suite").
    const tsc = join(ROOT, "node_modules", "typescript-7", "bin", "tsc");
    let output = "";
    try {
      execFileSync(process.execPath, [tsc, "-p", consumer], { cwd: consumer, encoding: "utf8" });
    } catch (err) {
      output = String((err as { stdout?: string }).stdout ?? err);
    }
    expect(output).toBe("");
    // A hang guard only: checking every declaration file takes about 5 s on a quiet 2-core machine
    // (TypeScript 5 took 30 s, and over 3 minutes at load 17).
  }, 600_000);

  it("runs a recorded agent run on the mock and replays it, through the entries only", () => {
    const out = execFileSync(process.execPath, ["run.mjs"], { cwd: consumer, encoding: "utf8" });
    expect(JSON.parse(out)).toEqual({
      reason: "completed",
      toolCalls: 1,
      replay: true,
      invalid: true,
      sse: ["a", "b"],
    });
  }, 180_000);
});
