/**
 * Provider profiles and routing (docs/decisions.md #20).
 * A profile names an endpoint: base URL, the API it speaks (Open Responses or Chat Completions),
 * where its key comes from, a default model, extra headers, timeout/retry overrides and its
 * capabilities. A model route `profile/model`
 * (`openrouter/openai/gpt-oss-20b`) picks the profile; an ordered fallback list is tried when the
 * primary fails with a provider error before any output (fallback.ts).
 *
 * Data and lookups only: the providers a profile describes are built by http-provider.ts, so
 * listing the profiles (`eddy --help`, config checks) loads no provider code.
 */
import { EddyError } from "../errors.js";
import type { ApiName } from "./api-names.js";
import {
  chatCapabilities,
  GENERIC_CAPABILITIES,
  type ProviderCapabilities,
  withCapabilities,
} from "./capabilities.js";
import type { ChatDialect } from "./chat-completions/dialect.js";
import type { RetryPolicy } from "./retry.js";
import type { WatchdogLimits } from "./watchdog.js";

/**
 * A named provider endpoint: base URL, where its key comes from, default model, headers, limits and capabilities.
 */
export interface ProviderProfile {
  name: string;
  /** The base URL (see `resolveResponsesUrl`). Empty when it must come from `baseURLEnv`. */
  baseURL: string;
  /** Env vars that may hold the base URL (first set wins); `baseURLSuffix` is appended. */
  baseURLEnv?: string[];
  baseURLSuffix?: string;
  /** Env vars that may hold the API key, first set wins. The key itself is never stored in a profile. */
  apiKeyEnv: string[];
  /**
   * Whether a run may start without a key: `"required"` (a hosted API: no key, no request),
   * `"optional"` (a server that may not check one; no key means no `Authorization` header).
   * @defaultValue "required" when `apiKeyEnv` names a variable, else "optional" (see `keyRequired`)
   */
  keyPolicy?: KeyPolicy;
  /**
   * What a run without a model does (no `--model` and no `defaultModel`): `"required"` refuses to
   * start; `"server_default"` sends no `model` and lets the server pick its default.
   * @defaultValue "required" (see `modelRequired`)
   */
  modelPolicy?: ModelPolicy;
  /** Header carrying the key as-is instead of `Authorization: Bearer` (Azure: `api-key`). */
  apiKeyHeader?: string;
  /** The model eddy sends when a run names none. */
  defaultModel?: string;
  headers?: Record<string, string>;
  timeouts?: Partial<WatchdogLimits>;
  retry?: Partial<RetryPolicy>;
  capabilities: ProviderCapabilities;
  /**
   * The API the endpoint speaks: `POST /responses` or `POST /chat/completions`. Servers that speak
   * both (Ollama, vLLM, LM Studio) default to Open Responses; a run may choose the other. `ai-sdk`:
   * an AI SDK provider package makes the requests (`aiSdk` says which).
   * @defaultValue "responses"
   */
  api?: ApiName;
  /** The AI SDK provider package behind an `ai-sdk` profile, and how to make its provider. */
  aiSdk?: AiSdkProfile;
  /** What a Chat Completions endpoint accepts (used when the API is `chat-completions`). @defaultValue DEFAULT_CHAT_DIALECT */
  chat?: Partial<ChatDialect>;
  /**
   * Request options every run on this profile gets unless the run sets them, keyed as the config
   * file's keys (`reasoning_effort`, `max_output_tokens`, …: src/cli/config-request.ts).
   */
  requestDefaults?: Readonly<Record<string, unknown>>;
  /** What this profile is, for `eddy config` and errors. */
  description: string;
}

/**
 * An `ai-sdk` profile's provider package: `eddy run` imports `package`, calls its `factory` (the
 * package's one `create…` export unless named) with `settings` plus the profile's base URL, key
 * and headers, and takes the run's model from it; `providerOptions` go with every call.
 */
export interface AiSdkProfile {
  /** The npm package, e.g. `@ai-sdk/anthropic` (installed beside eddy or in the workspace). */
  package: string;
  /** The export that makes the provider, e.g. `createAnthropic`. @defaultValue the package's one `create…` function */
  factory?: string;
  /** More settings for the factory (JSON), e.g. `{"name": "local"}` for `@ai-sdk/openai-compatible`. @defaultValue none */
  settings?: Readonly<Record<string, unknown>>;
  /** Provider options sent with every call, by provider name (`{"anthropic": {…}}`). @defaultValue none */
  providerOptions?: Readonly<Record<string, unknown>>;
}

/** Whether a profile's server needs an API key (`ProviderProfile.keyPolicy`). */
export type KeyPolicy = "required" | "optional";

/** Whether a profile's server needs a model name (`ProviderProfile.modelPolicy`). */
export type ModelPolicy = "required" | "server_default";

/** A profile of an endpoint that only speaks Chat Completions. */
const chatOnly = (
  profile: Omit<ProviderProfile, "api" | "capabilities">,
  caps: Partial<ProviderCapabilities> = {},
): ProviderProfile => ({ ...profile, api: "chat-completions", capabilities: chatCapabilities(caps) });

const localServer = (
  name: string,
  url: string,
  description: string,
  caps: Partial<ProviderCapabilities>,
): ProviderProfile => ({
  name,
  baseURL: url,
  apiKeyEnv: [],
  // Local servers take no key, and serve whatever model is loaded only when asked for it by name.
  keyPolicy: "optional",
  modelPolicy: "required",
  capabilities: withCapabilities(caps),
  description,
});

/** Profiles eddy knows. Configuration files can add more or override these by name. */
export const KNOWN_PROFILES: Readonly<Record<string, ProviderProfile>> = {
  openai: {
    name: "openai",
    baseURL: "https://api.openai.com/v1",
    apiKeyEnv: ["OPENAI_API_KEY"],
    keyPolicy: "required",
    modelPolicy: "required",
    defaultModel: "gpt-5-mini",
    // POST /v1/responses/compact: developers.openai.com/api/reference (Responses, "Compact a response").
    capabilities: withCapabilities({ strictTools: true, compaction: true, nativeTools: true }),
    description: "OpenAI Responses API",
  },
  azure: {
    name: "azure",
    baseURL: "",
    baseURLEnv: ["AZURE_OPENAI_ENDPOINT"],
    baseURLSuffix: "/openai/v1",
    apiKeyEnv: ["AZURE_OPENAI_API_KEY"],
    apiKeyHeader: "api-key",
    keyPolicy: "required",
    // The model is the deployment name; Azure has no default deployment.
    modelPolicy: "required",
    // Azure rejects stateless replays both with and without item ids unless store is on.
    // POST /openai/v1/responses/compact exists on Azure's v1 API as on OpenAI's.
    capabilities: withCapabilities({
      strictTools: true,
      keepItemIds: true,
      compaction: true,
      nativeTools: true,
    }),
    description: "Azure OpenAI (v1 API); the base URL comes from AZURE_OPENAI_ENDPOINT",
  },
  openrouter: {
    name: "openrouter",
    baseURL: "https://openrouter.ai/api/v1",
    apiKeyEnv: ["OPENROUTER_API_KEY"],
    keyPolicy: "required",
    // OpenRouter's API reference: "If model is unspecified, uses the user's default".
    modelPolicy: "server_default",
    // OpenRouter's Responses endpoint is stateless: no stored responses, no previous_response_id.
    capabilities: withCapabilities({ previousResponseId: false, keepItemIds: false }),
    description: "OpenRouter (stateless: runs resend the whole history)",
  },
  ollama: localServer("ollama", "http://localhost:11434/v1", "Ollama on localhost (stateless)", {
    previousResponseId: false,
    encryptedReasoning: false,
    toolOutputImages: false,
  }),
  vllm: localServer(
    "vllm",
    "http://localhost:8000/v1",
    "vLLM on localhost (stateless unless started with a response store)",
    {
      previousResponseId: false,
      encryptedReasoning: false,
      toolOutputImages: false,
    },
  ),
  lmstudio: localServer("lmstudio", "http://localhost:1234/v1", "LM Studio on localhost", {
    encryptedReasoning: false,
    toolOutputImages: false,
  }),
  llamacpp: chatOnly({
    name: "llamacpp",
    baseURL: "http://localhost:8080/v1",
    // llama-server's --api-key reads the same variable.
    apiKeyEnv: ["LLAMA_API_KEY"],
    description: "llama.cpp's llama-server on localhost (Chat Completions, stateless)",
  }),
  groq: chatOnly({
    name: "groq",
    baseURL: "https://api.groq.com/openai/v1",
    apiKeyEnv: ["GROQ_API_KEY"],
    // Groq refuses stream_options with HTTP 400 and reports usage in x_groq.usage instead.
    chat: { maxTokensField: "max_completion_tokens", streamUsage: false },
    description: "Groq (Chat Completions, stateless)",
  }),
  deepseek: chatOnly(
    {
      name: "deepseek",
      baseURL: "https://api.deepseek.com/v1",
      apiKeyEnv: ["DEEPSEEK_API_KEY"],
      defaultModel: "deepseek-chat",
      description: "DeepSeek (Chat Completions, stateless; deepseek-reasoner streams reasoning_content)",
    },
    { parallelToolCalls: false },
  ),
  mistral: chatOnly({
    name: "mistral",
    baseURL: "https://api.mistral.ai/v1",
    apiKeyEnv: ["MISTRAL_API_KEY"],
    // Mistral rejects request fields it does not know, stream_options included ("extra_forbidden").
    chat: { streamUsage: false },
    description: "Mistral La Plateforme (Chat Completions, stateless)",
  }),
  generic: {
    name: "generic",
    baseURL: "",
    apiKeyEnv: ["OPENRESPONSES_API_KEY"],
    // Any server: many (local ones, eddy mock) check no key, and nothing says one has a default model.
    keyPolicy: "optional",
    modelPolicy: "required",
    capabilities: GENERIC_CAPABILITIES,
    description: "any Open Responses server (spec features only)",
  },
};

/**
 * Hosts that identify a known profile when a run gives only a base URL (for the profile's
 * capabilities and key rules). A host starting with "." matches any subdomain. Any other host is
 * the `generic` profile.
 */
export const PROFILE_HOSTS: readonly { readonly host: string; readonly profile: string }[] = [
  { host: "api.openai.com", profile: "openai" },
  { host: "openrouter.ai", profile: "openrouter" },
  { host: ".openai.azure.com", profile: "azure" },
];

/**
 * The profile a host name belongs to (`PROFILE_HOSTS`), looked up in `profiles` so a config file
 * can override it; the `generic` profile for any other host.
 */
export function profileForHost(
  host: string,
  profiles: Readonly<Record<string, ProviderProfile>> = KNOWN_PROFILES,
): ProviderProfile {
  const name = host.toLowerCase();
  const entry = PROFILE_HOSTS.find((e) => (e.host.startsWith(".") ? name.endsWith(e.host) : name === e.host));
  const generic = profiles.generic ?? KNOWN_PROFILES.generic;
  if (generic === undefined) throw new EddyError("invalid_config", "no generic profile");
  return (entry === undefined ? undefined : profileNamed(profiles, entry.profile)) ?? generic;
}

/**
 * The profile called `name`, if `profiles` has one of its own: a name that only an object's
 * prototype answers to (`toString`, `__proto__`, `constructor`) is unknown, like any other.
 */
function profileNamed(
  profiles: Readonly<Record<string, ProviderProfile>>,
  name: string,
): ProviderProfile | undefined {
  return Object.hasOwn(profiles, name) ? profiles[name] : undefined;
}

/** Whether a run on this profile must have an API key before it sends anything (`keyPolicy`). */
export function keyRequired(profile: ProviderProfile): boolean {
  return (profile.keyPolicy ?? (profile.apiKeyEnv.length > 0 ? "required" : "optional")) === "required";
}

/** Whether a run on this profile must name a model before it sends anything (`modelPolicy`). */
export function modelRequired(profile: ProviderProfile): boolean {
  return (profile.modelPolicy ?? "required") === "required";
}

/** A resolved route: which profile, which model. */
export interface Route {
  profile: ProviderProfile;
  model: string | undefined;
}

/**
 * Resolves `--provider NAME` / `--model profile/model`. An explicit provider wins and leaves the
 * model untouched (OpenRouter models contain slashes); otherwise a model whose first segment names
 * a profile is split. Returns undefined when neither names a profile.
 */
export function resolveRoute(
  options: { provider?: string | undefined; model?: string | undefined },
  profiles: Readonly<Record<string, ProviderProfile>> = KNOWN_PROFILES,
): Route | undefined {
  if (options.provider !== undefined) {
    const profile = profileNamed(profiles, options.provider);
    if (profile === undefined) {
      throw new EddyError(
        "invalid_config",
        `unknown provider "${options.provider}" (known: ${Object.keys(profiles).sort().join(", ")})`,
        { fault: "user" },
      );
    }
    return { profile, model: options.model ?? profile.defaultModel };
  }
  const model = options.model;
  if (model === undefined) return undefined;
  const slash = model.indexOf("/");
  if (slash <= 0) return undefined;
  const profile = profileNamed(profiles, model.slice(0, slash));
  if (profile === undefined) return undefined;
  const rest = model.slice(slash + 1);
  return { profile, model: rest === "" ? profile.defaultModel : rest };
}

/** The base URL a profile resolves to in `env`. */
export function profileBaseURL(
  profile: ProviderProfile,
  env: Readonly<Record<string, string | undefined>>,
): string {
  for (const name of profile.baseURLEnv ?? []) {
    const value = env[name];
    if (value !== undefined && value !== "")
      return `${value.replace(/\/+$/, "")}${profile.baseURLSuffix ?? ""}`;
  }
  // An ai-sdk profile without a base URL uses its provider package's own (e.g. api.anthropic.com).
  if (profile.baseURL === "" && profile.aiSdk === undefined) {
    const from = profile.baseURLEnv?.length ? `set ${profile.baseURLEnv.join(" or ")}` : "give --base-url";
    throw new EddyError("invalid_config", `provider "${profile.name}" has no base URL: ${from}`, {
      fault: "user",
    });
  }
  return profile.baseURL;
}

/** The API key a profile reads from `env`, if any. */
export function profileApiKey(
  profile: ProviderProfile,
  env: Readonly<Record<string, string | undefined>>,
): string | undefined {
  for (const name of profile.apiKeyEnv) {
    const value = env[name];
    if (value !== undefined && value !== "") return value;
  }
  return undefined;
}
