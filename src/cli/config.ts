/**
 * The CLI's effective configuration: flags > environment > config file > profile > defaults, with
 * the source of every value kept for `eddy config`. API keys are never read from or written to
 * config files (a profile names the env var that holds its key) and are shown redacted.
 *
 * Provider selection: `--base-url`, or a profile chosen by `--provider` / `--model profile/model`,
 * or `OPENRESPONSES_BASE_URL`, `OPENAI_BASE_URL`, the config file; with none of those but
 * `OPENAI_API_KEY` set, OpenAI; with nothing, the embedded mock server. `OPENAI_API_KEY` is only
 * ever sent to `OPENAI_BASE_URL` or an api.openai.com URL.
 *
 * `resolveConfig` is a sequence of small steps, each taking the same `ConfigSources`:
 * `resolveWorkspace` → `loadConfigFile` → `resolveRouting` → `resolveTarget` (with
 * `resolveFallbacks`) → `resolveModel`, `resolveLimits`, `resolveBehaviour`. None of them sends a
 * request or checks that the run can start: that is `preflight.ts`.
 */
import { resolve } from "node:path";
import { EddyError } from "../errors.js";
import { HISTORY_DEFAULTS } from "../history/options.js";
import type { ToolHistoryStrategySetting } from "../history/strategies.js";
import { LOOP_DEFAULTS } from "../loop/defaults.js";
import type { ToolsOnFollowUp } from "../loop/options.js";
import { PROVIDER_DEFAULTS } from "../provider/defaults.js";
import {
  KNOWN_PROFILES,
  type ProviderProfile,
  profileBaseURL,
  profileForHost,
  type Route,
  resolveRoute,
} from "../provider/profiles.js";
import type { ApiName, StreamTransport } from "../provider/wire-api.js";
import { splitUrlCredentials, type UrlCredentials } from "../util/url-credentials.js";
import { type ComposeFlags, type ComposeSettings, resolveComposeSettings } from "./config-compose.js";
import {
  type ConfigFile,
  configError,
  type Env,
  loadConfigFile,
  profilesFrom,
  workspaceConfigPath,
} from "./config-file.js";
import { configPath } from "./config-origin.js";
import { type RequestFlags, type RequestSettings, resolveRequestSettings } from "./config-request.js";
import { type ApproveMode, resolveToolSettings, type ToolSettings } from "./config-tools.js";
import { type DoctorEvidence, doctorEvidence } from "./doctor-cache.js";

export type { Env } from "./config-file.js";

/** `--tools-on-follow-up` as typed on the command line and in the config file. */
export type ToolsOnFollowUpFlag = "first" | "every";

/** Flags of `eddy run` (and `eddy config`), as commander parsed them. */
export interface RunFlags extends RequestFlags, ComposeFlags {
  baseUrl?: string;
  /** `--api`: the API the endpoint speaks. */
  api?: ApiName;
  /** `--transport`: how responses stream back. */
  transport?: StreamTransport;
  apiKey?: string;
  model?: string;
  provider?: string;
  config?: string;
  instructions?: string;
  /** Tapes of earlier runs to continue from. */
  context?: string[];
  /** The thread the run continues (`.eddy/threads/NAME.jsonl`). */
  thread?: string;
  historyStrategy?: ToolHistoryStrategySetting;
  summarizationModel?: string;
  truncationThreshold?: number;
  recentCallsToKeep?: number;
  stateless?: boolean;
  toolsOnFollowUp?: ToolsOnFollowUpFlag;
  maxToolCalls?: number;
  maxTurns?: number;
  maxRetries?: number;
  connectTimeout?: number;
  firstByteTimeout?: number;
  idleTimeout?: number;
  schema?: string;
  validate?: boolean;
  workspace?: string;
  allowWrite?: boolean;
  allowShell?: boolean;
  json?: boolean;
  record?: string;
  /** `--otel`: export OpenTelemetry spans. */
  otel?: boolean;
  debug?: boolean;
  /** `--mcp NAME=COMMAND…` / `NAME=URL`, repeatable. */
  mcp?: string[];
  parallelToolCalls?: boolean;
  toolConcurrency?: number;
  approve?: ApproveMode;
  sandbox?: boolean;
}

/** Where a value came from, in precedence order. */
export type Source = "flag" | "env" | "config" | "profile" | "default";

/** A resolved value and where it came from. */
export interface Setting<T> {
  value: T;
  source: Source;
  /** Env var name, config file path or profile name. */
  from?: string;
}

/** An HTTP endpoint a run sends requests to. */
export interface Endpoint {
  profile: ProviderProfile;
  /** The base URL with any `user:password@` taken out (see `credentials`). */
  baseURL: Setting<string>;
  apiKey: Setting<string> | undefined;
  /** `user:password@` from the base URL, sent as `Authorization: Basic` (url-credentials.ts). */
  credentials: UrlCredentials | undefined;
}

/** A fallback route from the config file's `fallbacks` (`profile/model`). */
export interface FallbackEndpoint extends Endpoint {
  /** The route as written in the config file. */
  spec: string;
  /** The route's model; undefined means the run's model. */
  model: string | undefined;
  /** The config file whose `fallbacks` names the route. */
  from: string;
}

/** Where a run sends its requests. */
export type ProviderTarget =
  | { kind: "mock"; why: string }
  | (Endpoint & {
      kind: "http";
      /** Fallback routes, tried in order on a provider error before any output. */
      fallbacks: FallbackEndpoint[];
      /**
       * What chose the profile: `--provider`, the config file's `provider`, a `profile/model`, the
       * base URL's host, or `OPENAI_API_KEY` (for `eddy config`).
       */
      chosenBy: Omit<Setting<unknown>, "value">;
    });

/** Everything a run is configured with, each value with its source. */
export interface EffectiveConfig extends RequestSettings, ToolSettings, ComposeSettings {
  target: ProviderTarget;
  /** The API the run's own endpoint speaks (fallbacks speak their profile's). */
  api: Setting<ApiName>;
  /** How the run's own endpoint streams responses back (fallbacks use SSE). */
  transport: Setting<StreamTransport>;
  model: Setting<string | null>;
  instructions: Setting<string | undefined>;
  workspace: Setting<string>;
  /** The nearest config file read (the workspace's, else the user's, or `--config`). */
  configFile: string | undefined;
  /** Every config file read, nearest first: the workspace's is layered over the user's. */
  configFiles: string[];
  /**
   * The workspace is trusted: its `eddy.config.json` is the one the user trusted (`eddy config
   * --trust`), or `EDDY_TRUST_CONFIG=1`. Repository content beyond the config (an AI SDK package in
   * its `node_modules`) is loaded only then.
   */
  workspaceTrusted: boolean;
  /**
   * The workspace config file's settings left out because the file is not trusted (config-trust.ts):
   * the keys. @defaultValue none
   */
  configUntrusted?: string[];
  stateless: Setting<boolean>;
  toolsOnFollowUp: Setting<ToolsOnFollowUp>;
  maxToolCalls: Setting<number>;
  maxTurns: Setting<number>;
  maxRetries: Setting<number>;
  connectTimeoutMs: Setting<number>;
  firstByteTimeoutMs: Setting<number>;
  idleTimeoutMs: Setting<number>;
  /** Calls of one response run at once with parallel tool calls. */
  toolConcurrency: Setting<number>;
  allowWrite: Setting<boolean>;
  allowShell: Setting<boolean>;
  validate: Setting<boolean>;
  /** The tool-history settings (`history` in the config file). */
  history: HistorySettings;
  /** eddy doctor's cached findings for the run's endpoint and model (doctor-cache.ts), if any. */
  doctor?: DoctorEvidence | undefined;
}

/** The tool-history settings of a run, each with its source. */
export interface HistorySettings {
  strategy: Setting<ToolHistoryStrategySetting>;
  recentCallsToKeep: Setting<number>;
  truncationThreshold: Setting<number>;
  summarizationModel: Setting<string | undefined>;
}

/** What the resolution steps read: the flags, the environment and the config file. */
export interface ConfigSources {
  flags: RunFlags;
  env: Env;
  file: ConfigFile;
  /** The nearest config file read, when one was found. */
  path: string | undefined;
  /** The file each setting came from (`LoadedConfig.origins`); `path` for all when absent. */
  origins?: ReadonlyMap<string, string>;
  /** The workspace's config file when it is read untrusted (`LoadedConfig.untrustedFile`). @defaultValue none */
  untrustedFile?: string;
}

/** The model and profile a run names, before the target is known. */
export interface Routing {
  /** The model as given (flag, `EDDY_MODEL` or the config file), profile prefix included. */
  model: Setting<string> | undefined;
  /** The profile named by `--provider`, the config file's `provider` or a `profile/model`. */
  route: Route | undefined;
  /** The route came from the command line, so it beats base URLs from the environment. */
  fromFlags: boolean;
  /**
   * The route came from a workspace config file that is not trusted (config-trust.ts): it may pick
   * a profile's own endpoint, but never which key goes to a base URL set elsewhere.
   * @defaultValue false
   */
  untrusted?: boolean;
  /**
   * The setting that picked the route, as a message names it (`--provider`, `EDDY_MODEL`,
   * `config file PATH: provider`): an error about the route says where to fix it.
   */
  where?: string;
  /** The setting that picked the route (`--provider`, the file's `provider`, the model), if any. */
  decided?: Setting<string>;
}

/** The embedded demo model's name, used when a run on the mock names none. */
export const DEMO_MODEL = "eddy-demo";

/** Resolves the effective configuration of a run. Throws `invalid_config` (exit 2) for bad input. */
export function resolveConfig(flags: RunFlags, env: Env, cwd: string): EffectiveConfig {
  const workspace = resolveWorkspace(flags, cwd);
  // A relative --config is the command's (`cwd`), not the process's: they differ in-process (`main(argv, io)`).
  const explicit = flags.config === undefined ? undefined : resolve(cwd, flags.config);
  const loaded = loadConfigFile(explicit, env, workspace.value);
  const { file, path, paths, origins, untrusted } = loaded;
  const sources: ConfigSources = { flags, env, file, path, origins };
  if (loaded.untrustedFile !== undefined) sources.untrustedFile = loaded.untrustedFile;
  const profiles = profilesFrom(file);
  const routing = resolveRouting(sources, profiles);
  const target = resolveTarget(sources, profiles, routing);
  const api = resolveApi(sources, target);
  const model = resolveModel(routing, target);
  return {
    target,
    api,
    transport: resolveTransport(sources, api),
    model,
    workspace,
    configFile: path,
    configFiles: paths,
    workspaceTrusted:
      env.EDDY_TRUST_CONFIG === "1" ||
      (loaded.untrustedFile === undefined && paths.includes(workspaceConfigPath(workspace.value))),
    ...(untrusted === undefined ? {} : { configUntrusted: untrusted }),
    ...resolveLimits(sources, target.kind === "http" ? target.profile : undefined),
    ...resolveBehaviour(sources),
    history: resolveHistory(sources),
    ...resolveRequestSettings(sources, target.kind === "http" ? target.profile : undefined),
    ...resolveToolSettings(sources),
    ...resolveComposeSettings(flags, sources),
    // eddy doctor: the cached evidence for this endpoint (applied in target-provider.ts).
    doctor: doctorEvidence(env, target, api.value, model.value),
  };
}

/** The tool-history settings: flag > the config file's `history` > `HISTORY_DEFAULTS`. */
export function resolveHistory(s: ConfigSources): HistorySettings {
  const { flags } = s;
  const file = s.file.history ?? {};
  const setting = <T>(
    key: string,
    fromFlag: T | undefined,
    fromConfig: T | undefined,
    fallback: T,
  ): Setting<T> =>
    pick(flag(fromFlag), fromFile(fromConfig, configPath(s, `history.${key}`))) ?? {
      value: fallback,
      source: "default",
    };
  return {
    strategy: setting("strategy", flags.historyStrategy, file.strategy, HISTORY_DEFAULTS.strategy),
    recentCallsToKeep: setting(
      "recent_calls_to_keep",
      flags.recentCallsToKeep,
      file.recent_calls_to_keep,
      HISTORY_DEFAULTS.recentCallsToKeep,
    ),
    truncationThreshold: setting(
      "truncation_threshold",
      flags.truncationThreshold,
      file.truncation_threshold,
      HISTORY_DEFAULTS.truncationThreshold,
    ),
    summarizationModel: setting<string | undefined>(
      "summarization_model",
      flags.summarizationModel,
      file.summarization_model,
      HISTORY_DEFAULTS.summarizationModel,
    ),
  };
}

/** `--api`, the file's `api`, the target profile's, else Open Responses. */
export function resolveApi(s: ConfigSources, target: ProviderTarget): Setting<ApiName> {
  const profile = target.kind === "http" ? target.profile : undefined;
  return (
    pick(flag(s.flags.api), fromFile(s.file.api, configPath(s, "api"))) ??
    (profile?.api === undefined
      ? { value: "responses", source: "default" }
      : { value: profile.api, source: "profile", from: profile.name })
  );
}

/**
 * `--transport`, the file's `transport`, else SSE. WebSocket mode is an Open Responses feature:
 * with Chat Completions it is a configuration error.
 */
export function resolveTransport(s: ConfigSources, api: Setting<ApiName>): Setting<StreamTransport> {
  const transport = pick(flag(s.flags.transport), fromFile(s.file.transport, configPath(s, "transport"))) ?? {
    value: "sse",
    source: "default",
  };
  if (transport.value === "websocket" && api.value === "chat-completions") {
    throw configError(
      `transport websocket (${describeSource(transport)}) needs the responses API, but the run uses chat-completions (${describeSource(api)}): Chat Completions has no WebSocket mode — use --transport sse or --api responses`,
    );
  }
  return transport;
}

function describeSource(setting: Setting<unknown>): string {
  return setting.from === undefined ? setting.source : `${setting.source} ${setting.from}`;
}

/**
 * `--workspace` (a relative one from `cwd`, the command's directory — not the process's, which
 * `main(argv, io)` in-process need not share), else `cwd`.
 */
export function resolveWorkspace(flags: RunFlags, cwd: string): Setting<string> {
  return flags.workspace !== undefined
    ? { value: resolve(cwd, flags.workspace), source: "flag" }
    : { value: cwd, source: "default" };
}

/** The model and the profile the run names: `--provider`, the file's `provider`, or `profile/model`. */
export function resolveRouting(s: ConfigSources, profiles: Record<string, ProviderProfile>): Routing {
  const model = pick(
    flag(s.flags.model),
    fromEnv(s.env, "EDDY_MODEL"),
    fromFile(s.file.model, configPath(s, "model")),
  );
  const provider = pick(flag(s.flags.provider), fromFile(s.file.provider, configPath(s, "provider")));
  const decided = provider ?? model;
  const where = decided === undefined ? undefined : settingWhere(decided, provider ? "provider" : "model");
  const route = namingWhere(where, () =>
    resolveRoute({ provider: provider?.value, model: model?.value }, profiles),
  );
  const fromFlags =
    route !== undefined &&
    (provider?.source === "flag" || (provider === undefined && model?.source === "flag"));
  const untrusted = route !== undefined && s.untrustedFile !== undefined && decided?.from === s.untrustedFile;
  return {
    model,
    route,
    fromFlags,
    ...(untrusted ? { untrusted } : {}),
    ...(where ? { where } : {}),
    ...(route !== undefined && decided !== undefined ? { decided } : {}),
  };
}

/** A setting as a message names it: the flag (`--provider`), the variable, or the file and key. */
function settingWhere(setting: Setting<unknown>, key: "provider" | "model"): string {
  if (setting.source === "flag") return `--${key}`;
  if (setting.source === "config") return `config file ${setting.from ?? "config"}: ${key}`;
  return setting.from ?? key;
}

/** `run()`, with a configuration error it throws prefixed by where the bad value was set. */
function namingWhere<T>(where: string | undefined, run: () => T): T {
  try {
    return run();
  } catch (err) {
    if (where === undefined || !EddyError.isInstance(err) || err.code !== "invalid_config") throw err;
    throw new EddyError(err.code, `${where}: ${err.message}`, {
      fault: err.fault,
      details: err.details,
      cause: err,
    });
  }
}

/**
 * Where requests go: an explicit base URL (flag; env and config file unless the command line
 * named a profile) with the profile its host belongs to, else the named profile's URL, else
 * OpenAI when only `OPENAI_API_KEY` is set, else the embedded mock.
 */
export function resolveTarget(
  s: ConfigSources,
  profiles: Record<string, ProviderProfile>,
  routing: Routing,
): ProviderTarget {
  const explicit =
    flag(s.flags.baseUrl) ??
    (routing.fromFlags
      ? undefined
      : (fromEnv(s.env, "OPENRESPONSES_BASE_URL") ??
        fromEnv(s.env, "OPENAI_BASE_URL") ??
        fromFile(s.file.base_url, configPath(s, "base_url"))));
  let endpoint: Endpoint;
  let chosenBy: Setting<unknown>;
  if (explicit !== undefined || routing.route !== undefined) {
    // An untrusted workspace's route does not choose the key for a base URL set elsewhere (the
    // user's config, the environment): the URL's own host does, as with no route.
    const routed = explicit !== undefined && routing.untrusted === true ? undefined : routing.route;
    const profile = routed?.profile ?? profileForHost(hostOf(explicit?.value ?? ""), profiles);
    const baseURL = explicit ?? {
      value: namingWhere(routing.where, () => profileBaseURL(profile, s.env)),
      source: "profile",
      from: profile.name,
    };
    endpoint = primaryEndpoint(s, profile, baseURL);
    chosenBy = (routed === undefined ? explicit : routing.decided) ?? baseURL;
  } else if (fromEnv(s.env, "OPENAI_API_KEY") !== undefined) {
    const profile = profiles.openai ?? (KNOWN_PROFILES.openai as ProviderProfile);
    chosenBy = { value: profile.baseURL, source: "env", from: "OPENAI_API_KEY" };
    endpoint = primaryEndpoint(s, profile, chosenBy as Setting<string>);
  } else {
    return { kind: "mock", why: "no --base-url, OPENRESPONSES_BASE_URL, OPENAI_BASE_URL or OPENAI_API_KEY" };
  }
  const { value: _, ...by } = chosenBy;
  return { kind: "http", ...endpoint, fallbacks: resolveFallbacks(s, profiles), chosenBy: by };
}

/** The config file's `fallbacks`, each `profile/model` resolved to an endpoint. */
export function resolveFallbacks(
  s: ConfigSources,
  profiles: Record<string, ProviderProfile>,
): FallbackEndpoint[] {
  return (s.file.fallbacks ?? []).map((spec) => {
    const route = resolveRoute({ model: spec }, profiles);
    if (route === undefined) {
      throw configError(
        `config file ${configPath(s, "fallbacks")}: fallbacks: "${spec}" does not start with a known provider (profile/model)`,
      );
    }
    const { profile } = route;
    const { baseURL, credentials } = withoutCredentials({
      value: namingWhere(`config file ${configPath(s, "fallbacks")}: fallbacks`, () =>
        profileBaseURL(profile, s.env),
      ),
      source: "profile",
      from: profile.name,
    });
    return {
      spec,
      from: configPath(s, "fallbacks") ?? "config",
      model: route.model,
      profile,
      baseURL,
      apiKey: profileKey(s.env, baseURL, profile),
      credentials,
    };
  });
}

/**
 * The model: a `profile/model` route's model, else the model as given, else the profile's
 * `defaultModel`, else the demo model on the mock; null (let the server choose) otherwise —
 * `preflight.ts` refuses that unless the profile says its server has a default.
 */
export function resolveModel(routing: Routing, target: ProviderTarget): Setting<string | null> {
  const { route, model } = routing;
  if (route?.model !== undefined) {
    return {
      value: route.model,
      source: model?.source ?? "profile",
      from: model?.from ?? route.profile.name,
    };
  }
  if (model !== undefined) return model;
  if (target.kind === "mock") return { value: DEMO_MODEL, source: "default" };
  if (target.profile.defaultModel !== undefined) {
    return { value: target.profile.defaultModel, source: "profile", from: target.profile.name };
  }
  return { value: null, source: "default" };
}

type Limits = Pick<
  EffectiveConfig,
  | "maxToolCalls"
  | "maxTurns"
  | "maxRetries"
  | "connectTimeoutMs"
  | "firstByteTimeoutMs"
  | "idleTimeoutMs"
  | "toolConcurrency"
>;

type NumberKey<T> = { [K in keyof T]-?: NonNullable<T[K]> extends number ? K : never }[keyof T];

/** Where each limit comes from: its flag, its config-file key, the profile's value, the default. */
const LIMIT_SOURCES: Record<
  keyof Limits,
  {
    flag: NumberKey<RunFlags>;
    file: NumberKey<ConfigFile>;
    profile?: (p: ProviderProfile) => number | undefined;
    fallback: number;
  }
> = {
  maxToolCalls: { flag: "maxToolCalls", file: "max_tool_calls", fallback: LOOP_DEFAULTS.maxToolCalls },
  maxTurns: { flag: "maxTurns", file: "max_turns", fallback: LOOP_DEFAULTS.maxTurns },
  maxRetries: {
    flag: "maxRetries",
    file: "max_retries",
    profile: (p) => p.retry?.maxRetries,
    fallback: PROVIDER_DEFAULTS.maxRetries,
  },
  connectTimeoutMs: {
    flag: "connectTimeout",
    file: "connect_timeout_ms",
    profile: (p) => p.timeouts?.connectMs,
    fallback: PROVIDER_DEFAULTS.connectTimeoutMs,
  },
  firstByteTimeoutMs: {
    flag: "firstByteTimeout",
    file: "first_byte_timeout_ms",
    profile: (p) => p.timeouts?.firstByteMs,
    fallback: PROVIDER_DEFAULTS.firstByteTimeoutMs,
  },
  idleTimeoutMs: {
    flag: "idleTimeout",
    file: "idle_timeout_ms",
    profile: (p) => p.timeouts?.idleMs,
    fallback: PROVIDER_DEFAULTS.idleTimeoutMs,
  },
  toolConcurrency: {
    flag: "toolConcurrency",
    file: "tool_concurrency",
    fallback: LOOP_DEFAULTS.toolConcurrency,
  },
};

/** Budgets, retries and timeouts: flag > config file > profile > `LOOP_DEFAULTS`/`PROVIDER_DEFAULTS`. */
export function resolveLimits(s: ConfigSources, profile: ProviderProfile | undefined): Limits {
  const resolved = Object.entries(LIMIT_SOURCES).map(([key, from]) => {
    const fromThisProfile = profile === undefined ? undefined : fromProfile(from.profile?.(profile), profile);
    const setting: Setting<number> = pick(
      flag(s.flags[from.flag]),
      fromFile(s.file[from.file], configPath(s, from.file)),
      fromThisProfile,
    ) ?? {
      value: from.fallback,
      source: "default",
    };
    return [key, setting];
  });
  return Object.fromEntries(resolved) as Limits;
}

type Behaviour = Pick<
  EffectiveConfig,
  "instructions" | "stateless" | "toolsOnFollowUp" | "allowWrite" | "allowShell" | "validate"
>;

const TOOLS_ON_FOLLOW_UP: Record<ToolsOnFollowUpFlag, ToolsOnFollowUp> = {
  first: "first_request",
  every: "every_request",
};

/** Instructions, mode, tool permissions and validation: flag > config file > default. */
export function resolveBehaviour(s: ConfigSources): Behaviour {
  const { flags, file } = s;
  const at = (key: string) => configPath(s, key);
  // Boolean flags can only switch something on (`--no-validate` only off): absent means "not given".
  const onSwitch = (
    f: boolean | undefined,
    key: "stateless" | "allow_write" | "allow_shell",
  ): Setting<boolean> =>
    pick(flag(f === true ? true : undefined), fromFile(file[key], at(key))) ?? {
      value: false,
      source: "default",
    };
  const follow = pick(
    flag(flags.toolsOnFollowUp),
    fromFile(file.tools_on_follow_up, at("tools_on_follow_up")),
  );
  return {
    instructions: pick(flag(flags.instructions), fromFile(file.instructions, at("instructions"))) ?? {
      value: undefined,
      source: "default",
    },
    stateless: onSwitch(flags.stateless, "stateless"),
    toolsOnFollowUp:
      follow === undefined
        ? { value: LOOP_DEFAULTS.toolsOnFollowUp, source: "default" }
        : { ...follow, value: TOOLS_ON_FOLLOW_UP[follow.value] },
    allowWrite: onSwitch(flags.allowWrite, "allow_write"),
    allowShell: onSwitch(flags.allowShell, "allow_shell"),
    validate: pick(
      flag(flags.validate === false ? false : undefined),
      fromFile(file.validate, at("validate")),
    ) ?? {
      value: PROVIDER_DEFAULTS.validate,
      source: "default",
    },
  };
}

/** The run's own endpoint: the base URL without credentials, and its key (see `primaryKey`). */
function primaryEndpoint(s: ConfigSources, profile: ProviderProfile, raw: Setting<string>): Endpoint {
  const { baseURL, credentials } = withoutCredentials(raw);
  const apiKey =
    flag(s.flags.apiKey) ?? fromEnv(s.env, "OPENRESPONSES_API_KEY") ?? profileKey(s.env, baseURL, profile);
  return { profile, baseURL, apiKey, credentials };
}

/** A base URL setting with its `user:password@` taken out, and the credentials. */
function withoutCredentials(raw: Setting<string>): Pick<Endpoint, "baseURL" | "credentials"> {
  const { url, credentials } = splitUrlCredentials(raw.value);
  return { baseURL: { ...raw, value: url }, credentials };
}

/**
 * The key from the profile's variables, first set wins; `OPENAI_API_KEY` only for
 * `OPENAI_BASE_URL` or an api.openai.com base URL, whichever profile names it.
 */
function profileKey(
  env: Env,
  baseURL: Setting<string>,
  profile: ProviderProfile,
): Setting<string> | undefined {
  const names = [...profile.apiKeyEnv.filter((n) => n !== "OPENAI_API_KEY"), "OPENAI_API_KEY"];
  for (const name of names) {
    if (name === "OPENAI_API_KEY" && !openAIKeyAllowed(baseURL)) continue;
    const value = fromEnv(env, name);
    if (value !== undefined) return value;
  }
  return undefined;
}

/** Whether `OPENAI_API_KEY` may be sent to this base URL. */
export function openAIKeyAllowed(baseURL: Setting<string>): boolean {
  return baseURL.from === "OPENAI_BASE_URL" || hostOf(baseURL.value) === "api.openai.com";
}

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

function fromProfile<T>(value: T | undefined, profile: ProviderProfile | undefined): Setting<T> | undefined {
  return value === undefined || profile === undefined
    ? undefined
    : { value, source: "profile", from: profile.name };
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
