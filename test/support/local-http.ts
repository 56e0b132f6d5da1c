/**
 * A scripted HTTP server on 127.0.0.1 (a free port) for tests: reads each request's body, hands it
 * to `answer`, and closes with every connection still open (a stalled stream must not hold `close`).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface LocalServer {
  /** The base URL (`http://127.0.0.1:PORT/v1`). */
  url: string;
  close(): Promise<void>;
}

/** Starts the server; `answer` gets each request with its whole body read. */
export async function serveLocal(
  answer: (req: IncomingMessage, res: ServerResponse, body: string) => Promise<void>,
): Promise<LocalServer> {
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    await answer(req, res, Buffer.concat(chunks).toString("utf8"));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
