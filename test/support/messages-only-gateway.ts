/**
 * A gateway in front of the mock server that takes conversations as messages only, like the
 * gateways the text-embed strategy exists for (docs/decisions.md #17): a request whose `input`
 * holds `function_call` or `function_call_output` items, or that names `previous_response_id`,
 * gets a 400 naming the field; everything else is forwarded to the mock — the demo model, or
 * another mock server after `setUpstream` (a scripted model behind the same base URL). WebSocket
 * upgrades get a 404: the gateway does not speak WebSocket mode. Every request it saw is recorded.
 */
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { createMockServer } from "../../src/mock/index.js";

export interface GatewayRequest {
  method: string;
  url: string;
  /** The parsed JSON body (undefined when there was none or it was not JSON). */
  body: Record<string, unknown> | undefined;
  /** The status the gateway answered with itself (400), or undefined when it forwarded. */
  refused: number | undefined;
}

export interface MessagesOnlyGateway {
  url: string;
  requests: GatewayRequest[];
  /** Forwards to this base URL from now on (`http://127.0.0.1:PORT/v1`). */
  setUpstream(url: string): void;
  close(): Promise<void>;
}

/** Why the gateway refuses a body, or undefined when it forwards it. */
function refusal(body: Record<string, unknown> | undefined): { param: string; message: string } | undefined {
  if (body === undefined) return undefined;
  if (body.previous_response_id !== undefined)
    return { param: "previous_response_id", message: "previous_response_id is not supported" };
  const input = Array.isArray(body.input) ? body.input : [];
  const at = input.findIndex(
    (item) =>
      typeof item === "object" &&
      item !== null &&
      ["function_call", "function_call_output"].includes((item as { type?: unknown }).type as string),
  );
  if (at === -1) return undefined;
  const type = (input[at] as { type: string }).type;
  return { param: `input[${at}]`, message: `Invalid input item type '${type}': only messages are accepted` };
}

/**
 * Starts the gateway and the mock behind it. With `previousResponseId: "ignore"` the gateway
 * drops that field and forwards the request, as servers that accept and ignore it do.
 */
export async function startMessagesOnlyGateway(
  options: { previousResponseId?: "refuse" | "ignore" } = {},
): Promise<MessagesOnlyGateway> {
  const mock = await createMockServer({});
  let upstream = new URL(mock.url);
  const requests: GatewayRequest[] = [];
  const forward = (req: IncomingMessage, res: ServerResponse, body: Buffer) => {
    const out = httpRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, "content-length": String(body.length) },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    out.on("error", () => res.destroy());
    res.on("close", () => out.destroy());
    out.end(body);
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks);
      let body: Record<string, unknown> | undefined;
      try {
        body = raw.length === 0 ? undefined : (JSON.parse(raw.toString("utf8")) as Record<string, unknown>);
      } catch {
        body = undefined;
      }
      if (options.previousResponseId === "ignore" && body?.previous_response_id !== undefined) {
        const { previous_response_id: _ignored, ...rest } = body;
        body = rest;
        const stripped = Buffer.from(JSON.stringify(rest));
        requests.push({ method: req.method ?? "", url: req.url ?? "", body, refused: undefined });
        forward(req, res, stripped);
        return;
      }
      const refused = refusal(body);
      requests.push({ method: req.method ?? "", url: req.url ?? "", body, refused: refused && 400 });
      if (refused === undefined) {
        forward(req, res, raw);
        return;
      }
      res.writeHead(400, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          error: {
            type: "invalid_request_error",
            code: "invalid_value",
            param: refused.param,
            message: refused.message,
          },
        }),
      );
    });
  });
  server.on("upgrade", (_req, socket) => {
    socket.end("HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
  });
  server.listen(0, "127.0.0.1");
  await new Promise((r) => server.once("listening", r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    setUpstream: (url) => {
      upstream = new URL(url);
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await mock.close();
    },
  };
}
