/**
 * The agent loop end to end over HTTP: the real provider against the mock Open Responses server,
 * the built-in tools on a temporary workspace. Asserts the exact follow-up bodies the server
 * received (issue 5, docs/pitfalls.md S22–S24, S27, S28, S30, S32, S34, S35).
 */
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { Frame } from "../src/frames/frame.js";
import { runAgent } from "../src/loop/run.js";
import type { RunSpecInput } from "../src/loop/run-spec.js";
import { createMockServer, type MockServer, type Scenario } from "../src/mock/index.js";
import type { JsonObject } from "../src/protocol/types.js";
import { createOpenResponsesProvider } from "../src/provider/open-responses.js";
import { createBuiltinTools } from "../src/tools/builtin/index.js";
import { createToolRegistry } from "../src/tools/registry.js";
import { defineTool, type ToolDefinition } from "../src/tools/tool.js";
import { captureLines, splitResponses } from "./support/captures.js";
import { assertFrameInvariants, ofType } from "./support/frames.js";

let server: MockServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function workspace(): string {
  const dir = mkdtempSync(join(tmpdir(), "eddy-loop-"));
  writeFileSync(join(dir, "package.json"), '{"name":"demo"}\n');
  mkdirSync(join(dir, "src"));
  writeFileSync(join(dir, "src", "a.ts"), "export const a = 1;\n");
  return dir;
}

async function run(
  scenario: Scenario,
  options: Partial<RunSpecInput> & { extraTools?: ToolDefinition[]; signal?: AbortSignal } = {},
) {
  server = await createMockServer({ scenario });
  const provider = createOpenResponsesProvider({
    baseURL: server.url,
    name: "mock",
    retry: { maxRetries: 0 },
  });
  const { tools, disabled } = createBuiltinTools({ allowWrite: true });
  const registry = createToolRegistry([...tools, ...(options.extraTools ?? [])], { disabled });
  const { extraTools: _extra, signal, ...spec } = options;
  const handle = runAgent(
    { model: "m", input: "go", ...spec },
    { provider, tools: registry, workspace: workspace(), ...(signal === undefined ? {} : { signal }) },
  );
  const frames: Frame[] = [];
  for await (const f of handle) frames.push(f);
  assertFrameInvariants(frames);
  const bodies = server.requests.map((r) => r.body as JsonObject);
  return { frames, result: await handle.result, bodies };
}

const fc = (name: string, args: Record<string, unknown> | string, call_id?: string) => ({
  type: "function_call" as const,
  name,
  arguments: args,
  ...(call_id ? { call_id } : {}),
});
const msg = (text: string, phase?: "commentary" | "final_answer") => ({
  type: "message" as const,
  text,
  ...(phase ? { phase } : {}),
});
const output = (frames: Frame[], i = 0) => JSON.parse(ofType(frames, "tool_ended")[i]?.output ?? "{}");

describe("multi-turn loops over HTTP", () => {
  it("chained: exact follow-up bodies (docs/pitfalls.md S23)", async () => {
    const { bodies, result } = await run(
      {
        turns: [
          { items: [fc("read_file", { path: "package.json" }, "call_r")] },
          {
            expect: { previousResponseId: true, functionCallOutputs: "call_r" },
            items: [fc("list_dir", { path: "src" }, "call_l")],
          },
          { expect: { functionCallOutputs: "call_l" }, items: [msg("Done.")] },
        ],
      },
      { instructions: "Use tools." },
    );
    expect(result.reason).toBe("completed");
    expect(bodies).toHaveLength(3);
    const [first, second, third] = bodies as [JsonObject, JsonObject, JsonObject];
    expect(Object.keys(first)).toEqual([
      "model",
      "instructions",
      "input",
      "tools",
      "parallel_tool_calls",
      "max_tool_calls",
      "store",
      "stream",
    ]);
    // The prompt goes as a message item in chained mode too (a string input is split per character
    // by at least one third-party server).
    expect(first.input).toEqual([
      { type: "message", role: "user", content: [{ type: "input_text", text: "go" }] },
    ]);
    expect(second).toEqual({
      model: "m",
      instructions: "Use tools.",
      input: [
        {
          type: "function_call_output",
          call_id: "call_r",
          output: expect.stringContaining('"tool":"read_file","ok":true'),
        },
      ],
      previous_response_id: "resp_mock_0001",
      tools: first.tools,
      parallel_tool_calls: false,
      max_tool_calls: 31,
      store: true,
      stream: true,
    });
    expect(third.previous_response_id).toBe("resp_mock_0002");
    expect(third.max_tool_calls).toBe(30);
  });

  it("stateless: the whole history each time, reasoning and phase kept (docs/pitfalls.md S24, S27)", async () => {
    const { bodies, result } = await run(
      {
        turns: [
          {
            items: [
              { type: "reasoning", summary: "plan", encrypted_content: "enc_1" },
              msg("Reading it.", "commentary"),
              fc("read_file", { path: "package.json" }, "call_r"),
            ],
          },
          {
            expect: { previousResponseId: false, functionCallOutputs: "call_r" },
            items: [msg("It is demo.", "final_answer")],
          },
        ],
      },
      { mode: "stateless" },
    );
    expect(result.reason).toBe("completed");
    const second = bodies[1] as JsonObject;
    expect(second).toMatchObject({ store: false, include: ["reasoning.encrypted_content"] });
    const input = second.input as JsonObject[];
    expect(input.map((i) => `${i.type}${i.role ? `:${i.role}` : ""}`)).toEqual([
      "message:user",
      "reasoning",
      "message:assistant",
      "function_call",
      "function_call_output",
    ]);
    expect(input[1]).toMatchObject({
      encrypted_content: "enc_1",
      summary: [{ type: "summary_text", text: "plan" }],
    });
    expect(input[2]).toMatchObject({ phase: "commentary" });
    expect(result.items.at(-1)).toMatchObject({ phase: "final_answer" });
  });

  it("replays the captured four-turn stateless loop with encrypted reasoning; reasoning round-trips unchanged", async () => {
    const responses = splitResponses(captureLines("openai/openai-reasoning-encrypted-content.1"));
    const events = responses.map((lines) => lines.map((l) => JSON.parse(l) as JsonObject));
    const calculator = defineTool({
      name: "calculator",
      description: "arithmetic",
      parameters: z.object({ a: z.number(), b: z.number(), op: z.enum(["add", "multiply"]) }),
      execute: ({ a, b, op }) => String(op === "add" ? a + b : a * b),
    });
    const { bodies, result, frames } = await run(
      { turns: events.map((rawEvents) => ({ rawEvents })) },
      { mode: "stateless", extraTools: [calculator] },
    );
    expect(result.reason).toBe("completed");
    expect(result.outputText).toBe("The final result is **570**.");
    expect(ofType(frames, "tool_ended").map((f) => JSON.parse(f.output).stdout)).toEqual(["19", "57", "570"]);
    const reasoningDone = events[0]?.find(
      (e) => e.type === "response.output_item.done" && (e.item as JsonObject).type === "reasoning",
    )?.item as JsonObject;
    for (const body of bodies.slice(1)) {
      const sent = (body.input as JsonObject[]).find((i) => i.type === "reasoning");
      expect(sent).toEqual(reasoningDone);
    }
    expect(bodies).toHaveLength(4);
  });

  it("two calls in one response run in order (docs/pitfalls.md S22)", async () => {
    const { frames, bodies } = await run({
      turns: [
        {
          ignoreToolChoice: true,
          items: [fc("read_file", { path: "package.json" }, "c1"), fc("list_dir", {}, "c2")],
        },
        { items: [msg("ok")] },
      ],
    });
    expect(ofType(frames, "tool_ended").map((f) => f.call_id)).toEqual(["c1", "c2"]);
    expect(((bodies[1] as JsonObject).input as JsonObject[]).map((i) => i.call_id)).toEqual(["c1", "c2"]);
  });
});

describe("tool failures go back to the model", () => {
  it("unknown tool: the available tools are listed (docs/pitfalls.md S32)", async () => {
    const { frames, result } = await run({
      turns: [{ items: [fc("search_files", { q: "x" })] }, { items: [msg("ok")] }],
    });
    expect(output(frames).error.message).toMatch(
      /Available tools: read_file, list_dir, grep, write_file, apply_patch/,
    );
    expect(result.reason).toBe("completed");
  });

  it("invalid arguments are refused, never run with {}", async () => {
    const { frames } = await run({
      turns: [{ items: [fc("read_file", '{"path": ')] }, { items: [msg("ok")] }],
    });
    expect(output(frames).error.code).toBe("tool_input_invalid");
  });

  it("a throwing tool and a tool timeout (docs/pitfalls.md S34)", async () => {
    const boom = defineTool({
      name: "boom",
      description: "fails",
      parameters: { type: "object", properties: {} },
      execute: () => Promise.reject(new Error("disk on fire")),
    });
    const slow = defineTool({
      name: "slow",
      description: "slow",
      parameters: { type: "object", properties: {} },
      timeoutMs: 30,
      execute: (_a, ctx) =>
        new Promise((_r, reject) => ctx.signal.addEventListener("abort", () => reject(new Error("stop")))),
    });
    const { frames } = await run(
      {
        turns: [{ ignoreToolChoice: true, items: [fc("boom", {}), fc("slow", {})] }, { items: [msg("ok")] }],
      },
      { extraTools: [boom, slow] },
    );
    expect(output(frames, 0).error).toMatchObject({
      code: "tool_failed",
      message: expect.stringContaining("disk on fire"),
    });
    expect(output(frames, 1).error.code).toBe("tool_timeout");
  });

  it("a terminal tool ends the run with its arguments", async () => {
    const submit = defineTool({
      name: "submit_decision",
      description: "final",
      parameters: z.object({ approved: z.boolean() }),
      terminal: true,
    });
    const { result } = await run(
      { turns: [{ items: [fc("submit_decision", { approved: true })] }] },
      { extraTools: [submit] },
    );
    expect(result).toMatchObject({ reason: "terminal_tool", result: { approved: true } });
  });

  it("structured output ends with the parsed value", async () => {
    const { result, bodies } = await run(
      { turns: [{ items: [msg('{"files": 2}')] }] },
      { output_schema: { name: "Count", schema: z.object({ files: z.number() }) } },
    );
    expect(result).toMatchObject({ reason: "completed", result: { files: 2 } });
    expect((bodies[0] as JsonObject).text).toMatchObject({
      format: { type: "json_schema", name: "Count", strict: true },
    });
  });
});

describe("limits and stops", () => {
  it("max_tool_calls reached", async () => {
    const { result, bodies } = await run(
      {
        turns: [
          { items: [fc("list_dir", { path: "." })] },
          { items: [fc("list_dir", { path: "src" })] },
          { items: [msg("x")] },
        ],
      },
      { max_tool_calls: 1 },
    );
    expect(result.reason).toBe("max_tool_calls");
    expect(bodies[0]?.max_tool_calls).toBe(1);
  });

  it("a loop that never ends is stopped by the caps", async () => {
    let n = 0;
    const counter = defineTool({
      name: "count",
      description: "counts",
      parameters: { type: "object", properties: {} },
      execute: () => String(n++),
    });
    const turns = [{ items: [fc("count", {})], repeat: true }];
    const noProgress = await run({ turns }, { extraTools: [counter] });
    expect(noProgress.result.reason).toBe("no_progress");
    await server?.close();
    const maxTurns = await run(
      {
        turns: [
          { items: [fc("list_dir", { path: "." })] },
          { items: [fc("list_dir", { path: "src" })] },
          { items: [fc("grep", { pattern: "a" })], repeat: true },
        ],
      },
      { max_turns: 3 },
    );
    expect(maxTurns.result.reason).toBe("max_turns");
  });

  it("previous_response_not_found falls back to stateless (docs/pitfalls.md S28)", async () => {
    const notFound = {
      faults: {
        httpError: {
          status: 404,
          body: {
            error: {
              type: "invalid_request_error",
              code: "previous_response_not_found",
              message: "gone",
              param: "previous_response_id",
            },
          },
        },
      },
    };
    const { frames, bodies, result } = await run({
      turns: [
        { items: [fc("list_dir", { path: "." }, "c1")] },
        notFound,
        { expect: { previousResponseId: false, functionCallOutputs: "c1" }, items: [msg("ok")] },
      ],
    });
    expect(result.reason).toBe("completed");
    expect(ofType(frames, "mode_changed")).toHaveLength(1);
    expect(bodies[2]).toMatchObject({ store: false, include: ["reasoning.encrypted_content"] });
  });

  it("cancellation mid-tool: the call still gets an output", async () => {
    const controller = new AbortController();
    const hang = defineTool({
      name: "hang",
      description: "hangs",
      parameters: { type: "object", properties: {} },
      execute: (_a, ctx) =>
        new Promise((_r, reject) => {
          setTimeout(() => controller.abort("test"), 10);
          ctx.signal.addEventListener("abort", () => reject(new Error("aborted")));
        }),
    });
    const { frames, result } = await run(
      { turns: [{ items: [fc("hang", {})] }, { items: [msg("never")] }] },
      { extraTools: [hang], signal: controller.signal },
    );
    expect(result.reason).toBe("cancelled");
    expect(output(frames).error.code).toBe("cancelled");
  });
});

describe("tool_choice enforced locally (docs/pitfalls.md S30)", () => {
  it.each([
    ["none", "none" as const, [false]],
    ["named", { type: "function" as const, name: "list_dir" }, [false]],
    [
      "allowed_tools",
      {
        type: "allowed_tools" as const,
        mode: "auto" as const,
        tools: [{ type: "function" as const, name: "grep" }],
      },
      [false],
    ],
  ])("%s: a disallowed call is refused and not run", async (_label, toolChoice, oks) => {
    const { frames, bodies } = await run(
      {
        turns: [
          { ignoreToolChoice: true, items: [fc("read_file", { path: "package.json" })] },
          { items: [msg("ok")] },
        ],
      },
      { tool_choice: toolChoice },
    );
    expect(ofType(frames, "tool_ended").map((f) => f.ok)).toEqual(oks);
    expect(output(frames).error.code).toBe("tool_not_allowed");
    expect(bodies[0]?.tool_choice).toEqual(toolChoice);
  });

  it("a named choice is reset to auto after the first round", async () => {
    const { bodies } = await run(
      { turns: [{ items: [fc("list_dir", {})] }, { items: [msg("ok")] }] },
      { tool_choice: { type: "function", name: "list_dir" } },
    );
    expect(bodies[1]?.tool_choice).toBe("auto");
  });
});

describe("file tools never leave the workspace", () => {
  const escapes: [string, Record<string, unknown>][] = [
    ["read_file", { path: "/etc/passwd" }],
    ["read_file", { path: "../outside.txt" }],
    ["read_file", { path: "link/secret.txt" }],
    ["list_dir", { path: ".." }],
    ["grep", { pattern: "root", path: "/etc" }],
    ["write_file", { path: "../evil.txt", content: "x" }],
    ["apply_patch", { patch: "*** Begin Patch\n*** Add File: ../evil.txt\n+x\n*** End Patch" }],
  ];
  it.each(escapes)("%s %j is refused", async (name, args) => {
    const outside = mkdtempSync(join(tmpdir(), "eddy-outside-"));
    writeFileSync(join(outside, "secret.txt"), "top secret");
    server = await createMockServer({
      scenario: { turns: [{ items: [fc(name, args)] }, { items: [msg("ok")] }] },
    });
    const provider = createOpenResponsesProvider({ baseURL: server.url });
    const { tools, disabled } = createBuiltinTools({ allowWrite: true });
    const ws = workspace();
    symlinkSync(outside, join(ws, "link"));
    const handle = runAgent(
      { model: "m", input: "go" },
      { provider, tools: createToolRegistry(tools, { disabled }), workspace: ws },
    );
    const frames: Frame[] = [];
    for await (const f of handle) frames.push(f);
    const out = output(frames);
    expect(out.ok).toBe(false);
    expect(out.error.code).toBe("path_outside_workspace");
    expect(JSON.stringify(frames)).not.toContain("top secret");
  });
});
