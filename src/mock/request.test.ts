import { describe, expect, it } from "vitest";
import { post } from "../../test/support/mock-sse.js";
import { createMockHandler } from "./handler.js";

async function refusal(body: unknown) {
  const response = await post(createMockHandler(), body);
  return {
    status: response.status,
    error: ((await response.json()) as { error: Record<string, unknown> }).error,
  };
}

describe("request validation", () => {
  it.each([
    ["a body that is not JSON", "{nope", null, "invalid_json"],
    ["a JSON array", "[1]", null, "invalid_json"],
    ["a missing model", { input: "hi" }, "model", "missing_required_parameter"],
    ["a null model", { model: null, input: "hi" }, "model", "missing_required_parameter"],
    ["max_tool_calls 0", { model: "m", max_tool_calls: 0 }, "max_tool_calls", "integer_below_min_value"],
    ["max_tool_calls 1.5", { model: "m", max_tool_calls: 1.5 }, "max_tool_calls", "integer_below_min_value"],
    [
      "a function_call_output without call_id",
      {
        model: "m",
        input: [
          { type: "message", role: "user", content: "x" },
          { type: "function_call_output", output: "o" },
        ],
      },
      "input[1].call_id",
      "missing_required_parameter",
    ],
    [
      "a function_call_output without output",
      { model: "m", input: [{ type: "function_call_output", call_id: "c" }] },
      "input[0].output",
      "missing_required_parameter",
    ],
    [
      "a function_call without name",
      { model: "m", input: [{ type: "function_call", call_id: "c", arguments: "{}" }] },
      "input[0].name",
      "missing_required_parameter",
    ],
    ["a wrong type", { model: "m", temperature: "hot" }, "temperature", "invalid_value"],
    [
      "a bad tool name",
      { model: "m", tools: [{ type: "function", name: "a b" }] },
      "tools[0].name",
      "invalid_value",
    ],
    ["background", { model: "m", background: true }, "background", "unsupported_value"],
    ["required without tools", { model: "m", tool_choice: "required" }, "tool_choice", null],
    [
      "a named function that is not offered",
      { model: "m", tools: [{ type: "function", name: "a" }], tool_choice: { type: "function", name: "b" } },
      "tool_choice.name",
      null,
    ],
  ])("refuses %s with 400 invalid_request_error naming the field", async (_name, body, param, code) => {
    const { status, error } = await refusal(body);
    expect(status).toBe(400);
    expect(error).toMatchObject({ type: "invalid_request_error", param, code });
    expect(typeof error.message).toBe("string");
  });

  it("accepts the minimal body (model + string input) and the /responses path", async () => {
    const handler = createMockHandler();
    expect((await post(handler, { model: "m", input: "hi" })).status).toBe(200);
    expect((await post(handler, { model: "m", input: "hi" }, { path: "/responses" })).status).toBe(200);
    expect((await post(handler, { model: "m" })).status).toBe(200);
  });
});

describe("state", () => {
  const handler = () =>
    createMockHandler({
      scenario: {
        turns: [
          { items: [{ type: "function_call", name: "grep", call_id: "call_1" }] },
          { items: [{ type: "message", text: "done" }] },
        ],
      },
    });

  it("answers an unknown previous_response_id with 404 previous_response_not_found", async () => {
    const response = await post(handler(), { model: "m", previous_response_id: "resp_nope", input: "x" });
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({
      error: {
        type: "invalid_request_error",
        code: "previous_response_not_found",
        message: "Previous response with id 'resp_nope' not found.",
        param: "previous_response_id",
      },
    });
  });

  it("refuses a function_call_output whose call_id matches no call, naming input[i].call_id", async () => {
    const h = handler();
    await post(h, { model: "m", input: "x" });
    const response = await post(h, {
      model: "m",
      previous_response_id: "resp_mock_0001",
      input: [
        { type: "function_call_output", call_id: "call_1", output: "ok" },
        { type: "function_call_output", call_id: "call_2", output: "ok" },
      ],
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: unknown }).error).toMatchObject({
      param: "input[1].call_id",
    });
  });

  it("continues a chain: the call may be in the previous output or resent in the input", async () => {
    const h = handler();
    await post(h, { model: "m", input: "x" });
    const chained = await post(h, {
      model: "m",
      previous_response_id: "resp_mock_0001",
      input: [{ type: "function_call_output", call_id: "call_1", output: "ok" }],
    });
    expect(chained.status).toBe(200);
    const stateless = await post(handler(), {
      model: "m",
      store: false,
      input: [
        { type: "message", role: "user", content: "x" },
        { type: "function_call", call_id: "call_9", name: "grep", arguments: "{}" },
        { type: "function_call_output", call_id: "call_9", output: "ok" },
      ],
    });
    expect(stateless.status).toBe(200);
  });

  it("does not store a store:false response", async () => {
    const h = handler();
    await post(h, { model: "m", input: "x", store: false });
    const response = await post(h, { model: "m", previous_response_id: "resp_mock_0001", input: "y" });
    expect(response.status).toBe(404);
  });

  it("serves stored responses on GET /v1/responses/{id}", async () => {
    const h = handler();
    await post(h, { model: "m", input: "x" });
    const response = await h(new Request("http://mock.test/v1/responses/resp_mock_0001"));
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ id: "resp_mock_0001", status: "completed" });
    expect((await h(new Request("http://mock.test/v1/responses/resp_x"))).status).toBe(404);
  });

  it("does not use up a turn on a refused request", async () => {
    const h = handler();
    await post(h, { model: "m", previous_response_id: "resp_unknown", input: "x" });
    await post(h, { input: "x" });
    const first = (await (await post(h, { model: "m", input: "x" })).json()) as {
      output: Array<{ type: string }>;
    };
    expect(first.output[0]?.type).toBe("function_call");
    expect(h.requests.map((r) => r.turn)).toEqual([undefined, undefined, 0]);
  });
});

describe("routing and auth", () => {
  it("answers an unknown path with 404 and a wrong method with 405, both JSON", async () => {
    const h = createMockHandler();
    const notFound = await h(new Request("http://mock.test/v1/completions", { method: "POST", body: "{}" }));
    expect(notFound.status).toBe(404);
    expect(((await notFound.json()) as { error: { type: string } }).error.type).toBe("invalid_request_error");
    const wrong = await h(new Request("http://mock.test/v1/responses"));
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get("allow")).toBe("POST");
    expect(await wrong.json()).toMatchObject({ error: { code: "method_not_allowed" } });
  });

  it("requires the bearer token when apiKey is set, and never records it", async () => {
    const h = createMockHandler({ apiKey: "sk-secret" });
    const missing = await post(h, { model: "m", input: "x" });
    expect(missing.status).toBe(401);
    expect(await missing.json()).toMatchObject({
      error: { type: "invalid_request_error", code: "invalid_api_key" },
    });
    const wrong = await post(h, { model: "m", input: "x" }, { headers: { authorization: "Bearer nope" } });
    expect(wrong.status).toBe(401);
    const right = await post(
      h,
      { model: "m", input: "x" },
      { headers: { authorization: "Bearer sk-secret" } },
    );
    expect(right.status).toBe(200);
    expect(right.headers.get("x-request-id")).toBe("req_mock_0003");
    expect(h.requests[2]?.headers.authorization).toBe("[REDACTED]");
    expect(JSON.stringify(h.requests)).not.toContain("sk-secret");
    expect(h.requests[2]).toMatchObject({
      method: "POST",
      path: "/v1/responses",
      body: { model: "m", input: "x" },
    });
  });
});
