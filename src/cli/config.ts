/**
 * The CLI's effective configuration: flags > environment > config file > defaults, with the
 * source of every value kept for `eddy config`. API keys are never read from or written to config
 * files (a profile names the env var that holds its key) and are shown redacted.
 *
 * Provider selection (DESIGN.md §5, §8.9): `--base-url`, or a profile chosen by `--provider` /
 * `--model profile/model`, or `OPENRESPONSES_BASE_URL`, `OPENAI_BASE_URL`, the config file; with
 * none of those but `OPENAI_API_KEY` set, OpenAI; with nothing, the embedded mock server.
 * `OPENAI_API_KEY` is only ever sent to `OPENAI_BASE_URL` or an api.openai.com URL.
 */
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { EddyError } from "../errors.js";
import { LOOP_DEFAULTS } from "../loop/defaults.js";
import { type ProviderCapabilities, withCapabilities } from "../provider/capabilities.js";
import { PROVIDER_DEFAULTS } from "../provider/defaults.js";
import {
  KNOWN_PROFILES,
  type ProviderProfile,
  profileApiKey,
  profileBaseURL,
  resolveRoute,
} from "../provider/profiles.js";

export type Env = Readonly<Record<string, string | undefined>>;

/** Flags of `eddy run` (and `eddy config`), as commander parsed them. */
export interface RunFlags {
  baseUrl?: string;
  apiKey?: string;
  model?: string;
  provider?: string;
  config?: string;
  instructions?: string;
  /** Tapes of earlier runs to continue from. */
  context?: string[];
  stateless?: boolean;
  maxToolCalls?: number;
  maxTurns?: number;
  maxRetries?: number;
  firstByteTimeout?: number;
  idleTimeout?: number;
  schema?: string;
  validate?: boolean;
  workspace?: string;
  allowWrite?: boolean;
  allowShell?: boolean;
  json?: boolean;
  record?: string;
  debug?: boolean;
}

export type Source = "flag" | "env" | "config" | "profile" | "default";

export interface Setting<T> {
  value: T;
  source: Source;
  /** Env var name, config file path or profile name. */
  from?: string;
}

const profileSchema = z
  .object({
    base_url: z.string().optional(),
    api_key_env: z.union([z.string(), z.array(z.string())]).optional(),
    api_key_header: z.string().optional(),
    default_model: z.string().optional(),
    headers: z.record(z.string(), z.string()).optional(),
    description: z.string().optional(),
    capabilities: z
      .object({
        previousResponseId: z.boolean(),
        encryptedReasoning: z.boolean(),
        nativeToolHistory: z.boolean(),
        strictTools: z.boolean(),
        keepItemIds: z.boolean(),
        maxToolCalls: z.boolean(),
        parallelToolCalls: z.boolean(),
      })
      .partial()
      .optional(),
  })
  .strict();

const configSchema = z
  .object({
    provider: z.string().optional(),
    model: z.string().optional(),
    base_url: z.string().optional(),
    instructions: z.string().optional(),
    stateless: z.boolean().optional(),
    max_tool_calls: z.number().int().min(1).optional(),
    max_turns: z.number().int().min(1).optional(),
    max_retries: z.number().int().min(0).optional(),
    first_byte_timeout_ms: z.number().int().min(1).optional(),
    idle_timeout_ms: z.number().int().min(1).optional(),
    allow_write: z.boolean().optional(),
    allow_shell: z.boolean().optional(),
    validate: z.boolean().optional(),
    fallbacks: z.array(z.string()).optional(),
    profiles: z.record(z.string(), profileSchema).optional(),
  })
  .strict();

export type ConfigFile = z.infer<typeof configSchema>;

/** Where the config file is looked for: `--config`, the workspace, then the user config dir. */
export function configPaths(flags: RunFlags, env: Env, workspace: string): string[] {
  if (flags.config !== undefined) return [flags.config];
  const base =
    env.XDG_CONFIG_HOME !== undefined && env.XDG_CONFIG_HOME !== ""
      ? env.XDG_CONFIG_HOME
      : join(env.HOME ?? homedir(), ".config");
  return [join(workspace, "eddy.config.json"), join(base, "eddy", "config.json")];
}

export function loadConfigFile(
  flags: RunFlags,
  env: Env,
  workspace: string,
): { file: ConfigFile; path: string | undefined } {
  for (const path of configPaths(flags, env, workspace)) {
    if (flags.config === undefined && !existsSync(path)) continue;
    let raw: unknown;
    try {
      raw = JSON.parse(readFileSync(path, "utf8"));
    } catch (err) {
      const reason = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
      throw new EddyError("invalid_config", `cannot read config file ${path}: ${reason}`, { fault: "user" });
    }
    const parsed = configSchema.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue?.path.length ? issue.path.join(".") : "(top level)";
      throw new EddyError("invalid_config", `config file ${path}: ${where}: ${issue?.message ?? "invalid"}`, {
        fault: "user",
      });
    }
    return { file: parsed.data, path };
  }
  return { file: {}, path: undefined };
}

/** The provider profiles: the known ones, overridden or extended by the config file. */
export function profilesFrom(file: ConfigFile): Record<string, ProviderProfile> {
  const profiles: Record<string, ProviderProfile> = { ...KNOWN_PROFILES };
  for (const [name, p] of Object.entries(file.profiles ?? {})) {
    const base = profiles[name];
    const capabilities: ProviderCapabilities = withCapabilities({
      ...(base?.capabilities ?? {}),
      ...(p.capabilities ?? {}),
    });
    const profile: ProviderProfile = {
      name,
      baseURL: p.base_url ?? base?.baseURL ?? "",
      apiKeyEnv:
        p.api_key_env === undefined
          ? (base?.apiKeyEnv ?? [])
          : Array.isArray(p.api_key_env)
            ? p.api_key_env
            : [p.api_key_env],
      capabilities,
      description: p.description ?? base?.description ?? `profile "${name}" from the config file`,
    };
    const header = p.api_key_header ?? base?.apiKeyHeader;
    if (header !== undefined) profile.apiKeyHeader = header;
    const model = p.default_model ?? base?.defaultModel;
    if (model !== undefined) profile.defaultModel = model;
    const headers = p.headers ?? base?.headers;
    if (headers !== undefined) profile.headers = headers;
    if (base?.baseURLEnv !== undefined && p.base_url === undefined) profile.baseURLEnv = base.baseURLEnv;
    if (base?.baseURLSuffix !== undefined && p.base_url === undefined)
      profile.baseURLSuffix = base.baseURLSuffix;
    profiles[name] = profile;
  }
  return profiles;
}

/** Where a run sends its requests. */
export type ProviderTarget =
  | { kind: "mock"; why: string }
  | {
      kind: "http";
      baseURL: Setting<string>;
      apiKey: Setting<string> | undefined;
      profile: ProviderProfile;
      /** Fallback routes, tried in order on a provider error before any output. */
      fallbacks: {
        profile: ProviderProfile;
        model: string | undefined;
        baseURL: string;
        apiKey: string | undefined;
      }[];
    };

export interface EffectiveConfig {
  target: ProviderTarget;
  model: Setting<string | null>;
  instructions: Setting<string | undefined>;
  workspace: Setting<string>;
  configFile: string | undefined;
  stateless: Setting<boolean>;
  maxToolCalls: Setting<number>;
  maxTurns: Setting<number>;
  maxRetries: Setting<number>;
  firstByteTimeoutMs: Setting<number>;
  idleTimeoutMs: Setting<number>;
  allowWrite: Setting<boolean>;
  allowShell: Setting<boolean>;
  validate: Setting<boolean>;
}

const OPENAI_HOST = "api.openai.com";

function pick<T>(...candidates: (Setting<T> | undefined)[]): Setting<T> | undefined {
  return candidates.find((c) => c !== undefined && c.value !== undefined);
}

function flag<T>(value: T | undefined): Setting<T> | undefined {
  return value === undefined ? undefined : { value, source: "flag" };
}

function fromEnv(env: Env, name: string): Setting<string> | undefined {
  const value = env[name];
  return value === undefined || value === "" ? undefined : { value, source: "env", from: name };
}

function fromFile<T>(value: T | undefined, path: string | undefined): Setting<T> | undefined {
  return value === undefined ? undefined : { value, source: "config", from: path ?? "config" };
}

/** Resolves the effective configuration of a run. Throws `invalid_config` (exit 2) for bad input. */
export function resolveConfig(flags: RunFlags, env: Env, cwd: string): EffectiveConfig {
  const workspace: Setting<string> =
    flags.workspace !== undefined
      ? { value: flags.workspace, source: "flag" }
      : { value: cwd, source: "default" };
  const { file, path } = loadConfigFile(flags, env, workspace.value);
  const profiles = profilesFrom(file);

  const modelSetting = pick<string>(
    flag(flags.model),
    fromEnv(env, "EDDY_MODEL"),
    fromFile(file.model, path),
  );
  const providerName = pick<string>(flag(flags.provider), fromFile(file.provider, path));
  const route = resolveRoute({ provider: providerName?.value, model: modelSetting?.value }, profiles);
  // A profile chosen on the command line beats base URLs from the environment; one from the file does not.
  const routeFromFlags =
    route !== undefined &&
    (providerName?.source === "flag" || (providerName === undefined && modelSetting?.source === "flag"));

  let target: ProviderTarget;
  const explicit =
    flag(flags.baseUrl) ??
    (routeFromFlags
      ? undefined
      : (fromEnv(env, "OPENRESPONSES_BASE_URL") ??
        fromEnv(env, "OPENAI_BASE_URL") ??
        fromFile(file.base_url, path)));
  const httpTarget = (profile: ProviderProfile, baseURL: Setting<string>): ProviderTarget => ({
    kind: "http",
    baseURL,
    apiKey: apiKeyFor(flags, env, baseURL, profile),
    profile,
    fallbacks: [],
  });
  if (explicit !== undefined || route !== undefined) {
    const profile = route?.profile ?? profileForUrl(explicit?.value ?? "", profiles);
    target = httpTarget(
      profile,
      explicit ?? { value: profileBaseURL(profile, env), source: "profile", from: profile.name },
    );
  } else if (fromEnv(env, "OPENAI_API_KEY") !== undefined) {
    const profile = profiles.openai ?? KNOWN_PROFILES.openai;
    if (profile === undefined) throw new EddyError("invalid_config", "no openai profile");
    target = httpTarget(profile, { value: profile.baseURL, source: "env", from: "OPENAI_API_KEY" });
  } else {
    target = {
      kind: "mock",
      why: "no --base-url, OPENRESPONSES_BASE_URL, OPENAI_BASE_URL or OPENAI_API_KEY",
    };
  }

  let model: Setting<string | null>;
  if (route !== undefined && route.model !== undefined) {
    model = {
      value: route.model,
      source: modelSetting?.source ?? "profile",
      from: modelSetting?.from ?? route.profile.name,
    };
  } else if (modelSetting !== undefined) model = modelSetting;
  else if (target.kind === "http" && target.profile.defaultModel !== undefined) {
    model = { value: target.profile.defaultModel, source: "profile", from: target.profile.name };
  } else model = { value: target.kind === "mock" ? "eddy-demo" : null, source: "default" };

  if (target.kind === "http") {
    for (const spec of file.fallbacks ?? []) {
      const fallbackRoute = resolveRoute({ model: spec }, profiles);
      if (fallbackRoute === undefined) {
        throw new EddyError(
          "invalid_config",
          `config file ${path}: fallbacks: "${spec}" does not start with a known provider (profile/model)`,
          {
            fault: "user",
          },
        );
      }
      target.fallbacks.push({
        profile: fallbackRoute.profile,
        model: fallbackRoute.model,
        baseURL: profileBaseURL(fallbackRoute.profile, env),
        apiKey: profileApiKey(fallbackRoute.profile, env),
      });
    }
  }

  const num = (f: number | undefined, c: number | undefined, d: number): Setting<number> =>
    pick(flag(f), fromFile(c, path)) ?? { value: d, source: "default" };
  const bool = (f: boolean | undefined, c: boolean | undefined): Setting<boolean> =>
    pick(flag(f === true ? true : undefined), fromFile(c, path)) ?? { value: false, source: "default" };

  return {
    target,
    model,
    instructions: pick(flag(flags.instructions), fromFile(file.instructions, path)) ?? {
      value: undefined,
      source: "default",
    },
    workspace,
    configFile: path,
    stateless: bool(flags.stateless, file.stateless),
    maxToolCalls: num(flags.maxToolCalls, file.max_tool_calls, LOOP_DEFAULTS.maxToolCalls),
    maxTurns: num(flags.maxTurns, file.max_turns, LOOP_DEFAULTS.maxTurns),
    maxRetries: num(flags.maxRetries, file.max_retries, PROVIDER_DEFAULTS.maxRetries),
    firstByteTimeoutMs: num(
      flags.firstByteTimeout,
      file.first_byte_timeout_ms,
      PROVIDER_DEFAULTS.firstByteTimeoutMs,
    ),
    idleTimeoutMs: num(flags.idleTimeout, file.idle_timeout_ms, PROVIDER_DEFAULTS.idleTimeoutMs),
    allowWrite: bool(flags.allowWrite, file.allow_write),
    allowShell: bool(flags.allowShell, file.allow_shell),
    validate:
      flags.validate === false
        ? { value: false, source: "flag" }
        : (fromFile(file.validate, path) ?? { value: true, source: "default" }),
  };
}

/** The profile whose endpoint a base URL points at (for its capabilities), else the generic one. */
function profileForUrl(url: string, profiles: Record<string, ProviderProfile>): ProviderProfile {
  const host = hostOf(url);
  const generic = profiles.generic ?? KNOWN_PROFILES.generic;
  if (generic === undefined) throw new EddyError("invalid_config", "no generic profile");
  if (host === OPENAI_HOST) return profiles.openai ?? generic;
  if (host === "openrouter.ai") return profiles.openrouter ?? generic;
  if (host.endsWith(".openai.azure.com")) return profiles.azure ?? generic;
  return generic;
}

/**
 * The key for a base URL: `--api-key`, `OPENRESPONSES_API_KEY`, the profile's key variable, and
 * `OPENAI_API_KEY` only for `OPENAI_BASE_URL` or api.openai.com (DESIGN.md §8.9).
 */
function apiKeyFor(
  flags: RunFlags,
  env: Env,
  baseURL: Setting<string>,
  profile: ProviderProfile,
): Setting<string> | undefined {
  if (flags.apiKey !== undefined) return { value: flags.apiKey, source: "flag" };
  const generic = fromEnv(env, "OPENRESPONSES_API_KEY");
  if (generic !== undefined) return generic;
  for (const name of profile.apiKeyEnv) {
    if (name === "OPENAI_API_KEY") continue;
    const value = fromEnv(env, name);
    if (value !== undefined) return value;
  }
  const host = hostOf(baseURL.value);
  if (baseURL.from === "OPENAI_BASE_URL" || host === OPENAI_HOST) return fromEnv(env, "OPENAI_API_KEY");
  return undefined;
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return "";
  }
}

/** `sk-abc…wxyz` → `sk-a…wxyz`: enough to recognise a key, never enough to use it. */
export function redactKey(key: string): string {
  if (key.length <= 8) return "***";
  return `${key.slice(0, 4)}…${key.slice(-4)}`;
}
