/**
 * A provider whose requests go through a rate limiter: the batch's one hook into the requests of
 * its runs, built on the provider contract alone (src/provider/provider.ts), so the loop and the
 * transports know nothing of it.
 *
 * - Every attempt waits for the limiter before it is sent. A source yields `request_started` and
 *   only opens the attempt when the next frame is pulled (src/provider/attempts.ts), so holding
 *   that frame back holds the request back.
 * - A 429 that is retried pauses every request of the batch for the retry's delay — the
 *   provider's `Retry-After` when it sent one (`request_failed.status`, then `retry.delay_ms`).
 * - The tokens a response used are counted once it has ended.
 */
import type { ProviderFrame } from "../frames/frame.js";
import type { Provider, ProviderStream, ProviderStreamOptions } from "../provider/provider.js";
import type { RateLimiter } from "./limiter.js";

/** `provider` with every request held to `limiter`. */
export function limitedProvider(provider: Provider, limiter: RateLimiter): Provider {
  const limited: Provider = {
    name: provider.name,
    capabilities: provider.capabilities,
    stream(request, options) {
      const inner = provider.stream(request, options);
      inner.result.then(
        (outcome) => {
          const usage = outcome.response.usage;
          const tokens = usage === null ? 0 : (usage.input_tokens ?? 0) + (usage.output_tokens ?? 0);
          // Counting is best effort: a count lost to a Redis hiccup only lets later requests go sooner.
          if (tokens > 0) limiter.spend(tokens).catch(() => {});
        },
        () => {},
      );
      const stream: ProviderStream = {
        result: inner.result,
        [Symbol.asyncIterator]: () => gated(inner, limiter, options),
      };
      return stream;
    },
  };
  if (provider.secrets !== undefined) return { ...limited, secrets: provider.secrets };
  return limited;
}

async function* gated(
  inner: ProviderStream,
  limiter: RateLimiter,
  options: ProviderStreamOptions | undefined,
): AsyncGenerator<ProviderFrame> {
  const frames = inner[Symbol.asyncIterator]();
  let lastStatus: number | undefined;
  try {
    for (;;) {
      const next = await frames.next();
      if (next.done === true) return;
      const f = next.value;
      if (f.type === "request_started") {
        try {
          await limiter.acquire(options?.signal);
        } catch (err) {
          // Cancelled while waiting: pulling on lets the source see the abort and end the request
          // the way it always does. Anything else is the limiter failing (e.g. Redis is gone).
          if (!(options?.signal?.aborted ?? false)) throw err;
        }
      } else if (f.type === "request_failed") lastStatus = f.status;
      else if (f.type === "retry" && lastStatus === 429) await limiter.pause(f.delay_ms);
      yield f;
    }
  } finally {
    await frames.return?.(undefined);
  }
}
