/**
 * A byte-level scripted HTTP server for provider tests: each request is answered by the next
 * `RawReply` (status, headers, body pieces with optional pauses, or a dropped connection). Unlike
 * the mock Open Responses server it knows nothing of the protocol, so tests can send any bytes
 * a real (or broken) provider might send — captures, truncations, stalls.
 */
import type { IncomingMessage } from "node:http";
import { serveLocal } from "./local-http.js";

export type RawPiece = string | Uint8Array | { pauseMs: number } | { drop: true };

export interface RawReply {
  status?: number;
  headers?: Record<string, string>;
  /** Body pieces, each written separately (with a macrotask between them so they are separate TCP writes). */
  body?: RawPiece[];
  /** Wait this long before sending headers. */
  headersDelayMs?: number;
  /** Keep the connection open after the body (no end) until the client goes away. */
  hang?: boolean;
}

export interface RecordedRawRequest {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
}

export interface RawServer {
  url: string;
  requests: RecordedRawRequest[];
  close(): Promise<void>;
}

/** Starts a server answering request i with `replies[i]` (the last reply repeats). */
export async function startRawServer(
  replies: RawReply[] | ((index: number, body: string) => RawReply),
): Promise<RawServer> {
  const requests: RecordedRawRequest[] = [];
  const pick =
    typeof replies === "function" ? replies : (i: number) => replies[Math.min(i, replies.length - 1)] ?? {};
  const server = await serveLocal(async (req, res, body) => {
    const index = requests.length;
    requests.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body });
    const reply = pick(index, body);
    if (reply.headersDelayMs) await sleep(reply.headersDelayMs);
    if (res.destroyed) return;
    // A header given as "" is left out (e.g. a body without any content type).
    const headers = Object.entries({ "content-type": "text/event-stream", ...reply.headers }).filter(
      ([, value]) => value !== "",
    );
    res.writeHead(reply.status ?? 200, Object.fromEntries(headers));
    res.flushHeaders();
    for (const piece of reply.body ?? []) {
      if (res.destroyed) return;
      if (typeof piece === "object" && "pauseMs" in piece) {
        await sleep(piece.pauseMs);
        continue;
      }
      if (typeof piece === "object" && "drop" in piece) {
        res.socket?.destroy();
        return;
      }
      res.write(piece);
      await new Promise((r) => setImmediate(r));
    }
    if (reply.hang) return;
    res.end();
  });
  return { ...server, requests };
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
