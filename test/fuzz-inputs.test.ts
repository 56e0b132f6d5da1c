/**
 * Fuzzing the untrusted inputs read from files and servers (fast-check): tasks files, thread logs,
 * config files, MCP tool results. The property everywhere: a correct result or a clear error (an
 * `EddyError` of one line, or a bad line reported with its number) — never a TypeError, a
 * RangeError or an "internal error". Sizes are bounded by the arbitraries, so memory is too.
 * `EDDY_FUZZ_RUNS` / `EDDY_FUZZ_SEED` (test/support/fuzz.ts) make it the long form.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { parseTasks, tapeFileName } from "../src/batch/task.js";
import { main } from "../src/cli/main.js";
import type { CliIo } from "../src/cli/run-command.js";
import { asThreadRecord, createThreadStore, parseThreadLog } from "../src/context/threads.js";
import { prepareThreadRun } from "../src/context/threads-run.js";
import { estimateCounter } from "../src/history/tokens.js";
import { ToolHistoryManager } from "../src/history/tool-history.js";
import { mcpResultToToolResult } from "../src/tools/mcp/result.js";
import { encodeToolOutput, toToolOutput } from "../src/tools/output.js";
import {
  fuzzParams,
  fuzzTimeout,
  isClearError,
  mangled,
  nastyJson,
  nastyString,
  objectWith,
} from "./support/fuzz.js";
import { createScriptedProvider } from "./support/scripted.js";

const root = mkdtempSync(join(tmpdir(), "eddy-fuzz-inputs-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let case_ = 0;
const freshDir = () => {
  const dir = join(root, `c${case_++}`);
  mkdirSync(dir, { recursive: true });
  return dir;
};

const lines = (line: fc.Arbitrary<string>) =>
  fc
    .tuple(fc.array(line, { maxLength: 8 }), fc.constantFrom("\n", "\r\n"), fc.boolean())
    .map(([ls, eol, ended]) => ls.join(eol) + (ended ? eol : ""));

// ---------------------------------------------------------------------------------------------
// Tasks files

const schemaLike = fc.oneof(
  fc.constant({ type: "object", properties: { a: { type: "string" } }, required: ["a"] }),
  fc.constant({ type: "object", properties: { p: { type: "string", pattern: "(" } } }),
  fc.constant({ $ref: "#/nope" }),
  fc.constant({ type: "strange" }),
  nastyJson,
);
const inputItem = fc.oneof(
  fc.constant({ type: "message", role: "user", content: "hi" }),
  objectWith({ type: fc.constantFrom("message", "function_call"), role: nastyString, content: nastyJson }),
  nastyJson,
);
const taskRecord = objectWith({
  id: fc.oneof(nastyString, fc.integer(), fc.double()),
  prompt: nastyString,
  input: fc.oneof(nastyString, fc.array(inputItem, { maxLength: 3 })),
  model: fc.oneof(nastyString, fc.constant(null)),
  instructions: nastyString,
  schema: schemaLike,
  metadata: nastyJson,
  max_turns: fc.oneof(fc.integer({ min: -2, max: 50 }), fc.double()),
  max_tool_calls: fc.integer({ min: -2, max: 50 }),
});
const taskLine = mangled(taskRecord.map((r) => JSON.stringify(r)));

describe("fuzz: tasks files (parseTasks)", () => {
  it(
    "every non-blank line is a well-formed task or a bad line with a one-line reason; ids unique, tapes safe",
    () => {
      fc.assert(
        fc.property(lines(taskLine), (text) => {
          const { tasks, bad } = parseTasks(text);
          const nonBlank = text.split("\n").filter((l) => l.trim() !== "").length;
          expect(tasks.length + bad.length).toBe(nonBlank);
          for (const b of bad) {
            expect(b.message).not.toMatch(/\n/);
            expect(b.line).toBeGreaterThanOrEqual(1);
          }
          const ids = tasks.map((t) => t.id);
          expect(new Set(ids).size).toBe(ids.length);
          for (const t of tasks) {
            expect(typeof t.id).toBe("string");
            expect(t.id.trim()).not.toBe("");
            const input = t.spec.input;
            expect(typeof input === "string" ? input.trim() !== "" : Array.isArray(input)).toBe(true);
            expect(tapeFileName(t.id)).toMatch(/^[A-Za-z0-9][A-Za-z0-9._-]*\.tape$/);
            JSON.stringify(t); // a task must travel as a queue job
          }
        }),
        fuzzParams(300),
      );
    },
    fuzzTimeout(300, 20_000),
  );
});

// ---------------------------------------------------------------------------------------------
// Thread logs

const usage = fc.oneof(
  fc.constant(null),
  fc.constant({ input_tokens: 1, output_tokens: 2, total_tokens: 3 }),
  nastyJson,
);
const historyItem = fc.oneof(
  fc.constant({ type: "message", role: "assistant", content: [{ type: "output_text", text: "ok" }] }),
  fc.constant({ type: "function_call", call_id: "c1", name: "read_file", arguments: "{}" }),
  fc.constant({ type: "function_call_output", call_id: "c1", output: "x" }),
  objectWith({
    type: fc.constantFrom("message", "function_call", "function_call_output", "reasoning", "weird"),
    role: fc.constantFrom("user", "assistant", "system", "x"),
    content: fc.oneof(
      nastyString,
      fc.array(objectWith({ type: nastyString, text: nastyJson }), { maxLength: 2 }),
    ),
    call_id: nastyString,
    name: nastyString,
    arguments: nastyJson,
    output: nastyJson,
  }),
);
const runId = fc.constantFrom("r1", "r2", "r3");
const threadRecord = fc.oneof(
  objectWith({
    v: fc.constant(1),
    kind: fc.constant("prompt"),
    run_id: runId,
    ts: fc.integer({ min: 0 }),
    prompt: nastyString,
    model: fc.oneof(nastyString, fc.constant(null)),
    bundle_id: nastyString,
  }),
  objectWith({
    v: fc.constant(1),
    kind: fc.constant("outcome"),
    run_id: runId,
    ts: fc.integer({ min: 0 }),
    reason: nastyString,
    output_text: nastyString,
    items: fc.array(historyItem, { maxLength: 4 }),
    usage,
    tape: nastyString,
  }),
);
const threadText = fc
  .array(mangled(threadRecord.map((r) => JSON.stringify(r))), { maxLength: 8 })
  .chain((ls) =>
    fc
      .tuple(fc.constant(ls), fc.array(fc.nat(), { maxLength: 2 }), fc.boolean())
      .map(([all, glue, ended]) => {
        // Some records glued to the one before them, as a torn line leaves them.
        let text = "";
        all.forEach((l, i) => {
          text += (i > 0 && glue.includes(i) ? "" : i > 0 ? "\n" : "") + l;
        });
        return ended && text !== "" ? `${text}\n` : text;
      }),
  );

describe("fuzz: thread logs", () => {
  it(
    "parseThreadLog keeps only well-formed records and never throws",
    () => {
      fc.assert(
        fc.property(threadText, (text) => {
          const log = parseThreadLog("t", text);
          expect(log.skipped).toBeGreaterThanOrEqual(0);
          for (const run of log.runs) {
            expect(asThreadRecord(run.prompt)).toBeDefined();
            if (run.outcome !== undefined) expect(asThreadRecord(run.outcome)).toBeDefined();
            expect(run.prompt.run_id).toBe(run.run_id);
          }
        }),
        fuzzParams(500),
      );
    },
    fuzzTimeout(500, 20_000),
  );

  it(
    "a run on a fuzzed thread, and eddy threads show, end in a result or a clear error",
    async () => {
      const provider = createScriptedProvider([{ items: [{ type: "message", text: "ok" }] }]);
      await fc.assert(
        fc.asyncProperty(threadText, async (text) => {
          const ws = freshDir();
          mkdirSync(join(ws, ".eddy", "threads"), { recursive: true });
          writeFileSync(join(ws, ".eddy", "threads", "t.jsonl"), text);
          const store = createThreadStore({ workspace: ws });
          const manager = new ToolHistoryManager({ provider, model: "m", tokenCounter: estimateCounter });
          try {
            const prepared = await prepareThreadRun({
              store,
              thread: "t",
              prompt: "next",
              runId: "rN",
              model: "m",
              manager,
            });
            expect(prepared.input.length).toBeGreaterThanOrEqual(1);
          } catch (error) {
            expect(isClearError(error), String((error as Error)?.stack)).toBe(true);
          }
          const shown = await cli(["threads", "show", "t", "--workspace", ws], ws);
          expect(shown.stderr).not.toMatch(/internal error/);
          expect([0, 2]).toContain(shown.code);
        }),
        fuzzParams(60),
      );
    },
    fuzzTimeout(60, 60_000),
  );
});

// ---------------------------------------------------------------------------------------------
// Config files

/** Runs `eddy ARGS` in-process. */
async function cli(args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const io: CliIo = {
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: (s: string) => (stderr += s) },
    readStdin: async () => "",
    stdinIsTTY: true,
    env: { HOME: cwd },
    cwd,
    onSignal: () => () => {},
  };
  const code = await main(args, io);
  return { code, stdout, stderr };
}

const url = fc.constantFrom(
  "http://127.0.0.1:1/v1",
  "https://api.openai.com/v1",
  "not a url",
  "",
  "ftp://x",
  "http://[::1",
  "https://u:p@h/v1",
);
const profile = objectWith({
  base_url: url,
  api_key_env: fc.oneof(nastyString, fc.array(nastyString, { maxLength: 2 })),
  api_key_header: nastyString,
  key_policy: fc.constantFrom("required", "optional", "x"),
  model_policy: fc.constantFrom("required", "server_default"),
  default_model: nastyString,
  headers: fc.dictionary(nastyString, nastyString, { maxKeys: 2 }),
  capabilities: fc.dictionary(
    fc.constantFrom("previousResponseId", "store", "websocket", "x"),
    fc.boolean(),
    { maxKeys: 2 },
  ),
  api: fc.constantFrom("responses", "chat-completions", "x"),
  chat: objectWith({ instructions_role: fc.constantFrom("system", "developer"), stream_usage: fc.boolean() }),
});
const mcpServer = objectWith({
  command: nastyString,
  args: fc.array(nastyString, { maxLength: 2 }),
  env: fc.dictionary(nastyString, nastyString, { maxKeys: 2 }),
  cwd: nastyString,
  url,
  headers: fc.dictionary(nastyString, nastyString, { maxKeys: 2 }),
});
const config = objectWith({
  provider: fc.constantFrom("openai", "openrouter", "ollama", "custom", "nope"),
  api: fc.constantFrom("responses", "chat-completions"),
  transport: fc.constantFrom("sse", "websocket"),
  model: nastyString,
  base_url: url,
  instructions: nastyString,
  stateless: fc.boolean(),
  max_tool_calls: fc.integer({ min: -1, max: 100 }),
  max_turns: fc.integer({ min: -1, max: 100 }),
  max_retries: fc.integer({ min: -1, max: 10 }),
  idle_timeout_ms: fc.integer({ min: 0, max: 10 }),
  fallbacks: fc.array(fc.constantFrom("openai", "custom", "nope"), { maxLength: 2 }),
  history: objectWith({
    strategy: fc.constantFrom("native", "text_embed", "auto", "x"),
    truncation_threshold: fc.integer(),
  }),
  profiles: fc.dictionary(fc.constantFrom("custom", "openai", "x y"), profile, { maxKeys: 2 }),
  mcp_servers: fc.dictionary(fc.constantFrom("fs", "bad name", "a__b"), mcpServer, { maxKeys: 2 }),
  approve: fc.constantFrom("ask", "auto", "deny", "never"),
  sandbox: fc.boolean(),
});

describe("fuzz: config files", () => {
  it(
    "eddy config over a fuzzed eddy.config.json: exit 0, or exit 2 with one line naming the file",
    async () => {
      await fc.assert(
        fc.asyncProperty(mangled(config.map((c) => JSON.stringify(c))), async (text) => {
          const ws = freshDir();
          writeFileSync(join(ws, "eddy.config.json"), text);
          const r = await cli(["config"], ws);
          expect(r.stderr).not.toMatch(/internal error/);
          if (r.code !== 0) {
            expect(r.code).toBe(2);
            expect(r.stderr.trim().split("\n")).toHaveLength(1);
          }
        }),
        fuzzParams(150),
      );
    },
    fuzzTimeout(150, 30_000),
  );
});

// ---------------------------------------------------------------------------------------------
// MCP tool results

const base64 = fc.oneof(fc.base64String({ maxLength: 40 }), nastyString);
const block = fc.oneof(
  objectWith({ type: fc.constant("text"), text: nastyString }, false),
  objectWith({ type: fc.constantFrom("image", "audio"), data: base64, mimeType: nastyString }, false),
  objectWith(
    {
      type: fc.constant("resource_link"),
      uri: nastyString,
      name: nastyString,
      size: fc.integer(),
      description: nastyString,
    },
    false,
  ),
  objectWith({
    type: fc.constant("resource"),
    resource: fc.oneof(
      objectWith({ uri: nastyString, text: nastyString, mimeType: nastyString }, false),
      objectWith({ uri: nastyString, blob: base64 }, false),
    ),
  }),
  nastyJson,
);
const callResult = fc.oneof(
  objectWith({
    content: fc.array(block, { maxLength: 4 }),
    structuredContent: nastyJson,
    isError: fc.boolean(),
    _meta: nastyJson,
  }),
  objectWith({ toolResult: nastyJson }),
  nastyJson,
);

describe("fuzz: MCP tool results", () => {
  it(
    "whatever a server answers, the SDK refuses it or it becomes one valid output string within the cap",
    () => {
      fc.assert(
        fc.property(callResult, (raw) => {
          const parsed = CallToolResultSchema.safeParse(raw);
          if (!parsed.success) return; // the client refuses it as an McpError: a failed call
          const result = mcpResultToToolResult("srv__tool", parsed.data);
          expect(typeof result.ok).toBe("boolean");
          if (result.error !== undefined) expect(result.error.message).not.toMatch(/\n/);
          const encoded = encodeToolOutput(toToolOutput("srv__tool", result), { capBytes: 4096 });
          expect(Buffer.byteLength(encoded.output)).toBeLessThanOrEqual(4096);
          expect(JSON.parse(encoded.output)).toMatchObject({ tool: "srv__tool", ok: result.ok });
        }),
        fuzzParams(500),
      );
    },
    fuzzTimeout(500, 20_000),
  );
});
