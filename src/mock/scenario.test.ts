import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { captureLines, splitResponses } from "../../test/support/captures.js";
import { eventObjects, post, readSse } from "../../test/support/mock-sse.js";
import { EddyError } from "../errors.js";
import { createMockHandler } from "./handler.js";
import type { Scenario } from "./scenario.js";
import { loadScenario, parseScenario } from "./scenario-load.js";

const dir = mkdtempSync(join(tmpdir(), "eddy-mock-scenario-"));
function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

async function json(response: Response) {
  return (await response.json()) as Record<string, unknown> & { error?: Record<string, unknown> };
}

describe("loadScenario", () => {
  it("loads YAML and JSON files", async () => {
    const yaml = file(
      "s.yaml",
      [
        "name: demo",
        "turns:",
        "  - items:",
        "      - { type: function_call, name: read_file, arguments: { path: a.txt }, call_id: call_1 }",
        "  - expect: { functionCallOutputs: call_1 }",
        "    items: [{ type: message, text: done }]",
        "    repeat: true",
      ].join("\n"),
    );
    const loaded = await loadScenario(yaml);
    expect(loaded.turns).toHaveLength(2);
    expect(loaded.turns[0]?.items?.[0]).toEqual({
      type: "function_call",
      name: "read_file",
      arguments: { path: "a.txt" },
      call_id: "call_1",
    });
    const jsonPath = file("s.json", JSON.stringify({ turns: [{ items: [{ type: "message", text: "x" }] }] }));
    expect((await loadScenario(jsonPath)).turns).toHaveLength(1);
  });

  it.each([
    [
      "a bad item field",
      { turns: [{}, {}, { items: [{ type: "function_call", name: "has space" }] }] },
      "turns[2].items[0].name: ",
    ],
    ["an unknown key", { turns: [{ itmes: [] }] }, "turns[0]: "],
    ["an unknown item type", { turns: [{ items: [{ type: "image" }] }] }, "turns[0].items[0]"],
    [
      "a message without text",
      { turns: [{ items: [{ type: "message" }] }] },
      "turns[0].items[0]: a message needs",
    ],
    [
      "repeat on a middle turn",
      { turns: [{ repeat: true }, {}] },
      "turns[0].repeat: only the last turn may repeat",
    ],
    ["no turns", { turns: [] }, "turns: a scenario needs at least one turn"],
    ["a bad fault", { turns: [{ faults: { chunkBytes: 0 } }] }, "turns[0].faults.chunkBytes"],
    ["items and rawEvents", { turns: [{ items: [], rawEvents: [] }] }, "turns[0].rawEvents"],
    [
      "a stall past a Node timer's limit",
      { turns: [{ faults: { stallAfterEvents: { afterEvents: 1, ms: 2 ** 31 } } }] },
      "turns[0].faults.stallAfterEvents.ms: must be at most 2147483647 ms",
    ],
  ])("names the file and the path of %s", async (_name, value, message) => {
    const path = file("bad.json", JSON.stringify(value));
    const error = await loadScenario(path).catch((e: unknown) => e);
    expect(EddyError.isInstance(error) && error.code).toBe("scenario_invalid");
    expect((error as Error).message).toContain(`${path}: ${message}`);
  });

  it("reports unreadable files and bad YAML", async () => {
    await expect(loadScenario(join(dir, "missing.yaml"))).rejects.toThrow(
      /cannot read the scenario file .*missing\.yaml: ENOENT/,
    );
    await expect(loadScenario(file("bad.yaml", "turns: [ {"))).rejects.toThrow(/bad\.yaml: not valid YAML/);
  });

  it.each([
    [
      "!!js/function",
      'text: !!js/function "x"',
      /Unresolved tag: !!js\/function at line 1, column \d+: a scenario holds plain YAML values, remove the tag$/,
    ],
    [
      "!foo",
      "text: !foo bar",
      /Unresolved tag: !foo at line 1, column \d+: a scenario holds plain YAML values, remove the tag$/,
    ],
  ])(
    "refuses a YAML tag it does not know (%s) in one line naming the file, never serving it untagged",
    async (_tag, text, message) => {
      const path = file("tagged.yaml", `turns: [{ items: [{ type: message, ${text} }] }]\n`);
      const error = await loadScenario(path).catch((e: unknown) => e);
      expect(EddyError.isInstance(error) && error.code).toBe("scenario_invalid");
      expect((error as Error).message).toMatch(
        new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: not valid YAML: `),
      );
      expect((error as Error).message).toMatch(message);
      expect((error as Error).message).not.toContain("\n");
    },
  );

  it("refuses a scenario nesting deeper than JSON_MAX_DEPTH in one line (found by a probe: it was served as an empty 200 stream)", async () => {
    const deep = `${"[".repeat(20_000)}${"]".repeat(20_000)}`;
    const path = file(
      "deep.json",
      `{"turns": [{"rawEvents": [{"type": "response.created", "x": ${deep}}]}]}`,
    );
    const error = await loadScenario(path).catch((e: unknown) => e);
    expect(EddyError.isInstance(error) && error.code).toBe("scenario_invalid");
    expect((error as Error).message).toBe(
      `${path}: the scenario nests deeper than 1000 levels of arrays and objects`,
    );
  });

  it("says each problem in at most 300 characters (found by a probe: 100,000 unknown keys were a 10 MB line)", async () => {
    const value: Record<string, unknown> = { turns: [{ items: [{ type: "message", text: "x" }] }] };
    for (let i = 0; i < 10_000; i++) value[`key_${i}_${"x".repeat(90)}`] = 1;
    const error = await loadScenario(file("keys.json", JSON.stringify(value))).catch((e: unknown) => e);
    expect(EddyError.isInstance(error) && error.code).toBe("scenario_invalid");
    expect((error as Error).message).toMatch(/\(root\): Unrecognized keys: .*…$/);
    expect((error as Error).message.length).toBeLessThan(600);
  });

  it("reads a JSON scenario that starts with a byte order mark", async () => {
    const path = file(
      "bom.json",
      `\ufeff${JSON.stringify({ turns: [{ items: [{ type: "message", text: "x" }] }] })}`,
    );
    expect((await loadScenario(path)).turns).toHaveLength(1);
  });

  it("validates TS objects too", () => {
    expect(() => parseScenario({ turns: [{ status: "done" }] })).toThrow(/scenario: turns\[0\]\.status/);
    expect(() => createMockHandler({ scenario: { turns: [] } })).toThrow(EddyError);
  });
});

describe("turns", () => {
  it("answers turn i to the i-th request and then refuses with scenario_exhausted", async () => {
    const h = createMockHandler({
      scenario: {
        name: "two",
        turns: [{ items: [{ type: "message", text: "one" }] }, { items: [{ type: "message", text: "two" }] }],
      },
    });
    const texts = [];
    for (let i = 0; i < 2; i++)
      texts.push(JSON.stringify((await json(await post(h, { model: "m", input: "x" }))).output));
    expect(texts[0]).toContain('"one"');
    expect(texts[1]).toContain('"two"');
    const third = await post(h, { model: "m", input: "x" });
    expect(third.status).toBe(400);
    expect((await json(third)).error).toMatchObject({ code: "scenario_exhausted" });
  });

  it("repeats a last turn with repeat: true forever, with fresh ids", async () => {
    const h = createMockHandler({
      scenario: { turns: [{ items: [{ type: "function_call", name: "loop" }], repeat: true }] },
    });
    const ids = [];
    for (let i = 0; i < 5; i++) {
      const body = await json(await post(h, { model: "m", input: "x" }));
      ids.push((body.output as Array<{ call_id: string }>)[0]?.call_id);
    }
    expect(ids).toEqual([
      "call_mock_0001",
      "call_mock_0002",
      "call_mock_0003",
      "call_mock_0004",
      "call_mock_0005",
    ]);
  });
});

describe("expect", () => {
  const scenario: Scenario = {
    turns: [
      { items: [{ type: "function_call", name: "read_file", call_id: "call_A" }] },
      {
        label: "answer",
        expect: {
          previousResponseId: true,
          functionCallOutputs: "call_A",
          inputContains: "file body",
          tools: ["read_file"],
          instructionsContains: "brief",
          body: { parallel_tool_calls: false, tools: [{ name: "read_file" }] },
        },
        items: [{ type: "message", text: "done" }],
      },
    ],
  };
  const good = {
    model: "m",
    previous_response_id: "resp_mock_0001",
    instructions: "be brief",
    parallel_tool_calls: false,
    tools: [{ type: "function", name: "read_file" }],
    input: [{ type: "function_call_output", call_id: "call_A", output: "the file body" }],
  };

  it("passes a matching request", async () => {
    const h = createMockHandler({ scenario });
    await post(h, { model: "m", input: "read it" });
    expect((await post(h, good)).status).toBe(200);
  });

  it.each([
    [
      "no previous_response_id",
      { previous_response_id: undefined, input: [] },
      "expected a previous_response_id; got none",
    ],
    [
      "another call's output",
      { input: [] },
      "expected a function_call_output for call_id 'call_A'; got none",
    ],
    [
      "input without the text",
      { input: [{ type: "function_call_output", call_id: "call_A", output: "other" }] },
      'expected the input to contain "file body"; got "other"',
    ],
    [
      "tools missing",
      { tools: [], body: undefined },
      "expected tool 'read_file' to be offered; got no tools",
    ],
    [
      "other instructions",
      { instructions: "be long" },
      'expected instructions containing "brief"; got "be long"',
    ],
    [
      "a body difference",
      { parallel_tool_calls: true },
      "expected body.parallel_tool_calls = false; got true",
    ],
  ])(
    "answers %s with 400 scenario_mismatch saying what was expected and what came",
    async (_name, change, message) => {
      const h = createMockHandler({ scenario });
      await post(h, { model: "m", input: "read it" });
      const response = await post(h, { ...good, ...change });
      expect(response.status).toBe(400);
      const error = (await json(response)).error;
      expect(error?.code).toBe("scenario_mismatch");
      expect(error?.message).toContain("turn 1 (answer)");
      expect(error?.message).toContain(message);
    },
  );
});

describe("rawEvents", () => {
  const capture = splitResponses(captureLines("openai/openai-reasoning-encrypted-content.1"));

  it("emits exactly the given events (own sequence numbers), then [DONE]", async () => {
    const lines = capture[0] ?? [];
    const h = createMockHandler({ scenario: { turns: [{ rawEvents: lines }] } });
    const read = await readSse((await post(h, { model: "m", input: "x", stream: true })).body);
    expect(read.messages.slice(0, -1).map((m) => m.data)).toEqual(lines);
    expect(read.messages.slice(0, -1).map((m) => m.event)).toEqual(lines.map((l) => JSON.parse(l).type));
    expect(read.done).toBe(true);
  });

  it("replays a multi-turn capture; a follow-up may chain on the captured response id", async () => {
    const objects = capture.map((lines) => lines.map((l) => JSON.parse(l) as Record<string, unknown>));
    const h = createMockHandler({ scenario: { turns: objects.map((rawEvents) => ({ rawEvents })) } });
    const first = await readSse((await post(h, { model: "m", input: "x", stream: true })).body);
    const last = eventObjects(first).at(-1) as {
      response: { id: string; output: Array<{ call_id?: string }> };
    };
    const call = last.response.output.find((i) => i.call_id !== undefined);
    const follow = await post(h, {
      model: "m",
      stream: true,
      previous_response_id: last.response.id,
      input: [{ type: "function_call_output", call_id: call?.call_id, output: "19" }],
    });
    expect(follow.status).toBe(200);
    const second = await readSse(follow.body);
    expect(eventObjects(second)).toEqual(objects[1]);
  });

  it("answers a non-streaming request with the last response snapshot", async () => {
    const h = createMockHandler({ scenario: { turns: [{ rawEvents: capture[3] ?? [] }] } });
    const body = await json(await post(h, { model: "m", input: "x" }));
    expect(body.status).toBe("completed");
    expect(JSON.stringify(body.output)).toContain("570");
  });
});

describe("example scenarios", () => {
  const examples = join(import.meta.dirname, "examples");

  it("tool-loop.yaml runs as documented", async () => {
    const h = createMockHandler({ scenario: await loadScenario(join(examples, "tool-loop.yaml")) });
    const tools = [{ type: "function", name: "read_file" }];
    const first = await json(await post(h, { model: "m", input: "What is in package.json?", tools }));
    expect((first.output as Array<{ call_id?: string }>)[1]?.call_id).toBe("call_read_1");
    const second = await post(h, {
      model: "m",
      previous_response_id: first.id,
      tools,
      input: [{ type: "function_call_output", call_id: "call_read_1", output: "{}" }],
    });
    expect(JSON.stringify(await json(second))).toContain("package.json describes the project");
  });

  it("flaky-provider.yaml loads, and its third turn repeats", async () => {
    const scenario = await loadScenario(join(examples, "flaky-provider.yaml"));
    expect(scenario.turns.map((t) => t.label)).toEqual([
      "rate limited",
      "error before any output",
      "slow, chopped and CRLF, then fine",
    ]);
    expect(scenario.turns[2]?.faults?.lineEnding).toBe("\r\n");
  });
});

describe("an httpError fault's headers are checked when the scenario loads (they go to the socket as written)", () => {
  it.each([
    [{ "bad name": "x" }, /header name is a token/],
    [{ "x-a": "one\r\nset-cookie: two" }, /no CR, LF, NUL/],
    [{ "x-a": "\u001b[31mred" }, /no CR, LF, NUL or other control/],
    [{ "x-a": "snow \u2603" }, /printable Latin-1/],
    [{ "x-a": "nul\u0000" }, /no CR, LF, NUL/],
    [{ "": "x" }, /header name is a token/],
  ])("refuses %j", (headers, message) => {
    const scenario = { turns: [{ faults: { httpError: { status: 503, headers } } }] };
    const error = (() => {
      try {
        parseScenario(scenario as unknown as Scenario);
      } catch (e) {
        return e;
      }
    })();
    expect(EddyError.isInstance(error) && error.code).toBe("scenario_invalid");
    expect((error as Error).message).toMatch(message);
  });

  it("serves valid ones, over the socket and through the fetch-style handler alike", async () => {
    const handler = createMockHandler({
      scenario: { turns: [{ faults: { httpError: { status: 503, headers: { "Retry-After": "2" } } } }] },
    });
    const response = await handler(
      new Request("http://127.0.0.1/v1/responses", {
        method: "POST",
        body: JSON.stringify({ model: "m", input: "x" }),
      }),
    );
    expect(response.status).toBe(503);
    expect(response.headers.get("retry-after")).toBe("2");
  });
});
