/**
 * A server whose answers fall out of step with its requests in WebSocket mode: a late second
 * answer to an earlier request is never taken as the answer to the request now on the connection
 * (found by a probe: a stale response became turn 2's answer), and a connection the server wrote to
 * while it idled is not used again. A real `ws` server on 127.0.0.1.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocketServer } from "ws";
import { responseEvents } from "../../mock/events.js";
import { createIdGenerator } from "../../mock/ids.js";
import { assignIds } from "../../mock/plan.js";
import { scenarioPlan } from "../../mock/scenario-model.js";
import type { CreateResponseBody } from "../../protocol/types.js";
import { createOpenResponsesProvider } from "../open-responses.js";
import type { Provider } from "../provider.js";

const ids = createIdGenerator("late");

/** The events of a response answering `text`, continuing `previous`. */
function answer(text: string, responseId: string, previous: string | null): string[] {
  const plan = assignIds(scenarioPlan({ items: [{ type: "message", text }] }), ids);
  const body = { model: "m", input: "x", previous_response_id: previous } as never;
  const events = responseEvents({ plan, body, responseId, createdAt: 0, now: () => 0, context: [] });
  return [...events].map((e) => JSON.stringify(e));
}

type Behaviour = (n: number, connection: number, previous: string | null, send: (m: string) => void) => void;

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function serve(behaviour: Behaviour): Promise<{ url: string; connections: () => number }> {
  const server = createServer();
  const wss = new WebSocketServer({ server });
  let connections = 0;
  let requests = 0;
  wss.on("connection", (ws) => {
    const connection = ++connections;
    ws.on("message", (data) => {
      const body = JSON.parse(String(data)) as { previous_response_id?: string };
      behaviour(++requests, connection, body.previous_response_id ?? null, (m) => ws.send(m));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(async () => {
    for (const client of wss.clients) client.terminate();
    await new Promise((resolve) => server.close(resolve));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    connections: () => connections,
  };
}

function providerAt(url: string): Provider {
  const provider = createOpenResponsesProvider({
    baseURL: url,
    streamTransport: "websocket",
    retry: { initialBackoffMs: 1, maxBackoffMs: 2 },
    random: () => 0,
  });
  closers.unshift(async () => provider.close?.());
  return provider;
}

async function ask(provider: Provider, previous?: string) {
  const body = {
    model: "m",
    input: "x",
    ...(previous === undefined ? {} : { previous_response_id: previous }),
  };
  const stream = provider.stream(
    { body: body as CreateResponseBody, turn: previous === undefined ? 0 : 1 },
    {},
  );
  const frames = [];
  for await (const f of stream) frames.push(f);
  return { frames, outcome: await stream.result };
}

describe("WebSocket mode: answers out of step with requests", () => {
  it("a late answer to the first request, arriving during the second, is refused; the second is sent again", async () => {
    const { url, connections } = await serve((n, connection, previous, send) => {
      if (n === 1) for (const m of answer("first", "resp_one", null)) send(m);
      // The second request on the first connection gets a late answer to some earlier request.
      else if (connection === 1) for (const m of answer("STALE", "resp_stale", null)) send(m);
      else for (const m of answer("second", "resp_two", previous)) send(m);
    });
    const provider = providerAt(url);
    expect((await ask(provider)).outcome.ok).toBe(true);
    const { frames, outcome } = await ask(provider, "resp_one");
    expect(frames.find((f) => f.type === "request_failed")).toMatchObject({
      code: "invalid_response",
      retryable: true,
    });
    expect(outcome.ok && outcome.response.outputText).toBe("second");
    expect(JSON.stringify(frames)).not.toContain("STALE");
    expect(connections()).toBe(2);
  });

  it("a connection the server wrote to while it idled is not used again", async () => {
    const { url, connections } = await serve((n, _connection, previous, send) => {
      if (n === 1) {
        for (const m of answer("first", "resp_one", null)) send(m);
        // Written after the answer's end, before any other request: out of step from here on.
        setTimeout(() => {
          for (const m of answer("STALE", "resp_stale", "resp_one")) send(m);
        }, 20);
      } else for (const m of answer("second", "resp_two", previous)) send(m);
    });
    const provider = providerAt(url);
    expect((await ask(provider)).outcome.ok).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const { frames, outcome } = await ask(provider, "resp_one");
    expect(outcome.ok && outcome.response.outputText).toBe("second");
    expect(JSON.stringify(frames)).not.toContain("STALE");
    expect(connections()).toBe(2);
  });
});
