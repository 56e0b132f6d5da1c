/**
 * `POST /chat/completions`: the legacy API, answered from the same demo model and scenario turns as
 * `/responses`. The body is validated (`request.ts`), translated into the mock's own model input
 * (`translate.ts`), answered by `turn.ts` exactly as a Responses request is, and written as chunks
 * or a `chat.completion` (`chunks.ts`). Stateless: nothing is stored, there is no
 * `previous_response_id`, and every request resends its history.
 *
 * Faults act as on `/responses`: `httpError`, the stalls, `dropAfterEvents`, `keepAliveEvery`,
 * `invalidJsonAfterEvents`, `lineEnding`, `omitDone`, `chunkBytes`; `errorEvent` writes an
 * `{"error": {…}}` chunk after `afterEvents` chunks and ends the stream (`data: [DONE]` still
 * follows, as vLLM and llama.cpp do). A non-streaming request honours `httpError`, the stall before
 * headers, `dropAfterEvents` (no answer) and `errorEvent` (HTTP 500 with the error).
 */
import type { JsonObject } from "../../protocol/types.js";
import {
  answered,
  type CreateContext,
  type CreateInfo,
  type CreateResult,
  streamAnswer,
} from "../create-response.js";
import { type ErrorEventFault, errorEventPayload, httpErrorReply, type MockFaults } from "../faults.js";
import { invalidRequest, jsonReply } from "../http-error.js";
import { assignIds } from "../plan.js";
import { inputItems, parseJsonBody } from "../request.js";
import { connectionDropped } from "../stream-writer.js";
import { toolPolicy } from "../tool-policy.js";
import { decideTurn } from "../turn.js";
import { type ChatOutputOptions, chatChunks, chatCompletion, failure } from "./chunks.js";
import { parseChatBody } from "./request.js";
import { translateChatBody } from "./translate.js";

/** Answers one `POST /chat/completions` (see the module comment). Refusals are thrown as HTTP problems. */
export async function createChatCompletion(
  text: string,
  ctx: CreateContext,
  info: CreateInfo,
): Promise<CreateResult> {
  const sent = parseJsonBody(text);
  const chat = parseChatBody(sent);
  info.model = chat.model;
  info.stream = chat.stream === true;
  const body = translateChatBody(chat);
  const policy = toolPolicy(body);
  const input = inputItems(body);
  const conversation = { context: input, input };
  const decision = await decideTurn({ api: "chat", body, sent, conversation, policy }, ctx, info);
  if (decision.kind === "http_error") return answered(httpErrorReply(decision.fault, ctx.headers));
  if (decision.kind === "raw") {
    if (chat.stream !== true) {
      throw invalidRequest(
        "This scenario turn replays rawChunks, which answer streaming requests only: send stream: true.",
        "stream",
        "scenario_mismatch",
      );
    }
    return stream(decision.raw.values(), decision.faults, ctx);
  }
  const { faults } = decision;
  const options: ChatOutputOptions = {
    plan: assignIds(decision.plan, ctx.ids),
    id: ctx.ids.next("chatcmpl"),
    created: Math.floor(ctx.clock() / 1000),
    model: chat.model,
    context: conversation.context,
    instructions: body.instructions ?? undefined,
  };
  info.responseId = options.id;
  if (chat.stream === true) {
    const style = {
      includeUsage: chat.stream_options?.include_usage === true,
      obfuscate: chat.stream_options?.include_obfuscation !== false,
    };
    return stream(chatChunks(options, style), faults, ctx);
  }
  if (faults.dropAfterEvents !== undefined) throw connectionDropped(0);
  if (faults.errorEvent !== undefined) {
    return answered(jsonReply(500, { error: errorEventPayload(faults.errorEvent) }, ctx.headers));
  }
  if (options.plan.status === "failed") {
    return answered(jsonReply(500, { error: failure(options.plan) }, ctx.headers));
  }
  return answered(jsonReply(200, chatCompletion(options), ctx.headers));
}

/** The SSE answer; `errorEvent` is played here as an error chunk (the writer's is Responses-shaped). */
function stream(chunks: Iterator<JsonObject | string>, faults: MockFaults, ctx: CreateContext): CreateResult {
  const { errorEvent, ...rest } = faults;
  const events = errorEvent === undefined ? chunks : withErrorChunk(chunks, errorEvent);
  return streamAnswer(events, rest, () => undefined, ctx);
}

/** The chunks, cut after `afterEvents` of them by an `{"error": {…}}` chunk. */
function* withErrorChunk(
  chunks: Iterator<JsonObject | string>,
  fault: ErrorEventFault,
): Generator<JsonObject | string> {
  let count = 0;
  for (let next = chunks.next(); next.done !== true; next = chunks.next()) {
    if (count === fault.afterEvents) break;
    yield next.value;
    count++;
  }
  yield { error: errorEventPayload(fault) };
}
