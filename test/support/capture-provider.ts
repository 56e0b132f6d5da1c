/**
 * A provider that answers request i with the i-th scripted response built from a real capture
 * (test/fixtures/captures): the capture's event lines, optionally rewritten event by event (to
 * give an `apply_patch_call` another operation, a `shell_call` other commands), framed as SSE and
 * decoded by the real HTTP provider over an in-memory transport. Request bodies are recorded.
 */
import type { JsonObject } from "../../src/protocol/types.js";
import type { ProviderCapabilities } from "../../src/provider/capabilities.js";
import { createOpenResponsesProvider } from "../../src/provider/open-responses.js";
import type { Provider } from "../../src/provider/provider.js";
import type { Transport } from "../../src/provider/transport.js";
import { captureLines, splitResponses, toSse } from "./captures.js";

/** One scripted response: event lines (raw JSON text). */
export type CaptureResponse = string[];

/** A provider serving capture responses, with the bodies it was sent. */
export interface CaptureProvider extends Provider {
  requests: JsonObject[];
}

/** The `index`-th response of a capture, each event passed through `edit` (which may change it in place). */
export function captureResponse(
  name: string,
  index = 0,
  edit: (event: JsonObject) => void = () => {},
): CaptureResponse {
  const response = splitResponses(captureLines(name))[index];
  if (response === undefined) throw new Error(`${name} has no response ${index}`);
  return response.map((line) => {
    const event = JSON.parse(line) as JsonObject;
    edit(event);
    return JSON.stringify(event);
  });
}

/** Applies `change` to every copy of the item with id `itemId` in an event (added/done item, terminal output). */
export function editItem(event: JsonObject, itemId: string, change: (item: JsonObject) => void): void {
  const visit = (item: unknown) => {
    if (item !== null && typeof item === "object" && (item as JsonObject).id === itemId)
      change(item as JsonObject);
  };
  visit(event.item);
  const output = (event.response as JsonObject | undefined)?.output;
  if (Array.isArray(output)) for (const item of output) visit(item);
}

export function createCaptureProvider(
  responses: CaptureResponse[],
  capabilities: Partial<ProviderCapabilities> = {},
): CaptureProvider {
  const requests: JsonObject[] = [];
  const encoder = new TextEncoder();
  const transport: Transport = async (request) => {
    requests.push(JSON.parse(request.body) as JsonObject);
    const lines = responses[Math.min(requests.length - 1, responses.length - 1)] ?? [];
    const body = encoder.encode(toSse(lines));
    return {
      status: 200,
      headers: {
        get: (name: string) => (name.toLowerCase() === "content-type" ? "text/event-stream" : null),
      },
      body: (async function* () {
        yield body;
      })(),
      cancel: () => {},
    };
  };
  const provider = createOpenResponsesProvider({
    baseURL: "http://captures.test/v1",
    transport,
    name: "openai",
    sleep: async () => {},
    capabilities,
  });
  return Object.assign(provider, { requests });
}
