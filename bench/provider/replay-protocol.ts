/** Messages and shared memory layout between replay-server.ts and replay-worker.ts. */

/** bigint fields per request record: arrived, first body write, first text delta write, last write. */
export const RECORD_FIELDS = 4;

export interface WorkerData {
  /** file: URL of the responder module (see responder.ts). */
  responderUrl: string;
  /** Handed to the module's `createResponder`. */
  init: unknown;
  /** Int32 request count at byte 0, then `capacity` records of RECORD_FIELDS bigints from byte 8. */
  shared: SharedArrayBuffer;
  capacity: number;
  /** `process.hrtime.bigint()` at start: records hold times relative to it. */
  base: bigint;
}

export type WorkerRequest =
  | { type: "record"; on: boolean }
  | { type: "bodies" }
  /** WebSocket connections accepted so far. */
  | { type: "connections" }
  /** Replaces the responder with `createResponder(init)` (same module). */
  | { type: "init"; init: unknown }
  | { type: "close" };

export type WorkerReply =
  | { type: "listening"; port: number }
  | { type: "ok" }
  | { type: "bodies"; bodies: string[] }
  | { type: "connections"; webSocket: number };
