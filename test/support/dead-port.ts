/**
 * A port on 127.0.0.1 whose every connection is reset at once, held until `close`. (A port taken
 * and released could be taken by another test's server before the client connects, and the
 * "dead" target would then answer.)
 */
import { createServer } from "node:net";

export interface DeadPort {
  port: number;
  close(): Promise<void>;
}

export async function deadPort(): Promise<DeadPort> {
  const server = createServer((socket) => socket.resetAndDestroy());
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  return { port: address.port, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
