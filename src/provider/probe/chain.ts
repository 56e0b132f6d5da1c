/**
 * `previous_response_id`: a stored response (`store: true`) continued by a follow-up that names
 * it. Passing means the follow-up was accepted and either recalled the earlier turn or echoed the
 * id; a server that accepts the field and ignores it (docs/pitfalls.md #16) shows neither.
 */
import { baseBody, inconclusive, type ProbeContext, type Verdict, verdict } from "./context.js";
import { exchange, failureOf, userMessage } from "./exchange.js";

const NAME = "Quillon";
const UNSUPPORTED_HINT =
  "runs left on auto go stateless (the whole history each turn); set previousResponseId: false in the profile's capabilities to make it permanent";

/** The `previous_response_id` verdict (two requests). */
export async function probeChain(ctx: ProbeContext): Promise<Verdict[]> {
  if (ctx.api !== "responses")
    return [
      verdict("previous_response_id", "skipped", "Chat Completions keeps no responses (the run's API)"),
    ];
  const main = ctx.provider("main");
  const first = await exchange(
    main,
    { ...baseBody(ctx), store: true, input: [userMessage(`My name is ${NAME}. Reply with OK.`)] },
    ctx.signal,
  );
  if (!first.outcome.ok) {
    const failure = failureOf(first.outcome.error);
    if (failure.kind === "rejected")
      return [unsupported(`a request with store:true was refused: ${failure.message}`)];
    return [inconclusive(ctx, "previous_response_id", failure)];
  }
  const id = first.outcome.response.id;
  // An empty id is no id: `previous_response_id: ""` only earns a confusing refusal (docs/pitfalls.md #94).
  if (id === null || id === "") return [unsupported("the stored response has no id to continue")];
  const second = await exchange(
    main,
    {
      ...baseBody(ctx),
      previous_response_id: id,
      input: [userMessage("What is my name? Reply with the name only.")],
    },
    ctx.signal,
  );
  if (!second.outcome.ok) {
    const error = second.outcome.error;
    if (error.isPreviousResponseNotFound)
      return [unsupported("the server did not keep the response (previous_response_not_found)")];
    const failure = failureOf(error);
    if (failure.kind === "rejected" || failure.kind === "missing")
      return [unsupported(`a follow-up with previous_response_id was refused: ${failure.message}`)];
    return [inconclusive(ctx, "previous_response_id", failure)];
  }
  const recalled = second.outcome.response.outputText.toLowerCase().includes(NAME.toLowerCase());
  const echoed = second.response?.previous_response_id === id;
  if (recalled || echoed) {
    const how = recalled ? "it recalled the earlier turn" : "it echoed the id";
    return [verdict("previous_response_id", "ok", `a follow-up continued the stored response (${how})`)];
  }
  return [
    unsupported(
      "the follow-up was accepted, but it neither recalled the earlier turn nor echoed previous_response_id: the server seems to ignore it",
    ),
  ];
}

function unsupported(detail: string): Verdict {
  return verdict("previous_response_id", "unsupported", detail, UNSUPPORTED_HINT);
}
