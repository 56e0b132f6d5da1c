/**
 * The probes of the other endpoints a run may use: WebSocket mode (`GET /responses` upgraded,
 * src/provider/websocket/), compaction (`POST /responses/compact`) and Chat Completions
 * (`POST /chat/completions`, streaming). A missing or refusing endpoint is `unsupported`.
 */
import { ProviderError } from "../errors.js";
import { baseBody, inconclusive, type ProbeContext, type Verdict, verdict } from "./context.js";
import { exchange, failureOf, userMessage } from "./exchange.js";

const HELLO = () => [userMessage("Reply with the single word OK.")];

/** The `websocket` verdict (one response over a WebSocket connection). */
export async function probeWebSocket(ctx: ProbeContext): Promise<Verdict[]> {
  if (ctx.api !== "responses")
    return [
      verdict(
        "websocket",
        "skipped",
        "WebSocket mode is an Open Responses feature; the run speaks Chat Completions",
      ),
    ];
  const ex = await exchange(ctx.provider("websocket"), { ...baseBody(ctx), input: HELLO() }, ctx.signal);
  if (ex.outcome.ok)
    return [
      verdict("websocket", "ok", `a response streamed over a WebSocket connection (${ex.events} events)`),
    ];
  const failure = failureOf(ex.outcome.error);
  if (failure.kind === "missing" || failure.kind === "rejected" || failure.kind === "other")
    return [
      verdict(
        "websocket",
        "unsupported",
        failure.message,
        "use --transport sse (the default): WebSocket mode only saves a connection per turn",
      ),
    ];
  return [inconclusive(ctx, "websocket", failure)];
}

/** The `compaction` verdict (one compact request). */
export async function probeCompaction(ctx: ProbeContext): Promise<Verdict[]> {
  if (ctx.api !== "responses")
    return [
      verdict(
        "compaction",
        "skipped",
        "POST /responses/compact is an Open Responses endpoint; the run speaks Chat Completions",
      ),
    ];
  const provider = ctx.provider("main");
  if (provider.compact === undefined)
    return [verdict("compaction", "skipped", "the provider cannot compact")];
  const input = [
    userMessage("Hello."),
    { type: "message", role: "assistant", content: [{ type: "output_text", text: "Hi." }] },
    userMessage("Reply with OK."),
  ];
  try {
    const result = await provider.compact({ model: ctx.target.model, input }, { signal: ctx.signal });
    const item = result.output.some((i) => i.type === "compaction") ? ", a compaction item among them" : "";
    return [
      verdict("compaction", "ok", `${input.length} items compacted into ${result.output.length}${item}`),
    ];
  } catch (err) {
    if (!(err instanceof ProviderError)) throw err;
    const failure = failureOf(err);
    if (failure.kind === "missing" || failure.kind === "rejected" || err.kind === "decode")
      return [
        verdict(
          "compaction",
          "unsupported",
          failure.message,
          "a run whose context overflows compacts it locally instead; runs on auto stop asking the server",
        ),
      ];
    return [inconclusive(ctx, "compaction", failure)];
  }
}

/** The `chat_completions` verdict (one streamed Chat Completions request). */
export async function probeChatCompletions(ctx: ProbeContext): Promise<Verdict[]> {
  const ex = await exchange(
    ctx.provider("chat-completions"),
    { ...baseBody(ctx), input: HELLO() },
    ctx.signal,
  );
  if (ex.outcome.ok)
    return [
      verdict("chat_completions", "ok", `POST /chat/completions streamed an answer (${ex.events} chunks)`),
    ];
  const failure = failureOf(ex.outcome.error);
  if (failure.kind === "missing" || failure.kind === "rejected")
    return [
      verdict(
        "chat_completions",
        "unsupported",
        failure.message,
        ctx.api === "chat-completions"
          ? "the run's API: use --api responses"
          : "only matters for --api chat-completions or a fallback that speaks it",
      ),
    ];
  return [inconclusive(ctx, "chat_completions", failure)];
}
