/**
 * `encrypted_reasoning`: a stateless request (`store: false`) with `include:
 * ["reasoning.encrypted_content"]` and a reasoning effort, whose reasoning items must come back
 * with `encrypted_content` — what a stateless run resends so the model keeps its reasoning
 * (docs/decisions.md #4). Skipped when the model does not reason.
 */
import { baseBody, inconclusive, type ProbeContext, type Verdict, verdict } from "./context.js";
import { exchange, failureOf, userMessage } from "./exchange.js";

const UNSUPPORTED_HINT =
  "stateless runs will not ask for it; set encryptedReasoning: false in the profile's capabilities to make it permanent";

/** The `encrypted_reasoning` verdict (one request). */
export async function probeEncryptedReasoning(ctx: ProbeContext): Promise<Verdict[]> {
  if (ctx.api !== "responses")
    return [
      verdict(
        "encrypted_reasoning",
        "skipped",
        "Chat Completions returns no encrypted reasoning (the run's API)",
      ),
    ];
  const ex = await exchange(
    ctx.provider("main"),
    {
      ...baseBody(ctx),
      store: false,
      include: ["reasoning.encrypted_content"],
      reasoning: { effort: "low" },
      input: [userMessage("What is 17 + 25? Reply with the number only.")],
    },
    ctx.signal,
  );
  if (!ex.outcome.ok) {
    const failure = failureOf(ex.outcome.error);
    if (failure.kind !== "rejected") return [inconclusive(ctx, "encrypted_reasoning", failure)];
    const aboutReasoning =
      (failure.param ?? "").startsWith("reasoning") ||
      (/reasoning/i.test(failure.message) && !/include|encrypted/i.test(failure.message));
    if (aboutReasoning)
      return [
        verdict(
          "encrypted_reasoning",
          "skipped",
          `the model takes no reasoning settings: ${failure.message}`,
        ),
      ];
    return [verdict("encrypted_reasoning", "unsupported", `refused: ${failure.message}`, UNSUPPORTED_HINT)];
  }
  const reasoning = ex.outcome.response.items.filter((item) => item.type === "reasoning");
  if (reasoning.length === 0)
    return [
      verdict("encrypted_reasoning", "skipped", "the model returned no reasoning item: nothing to check"),
    ];
  const encrypted = reasoning.some(
    (item) => typeof item.encrypted_content === "string" && item.encrypted_content !== "",
  );
  if (encrypted)
    return [verdict("encrypted_reasoning", "ok", "reasoning came back with encrypted_content (store:false)")];
  return [
    verdict(
      "encrypted_reasoning",
      "unsupported",
      "reasoning came back without encrypted_content",
      UNSUPPORTED_HINT,
    ),
  ];
}
