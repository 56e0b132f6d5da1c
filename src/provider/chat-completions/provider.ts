/**
 * The Chat Completions provider: the same `Provider` contract as the Open Responses one, for the
 * many servers that only speak `POST /chat/completions` (llama.cpp, older vLLM and Ollama, LM
 * Studio, Groq, DeepSeek, Mistral, OpenAI-compatible gateways). It is built from the same pieces
 * — attempts with retries (attempts.ts), the HTTP exchange with its timeouts and error mapping
 * (http-attempt.ts), the one assembling stream — and adds only the request translation
 * (request.ts), the wire format (wire.ts) and the chunk translator (translator.ts).
 *
 * Always stateless: the API keeps no responses, so the capabilities say `previousResponseId:
 * false` and the loop resends the history on every request (`run_started.mode` is `stateless`).
 * `request_started.body` keeps the Open Responses body the loop built (what a replay compares);
 * `request_started.wire_body` holds the Chat Completions body actually sent.
 */
import type { JsonObject } from "../../protocol/types.js";
import { abortableSleep } from "../../util/abort.js";
import { createAssemblingStream } from "../assembling-stream.js";
import { type Attempt, retryingSource } from "../attempts.js";
import { chatCapabilities } from "../capabilities.js";
import { ProviderError } from "../errors.js";
import { createHttpAttempt } from "../http-attempt.js";
import { httpAttemptConfig, type OpenResponsesProviderOptions } from "../open-responses.js";
import type { Provider } from "../provider.js";
import { DEFAULT_RETRY_POLICY } from "../retry.js";
import type { WireApi } from "../wire-api.js";
import { type ChatDialect, chatDialect } from "./dialect.js";
import { toChatRequest } from "./request.js";
import { createChatTranslator } from "./translator.js";
import { CHAT_COMPLETIONS_WIRE } from "./wire.js";

/** Options of `createChatCompletionsProvider`: those of the Open Responses provider, plus the dialect. */
export interface ChatCompletionsProviderOptions extends OpenResponsesProviderOptions {
  /** Name for frames, tapes and messages. @defaultValue "chat-completions" */
  name?: string;
  /** What the server accepts (roles, token field, stream options). @defaultValue DEFAULT_CHAT_DIALECT */
  dialect?: Partial<ChatDialect>;
}

// chatCapabilities lives in capabilities.ts, so the profile table does not load this module.
export { chatCapabilities };

/**
 * A provider for any server with the Chat Completions API.
 *
 * @example
 * ```ts
 * const provider = createChatCompletionsProvider({ baseURL: "http://localhost:8080/v1" }); // llama.cpp
 * const run = runAgent({ provider, model: "qwen3", input: "What is in package.json?", tools });
 * ```
 */
export function createChatCompletionsProvider(options: ChatCompletionsProviderOptions): Provider {
  const config = httpAttemptConfig(options, "chat/completions", CHAT_COMPLETIONS_WIRE);
  const dialect = chatDialect(options.dialect);
  const retry = { ...DEFAULT_RETRY_POLICY, ...options.retry };
  const random = options.random ?? Math.random;
  const sleep = options.sleep ?? abortableSleep;
  const wire: WireApi = { api: "chat-completions", chat: dialect };
  return {
    name: options.name ?? "chat-completions",
    capabilities: chatCapabilities(options.capabilities),
    secrets: config.secrets as string[],
    wire,
    stream(request, streamOptions = {}) {
      let wireBody: JsonObject | undefined;
      let refused: ProviderError | undefined;
      try {
        wireBody = toChatRequest(request.body, dialect);
      } catch (err) {
        if (!(err instanceof ProviderError)) throw err;
        refused = err;
      }
      const body = wireBody === undefined ? "" : JSON.stringify(wireBody);
      const source = retryingSource({
        retry,
        random,
        sleep,
        ...(wireBody === undefined ? {} : { wireBody }),
        openAttempt: (attempt) =>
          refused !== undefined
            ? refusedAttempt(refused)
            : createHttpAttempt({ config, body, turn: request.turn, attempt, stream: streamOptions }),
      });
      return createAssemblingStream({
        request,
        options: streamOptions,
        source,
        translator: () => createChatTranslator(request),
      });
    },
  };
}

/** An attempt that fails before anything is sent (a request the API cannot express). */
function refusedAttempt(error: ProviderError): Attempt {
  return {
    open: async () => ({ type: "failed", error }),
    next: async () => ({ type: "failed", error }),
    startDrain: () => {},
    close: () => {},
  };
}
