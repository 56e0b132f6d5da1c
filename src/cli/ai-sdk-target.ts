/**
 * The provider of an `api: "ai-sdk"` profile: an AI SDK provider package, loaded when a run needs
 * it (it is not a dependency of eddy), behind eddy/ai-sdk's adapter. The profile names the package
 * and, when it has more than one `create…` export, the factory:
 *
 * ```json
 * "profiles": {
 *   "claude": {
 *     "api": "ai-sdk", "package": "@ai-sdk/anthropic",
 *     "api_key_env": "ANTHROPIC_API_KEY", "default_model": "claude-sonnet-4-5"
 *   }
 * }
 * ```
 *
 * The factory gets the profile's `settings`, then `baseURL` (when the profile or `--base-url` gives
 * one: else the package's own), `apiKey` (from the profile's `api_key_env`, `--api-key` or
 * `OPENRESPONSES_API_KEY`) and `headers`; the run's model comes from the provider's
 * `languageModel(id)`. `provider_options` go with every call. The package is imported as eddy
 * resolves modules, then from the workspace; a missing one is a usage error saying what to install.
 */
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { JsonObject } from "../protocol/types.js";
import { type AiSdkLanguageModel, createAiSdkProvider } from "../provider/ai-sdk/index.js";
import type { AiSdkProfile } from "../provider/profiles.js";
import { importPackage as loadModule } from "../util/import-package.js";
import { basicAuthorization } from "../util/url-credentials.js";
import type { EffectiveConfig } from "./config.js";
import { configError } from "./config-file.js";
import { policyOptions, secretsOf, type TargetProvider } from "./target-provider.js";

/** An npm package name (`name` or `@scope/name`): never a path. */
const PACKAGE_NAME = /^(?:@[a-z0-9][\w.~-]*\/)?[a-z0-9][\w.~-]*$/;

/** Loads the profile's package and makes the run's provider (see the module comment). */
export async function startAiSdkTarget(config: EffectiveConfig): Promise<TargetProvider> {
  const target = config.target;
  if (target.kind !== "http") throw new TypeError("startAiSdkTarget needs an HTTP target");
  const { profile } = target;
  const where = `profile "${profile.name}" (api ai-sdk)`;
  const aiSdk = profile.aiSdk;
  if (aiSdk === undefined)
    throw configError(`${where} names no AI SDK provider package: add "package": "@ai-sdk/…" to the profile`);
  if (config.transport.value !== "sse")
    throw configError(`${where}: an AI SDK model has no WebSocket mode — drop --transport websocket`);
  if (target.fallbacks.length > 0)
    throw configError(`${where}: fallbacks are not supported with an AI SDK profile — remove "fallbacks"`);
  const module = await importPackage(aiSdk.package, config.workspace.value, where, config.workspaceTrusted);
  const factory = factoryOf(module, aiSdk, where);
  const settings: Record<string, unknown> = { ...aiSdk.settings };
  if (target.baseURL.value !== "") settings.baseURL = target.baseURL.value;
  if (target.apiKey !== undefined) settings.apiKey = target.apiKey.value;
  const headers = { ...profile.headers };
  if (target.credentials !== undefined) headers.authorization = basicAuthorization(target.credentials);
  if (Object.keys(headers).length > 0) settings.headers = headers;
  let instance: unknown;
  try {
    instance = factory(settings);
  } catch (err) {
    throw configError(`${where}: ${aiSdk.package} refused its settings: ${(err as Error).message}`);
  }
  const policy = policyOptions(config);
  const provider = createAiSdkProvider({
    model: languageModels(instance, aiSdk.package, where),
    name: profile.name,
    capabilities: profile.capabilities,
    ...(aiSdk.providerOptions === undefined ? {} : { providerOptions: aiSdk.providerOptions as JsonObject }),
    ...(policy.retry === undefined ? {} : { retry: policy.retry }),
    ...(policy.timeouts === undefined ? {} : { timeouts: policy.timeouts }),
    ...(policy.validate === undefined ? {} : { validate: policy.validate }),
    secrets: secretsOf(config),
  });
  return { provider, close: async () => {} };
}

/**
 * The package's module: resolved as eddy resolves, else from the workspace — only a trusted one:
 * a workspace's `node_modules` is repository content (a clone brings it, a run that may write can
 * write it), and the package is handed the user's key.
 */
async function importPackage(
  name: string,
  workspace: string,
  where: string,
  workspaceTrusted: boolean,
): Promise<Record<string, unknown>> {
  if (!PACKAGE_NAME.test(name))
    throw configError(
      `${where}: "package" must be an npm package name such as @ai-sdk/anthropic (got ${JSON.stringify(name)})`,
    );
  try {
    return (await loadModule(name)) as Record<string, unknown>;
  } catch (err) {
    if (!isMissing(err, name)) throw loadError(name, where, err);
  }
  if (!workspaceTrusted)
    throw configError(
      `${where} needs the package ${name}, which is not installed beside eddy: run npm install ${name} beside eddy; a workspace's own node_modules is loaded only once you trust the workspace (eddy config --trust of its eddy.config.json, or EDDY_TRUST_CONFIG=1)`,
    );
  let resolved: string;
  try {
    resolved = createRequire(join(workspace, "package.json")).resolve(name);
  } catch {
    throw configError(
      `${where} needs the package ${name}, which is not installed: run npm install ${name} (in the workspace, or beside eddy)`,
    );
  }
  try {
    return (await loadModule(pathToFileURL(resolved).href)) as Record<string, unknown>;
  } catch (err) {
    throw loadError(name, where, err);
  }
}

/** True when `err` says `name` itself cannot be found (not a module it imports). */
function isMissing(err: unknown, name: string): boolean {
  const code = (err as { code?: unknown }).code;
  return (
    (code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND") &&
    String((err as Error).message).includes(name)
  );
}

function loadError(name: string, where: string, err: unknown) {
  return configError(`${where}: cannot load ${name}: ${err instanceof Error ? err.message : String(err)}`);
}

/** The factory the profile names, else the package's one `create…` function. */
function factoryOf(
  module: Record<string, unknown>,
  aiSdk: AiSdkProfile,
  where: string,
): (settings: unknown) => unknown {
  const candidates = Object.keys(module).filter(
    (k) => /^create[A-Z]\w*$/.test(k) && typeof module[k] === "function",
  );
  const name = aiSdk.factory ?? (candidates.length === 1 ? candidates[0] : undefined);
  const factory = name === undefined ? undefined : module[name];
  if (typeof factory === "function") return factory as (settings: unknown) => unknown;
  const found = candidates.length === 0 ? "it has none" : `it has ${candidates.join(", ")}`;
  throw configError(
    aiSdk.factory === undefined
      ? `${where}: cannot tell which export of ${aiSdk.package} makes the provider (${found}): name it with "factory"`
      : `${where}: ${aiSdk.package} has no function ${JSON.stringify(aiSdk.factory)} (${found})`,
  );
}

/** The run's models from a provider instance: its `languageModel(id)`, or the instance called with the id. */
function languageModels(
  instance: unknown,
  pkg: string,
  where: string,
): (modelId: string) => AiSdkLanguageModel {
  const provider = instance as { languageModel?: unknown } | ((id: string) => unknown) | null;
  const languageModel =
    provider !== null && typeof provider === "object" ? provider.languageModel : undefined;
  if (typeof languageModel === "function")
    return (id) => (languageModel as (id: string) => AiSdkLanguageModel).call(provider, id);
  if (typeof provider === "function") {
    const direct = provider as ((id: string) => AiSdkLanguageModel) & {
      languageModel?: (id: string) => AiSdkLanguageModel;
    };
    return (id) => (typeof direct.languageModel === "function" ? direct.languageModel(id) : direct(id));
  }
  throw configError(`${where}: the factory of ${pkg} did not return an AI SDK provider (no languageModel)`);
}
