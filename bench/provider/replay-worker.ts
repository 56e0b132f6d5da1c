/**
 * The replay server's thread: node:http on 127.0.0.1, answering every POST with its responder's
 * chunks, each chunk its own `res.write` (waiting for 'drain' when the socket buffer is full). It
 * records, per request, on the process-wide monotonic clock (`process.hrtime`, shared by all
 * threads), when the request arrived, when the first body chunk and the first text delta were
 * written, and when the last one was; the records go into shared memory, so reading them costs the
 * client's thread nothing while it is being timed. See replay-server.ts.
 *
 * WebSocket mode (when the responder module has `createMessageResponder`): a `ws` WebSocketServer
 * on the same listener takes the upgrades at `GET …/responses` and answers each `response.create`
 * message with its reply's messages, one `ws.send` each (or all in one socket write when the reply
 * is `corked`), one response at a time per connection; each counts as a request, recorded alike
 * (arrived = the message was received).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { Duplex } from "node:stream";
import { parentPort, workerData } from "node:worker_threads";
import { type WebSocket, WebSocketServer } from "ws";
import { drained } from "../../src/util/stream.js";
import { RECORD_FIELDS, type WorkerData, type WorkerReply, type WorkerRequest } from "./replay-protocol.js";
import type { ResponderModule } from "./responder.js";

const data = workerData as WorkerData;
const port = parentPort;
if (port === null) throw new Error("replay-worker.ts runs in a worker thread");

const responderModule = (await import(data.responderUrl)) as ResponderModule;
let responder = responderModule.createResponder(data.init);
let messageResponder = responderModule.createMessageResponder?.(data.init);
const count = new Int32Array(data.shared, 0, 1);
const records = new BigInt64Array(data.shared, 8, data.capacity * RECORD_FIELDS);
let served = 0;
let bodies: string[] | undefined;
let webSocketConnections = 0;

const server = createServer({ keepAliveTimeout: 120_000, noDelay: true }, (req, res) => {
  serve(req, res).catch((err: unknown) => {
    process.stderr.write(`replay server: ${err instanceof Error ? err.message : String(err)}\n`);
    res.destroy();
  });
});
server.headersTimeout = 0;
server.requestTimeout = 0;
const sockets = new WebSocketServer({ noServer: true, perMessageDeflate: false });
server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
  if (messageResponder === undefined || !(req.url ?? "").split("?")[0]?.endsWith("/responses")) {
    socket.destroy();
    return;
  }
  sockets.handleUpgrade(req, socket, head, (ws) => accept(ws, socket as Socket));
});
server.listen(0, "127.0.0.1", () => {
  port.postMessage({ type: "listening", port: (server.address() as AddressInfo).port } satisfies WorkerReply);
});

port.on("message", (message: WorkerRequest) => {
  switch (message.type) {
    case "record":
      bodies = message.on ? [] : undefined;
      port.postMessage({ type: "ok" } satisfies WorkerReply);
      break;
    case "init":
      responder = responderModule.createResponder(message.init);
      messageResponder = responderModule.createMessageResponder?.(message.init);
      port.postMessage({ type: "ok" } satisfies WorkerReply);
      break;
    case "bodies":
      port.postMessage({ type: "bodies", bodies: bodies ?? [] } satisfies WorkerReply);
      break;
    case "connections":
      port.postMessage({ type: "connections", webSocket: webSocketConnections } satisfies WorkerReply);
      break;
    case "close":
      for (const ws of sockets.clients) ws.terminate();
      sockets.close();
      server.closeAllConnections();
      server.close(() => port.postMessage({ type: "ok" } satisfies WorkerReply));
      break;
  }
});

async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const arrived = process.hrtime.bigint() - data.base;
  const body = await readBody(req);
  bodies?.push(body);
  const reply = responder(body);
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const firstWrite = process.hrtime.bigint() - data.base;
  let firstDelta = 0n;
  const { chunks } = reply;
  for (let i = 0; i < chunks.length; i++) {
    if (i === reply.firstDeltaChunk) firstDelta = process.hrtime.bigint() - data.base;
    if (!res.write(chunks[i] as Uint8Array)) await drained(res);
  }
  res.end();
  record(arrived, firstWrite, firstDelta, process.hrtime.bigint() - data.base);
}

/** Keeps one request's times in shared memory and counts it as answered. */
function record(arrived: bigint, firstWrite: bigint, firstDelta: bigint, lastWrite: bigint): void {
  const slot = (served % data.capacity) * RECORD_FIELDS;
  records[slot] = arrived;
  records[slot + 1] = firstWrite;
  records[slot + 2] = firstDelta;
  records[slot + 3] = lastWrite;
  served++;
  Atomics.store(count, 0, served);
  Atomics.notify(count, 0);
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks).toString("utf8");
}

/** A WebSocket connection: its `response.create` messages are answered one at a time, in order. */
function accept(ws: WebSocket, socket: Socket): void {
  webSocketConnections++;
  socket.setNoDelay(true);
  let queue = Promise.resolve();
  ws.on("message", (raw) => {
    const arrived = process.hrtime.bigint() - data.base;
    // binaryType is "nodebuffer" (the default), so a message arrives as one Buffer.
    const text = (raw as Buffer).toString("utf8");
    queue = queue
      .then(() => answer(ws, socket, text, arrived))
      .catch((err: unknown) => {
        process.stderr.write(`replay server: ${err instanceof Error ? err.message : String(err)}\n`);
        ws.terminate();
      });
  });
  ws.on("error", () => ws.terminate());
}

async function answer(ws: WebSocket, socket: Socket, text: string, arrived: bigint): Promise<void> {
  bodies?.push(text);
  if (messageResponder === undefined) throw new Error("the responder module has no createMessageResponder");
  const reply = messageResponder(text);
  const firstWrite = process.hrtime.bigint() - data.base;
  let firstDelta = 0n;
  const { messages, corked = false } = reply;
  if (corked) socket.cork();
  for (let i = 0; i < messages.length; i++) {
    if (i === reply.firstDeltaMessage) firstDelta = process.hrtime.bigint() - data.base;
    ws.send(messages[i] as string);
    if (!corked && socket.writableNeedDrain) await drained(socket);
  }
  if (corked) socket.uncork();
  record(arrived, firstWrite, firstDelta, process.hrtime.bigint() - data.base);
}
