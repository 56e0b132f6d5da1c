/**
 * The HTTP provider of a profile or an API name: Open Responses or Chat Completions, with the
 * profile's base URL, key, headers, limits and capabilities (profiles.ts holds the profiles).
 */
import { EddyError } from "../errors.js";
import type { ApiName } from "./api-names.js";
import {
  type ChatCompletionsProviderOptions,
  createChatCompletionsProvider,
} from "./chat-completions/provider.js";
import { createOpenResponsesProvider } from "./open-responses.js";
import { type ProviderProfile, profileApiKey, profileBaseURL } from "./profiles.js";
import type { Provider } from "./provider.js";

/** Options of `createHttpProvider`: every option of both HTTP providers. */
export type HttpProviderOptions = ChatCompletionsProviderOptions;

/**
 * The HTTP provider of `api`: `createOpenResponsesProvider` or `createChatCompletionsProvider`. An
 * AI SDK model is not an HTTP endpoint: it is made with `createAiSdkProvider` (eddy/ai-sdk).
 */
export function createHttpProvider(api: ApiName, options: HttpProviderOptions): Provider {
  if (api === "ai-sdk") {
    throw new EddyError(
      "invalid_config",
      "an ai-sdk profile is not an HTTP endpoint: eddy run loads its AI SDK provider package (config profile keys package, factory, settings); in code, pass the model to createAiSdkProvider from eddy/ai-sdk",
      { fault: "user" },
    );
  }
  if (api === "chat-completions" && options.streamTransport === "websocket") {
    throw new EddyError(
      "invalid_config",
      "Chat Completions has no WebSocket mode: use streamTransport sse, or the responses API",
      { fault: "user" },
    );
  }
  if (api === "chat-completions") return createChatCompletionsProvider(options);
  const { dialect: _chatOnly, ...responses } = options;
  return createOpenResponsesProvider(responses);
}

/**
 * Builds the HTTP provider a profile describes. `overrides` win over the profile.
 *
 * @example
 * ```ts
 * const openrouter = createProfileProvider(KNOWN_PROFILES.openrouter, { env: process.env });
 * ```
 */
export function createProfileProvider(
  profile: ProviderProfile,
  options: {
    env?: Readonly<Record<string, string | undefined>>;
    baseURL?: string;
    apiKey?: string;
    /** The API to speak instead of the profile's. @defaultValue profile.api ?? "responses" */
    api?: ApiName;
    overrides?: Partial<HttpProviderOptions>;
  } = {},
): Provider {
  const env = options.env ?? {};
  const providerOptions: HttpProviderOptions = {
    baseURL: options.baseURL ?? profileBaseURL(profile, env),
    name: profile.name,
    capabilities: profile.capabilities,
    ...options.overrides,
  };
  const apiKey = options.apiKey ?? profileApiKey(profile, env);
  if (apiKey !== undefined) providerOptions.apiKey = apiKey;
  if (profile.apiKeyHeader !== undefined) providerOptions.apiKeyHeader = profile.apiKeyHeader;
  if (profile.headers !== undefined)
    providerOptions.headers = { ...profile.headers, ...options.overrides?.headers };
  if (profile.timeouts !== undefined)
    providerOptions.timeouts = { ...profile.timeouts, ...options.overrides?.timeouts };
  if (profile.retry !== undefined) providerOptions.retry = { ...profile.retry, ...options.overrides?.retry };
  if (profile.chat !== undefined)
    providerOptions.dialect = { ...profile.chat, ...options.overrides?.dialect };
  return createHttpProvider(options.api ?? profile.api ?? "responses", providerOptions);
}
