/**
 * Correctness before speed: each contender must assemble exactly the generated text and call
 * arguments, and deliver every event (eddy: one `provider_event` per event plus the `[DONE]` frame,
 * with no validation error on this spec-valid stream).
 */
import type { GeneratedStream } from "../sse/stream.js";
import { isFrame, type ProviderContender } from "./contenders.js";

/** What went wrong, or `undefined`. */
export async function verify(
  contender: ProviderContender,
  key: string,
  stream: GeneratedStream,
): Promise<string | undefined> {
  let events = 0;
  let done = 0;
  let problem: string | undefined;
  const observe = (item: unknown) => {
    if (!isFrame(item)) {
      events++;
      return;
    }
    if (item.type !== "provider_event") return;
    if (item.errors !== undefined) problem ??= `frame ${item.seq}: ${item.errors.join("; ")}`;
    if (item.status === "event") events++;
    else if (item.status === "done") done++;
    else problem ??= `frame ${item.seq} has status ${item.status}`;
  };
  let result: Awaited<ReturnType<ProviderContender["request"]>>;
  try {
    result = await contender.request(key, observe);
  } catch (err) {
    return `threw ${err instanceof Error ? err.message : String(err)}`;
  }
  if (problem !== undefined) return problem;
  if (events !== stream.events.length) return `${events} events, want ${stream.events.length}`;
  if (contender.name.startsWith("eddy") && done !== 1) return `${done} [DONE] frames, want 1`;
  if (result.text !== stream.text)
    return `text differs (${result.text.length} vs ${stream.text.length} chars)`;
  if (result.arguments !== stream.arguments) return "call arguments differ";
  return undefined;
}
