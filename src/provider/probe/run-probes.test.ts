import { createServer, request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import {
  type MessagesOnlyGateway,
  startMessagesOnlyGateway,
} from "../../../test/support/messages-only-gateway.js";
import { type RawServer, startRawServer } from "../../../test/support/raw-server.js";
import { textEmbedStrategy } from "../../history/strategies.js";
import { createMockServer, type MockServer } from "../../mock/index.js";
import { ProviderError } from "../errors.js";
import { runProbes } from "./run-probes.js";
import { PROBE_NAMES, type ProbeResult } from "./types.js";

let mock: MockServer | undefined;
let gateway: MessagesOnlyGateway | undefined;
let raw: RawServer | undefined;

afterEach(async () => {
  await mock?.close();
  await gateway?.close();
  await raw?.close();
  mock = undefined;
  gateway = undefined;
  raw = undefined;
});

const byName = (results: ProbeResult[]) => Object.fromEntries(results.map((r) => [r.name, r]));

describe("runProbes", () => {
  it("finds everything working on the mock server, one result per probe in order", async () => {
    mock = await createMockServer({});
    const seen: string[] = [];
    const results = await runProbes(
      { endpoint: { baseURL: mock.url }, model: "eddy-demo" },
      { onResult: (r) => seen.push(r.name) },
    );
    expect(results.map((r) => r.name)).toEqual(PROBE_NAMES);
    expect(seen).toEqual(PROBE_NAMES);
    for (const result of results) expect([result.name, result.status]).toEqual([result.name, "ok"]);
    expect(byName(results).tool_call?.follow_up).toBe("chained");
    // The probes' requests are small: every one caps its output.
    const bodies = mock.requests.filter((r) => r.path.endsWith("/responses")).map((r) => r.body);
    expect(bodies.length).toBeGreaterThan(5);
    for (const body of bodies) expect(body).toMatchObject({ max_output_tokens: 256 });
  });

  it("reports a server that refuses function_call input items and previous_response_id, and still makes the tool round trip as text", async () => {
    gateway = await startMessagesOnlyGateway();
    const results = byName(
      await runProbes(
        { endpoint: { baseURL: gateway.url }, model: "eddy-demo" },
        { renderToolResult: textEmbedStrategy.renderResult, timeoutMs: 10_000 },
      ),
    );
    expect(results.function_call_input).toMatchObject({ status: "unsupported" });
    expect(results.function_call_input?.detail).toMatch(/Invalid input item type 'function_call'/);
    expect(results.function_call_input?.hint).toMatch(/text-embed/);
    expect(results.previous_response_id).toMatchObject({ status: "unsupported" });
    expect(results.tool_call).toMatchObject({ status: "ok", follow_up: "text" });
    expect(results.websocket).toMatchObject({ status: "unsupported" });
    expect(results.auth?.status).toBe("ok");
    // The round trip's last request carried the output as text: no tool items at all.
    const last = gateway.requests
      .filter((r) => JSON.stringify(r.body ?? {}).includes("Context (tool result of"))
      .at(-1);
    expect(last?.refused).toBeUndefined();
    expect(JSON.stringify(last?.body?.input)).not.toMatch(/"type":"function_call/);
  });

  it("a server that accepts previous_response_id and ignores it is caught", async () => {
    gateway = await startMessagesOnlyGateway({ previousResponseId: "ignore" });
    const results = byName(await runProbes({ endpoint: { baseURL: gateway.url }, model: "eddy-demo" }));
    expect(results.previous_response_id).toMatchObject({ status: "unsupported" });
    expect(results.previous_response_id?.detail).toMatch(/seems to ignore it/);
  });

  it("a server whose responses have an empty id is not chained: previous_response_id is unsupported, the tool round trip goes stateless", async () => {
    mock = await createMockServer({});
    const target = new URL(mock.url);
    // The mock's answers with every response id ("resp_…") made "": the body is passed on whole.
    const proxy = createServer((req, res) => {
      const forward = httpRequest(
        { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers },
        async (answer) => {
          let body = "";
          for await (const chunk of answer) body += String(chunk);
          const headers = { ...answer.headers };
          delete headers["content-length"];
          delete headers["transfer-encoding"];
          res.writeHead(answer.statusCode ?? 502, headers);
          res.end(body.replace(/"id":"resp_[A-Za-z0-9_]+"/g, '"id":""'));
        },
      );
      req.pipe(forward);
    });
    // No WebSocket through this proxy: its websocket probe fails at once instead of after its timeout.
    proxy.on("upgrade", (_req, socket) => socket.destroy());
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = proxy.address() as AddressInfo;
      const results = byName(
        await runProbes({ endpoint: { baseURL: `http://127.0.0.1:${port}/v1` }, model: "eddy-demo" }),
      );
      expect(results.previous_response_id).toMatchObject({ status: "unsupported" });
      expect(results.previous_response_id?.detail).toMatch(/no id to continue/);
      expect(results.tool_call).toMatchObject({ status: "ok", follow_up: "stateless" });
      const sent = mock.requests.filter((r) => r.path.endsWith("/responses")).map((r) => r.body);
      for (const body of sent) expect(body).not.toHaveProperty("previous_response_id");
    } finally {
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    }
  });

  it("without a text form, a server that takes tool output no other way skips the round trip", async () => {
    gateway = await startMessagesOnlyGateway();
    const results = byName(await runProbes({ endpoint: { baseURL: gateway.url }, model: "eddy-demo" }));
    expect(results.tool_call).toMatchObject({ status: "skipped" });
  });

  it("a refused key fails auth with the key hint and skips the rest; the key never shows", async () => {
    mock = await createMockServer({ apiKey: "sk-right-key-0000" });
    const results = await runProbes({
      endpoint: { baseURL: mock.url, apiKey: "sk-wrong-key-1234" },
      model: "eddy-demo",
      keyHint: "set TEST_KEY",
    });
    const auth = byName(results).auth;
    expect(auth).toMatchObject({ status: "failed", hint: "set TEST_KEY" });
    expect(auth?.detail).toMatch(/401/);
    expect(results.filter((r) => r.name !== "auth").every((r) => r.status === "skipped")).toBe(true);
    expect(mock.requests).toHaveLength(1);
    expect(JSON.stringify(results)).not.toContain("sk-wrong-key-1234");
  });

  it("masks the key where a server echoes it", async () => {
    raw = await startRawServer([
      {
        status: 400,
        headers: { "content-type": "application/json" },
        body: [
          JSON.stringify({
            error: { message: "bad request from key sk-echoed-secret-99", type: "invalid_request_error" },
          }),
        ],
      },
    ]);
    const results = await runProbes({
      endpoint: { baseURL: raw.url, apiKey: "sk-echoed-secret-99" },
      model: "m",
    });
    expect(byName(results).model?.status).toBe("failed");
    expect(JSON.stringify(results)).not.toContain("sk-echoed-secret-99");
    expect(JSON.stringify(results)).toContain("***");
  });

  it("streaming that does not follow the spec passes with a note and a hint (runs work)", async () => {
    // A server that ignores stream:true and answers with one JSON body.
    const response = {
      id: "resp_1",
      object: "response",
      created_at: 1,
      status: "completed",
      model: "m",
      output: [
        {
          type: "message",
          id: "msg_1",
          role: "assistant",
          status: "completed",
          content: [{ type: "output_text", text: "OK", annotations: [] }],
        },
      ],
    };
    raw = await startRawServer([
      { headers: { "content-type": "application/json" }, body: [JSON.stringify(response)] },
    ]);
    const streaming = byName(await runProbes({ endpoint: { baseURL: raw.url }, model: "m" })).streaming;
    expect(streaming?.status).toBe("ok");
    expect(streaming?.detail).toMatch(/1 events, 1 with validation notes \(first: expected an SSE stream/);
    expect(streaming?.hint).toMatch(/--no-validate/);
  });

  it("a probe that gets no answer fails after its timeout; an unreachable server skips the rest", async () => {
    raw = await startRawServer([{ hang: true, body: [] }]);
    const results = byName(
      await runProbes({ endpoint: { baseURL: raw.url }, model: "m" }, { timeoutMs: 300 }),
    );
    expect(results.auth).toMatchObject({ status: "failed", detail: "no answer within 0.3 s" });
    expect(results.auth?.hint).toMatch(/--base-url/);
    expect(results.streaming?.status).toBe("skipped");
    expect(results.chat_completions?.status).toBe("skipped");
  });

  it("cancelling ends it at once with a cancelled error", async () => {
    raw = await startRawServer([{ hang: true, body: [] }]);
    const controller = new AbortController();
    const running = runProbes({ endpoint: { baseURL: raw.url }, model: "m" }, { signal: controller.signal });
    setTimeout(() => controller.abort(), 100);
    const error = await running.then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).kind).toBe("cancelled");
  });
});
