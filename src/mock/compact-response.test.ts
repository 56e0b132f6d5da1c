import { describe, expect, it } from "vitest";
import { post } from "../../test/support/mock-sse.js";
import { validateUsage } from "../protocol/generated/response-validators.cjs";
import { validateOutputItem } from "../protocol/validate.js";
import { createMockHandler, type MockHandler } from "./handler.js";

type Json = Record<string, unknown>;

const compact = (handler: MockHandler, body: unknown, method = "POST") =>
  post(handler, body, { path: "/v1/responses/compact", method });
const msg = (role: string, content: unknown) => ({ type: "message", role, content });

async function compacted(handler: MockHandler, body: Json): Promise<Json> {
  const response = await compact(handler, body);
  expect(response.status).toBe(200);
  const resource = (await response.json()) as Json;
  expectCompactResource(resource);
  return resource;
}

/** `CompactResource` (schemas/openresponses/openapi.json): id, object, output (ItemField[]), created_at, usage. */
function expectCompactResource(resource: Json): void {
  expect(resource).toMatchObject({ object: "response.compaction", id: expect.stringMatching(/^resp_/) });
  expect(Number.isInteger(resource.created_at)).toBe(true);
  for (const item of resource.output as Json[]) expect(validateOutputItem(item)).toBeUndefined();
  expect(validateUsage(resource.usage)).toBe(true);
}

const output = (resource: Json) => resource.output as Json[];

describe("POST /v1/responses/compact", () => {
  it("keeps the recent user messages verbatim and adds one compaction item with opaque content", async () => {
    const resource = await compacted(createMockHandler({ clock: () => 1_700_000_000_000 }), {
      model: "m",
      prompt_cache_key: "k",
      input: [
        msg("user", "We agreed to launch on Tuesday."),
        msg("assistant", "Understood: Tuesday."),
        msg("user", [{ type: "input_text", text: "And notify support first." }]),
        msg("assistant", "Noted."),
        msg("user", "Compress this."),
      ],
    });
    expect(resource.created_at).toBe(1_700_000_000);
    expect(output(resource).map((i) => [i.type, i.role])).toEqual([
      ["message", "user"],
      ["message", "user"],
      ["compaction", undefined],
    ]);
    expect(output(resource)[0]).toMatchObject({
      status: "completed",
      content: [{ type: "input_text", text: "And notify support first." }],
    });
    const item = output(resource)[2] as Json;
    expect(item.id).toMatch(/^cmp_mock_/);
    expect(String(item.encrypted_content)).not.toContain("Tuesday");
    expect((resource.usage as Json).input_tokens).toBeGreaterThan(0);
  });

  it("the next response sees the whole compacted history: the demo model answers a tool loop that was compacted", async () => {
    const handler = createMockHandler();
    const call = {
      type: "function_call",
      call_id: "call_1",
      name: "read_file",
      arguments: '{"path":"package.json"}',
    };
    const result = JSON.stringify({
      tool: "read_file",
      ok: true,
      exit_code: 0,
      stdout: '{"name":"demo-app"}\n',
      stderr: "",
    });
    const resource = await compacted(handler, {
      model: "m",
      input: [
        msg("user", "What is in package.json?"),
        call,
        { type: "function_call_output", call_id: "call_1", output: result },
      ],
    });
    // Without expansion the demo model would see only the question and call read_file again.
    const response = await post(handler, { model: "m", input: output(resource), tools: [READ_FILE] });
    expect(response.status).toBe(200);
    const answer = (await response.json()) as Json;
    expect(output(answer).map((i) => i.type)).toEqual(["message"]);
    expect(JSON.stringify(answer.output)).toContain("demo-app");
  });

  it("a scenario's contextContains sees the compacted history; inputContains sees only the request's own input", async () => {
    const handler = createMockHandler({
      scenario: {
        turns: [
          {
            expect: { contextContains: ["code word: slate", "OK."] },
            items: [{ type: "message", text: "slate" }],
          },
          { expect: { inputContains: "code word: slate" }, items: [] },
        ],
      },
    });
    const resource = await compacted(handler, {
      model: "m",
      input: [
        msg("assistant", "Remember the code word: slate."),
        msg("assistant", "OK."),
        msg("user", "Compact."),
      ],
    });
    const input = [...output(resource), msg("user", "What was the code word?")];
    expect((await post(handler, { model: "m", input })).status).toBe(200);
    const mismatch = await post(handler, { model: "m", input });
    expect(mismatch.status).toBe(400);
    expect(await mismatch.json()).toMatchObject({ error: { code: "scenario_mismatch" } });
  });

  it("compacts a stored chain from previous_response_id (plus input), and a compaction of a compaction", async () => {
    const handler = createMockHandler({
      scenario: {
        turns: [
          { items: [{ type: "message", text: "Launch is Tuesday." }] },
          { expect: { contextContains: ["When?", "Launch is Tuesday.", "Anything else?"] }, items: [] },
        ],
      },
    });
    const first = (await (await post(handler, { model: "m", input: "When?" })).json()) as Json;
    const once = await compacted(handler, {
      model: "m",
      previous_response_id: first.id,
      input: "Anything else?",
    });
    expect(output(once).map((i) => i.type)).toEqual(["message", "message", "compaction"]);
    const twice = await compacted(handler, { model: "m", input: output(once) });
    expect((await post(handler, { model: "m", input: output(twice) })).status).toBe(200);
  });

  it.each([
    ["no model", { input: [msg("user", "x")] }, 400, "missing_required_parameter", "model"],
    [
      "a field the compact body lacks",
      { model: "m", input: "x", stream: true },
      400,
      "unknown_parameter",
      "stream",
    ],
    ["an invalid input", { model: "m", input: 5 }, 400, "invalid_value", "input"],
    ["nothing to compact", { model: "m" }, 400, "missing_required_parameter", "input"],
    [
      "an unknown previous_response_id",
      { model: "m", previous_response_id: "resp_x" },
      404,
      "previous_response_not_found",
      "previous_response_id",
    ],
    [
      "a foreign compaction item",
      { model: "m", input: [{ type: "compaction", encrypted_content: "x" }] },
      400,
      "invalid_encrypted_content",
      "input[0].encrypted_content",
    ],
  ])("refuses %s", async (_label, body, status, code, param) => {
    const response = await compact(createMockHandler(), body);
    expect(response.status).toBe(status);
    expect(await response.json()).toMatchObject({ error: { code, param } });
  });

  it("GET on /v1/responses/compact is 405 use POST (not a response id), and compaction uses up no scenario turn", async () => {
    const handler = createMockHandler({
      scenario: { turns: [{ items: [{ type: "message", text: "turn 0" }] }] },
    });
    const get = await compact(handler, undefined, "GET");
    expect(get.status).toBe(405);
    expect(get.headers.get("allow")).toBe("POST");
    await compacted(handler, { model: "m", input: "x" });
    expect(JSON.stringify(await (await post(handler, { model: "m", input: "y" })).json())).toContain(
      "turn 0",
    );
    expect(handler.requests.map((r) => [r.method, r.path])).toEqual([
      ["GET", "/v1/responses/compact"],
      ["POST", "/v1/responses/compact"],
      ["POST", "/v1/responses"],
    ]);
  });

  it("a WebSocket response.create expands compaction items too (a new chain from compact output)", async () => {
    const handler = createMockHandler({
      scenario: {
        turns: [
          { expect: { contextContains: "Stored it." }, items: [{ type: "message", text: "compacted" }] },
        ],
      },
    });
    const resource = await compacted(handler, {
      model: "m",
      input: [msg("user", "Remember: slate."), msg("assistant", "Stored it.")],
    });
    const admission = handler.websocket(new Request("http://127.0.0.1/v1/responses"));
    if ("refused" in admission) throw new Error("refused");
    const sent: string[] = [];
    const session = admission.open({ send: (t) => void sent.push(t), ping: () => {}, drop: () => {} });
    session.receive(
      JSON.stringify({
        type: "response.create",
        model: "m",
        store: false,
        input: [...output(resource), msg("user", "Continue.")],
      }),
    );
    await session.settled();
    expect(JSON.parse(sent.at(-1) ?? "{}")).toMatchObject({ type: "response.completed" });
  });
});

const READ_FILE = {
  type: "function",
  name: "read_file",
  description: "Read a file",
  parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
  strict: false,
};
