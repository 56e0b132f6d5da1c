import { describe, expect, it } from "vitest";
import { post, readSse, streamProblems } from "../../test/support/mock-sse.js";
import { createMockHandler, type MockHandler } from "./handler.js";

const tool = (name: string) => ({ type: "function", name, parameters: { type: "object" }, strict: false });
const BUILTINS = [tool("read_file"), tool("list_dir"), tool("grep")];

interface Out {
  id: string;
  output: Array<{
    type: string;
    name?: string;
    arguments?: string;
    call_id?: string;
    content?: Array<{ text: string }>;
  }>;
}

async function ask(handler: MockHandler, body: Record<string, unknown>): Promise<Out> {
  const response = await post(handler, { model: "eddy-demo", tools: BUILTINS, ...body });
  expect(response.status).toBe(200);
  return (await response.json()) as Out;
}

const calls = (out: Out) =>
  out.output.filter((i) => i.type === "function_call").map((i) => [i.name, JSON.parse(i.arguments ?? "")]);
const text = (out: Out) => out.output.find((i) => i.type === "message")?.content?.[0]?.text ?? "";
const result = (tool: string, stdout: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ tool, ok: true, exit_code: 0, stdout, stderr: "", ...extra });

/** Runs one tool round trip: ask, answer every call with `answer(name, args)`, return the follow-up. */
async function roundTrip(
  question: string,
  answer: (name: string, args: Record<string, unknown>) => string,
  body = {},
) {
  const handler = createMockHandler();
  const first = await ask(handler, { input: question, ...body });
  const outputs = first.output
    .filter((i) => i.type === "function_call")
    .map((i) => ({
      type: "function_call_output",
      call_id: i.call_id,
      output: answer(i.name ?? "", JSON.parse(i.arguments ?? "{}")),
    }));
  expect(outputs.length).toBeGreaterThan(0);
  return ask(handler, { previous_response_id: first.id, input: outputs, ...body });
}

describe("demo model: which tool it calls", () => {
  it.each([
    ["What is in package.json?", [["read_file", { path: "package.json" }]]],
    [
      "Explain src/x.ts and README.md",
      [
        ["read_file", { path: "src/x.ts" }],
        ["read_file", { path: "README.md" }],
      ],
    ],
    ["Show me lines 3-9 of src/a.ts", [["read_file", { path: "src/a.ts", start_line: 3, end_line: 9 }]]],
    ["List the files here", [["list_dir", { path: "." }]]],
    ["What is in the folder?", [["list_dir", { path: "." }]]],
    ["what's in src?", [["list_dir", { path: "src" }]]],
    ["Search for TODO", [["grep", { pattern: "TODO" }]]],
    ['find "createParser" in src/', [["grep", { pattern: "createParser", path: "src" }]]],
    ["where is loadScenario defined?", [["grep", { pattern: "loadScenario" }]]],
  ])("%s", async (question, expected) => {
    expect(calls(await ask(createMockHandler(), { input: question }))).toEqual(expected);
  });

  it("answers in text when no tool fits: what it is and what it can do (never a bare echo)", async () => {
    const out = await ask(createMockHandler(), { input: "Tell me a joke" });
    expect(calls(out)).toEqual([]);
    expect(text(out)).toContain("eddy’s built-in offline demo model");
    expect(text(out)).toContain("What is in package.json?");
    expect(text(out)).not.toBe("Tell me a joke");
  });

  it("says which tool it would use when the request offers none", async () => {
    const out = await ask(createMockHandler(), { input: "What is in package.json?", tools: [] });
    expect(text(out)).toContain("`read_file` tool");
    expect(text(out)).toContain("offered: no tools");
  });
});

describe("demo model: tool constraints", () => {
  it("tool_choice none: no calls, and it says why", async () => {
    const out = await ask(createMockHandler(), { input: "What is in package.json?", tool_choice: "none" });
    expect(calls(out)).toEqual([]);
    expect(text(out)).toContain('tool_choice is "none"');
  });

  it("tool_choice required or a named function: always a call, arguments guessed from the message", async () => {
    expect(calls(await ask(createMockHandler(), { input: "hello", tool_choice: "required" }))).toEqual([
      ["read_file", { path: "README.md" }],
    ]);
    const named = await ask(createMockHandler(), {
      input: "hello",
      tool_choice: { type: "function", name: "list_dir" },
    });
    expect(calls(named)).toEqual([["list_dir", { path: "." }]]);
  });

  it("allowed_tools: only those", async () => {
    const out = await ask(createMockHandler(), {
      input: "What is in package.json?",
      tool_choice: { type: "allowed_tools", tools: [{ type: "function", name: "grep" }] },
    });
    expect(calls(out)).toEqual([]);
  });

  it("parallel_tool_calls:false: one call per response, the next one after the first output", async () => {
    const handler = createMockHandler();
    const body = { parallel_tool_calls: false };
    const first = await ask(handler, { input: "Compare a.ts and b.ts", ...body });
    expect(calls(first)).toEqual([["read_file", { path: "a.ts" }]]);
    const second = await ask(handler, {
      ...body,
      previous_response_id: first.id,
      input: [
        { type: "function_call_output", call_id: first.output[0]?.call_id, output: result("read_file", "A") },
      ],
    });
    expect(calls(second)).toEqual([["read_file", { path: "b.ts" }]]);
    const third = await ask(handler, {
      ...body,
      previous_response_id: second.id,
      input: [
        {
          type: "function_call_output",
          call_id: second.output[0]?.call_id,
          output: result("read_file", "B"),
        },
      ],
    });
    expect(calls(third)).toEqual([]);
    expect(text(third)).toContain("`a.ts`");
    expect(text(third)).toContain("`b.ts`");
  });

  it("max_tool_calls caps the calls of one response", async () => {
    const out = await ask(createMockHandler(), { input: "read a.ts b.ts c.ts", max_tool_calls: 2 });
    expect(calls(out)).toHaveLength(2);
  });
});

describe("demo model: answers that use the tool output", () => {
  it("read_file of package.json: first lines in a code block, top-level keys, name, version, scripts", async () => {
    const pkg = JSON.stringify(
      {
        name: "eddy",
        version: "0.1.0",
        type: "module",
        scripts: { build: "tsc", test: "vitest run" },
        dependencies: { yaml: "^2" },
      },
      null,
      2,
    );
    const out = await roundTrip("What is in package.json?", () => result("read_file", pkg));
    const reply = text(out);
    expect(reply).toContain('```json\n{\n  "name": "eddy",');
    expect(reply).toContain("5 top-level keys: `name`, `version`, `type`, `scripts`, `dependencies`");
    expect(reply).toContain('name: "eddy", version: "0.1.0"');
    expect(reply).toContain("`build` → `tsc`");
    expect(reply).toContain("dependencies: 1 (yaml)");
  });

  it("read_file output with line numbers is read without them", async () => {
    const out = await roundTrip("What is in config.json?", () =>
      result("read_file", '1\t{"a": 1,\n2\t "b": 2}\n'),
    );
    expect(text(out)).toContain("2 top-level keys: `a`, `b`");
  });

  it("list_dir: counts and names the entries", async () => {
    const out = await roundTrip("List the files here", () =>
      result("list_dir", "src/\ntest/\npackage.json\nREADME.md\n"),
    );
    expect(text(out)).toBe(
      "`.` has 4 entries (2 directories, 2 files): `src/`, `test/`, `package.json`, `README.md`.",
    );
  });

  it("grep: counts matches per file", async () => {
    const out = await roundTrip("Search for TODO", () =>
      result("grep", "src/a.ts:3: // TODO x\nsrc/a.ts:9: // TODO y\nsrc/b.ts:1: TODO\n"),
    );
    expect(text(out)).toContain("Found 3 matches for `TODO` in 2 files: `src/a.ts` (2), `src/b.ts` (1).");
  });

  it("ok:false: explains the error", async () => {
    const failed = JSON.stringify({
      tool: "read_file",
      ok: false,
      exit_code: 1,
      stdout: "",
      stderr: "",
      error: { code: "tool_failed", message: "ENOENT: no such file" },
    });
    const out = await roundTrip("What is in nope.txt?", () => failed);
    expect(text(out)).toContain("The `read_file` call on `nope.txt` failed: ENOENT: no such file.");
  });

  it("a raw (non-JSON) output is quoted", async () => {
    const out = await roundTrip("What is in a.txt?", () => "plain text output");
    expect(text(out)).toContain("```\nplain text output\n```");
  });

  it("works statelessly too (full history resent, store:false)", async () => {
    const handler = createMockHandler();
    const out = await ask(handler, {
      store: false,
      input: [
        { type: "message", role: "user", content: "List the files here" },
        { type: "function_call", call_id: "c1", name: "list_dir", arguments: '{"path":"."}' },
        { type: "function_call_output", call_id: "c1", output: result("list_dir", "a\nb\n") },
      ],
    });
    expect(text(out)).toContain("`.` has 2 entries");
  });
});

describe("demo model: options", () => {
  it("emits a reasoning item naming its rule when reasoning is requested, encrypted_content on include", async () => {
    const out = await ask(createMockHandler(), {
      input: "What is in package.json?",
      reasoning: { effort: "low", summary: "auto" },
      include: ["reasoning.encrypted_content"],
    });
    const reasoning = out.output[0] as unknown as {
      type: string;
      summary: Array<{ text: string }>;
      encrypted_content: string;
    };
    expect(reasoning.type).toBe("reasoning");
    expect(reasoning.summary[0]?.text).toMatch(/^Rule: the message asks for read_file/);
    expect(reasoning.encrypted_content).toMatch(/^eddy-demo\./);
  });

  it("answers with JSON built from a json_schema text format", async () => {
    const out = await ask(createMockHandler(), {
      input: "hello",
      text: {
        format: {
          type: "json_schema",
          name: "r",
          schema: {
            type: "object",
            properties: { answer: { type: "string" }, n: { type: "integer" } },
            required: ["answer", "n"],
          },
        },
      },
    });
    const value = JSON.parse(text(out)) as { answer: string; n: number };
    expect(value.n).toBe(0);
    expect(value.answer).toContain("demo model");
  });

  it("streams its text in small deltas, with multi-byte characters, as a valid stream", async () => {
    const response = await post(createMockHandler(), { model: "m", input: "hello", stream: true });
    const read = await readSse(response.body);
    expect(streamProblems(read)).toEqual([]);
    const deltas = read.events.filter(
      (e) => typeof e !== "string" && e.type === "response.output_text.delta",
    );
    expect(deltas.length).toBeGreaterThan(30);
    expect(read.text).toContain("’");
  });

  it("is deterministic", async () => {
    const clock = () => 1_700_000_000_000;
    const a = await ask(createMockHandler({ clock }), { input: "What is in package.json?" });
    const b = await ask(createMockHandler({ clock }), { input: "What is in package.json?" });
    expect(a).toEqual(b);
  });
});
