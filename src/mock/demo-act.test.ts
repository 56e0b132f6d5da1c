import { describe, expect, it } from "vitest";
import { post } from "../../test/support/mock-sse.js";
import { createMockHandler, type MockHandler } from "./handler.js";

type Json = Record<string, unknown>;
const tool = (name: string, parameters: Json = { type: "object" }) => ({
  type: "function",
  name,
  parameters,
  strict: false,
});
const READ = [tool("read_file"), tool("list_dir"), tool("grep")];
const WRITE = [...READ, tool("write_file"), tool("apply_patch")];
const SHELL = [...READ, tool("shell")];

interface Item {
  type: string;
  name?: string;
  arguments?: string;
  call_id?: string;
  content?: Array<{ text: string }>;
}
interface Out {
  id: string;
  output: Item[];
}

async function ask(handler: MockHandler, body: Json): Promise<Out> {
  const response = await post(handler, { model: "eddy-demo", ...body });
  expect(response.status).toBe(200);
  return (await response.json()) as Out;
}

const calls = (out: Out) =>
  out.output.filter((i) => i.type === "function_call").map((i) => [i.name, JSON.parse(i.arguments ?? "")]);
const text = (out: Out) => out.output.find((i) => i.type === "message")?.content?.[0]?.text ?? "";
const result = (tool: string, stdout: string, extra: Json = {}) =>
  JSON.stringify({ tool, ok: true, exit_code: 0, stdout, stderr: "", ...extra });
const failed = (tool: string, message: string, extra: Json = {}) =>
  JSON.stringify({
    tool,
    ok: false,
    stdout: "",
    stderr: "",
    error: { code: "tool_failed", message },
    ...extra,
  });

/**
 * A conversation with the demo model: `prompt`, then each call answered by `answer` until it replies
 * in text. Returns every call it made, in order, and the reply.
 */
async function converse(
  prompt: string,
  tools: Json[],
  answer: (name: string, args: Json) => string,
  extra: Json = {},
): Promise<{ calls: unknown[][]; reply: string }> {
  const handler = createMockHandler();
  let out = await ask(handler, { input: prompt, tools, ...extra });
  const made: unknown[][] = [];
  for (let turn = 0; turn < 6 && calls(out).length > 0; turn++) {
    made.push(...calls(out));
    const outputs = out.output
      .filter((i) => i.type === "function_call")
      .map((i) => ({
        type: "function_call_output",
        call_id: i.call_id,
        output: answer(i.name ?? "", JSON.parse(i.arguments ?? "{}") as Json),
      }));
    out = await ask(handler, { previous_response_id: out.id, input: outputs, tools, ...extra });
  }
  return { calls: made, reply: text(out) };
}

const wrote = (path: string, bytes: number, created = true) =>
  result("write_file", `${created ? "created" : "overwrote"} ${path}: wrote ${bytes} bytes`, {
    artifacts: { path, bytes_written: bytes, bytes_total: bytes, created, append: false },
  });

describe("the demo model writes files when asked and write_file is offered", () => {
  it("creates a file with the content the message gives, then says what it did", async () => {
    const r = await converse("Create a file named notes.txt containing the text hello", WRITE, () =>
      wrote("notes.txt", 5),
    );
    expect(r.calls).toEqual([["write_file", { path: "notes.txt", content: "hello" }]]);
    expect(r.reply).toBe("I created notes.txt (5 bytes).");
  });

  it("an overwrite says so", async () => {
    const r = await converse("write hi to notes.txt", WRITE, () => wrote("notes.txt", 2, false));
    expect(r.reply).toBe("I overwrote notes.txt (2 bytes).");
  });

  it("append: reads the file first, so the new text starts on a line of its own", async () => {
    const appended = result("write_file", "appended", {
      artifacts: { path: "notes.txt", bytes_written: 4, bytes_total: 9, created: false, append: true },
    });
    const r = await converse("Append 'bye' to notes.txt", WRITE, (name) =>
      name === "read_file" ? result("read_file", "hello") : appended,
    );
    expect(r.calls).toEqual([
      ["read_file", { path: "notes.txt" }],
      ["write_file", { path: "notes.txt", content: "\nbye", append: true }],
    ]);
    expect(r.reply).toBe("I appended 4 bytes to notes.txt (now 9 bytes).");
    // A file that ends with a newline, or does not exist yet, gets the text as given.
    for (const before of [
      result("read_file", "hello\n"),
      failed("read_file", "read_file: notes.txt: no such file"),
    ]) {
      const again = await converse("Append 'bye' to notes.txt", WRITE, (name) =>
        name === "read_file" ? before : appended,
      );
      expect(again.calls[1]).toEqual(["write_file", { path: "notes.txt", content: "bye", append: true }]);
    }
  });

  it("a failed or denied write is reported as such", async () => {
    const denied = failed(
      "write_file",
      "The user denied this call; it did not run. Ask them or try another way.",
    );
    const r = await converse("Create notes.txt with hi", WRITE, () => denied);
    expect(r.reply).toBe(
      "I couldn’t write notes.txt: The user denied this call; it did not run. Ask them or try another way.",
    );
  });

  it("without write_file it names the flag that enables it, and calls nothing", async () => {
    const r = await converse("Create a file named notes.txt containing the text hello", READ, () => "");
    expect(r.calls).toEqual([]);
    expect(r.reply).toBe(
      "I can’t write files here: run with --allow-write (this request offers no `write_file` tool). I would have written “hello” into notes.txt.",
    );
    const none = await converse("Create notes.txt", WRITE, () => "", { tool_choice: "none" });
    expect(none.calls).toEqual([]);
    expect(none.reply).toContain('tool_choice is "none"');
  });
});

describe("the demo model edits files with apply_patch", () => {
  const file = "one\nhello there\ntwo\nhello\n";

  it("reads the file, patches every line holding the text, and says how many lines changed", async () => {
    const r = await converse("Replace hello with bye in notes.txt", WRITE, (name) =>
      name === "read_file"
        ? result("read_file", file)
        : result("apply_patch", "Applied the patch:\nM notes.txt"),
    );
    expect(r.calls).toEqual([
      ["read_file", { path: "notes.txt" }],
      [
        "apply_patch",
        {
          patch:
            "*** Begin Patch\n*** Update File: notes.txt\n@@\n-hello there\n+bye there\n two\n-hello\n+bye\n*** End Patch",
        },
      ],
    ]);
    expect(r.reply).toBe("I replaced “hello” with “bye” in notes.txt (2 lines changed).");
  });

  it("text the file does not hold changes nothing; with write_file only, it rewrites the file", async () => {
    const absent = await converse("change nope to yes in notes.txt", WRITE, () => result("read_file", file));
    expect(absent.calls).toEqual([["read_file", { path: "notes.txt" }]]);
    expect(absent.reply).toBe("notes.txt does not contain “nope”, so I changed nothing.");
    const tools = [...READ, tool("write_file")];
    const rewritten = await converse("Replace hello with bye in notes.txt", tools, (name) =>
      name === "read_file" ? result("read_file", file) : wrote("notes.txt", 22, false),
    );
    expect(rewritten.calls[1]).toEqual([
      "write_file",
      { path: "notes.txt", content: "one\nbye there\ntwo\nbye\n" },
    ]);
    expect(rewritten.reply).toBe("I replaced “hello” with “bye” in notes.txt (2 lines changed).");
  });
});

describe("the demo model runs commands when asked and shell is offered", () => {
  it.each([
    ["Run `echo hi`", "echo hi"],
    ["run the command echo hi", "echo hi"],
    ["what does `echo hi` print?", "echo hi"],
  ])("%s → shell, then the output", async (prompt, command) => {
    const r = await converse(prompt, SHELL, () => result("shell", "hi\n"));
    expect(r.calls).toEqual([["shell", { command }]]);
    expect(r.reply).toBe("`echo hi` printed:\n\n```\nhi\n```");
  });

  it("a failing command: its exit code and stderr; no output: says so", async () => {
    const bad = JSON.stringify({ tool: "shell", ok: false, exit_code: 2, stdout: "", stderr: "ls: nope\n" });
    const r = await converse("Run `ls nope`", SHELL, () => bad);
    expect(r.reply).toBe("`ls nope` failed (exit code 2).\n\n```\nls: nope\n```");
    const quiet = await converse("Run `true`", SHELL, () => result("shell", ""));
    expect(quiet.reply).toBe("`true` ran successfully and printed nothing.");
  });

  it("without shell it names --allow-shell", async () => {
    const r = await converse("Run `ls -la`", READ, () => "");
    expect(r.calls).toEqual([]);
    expect(r.reply).toBe(
      "I can’t run commands here: run with --allow-shell (this request offers no `shell` tool). I would have run `ls -la`.",
    );
  });
});

describe("the demo model with attachments and MCP tools", () => {
  it("“What is in this image?” describes the image instead of listing a folder", async () => {
    const png = Buffer.from(
      "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=",
      "base64",
    );
    const input = [
      {
        type: "message",
        role: "user",
        content: [
          { type: "input_text", text: "What is in this image?" },
          { type: "input_image", image_url: `data:image/png;base64,${png.toString("base64")}` },
        ],
      },
    ];
    const out = await ask(createMockHandler(), { input, tools: READ });
    expect(calls(out)).toEqual([]);
    expect(text(out)).toContain(`- an image: image/png, ${png.length} bytes, 1×1 pixels`);
    const file = [
      {
        type: "message",
        role: "user",
        content: [
          { type: "input_text", text: "What's in the attached file?" },
          { type: "input_file", filename: "a.txt", file_data: "data:text/plain,hi%0Athere%0A" },
        ],
      },
    ];
    const described = await ask(createMockHandler(), { input: file, tools: READ });
    expect(calls(described)).toEqual([]);
    expect(text(described)).toContain("- a file `a.txt`: text/plain, 9 bytes, 2 lines of text starting “hi”");
  });

  const mcp = [
    ...READ,
    tool("srv__add", {
      type: "object",
      properties: { a: { type: "number" }, b: { type: "number" } },
      required: ["a", "b"],
    }),
    tool("srv__echo", { type: "object", properties: { text: { type: "string" } }, required: ["text"] }),
    tool("srv__slow", {
      type: "object",
      properties: { ms: { type: "integer" }, label: { type: "string" } },
      required: ["ms"],
    }),
  ];

  it.each<[string, string, Json]>([
    ["Add 2 and 3", "srv__add", { a: 2, b: 3 }],
    ["Echo hello world", "srv__echo", { text: "hello world" }],
    ['please echo "quoted words"', "srv__echo", { text: "quoted words" }],
    ["Run slow for 50 ms, label: warmup", "srv__slow", { ms: 50, label: "warmup" }],
  ])("%s → %s with arguments from the prompt", async (prompt, name, args) => {
    const out = await ask(createMockHandler(), { input: prompt, tools: mcp });
    expect(calls(out)).toEqual([[name, args]]);
  });

  it("answers from an MCP tool's output in eddy's wrapper", async () => {
    const r = await converse("Add 2 and 3", mcp, () => result("srv__add", '{"sum":5}'));
    expect(r.reply).toBe("According to `srv__add` (a: 2, b: 3): sum 5.");
  });
});

describe("the demo model stays deterministic and keeps its memory", () => {
  it("the same conversation gets the same answer", async () => {
    const clock = () => 1_700_000_000_000;
    const body = { input: "Create a file named notes.txt containing the text hello", tools: WRITE };
    expect(await ask(createMockHandler({ clock }), body)).toEqual(
      await ask(createMockHandler({ clock }), body),
    );
  });

  it("“My name is Ada.” then “What is my name?” → Ada, with every tool offered", async () => {
    const handler = createMockHandler();
    const all = [...WRITE, tool("shell")];
    const first = await ask(handler, { input: "My name is Ada.", tools: all });
    const second = await ask(handler, {
      previous_response_id: first.id,
      input: "What is my name?",
      tools: all,
    });
    expect(text(second)).toBe("Your name is Ada.");
  });
});
