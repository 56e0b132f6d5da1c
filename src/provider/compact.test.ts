/**
 * `Provider.compact` over HTTP against a scripted server on 127.0.0.1 (test/support/raw-server.ts):
 * the URL, headers and body sent, the `CompactResource` read back, and refusals as `ProviderError`s.
 */
import { afterEach, describe, expect, it } from "vitest";
import { type RawServer, startRawServer } from "../../test/support/raw-server.js";
import { validateInputItem } from "../protocol/validate.js";
import { compactUrl } from "./compact.js";
import { ProviderError } from "./errors.js";
import { createOpenResponsesProvider } from "./open-responses.js";

let server: RawServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const json = (status: number, body: unknown) => ({
  status,
  headers: { "content-type": "application/json", "x-request-id": "req_9" },
  body: [JSON.stringify(body)],
});

const compacted = {
  id: "resp_c1",
  object: "response.compaction",
  created_at: 1764967971,
  output: [
    {
      id: "msg_1",
      type: "message",
      status: "completed",
      role: "user",
      content: [{ type: "input_text", text: "Build a landing page." }],
    },
    { id: "cmp_1", type: "compaction", encrypted_content: "gAAAA-opaque" },
  ],
  usage: {
    input_tokens: 139,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 438,
    output_tokens_details: { reasoning_tokens: 64 },
    total_tokens: 577,
  },
};

const input = [
  { type: "message", role: "user", content: [{ type: "input_text", text: "Build a landing page." }] },
];

describe("compactUrl", () => {
  it.each([
    ["http://h/v1/responses", "http://h/v1/responses/compact"],
    ["http://h/v1/responses/", "http://h/v1/responses/compact"],
    ["http://h/openai/v1/responses?api-version=1", "http://h/openai/v1/responses/compact?api-version=1"],
  ])("%s → %s", (from, to) => expect(compactUrl(from)).toBe(to));
});

describe("Provider.compact (Open Responses over HTTP)", () => {
  it("POSTs the compact body to /v1/responses/compact with the provider's key, and returns the output", async () => {
    server = await startRawServer([json(200, compacted)]);
    const provider = createOpenResponsesProvider({ baseURL: server.url, apiKey: "sk-compact-secret" });
    const result = await provider.compact?.({ model: "gpt-5", input, instructions: "Be brief." });
    expect(result).toEqual({ output: compacted.output, usage: compacted.usage });
    const request = server.requests[0];
    expect(request?.method).toBe("POST");
    expect(request?.url).toBe("/v1/responses/compact");
    expect(request?.headers.authorization).toBe("Bearer sk-compact-secret");
    expect(JSON.parse(request?.body ?? "")).toEqual({ model: "gpt-5", input, instructions: "Be brief." });
    // What comes back is sendable as the next request's input.
    for (const item of result?.output ?? []) expect(validateInputItem(item)).toBeUndefined();
  });

  it("sends previous_response_id when given, and no model when it is null", async () => {
    server = await startRawServer([json(200, compacted)]);
    const provider = createOpenResponsesProvider({ baseURL: server.url });
    await provider.compact?.({ model: null, input: [], previousResponseId: "resp_7" });
    expect(JSON.parse(server.requests[0]?.body ?? "")).toEqual({ input: [], previous_response_id: "resp_7" });
  });

  it("a refusal is the ProviderError a /responses request would get, without the key", async () => {
    server = await startRawServer([
      json(400, {
        error: { type: "invalid_request_error", code: "unknown_parameter", message: "sk-compact-secret?" },
      }),
    ]);
    const provider = createOpenResponsesProvider({ baseURL: server.url, apiKey: "sk-compact-secret" });
    const error = await provider.compact?.({ model: "m", input }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({
      kind: "http",
      status: 400,
      providerCode: "unknown_parameter",
      requestId: "req_9",
    });
    expect((error as Error).message).not.toContain("sk-compact-secret");
  });

  it("a 2xx body that is not a response.compaction says the server may not support compaction", async () => {
    server = await startRawServer([json(200, { object: "response", output: [] })]);
    const provider = createOpenResponsesProvider({ baseURL: server.url });
    await expect(provider.compact?.({ model: "m", input })).rejects.toThrow(
      /did not answer with a response\.compaction object/,
    );
  });

  it("an answer nested deeper than JSON_MAX_DEPTH is refused (its items overflowed the stack once in the history)", async () => {
    const deep = `${"[".repeat(3_000)}"x"${"]".repeat(3_000)}`;
    const body = `{"id":"c","object":"response.compaction","created_at":1,"output":[{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}],"deep":${deep}}]}`;
    server = await startRawServer([
      { status: 200, headers: { "content-type": "application/json" }, body: [body] },
    ]);
    const provider = createOpenResponsesProvider({ baseURL: server.url });
    await expect(provider.compact?.({ model: "m", input })).rejects.toMatchObject({
      kind: "decode",
      message: expect.stringMatching(/nests deeper than 1000 levels/),
    });
  });

  it("an unreachable server is a connection error; an aborted call is cancelled", async () => {
    const provider = createOpenResponsesProvider({ baseURL: "http://127.0.0.1:9/v1" });
    await expect(provider.compact?.({ model: "m", input })).rejects.toMatchObject({ kind: "connection" });
    const controller = new AbortController();
    controller.abort();
    await expect(
      provider.compact?.({ model: "m", input }, { signal: controller.signal }),
    ).rejects.toMatchObject({
      kind: "cancelled",
    });
  });
});
