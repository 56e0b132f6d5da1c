/**
 * The first probe request — the smallest request a run makes, streamed — read three ways: `auth`
 * (did the key get past authentication), `model` (was the model accepted) and `streaming` (did SSE
 * events arrive, end with a terminal event and validate against the Open Responses schema).
 */
import { baseBody, inconclusive, type ProbeContext, quoted, type Verdict, verdict } from "./context.js";
import { type Exchange, exchange, type Failure, failureOf, userMessage } from "./exchange.js";

/** The `auth`, `model` and `streaming` verdicts, from one request. */
export async function probeBasics(ctx: ProbeContext): Promise<Verdict[]> {
  const body = { ...baseBody(ctx), input: [userMessage("Reply with the single word OK.")] };
  const ex = await exchange(ctx.provider("main"), body, ctx.signal);
  if (!ex.outcome.ok) return failedBasics(ctx, failureOf(ex.outcome.error), ex);
  const response = ex.outcome.response;
  const keyed = ctx.target.endpoint.apiKey !== undefined && ctx.target.endpoint.apiKey !== "";
  return [
    verdict("auth", "ok", keyed ? "the key was accepted" : "no key sent, and the server asked for none"),
    verdict("model", "ok", `${response.model ?? ctx.target.model ?? "the server's default model"} answered`),
    streamingVerdict(ex, ctx.api === "responses" ? "events" : "chunks"),
  ];
}

function streamingVerdict(ex: Exchange, unit: "events" | "chunks"): Verdict {
  if (!ex.outcome.ok) throw new TypeError("streamingVerdict needs a successful exchange");
  const response = ex.outcome.response;
  const answer = response.outputText === "" ? "no text" : `text ${quoted(response.outputText)}`;
  const ending =
    response.terminal === "incomplete" ? `, incomplete (${response.incompleteReason ?? "?"})` : "";
  if (ex.invalid === 0) {
    const valid = unit === "events" ? ", all valid against the schema" : "";
    return verdict("streaming", "ok", `${ex.events} ${unit}${valid}; ${answer}${ending}`);
  }
  return verdict(
    "streaming",
    "ok",
    `${ex.events} ${unit}, ${ex.invalid} with validation notes (first: ${ex.firstInvalid ?? "?"}); ${answer}${ending}`,
    "runs work (validation records, never aborts); the server's events differ from the spec — --no-validate skips the checks",
  );
}

/** The three verdicts when the first request failed: what the failure says about each. */
function failedBasics(ctx: ProbeContext, failure: Failure, ex: Exchange): Verdict[] {
  const skipped = (name: "model" | "streaming", why: string) => verdict(name, "skipped", why);
  switch (failure.kind) {
    case "auth":
      return [
        verdict("auth", "failed", failure.message, ctx.target.keyHint ?? "check the API key"),
        skipped("model", "needs auth"),
        skipped("streaming", "needs auth"),
      ];
    case "missing":
      return [
        verdict(
          "auth",
          "failed",
          failure.message,
          `check --base-url (eddy appends /v1/${ctx.api === "responses" ? "responses" : "chat/completions"} unless it ends in /v1)${ctx.api === "responses" ? ", or use --api chat-completions for a server without /responses" : ""}`,
        ),
        skipped("model", "the endpoint was not found"),
        skipped("streaming", "the endpoint was not found"),
      ];
    case "model":
    case "rejected":
      return [
        verdict("auth", "ok", "the request got past authentication"),
        verdict(
          "model",
          "failed",
          failure.message,
          failure.kind === "model"
            ? "check --model (or EDDY_MODEL): the server does not know this model"
            : "the server refused the smallest request eddy makes: check --model and the server's logs",
        ),
        skipped("streaming", "the request was refused"),
      ];
    case "other":
      return [
        verdict("auth", "ok", "the request got past authentication"),
        verdict("model", "ok", "the model started answering"),
        verdict(
          "streaming",
          "failed",
          `${failure.message} (${ex.events} events arrived)`,
          "the stream broke or the response failed: try again; if it persists, check the server or a proxy in between",
        ),
      ];
    default: {
      const unreachable = inconclusive(ctx, "auth", failure);
      return [
        failure.kind === "cancelled"
          ? unreachable
          : { ...unreachable, hint: "check --base-url and that the server is running and reachable" },
        skipped("model", "the server did not answer"),
        skipped("streaming", "the server did not answer"),
      ];
    }
  }
}
