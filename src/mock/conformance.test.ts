import { describe, expect, it } from "vitest";
import { post } from "../../test/support/mock-sse.js";
import { createMockHandler, type MockHandler } from "./handler.js";

type Json = Record<string, unknown>;

/** How the AI SDK and the Agents SDK send a message: no `type`. */
const short = { model: "m", input: [{ role: "user", content: "What is in package.json?" }] };
const canonical = {
  model: "m",
  input: [{ type: "message", role: "user", content: "What is in package.json?" }],
};

async function json(response: Response): Promise<Json> {
  return (await response.json()) as Json;
}

/** Sends one WebSocket `response.create` in process and returns the messages it got. */
async function overWebSocket(handler: MockHandler, body: Json): Promise<Json[]> {
  const admission = handler.websocket(new Request("http://127.0.0.1/v1/responses"));
  if ("refused" in admission) throw new Error(`refused: ${admission.refused.status}`);
  const messages: Json[] = [];
  const session = admission.open({
    send: (text) => void messages.push(JSON.parse(text) as Json),
    ping: () => {},
    drop: () => {},
  });
  session.receive(JSON.stringify({ type: "response.create", ...body }));
  await session.settled();
  session.end();
  return messages;
}

describe("short forms real clients send (lenient, the default)", () => {
  it("answers a message without type as the message it is, and records the body as it was sent", async () => {
    const handler = createMockHandler();
    const response = await post(handler, short);
    expect(response.status).toBe(200);
    const resource = await json(response);
    expect(resource.status).toBe("completed");
    expect(JSON.stringify(resource.output)).toContain("read_file"); // the demo model read the question
    expect(handler.requests[0]?.body).toEqual(short);
  });

  it("a scenario's expect sees the canonical conversation, and expect.body the body as sent", async () => {
    const handler = createMockHandler({
      scenario: {
        turns: [
          {
            expect: { inputContains: "package.json", body: { input: [{ role: "user" }], store: null } },
            items: [{ type: "message", text: "ok" }],
          },
        ],
      },
    });
    const response = await post(handler, { ...short, store: null });
    expect(response.status).toBe(200);
    expect((await json(response)).store).toBe(true); // null meant "not set": the default is echoed
  });

  it("continues a chain whose first request used the short form", async () => {
    const handler = createMockHandler({
      scenario: {
        turns: [
          { items: [{ type: "message", text: "first" }] },
          {
            expect: { contextContains: ["package.json", "first", "next"] },
            items: [{ type: "message", text: "second" }],
          },
        ],
      },
    });
    await post(handler, short);
    const next = await post(handler, {
      model: "m",
      previous_response_id: "resp_mock_0001",
      input: [{ role: "user", content: "next" }],
    });
    expect(next.status).toBe(200);
  });

  it("accepts the short form over WebSocket and on /responses/compact", async () => {
    const handler = createMockHandler();
    const messages = await overWebSocket(handler, short);
    expect(messages.at(-1)?.type).toBe("response.completed");
    const compacted = await post(handler, short, { path: "/v1/responses/compact" });
    expect(compacted.status).toBe(200);
  });
});

describe("--strict (conformance: strict)", () => {
  it("refuses a message without type with a 400 naming input[0].type", async () => {
    const response = await post(createMockHandler({ conformance: "strict" }), short);
    expect(response.status).toBe(400);
    const { error } = (await json(response)) as { error: Json };
    expect(error).toMatchObject({
      type: "invalid_request_error",
      code: "missing_required_parameter",
      param: "input[0].type",
    });
    expect(error.message).toMatch(/^input\[0\]\.type is required \(--strict\)\. /);
  });

  it("names every short form of a body, the first as param", async () => {
    const body = {
      model: "m",
      store: null,
      input: [canonical.input[0], { role: "assistant", content: "a" }],
      tools: [{ type: "function", name: "f", strict: null }],
    };
    const response = await post(createMockHandler({ conformance: "strict" }), body);
    const { error } = (await json(response)) as { error: Json };
    expect(error.param).toBe("store");
    expect(error.message).toContain(
      "store must not be null (leave it out); input[1].type is required; tools[0].strict must not be null (leave it out) (--strict)",
    );
  });

  it("accepts the canonical form", async () => {
    const response = await post(createMockHandler({ conformance: "strict" }), canonical);
    expect(response.status).toBe(200);
  });

  it("refuses the short form over WebSocket and on /responses/compact too", async () => {
    const handler = createMockHandler({ conformance: "strict" });
    const [error] = await overWebSocket(handler, short);
    expect(error).toMatchObject({ type: "error", status: 400, error: { param: "input[0].type" } });
    const compacted = await post(handler, short, { path: "/v1/responses/compact" });
    expect(compacted.status).toBe(400);
    expect(((await json(compacted)) as { error: Json }).error.param).toBe("input[0].type");
  });
});
