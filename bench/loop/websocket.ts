/**
 * The floor over one WebSocket: the least a client of WebSocket mode (`x-openresponses-websocket` in
 * schemas/openresponses/openapi.json) must do, hand-written on the `ws` package — one connection,
 * opened on first use and kept across runs (as the HTTP floors keep their keep-alive sockets), each
 * request one `response.create` message, each server message one JSON.parse, a response over at its
 * terminal event.
 */
import WebSocket from "ws";
import type { EventSink } from "../provider/floor.js";
import type { Exchange } from "./contenders.js";

/** The events that end a response on the connection. */
const ENDS: ReadonlySet<unknown> = new Set([
  "response.completed",
  "response.incomplete",
  "response.failed",
  "error",
]);

interface Pending {
  sink: EventSink;
  resolve: () => void;
  reject: (error: Error) => void;
}

/** An exchange over one WebSocket to `url` (`ws://…/v1/responses`), reconnecting after a close. */
export function webSocketExchange(url: string): Exchange {
  let connection: Promise<WebSocket> | undefined;
  let pending: Pending | undefined;
  const fail = (error: Error) => {
    connection = undefined;
    const p = pending;
    pending = undefined;
    p?.reject(error);
  };
  const connect = () =>
    new Promise<WebSocket>((resolve, reject) => {
      // No compression, as eddy's WebSocket mode (src/provider/websocket/connection.ts).
      const ws = new WebSocket(url, { perMessageDeflate: false });
      ws.once("open", () => resolve(ws));
      ws.on("error", (err) => {
        reject(err);
        fail(err);
      });
      ws.on("close", (code) => fail(new Error(`the connection closed (code ${code})`)));
      ws.on("message", (raw) => {
        // binaryType is "nodebuffer" (the default), so a message arrives as one Buffer.
        const event = JSON.parse((raw as Buffer).toString("utf8")) as Record<string, unknown>;
        const p = pending;
        if (p === undefined) return;
        p.sink(event);
        if (!ENDS.has(event.type)) return;
        pending = undefined;
        if (event.type === "response.completed") p.resolve();
        else p.reject(new Error(`the response ended with ${String(event.type)}`));
      });
    });
  return async (request, sink) => {
    connection ??= connect();
    const ws = await connection;
    await new Promise<void>((resolve, reject) => {
      pending = { sink, resolve, reject };
      ws.send(JSON.stringify({ type: "response.create", ...request }));
    });
  };
}
