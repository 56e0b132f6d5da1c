/**
 * The replay server's thread: node:http on 127.0.0.1, answering every POST with its responder's
 * chunks, each chunk its own `res.write` (waiting for 'drain' when the socket buffer is full). It
 * records, per request, on the process-wide monotonic clock (`process.hrtime`, shared by all
 * threads), when the request arrived, when the first body chunk and the first text delta were
 * written, and when the last one was; the records go into shared memory, so reading them costs the
 * client's thread nothing while it is being timed. See replay-server.ts.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { parentPort, workerData } from "node:worker_threads";
import { drained } from "../../src/util/stream.js";
import { RECORD_FIELDS, type WorkerData, type WorkerReply, type WorkerRequest } from "./replay-protocol.js";
import type { ResponderModule } from "./responder.js";

const data = workerData as WorkerData;
const port = parentPort;
if (port === null) throw new Error("replay-worker.ts runs in a worker thread");

const responderModule = (await import(data.responderUrl)) as ResponderModule;
let responder = responderModule.createResponder(data.init);
const count = new Int32Array(data.shared, 0, 1);
const records = new BigInt64Array(data.shared, 8, data.capacity * RECORD_FIELDS);
let served = 0;
let bodies: string[] | undefined;

const server = createServer({ keepAliveTimeout: 120_000, noDelay: true }, (req, res) => {
  serve(req, res).catch((err: unknown) => {
    process.stderr.write(`replay server: ${err instanceof Error ? err.message : String(err)}\n`);
    res.destroy();
  });
});
server.headersTimeout = 0;
server.requestTimeout = 0;
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
      port.postMessage({ type: "ok" } satisfies WorkerReply);
      break;
    case "bodies":
      port.postMessage({ type: "bodies", bodies: bodies ?? [] } satisfies WorkerReply);
      break;
    case "close":
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
  const lastWrite = process.hrtime.bigint() - data.base;
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
