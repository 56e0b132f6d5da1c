/**
 * The provider a run's configuration describes: the HTTP provider for its endpoint (with its
 * fallbacks), or the embedded mock server. Also the list of secrets the run must never show.
 */
import type { MockServer } from "../mock/listener.js";
import { createFallbackProvider } from "../provider/fallback.js";
import { createHttpProvider, type HttpProviderOptions } from "../provider/http-provider.js";
import type { OpenResponsesProviderOptions } from "../provider/open-responses.js";
import { capabilitiesWithEvidence } from "../provider/probe/evidence.js";
import type { Provider } from "../provider/provider.js";
import type { ApiName } from "../provider/wire-api.js";
import { basicAuthorization, credentialSecrets } from "../util/url-credentials.js";
import type { EffectiveConfig, Endpoint } from "./config.js";
import { evidenceNotice } from "./doctor-cache.js";

/** A started provider and what stopping it takes. */
export interface TargetProvider {
  provider: Provider;
  /** A line for stderr once the run has started (the demo-model notice), if any. */
  notice?: string;
  close(): Promise<void>;
}

/**
 * Starts what the target needs: the embedded mock server (listening, not yet announced) or
 * nothing for an HTTP endpoint.
 */
export async function startTargetProvider(config: EffectiveConfig): Promise<TargetProvider> {
  if (config.target.kind === "http" && config.api.value === "ai-sdk") {
    // An AI SDK provider package, loaded only when a profile asks for it.
    const { startAiSdkTarget } = await import("./ai-sdk-target.js");
    return startAiSdkTarget(config);
  }
  if (config.target.kind === "http") {
    const provider = httpProvider(config);
    const notice = evidenceNotice(config.target.profile.capabilities, config.doctor);
    // Closing the provider closes its WebSocket connections (none over SSE).
    return { provider, ...(notice === undefined ? {} : { notice }), close: async () => provider.close?.() };
  }
  // The embedded mock loads only when a run uses it (the demo model).
  const { createMockServer } = await import("../mock/listener.js");
  const mock: MockServer = await createMockServer({ maxConnections: EMBEDDED_MOCK_MAX_CONNECTIONS });
  const provider = createHttpProvider(config.api.value, {
    baseURL: mock.url,
    name: "mock",
    ...policyOptions(config),
    ...transportOption(config),
  });
  return {
    provider,
    notice: `eddy: no provider configured — using the built-in offline demo model at ${mock.url} (set --base-url or OPENAI_API_KEY for a real one)`,
    close: async () => {
      await provider.close?.();
      await mock.close();
    },
  };
}

/**
 * The embedded mock's connection bound: it serves this process's own runs, each on a connection of
 * its own, and a command runs up to 10,000 at once (`eddy batch`/`eddy worker --concurrency`,
 * `eddy serve --max-runs`); twice that leaves room for the runs' sub-agents. `eddy mock`'s bound
 * (`MOCK_DEFAULTS.maxConnections`, 1024) would have refused a batch's 1,025th run.
 */
export const EMBEDDED_MOCK_MAX_CONNECTIONS = 20_000;

/** `streamTransport` for the run's own endpoint when it is not SSE (fallbacks stream over SSE). */
function transportOption(config: EffectiveConfig): Pick<HttpProviderOptions, "streamTransport"> {
  return config.transport.value === "sse" ? {} : { streamTransport: config.transport.value };
}

/** Validation, retries and timeouts from the configuration, for every provider of the run. */
export function policyOptions(config: EffectiveConfig): Partial<OpenResponsesProviderOptions> {
  return {
    validate: config.validate.value,
    retry: { maxRetries: config.maxRetries.value },
    timeouts: {
      connectMs: config.connectTimeoutMs.value,
      firstByteMs: config.firstByteTimeoutMs.value,
      idleMs: config.idleTimeoutMs.value,
    },
  };
}

/** The HTTP provider for the target, wrapped in a fallback provider when the config lists fallbacks. */
export function httpProvider(config: EffectiveConfig): Provider {
  const target = config.target;
  if (target.kind !== "http") throw new TypeError("httpProvider needs an HTTP target");
  const primary = endpointProvider(target, config, config.api.value, {
    ...transportOption(config),
    // eddy doctor's evidence (doctor-cache.ts) decides the capabilities settings left on auto follow.
    capabilities: capabilitiesWithEvidence(target.profile.capabilities, config.doctor?.report),
  });
  if (target.fallbacks.length === 0) return primary;
  return createFallbackProvider([
    { provider: primary },
    ...target.fallbacks.map((f) => ({
      provider: endpointProvider(f, config, f.profile.api ?? "responses"),
      ...(f.model === undefined ? {} : { model: f.model }),
    })),
  ]);
}

function endpointProvider(
  endpoint: Endpoint,
  config: EffectiveConfig,
  api: ApiName,
  extra: Partial<HttpProviderOptions> = {},
): Provider {
  return createHttpProvider(api, endpointOptions(endpoint, config, extra));
}

/** The HTTP provider options of an endpoint: URL, key, headers, dialect, the config's policy, `extra` over them. */
export function endpointOptions(
  endpoint: Endpoint,
  config: EffectiveConfig,
  extra: Partial<HttpProviderOptions> = {},
): HttpProviderOptions {
  const { profile, credentials } = endpoint;
  const options: HttpProviderOptions = {
    baseURL: endpoint.baseURL.value,
    name: profile.name,
    capabilities: profile.capabilities,
    ...policyOptions(config),
    ...extra,
  };
  if (endpoint.apiKey !== undefined) options.apiKey = endpoint.apiKey.value;
  if (profile.apiKeyHeader !== undefined) options.apiKeyHeader = profile.apiKeyHeader;
  const headers = { ...profile.headers };
  if (credentials !== undefined) headers.authorization = basicAuthorization(credentials);
  if (Object.keys(headers).length > 0) options.headers = headers;
  if (profile.chat !== undefined) options.dialect = profile.chat;
  return options;
}

/** Every key and URL password of the run's endpoints: never in a tape, a frame or an error line. */
export function secretsOf(config: EffectiveConfig): string[] {
  const target = config.target;
  if (target.kind === "mock") return [];
  return [target, ...target.fallbacks].flatMap((e) => [
    ...(e.apiKey === undefined ? [] : [e.apiKey.value]),
    ...credentialSecrets(e.credentials),
  ]);
}
