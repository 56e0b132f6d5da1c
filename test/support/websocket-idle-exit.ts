/**
 * Child process of the "idle connection does not keep the process alive" test
 * (src/provider/websocket/websocket.test.ts): one request in WebSocket mode to the mock at
 * argv[2], its text printed, and no `close()` — the process must still exit on its own.
 */
import { createOpenResponsesProvider } from "../../src/provider/open-responses.js";

const provider = createOpenResponsesProvider({
  baseURL: process.argv[2] as string,
  streamTransport: "websocket",
});
const stream = provider.stream({ body: { model: "m", input: "hi", stream: true }, turn: 0 });
for await (const _ of stream) {
}
const outcome = await stream.result;
process.stdout.write(`${outcome.response.outputText}\n`);
