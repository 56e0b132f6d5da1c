/**
 * A replay server on 127.0.0.1 in a worker thread (as in bench/README.md), so
 * its CPU does not share the event loop of the client being timed. It answers each POST with the
 * chunks a responder module picks (responder.ts) — and, when the module has a message responder,
 * each `response.create` message on a WebSocket at `…/responses` with its messages — and keeps
 * per-request timings in shared memory.
 *
 * Worker threads do not inherit tsx's loader hooks, so the worker is started through a small
 * bootstrap that registers tsx first.
 */
import { Worker } from "node:worker_threads";
import { RECORD_FIELDS, type WorkerData, type WorkerReply, type WorkerRequest } from "./replay-protocol.js";

/** One request as the server saw it, in ns on the server's clock (`ReplayServer.now`). */
export interface ServerRecord {
  /** The request's headers were parsed. */
  arrived: number;
  /** First body chunk handed to the socket. */
  firstWrite: number;
  /** The chunk with the first text delta handed to the socket (0 when there was none). */
  firstDelta: number;
  /** The last body chunk and the end of the response handed to the socket. */
  lastWrite: number;
}

export interface ReplayServer {
  /** `http://127.0.0.1:PORT` (no path: clients add `/v1/responses` or `/v1`). */
  readonly origin: string;
  /**
   * ns on the clock the records use: `process.hrtime` (monotonic, process-wide, so the same in
   * every thread) minus a base taken at start, which keeps the values exact as numbers.
   */
  now(): number;
  /** Requests answered so far. */
  served(): number;
  /** Waits (blocking, up to 1 s) until `n` requests have been answered; false on timeout. */
  waitServed(n: number): boolean;
  /** The record of request `i` (0-based, in answer order). */
  record(i: number): ServerRecord;
  /** Replaces the responder: the module's `createResponder(init)` answers from now on. */
  reinit(init: unknown): Promise<void>;
  /** Starts (true) or stops keeping request bodies. */
  recordBodies(on: boolean): Promise<void>;
  /** Bodies kept since `recordBodies(true)` (in WebSocket mode: the `response.create` messages). */
  bodies(): Promise<string[]>;
  /** WebSocket connections the server has accepted so far. */
  webSocketConnections(): Promise<number>;
  close(): Promise<void>;
}

const CAPACITY = 1 << 16;

/** Starts the server; `responder` is the URL of a responder module, `init` its data. */
export async function startReplayServer(responder: URL, init: unknown): Promise<ReplayServer> {
  const shared = new SharedArrayBuffer(8 + CAPACITY * RECORD_FIELDS * 8);
  const count = new Int32Array(shared, 0, 1);
  const records = new BigInt64Array(shared, 8, CAPACITY * RECORD_FIELDS);
  const base = process.hrtime.bigint();
  const data: WorkerData = { responderUrl: responder.href, init, shared, capacity: CAPACITY, base };
  const tsx = import.meta.resolve("tsx/esm/api");
  const script = new URL("./replay-worker.ts", import.meta.url).href;
  const boot = `import(${JSON.stringify(tsx)}).then(({ register }) => { register(); return import(${JSON.stringify(script)}); })`;
  const worker = new Worker(boot, { eval: true, workerData: data });
  worker.unref();

  const replies: ((reply: WorkerReply) => void)[] = [];
  let failure: unknown;
  worker.on("error", (err) => {
    failure = err;
  });
  const listening = new Promise<number>((resolve, reject) => {
    worker.once("error", reject);
    worker.on("message", (reply: WorkerReply) => {
      if (reply.type === "listening") resolve(reply.port);
      else replies.shift()?.(reply);
    });
  });
  const port = await listening;
  const ask = (request: WorkerRequest) =>
    new Promise<WorkerReply>((resolve, reject) => {
      if (failure !== undefined) reject(failure);
      replies.push(resolve);
      worker.postMessage(request);
    });

  return {
    origin: `http://127.0.0.1:${port}`,
    now: () => Number(process.hrtime.bigint() - base),
    served: () => Atomics.load(count, 0),
    waitServed(n) {
      const deadline = Date.now() + 1000;
      for (let now = Atomics.load(count, 0); now < n; now = Atomics.load(count, 0)) {
        if (Date.now() > deadline) return false;
        Atomics.wait(count, 0, now, 50);
      }
      return true;
    },
    record(i) {
      const slot = (i % CAPACITY) * RECORD_FIELDS;
      return {
        arrived: Number(records[slot]),
        firstWrite: Number(records[slot + 1]),
        firstDelta: Number(records[slot + 2]),
        lastWrite: Number(records[slot + 3]),
      };
    },
    async reinit(init) {
      await ask({ type: "init", init });
    },
    async recordBodies(on) {
      await ask({ type: "record", on });
    },
    async bodies() {
      const reply = await ask({ type: "bodies" });
      return reply.type === "bodies" ? reply.bodies : [];
    },
    async webSocketConnections() {
      const reply = await ask({ type: "connections" });
      return reply.type === "connections" ? reply.webSocket : 0;
    },
    async close() {
      await ask({ type: "close" });
      await worker.terminate();
    },
  };
}
