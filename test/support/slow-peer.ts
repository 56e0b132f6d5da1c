/**
 * A slow peer for eddy's servers (`eddy serve`, `eddy mock`): a raw connection that sends a request
 * as slowly as a test wants, and what the server did with it.
 */
import { connect, type Socket } from "node:net";

/** Long enough for any machine: the wait is a hang guard, never a verdict on speed. */
export const HANG_GUARD_MS = 15_000;

export interface RawClient {
  socket: Socket;
  /** What the server sent so far (latin1). */
  received(): string;
  /** Settles when the connection closes. */
  closed: Promise<void>;
}

/** A raw connection to 127.0.0.1:`port`. */
export function rawClient(port: number): RawClient {
  const socket = connect(port, "127.0.0.1");
  let text = "";
  socket.on("data", (chunk) => {
    text += chunk.toString("latin1");
  });
  socket.on("error", () => {});
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  return { socket, received: () => text, closed };
}

/**
 * Sends `head` and then one `drip` every `everyMs` until the server closes the connection; rejects
 * when it has not after the hang guard.
 */
export async function dripUntilClosed(
  client: RawClient,
  head: string,
  drip: string,
  everyMs = 100,
): Promise<void> {
  client.socket.write(head);
  const timer = setInterval(() => client.socket.write(drip), everyMs);
  try {
    await closedWithin(client.closed, `a request sent ${JSON.stringify(drip)} at a time`);
  } finally {
    clearInterval(timer);
  }
}

/** Resolves when `closed` does; rejects after the hang guard. */
export function closedWithin(closed: Promise<void>, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what}: the server never closed it`)), HANG_GUARD_MS);
    void closed.then(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/**
 * Sends each of TRACE and CONNECT on a connection of its own and returns what came back (the
 * status line), waiting until the server closes each connection. (TRACK never reaches eddy: node's
 * parser answers it 400.)
 */
export async function unsupportedMethodAnswers(port: number): Promise<string[]> {
  const answers: string[] = [];
  for (const request of [
    "TRACE /v1/runs HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
    "CONNECT 127.0.0.1:1 HTTP/1.1\r\nHost: 127.0.0.1:1\r\n\r\n",
  ]) {
    const client = rawClient(port);
    client.socket.write(request);
    await closedWithin(client.closed, request.split(" ")[0] ?? "a request");
    answers.push(client.received().split("\r\n")[0] ?? "");
  }
  return answers;
}
