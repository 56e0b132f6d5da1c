/**
 * The config files (`~/.config/eddy/config.json` with the workspace's `eddy.config.json` layered
 * over it, or `--config FILE` alone): their schema, loading, and the provider profiles they add or
 * override. Keys never live in a file: a profile names the environment variable that holds its key.
 */
import { lstatSync, readlinkSync, statSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { EddyError } from "../errors.js";
import { historyConfigSchema } from "../history/options.js";
import { APPROVE_MODES } from "../loop/policy.js";
import { API_NAMES, STREAM_TRANSPORTS } from "../provider/api-names.js";
import { CAPABILITY_KEYS, type CapabilityKey, withCapabilities } from "../provider/capabilities.js";
import type { ChatDialect } from "../provider/chat-completions/dialect.js";
import { MAX_TIMEOUT_MS } from "../provider/defaults.js";
import { type AiSdkProfile, KNOWN_PROFILES, type ProviderProfile } from "../provider/profiles.js";
import { JSON_MAX_DEPTH, jsonErrorReason, nestsDeeperThan, withoutBom } from "../util/json.js";
import { once } from "../util/lazy-object.js";
import { readRegularTextSync } from "../util/regular-file.js";
import { composeConfigKeys } from "./config-compose.js";
import { extraConfigKeys, requestKeys } from "./config-request.js";
import { isTrusted, trustFilePath, userConfigDir, withoutUntrusted } from "./config-trust.js";

/** Environment variables as the CLI sees them (`process.env`, or a test's record). */
export type Env = Readonly<Record<string, string | undefined>>;

/** One optional boolean per capability: adding a capability to capabilities.ts adds it here. */
function capabilitiesSchema() {
  return z
    .object(
      Object.fromEntries(CAPABILITY_KEYS.map((key) => [key, z.boolean().optional()])) as Record<
        CapabilityKey,
        z.ZodOptional<z.ZodBoolean>
      >,
    )
    .strict();
}

/** A profile in the config file's `profiles`. */
function profileSchema() {
  return z
    .object({
      base_url: z.string().optional(),
      api_key_env: z.union([z.string(), z.array(z.string())]).optional(),
      api_key_header: z.string().optional(),
      key_policy: z.enum(["required", "optional"]).optional(),
      model_policy: z.enum(["required", "server_default"]).optional(),
      default_model: z.string().optional(),
      headers: z.record(z.string(), z.string()).optional(),
      description: z.string().optional(),
      capabilities: capabilitiesSchema().optional(),
      api: z.enum(API_NAMES).optional(),
      chat: z
        .object({
          instructions_role: z.enum(["system", "developer"]).optional(),
          max_tokens_field: z.enum(["max_tokens", "max_completion_tokens"]).optional(),
          stream_usage: z.boolean().optional(),
        })
        .strict()
        .optional(),
      request: z.object(requestKeys()).strict().optional(),
      // api "ai-sdk": the AI SDK provider package that makes the requests (src/cli/ai-sdk-target.ts).
      package: z.string().optional(),
      factory: z.string().optional(),
      settings: z.record(z.string(), z.unknown()).optional(),
      provider_options: z.record(z.string(), z.record(z.string(), z.unknown())).optional(),
    })
    .strict()
    .superRefine(checkAiSdkKeys);
}

/** A provider timeout in milliseconds (`connect_timeout_ms`, …). */
function timeoutMs() {
  return z
    .number()
    .int()
    .min(1)
    .max(MAX_TIMEOUT_MS, `must be at most ${MAX_TIMEOUT_MS} ms (~24.8 days: a Node timer's limit)`);
}

/** The config file's schema, as `configSchema` builds it. */
function buildConfigSchema() {
  return z
    .object({
      provider: z.string().optional(),
      api: z.enum(API_NAMES).optional(),
      transport: z.enum(STREAM_TRANSPORTS).optional(),
      model: z.string().optional(),
      base_url: z.string().optional(),
      instructions: z.string().optional(),
      stateless: z.boolean().optional(),
      tools_on_follow_up: z.enum(["first", "every"]).optional(),
      max_tool_calls: z.number().int().min(1).optional(),
      max_turns: z.number().int().min(1).optional(),
      max_retries: z.number().int().min(0).optional(),
      connect_timeout_ms: timeoutMs().optional(),
      first_byte_timeout_ms: timeoutMs().optional(),
      idle_timeout_ms: timeoutMs().optional(),
      allow_write: z.boolean().optional(),
      allow_shell: z.boolean().optional(),
      validate: z.boolean().optional(),
      fallbacks: z.array(z.string()).optional(),
      history: historyConfigSchema().optional(),
      profiles: z.record(z.string(), profileSchema()).optional(),
      ...extraConfigKeys(),
      ...composeConfigKeys(),
      // Tools beyond the built-ins and how they run (config-tools.ts). mcp_servers is checked there,
      // with messages naming the server and field (src/tools/mcp/config.ts).
      mcp_servers: z.record(z.string(), z.unknown()).optional(),
      parallel_tool_calls: z.boolean().optional(),
      tool_concurrency: z.number().int().min(1).optional(),
      approve: z.enum(APPROVE_MODES).optional(),
      sandbox: z.boolean().optional(),
    })
    .strict();
}

/**
 * The config file's schema, built on the first file read: a run with no config file (the demo,
 * most CI runs) never builds it (bench/README.md, "Start-up").
 */
const configSchema = once(buildConfigSchema);

/** `package` and the keys beside it belong to `api: "ai-sdk"` profiles, which need a package. */
function checkAiSdkKeys(
  p: { api?: string | undefined; package?: string | undefined },
  ctx: z.RefinementCtx,
): void {
  const keys = ["package", "factory", "settings", "provider_options"].filter(
    (k) => (p as Record<string, unknown>)[k] !== undefined,
  );
  if (p.api === "ai-sdk" && p.package === undefined) {
    ctx.addIssue({
      code: "custom",
      path: ["package"],
      message: 'an "ai-sdk" profile names its AI SDK provider package, e.g. "package": "@ai-sdk/anthropic"',
    });
  } else if (p.api !== "ai-sdk" && keys.length > 0) {
    ctx.addIssue({
      code: "custom",
      path: [keys[0] as string],
      message: `${keys.join(", ")} ${keys.length === 1 ? "belongs" : "belong"} to an AI SDK profile: add "api": "ai-sdk"`,
    });
  }
}

/** The config file's content, validated. */
export type ConfigFile = z.infer<ReturnType<typeof buildConfigSchema>>;

/** The chat dialect as the config file writes it (snake_case). */
function chatDialect(chat: NonNullable<ConfigProfile["chat"]>): Partial<ChatDialect> {
  const out: Partial<ChatDialect> = {};
  if (chat.instructions_role !== undefined) out.instructionsRole = chat.instructions_role;
  if (chat.max_tokens_field !== undefined) out.maxTokensField = chat.max_tokens_field;
  if (chat.stream_usage !== undefined) out.streamUsage = chat.stream_usage;
  return out;
}

/** The AI SDK package settings of a profile, as `ProviderProfile.aiSdk` takes them. */
function aiSdkProfile(p: ConfigProfile): AiSdkProfile | undefined {
  if (p.package === undefined) return undefined;
  const out: AiSdkProfile = { package: p.package };
  if (p.factory !== undefined) out.factory = p.factory;
  if (p.settings !== undefined) out.settings = p.settings;
  if (p.provider_options !== undefined) out.providerOptions = p.provider_options;
  return out;
}

/** A profile as written in the config file. */
export type ConfigProfile = z.infer<ReturnType<typeof profileSchema>>;

/**
 * The config files a run reads, farthest first: `--config` alone, or the user's own
 * (`~/.config/eddy/config.json`) and then the workspace's `eddy.config.json`, which is layered over
 * it (`loadConfigFile`).
 */
export function configPaths(explicit: string | undefined, env: Env, workspace: string): string[] {
  if (explicit !== undefined) return [explicit];
  return [join(userConfigDir(env), "config.json"), workspaceConfigPath(workspace)];
}

/** The workspace's config file. */
export function workspaceConfigPath(workspace: string): string {
  return join(workspace, "eddy.config.json");
}

/** The config as loaded: its settings, where each came from, and the settings left out until trusted. */
export interface LoadedConfig {
  file: ConfigFile;
  /** The nearest file read (the workspace's, else the user's, or `--config`); undefined when none. */
  path: string | undefined;
  /** Every file read, nearest first. */
  paths: string[];
  /**
   * The file each setting came from: a top-level key (`model`), and each entry of an object
   * (`profiles.local`, `history.strategy`, `mcp_servers.github`).
   */
  origins: ReadonlyMap<string, string>;
  /** A workspace file's settings that need trust (config-trust.ts), left out: the keys, in file order. */
  untrusted?: string[];
  /** The workspace's file, when it is read untrusted (whether or not it set a key that needs trust). */
  untrustedFile?: string;
}

/**
 * Reads the config: `--config FILE` alone (it must exist), else the user's file and the workspace's
 * layered over it — a key the workspace's file sets wins, and an object (`profiles`, `mcp_servers`,
 * `agents`, `history`, `hooks`, …) is merged one level deep, so a workspace that names one profile
 * or sets one history field keeps the user's others (an entry of the same name is replaced whole).
 * Throws `invalid_config` (exit 2) naming the file and the offending key when one cannot be read
 * or does not validate. A workspace's file not trusted (`eddy config --trust`) loses its
 * `TRUST_KEYS` (config-trust.ts) before the layering: the user's own values for them stay.
 */
export function loadConfigFile(explicit: string | undefined, env: Env, workspace: string): LoadedConfig {
  if (explicit !== undefined) return layered([[explicit, parseConfigFile(explicit).file]], undefined);
  const layers: [string, ConfigFile][] = [];
  let untrusted: string[] | undefined;
  let untrustedFile: string | undefined;
  for (const path of configPaths(undefined, env, workspace)) {
    if (!configFileExists(path)) continue;
    const { file, text } = parseConfigFile(path);
    if (path !== workspaceConfigPath(workspace) || env.EDDY_TRUST_CONFIG === "1") {
      layers.push([path, file]);
      continue;
    }
    if (isTrusted(trustFilePath(env), path, text)) layers.push([path, file]);
    else {
      const { kept, left } = withoutUntrusted(file);
      layers.push([path, kept]);
      untrustedFile = path;
      if (left.length > 0) untrusted = left;
    }
  }
  const loaded = layered(layers, untrusted);
  if (untrustedFile !== undefined) loaded.untrustedFile = untrustedFile;
  return loaded;
}

/**
 * Whether there is a config file at `path`. Nothing there is no file; a symlink that leads nowhere
 * (dangling, or a loop) is a file the user meant to be read, so it is refused naming the file
 * rather than skipped as if absent.
 */
function configFileExists(path: string): boolean {
  try {
    lstatSync(path);
  } catch (err) {
    // Not there, or its folder cannot be searched: no file to read (an unreadable workspace is
    // preflight.ts's to name, in words).
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR" || code === "EACCES") return false;
    throw configError(`cannot read config file ${path}: ${code ?? String(err)}`);
  }
  try {
    statSync(path);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const problem =
      code === "ELOOP"
        ? "is a symlink loop"
        : code === "ENOENT"
          ? `is a symlink to ${JSON.stringify(readlinkSync(path))}, which does not exist`
          : `cannot be followed (${code ?? String(err)})`;
    throw configError(`config file ${path} ${problem}: fix or remove the link`);
  }
}

/** The files' settings layered, farthest first (see `loadConfigFile`), with where each came from. */
function layered(layers: readonly [string, ConfigFile][], untrusted: string[] | undefined): LoadedConfig {
  const file: Record<string, unknown> = {};
  const origins = new Map<string, string>();
  for (const [path, layer] of layers) {
    for (const [key, value] of Object.entries(layer)) {
      if (value === undefined) continue;
      const below = file[key];
      // A spread defines own properties: an entry named `__proto__` stays an entry.
      file[key] = isPlainObject(below) && isPlainObject(value) ? { ...below, ...value } : value;
      origins.set(key, path);
      if (isPlainObject(value)) for (const name of Object.keys(value)) origins.set(`${key}.${name}`, path);
    }
  }
  const loaded: LoadedConfig = {
    file: file as ConfigFile,
    path: layers.at(-1)?.[0],
    paths: layers.map(([path]) => path).reverse(),
    origins,
  };
  if (untrusted !== undefined) loaded.untrusted = untrusted;
  return loaded;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** A config file's settings and its text (what its trust is kept by), for `eddy config --trust`. */
export function readConfigFile(path: string): { file: ConfigFile; text: string } {
  return parseConfigFile(path);
}

/** The largest config file read (only a regular file is read: src/util/regular-file.ts). */
export const CONFIG_MAX_BYTES = 1024 * 1024;

function parseConfigFile(path: string): { file: ConfigFile; text: string } {
  const text = readRegularTextSync(path, {
    what: "config file",
    maxBytes: CONFIG_MAX_BYTES,
    code: "invalid_config",
  });
  let raw: unknown;
  try {
    raw = JSON.parse(withoutBom(text));
  } catch (err) {
    throw configError(`config file ${path} is not valid JSON: ${jsonErrorReason(err)}`);
  }
  if (nestsDeeperThan(raw))
    throw configError(`config file ${path} nests deeper than ${JSON_MAX_DEPTH} levels`);
  const proto = protoKeyPath(raw);
  if (proto !== undefined)
    throw configError(
      `config file ${path}: ${proto.map(keyText).join(".")}: "__proto__" cannot be a name in a config file (JavaScript reserves it); rename it`,
    );
  const parsed = configSchema().safeParse(raw);
  if (parsed.success) return { file: parsed.data, text };
  const issue = parsed.error.issues[0];
  const where = issue?.path.length ? issue.path.map(keyText).join(".") : "(top level)";
  // A record's bad key (an agent's name) says its own rule, not zod's "Invalid key in record".
  const message =
    issue?.code === "invalid_key" ? (issue.issues[0]?.message ?? issue.message) : issue?.message;
  // A key of the file may hold anything, a newline included: the message stays one line.
  throw configError(`config file ${path}: ${where}: ${oneLine(message ?? "invalid")}`);
}

/**
 * Where `value` (parsed JSON, shallower than JSON_MAX_DEPTH) has a `__proto__` key, if anywhere:
 * the schema's records (`mcp_servers`, `profiles`, `headers`…) would drop it without a word.
 */
function protoKeyPath(value: unknown, path: readonly string[] = []): string[] | undefined {
  if (value === null || typeof value !== "object") return undefined;
  for (const [key, inner] of Object.entries(value)) {
    if (key === "__proto__") return [...path, key];
    const found = protoKeyPath(inner, [...path, key]);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** A key as a message shows it: plain names as they are, anything else as a JSON string. */
function keyText(key: PropertyKey): string {
  const text = String(key);
  return /^[A-Za-z0-9_-]+$/.test(text) ? text : JSON.stringify(text);
}

/** `text` with control characters escaped as JSON would (`\n`, `\u001b`). */
function oneLine(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is escaped
  return text.replace(/[\u0000-\u001f\u007f]/g, (c) => JSON.stringify(c).slice(1, -1));
}

/** A user error in the configuration: one line, exit 2. */
export function configError(message: string): EddyError {
  return new EddyError("invalid_config", message, { fault: "user" });
}

/** The provider profiles: the known ones, overridden or extended by the config file. */
export function profilesFrom(file: ConfigFile): Record<string, ProviderProfile> {
  const profiles: Record<string, ProviderProfile> = { ...KNOWN_PROFILES };
  for (const [name, written] of Object.entries(file.profiles ?? {})) {
    const known = Object.hasOwn(profiles, name) ? profiles[name] : undefined;
    Object.defineProperty(profiles, name, {
      value: profileFromFile(name, written, known),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return profiles;
}

/**
 * A config-file profile on top of the known profile of the same name, if any. Naming a key
 * variable (`api_key_env`) makes the key required unless `key_policy` says "optional".
 */
function profileFromFile(name: string, p: ConfigProfile, base: ProviderProfile | undefined): ProviderProfile {
  const capabilities = Object.fromEntries(
    Object.entries(p.capabilities ?? {}).filter(([, v]) => v !== undefined),
  ) as Partial<Record<CapabilityKey, boolean>>;
  const keepBaseURLEnv = p.base_url === undefined;
  return {
    name,
    baseURL: p.base_url ?? base?.baseURL ?? "",
    baseURLEnv: keepBaseURLEnv ? base?.baseURLEnv : undefined,
    baseURLSuffix: keepBaseURLEnv ? base?.baseURLSuffix : undefined,
    apiKeyEnv: p.api_key_env === undefined ? (base?.apiKeyEnv ?? []) : [p.api_key_env].flat(),
    apiKeyHeader: p.api_key_header ?? base?.apiKeyHeader,
    keyPolicy: p.key_policy ?? (p.api_key_env === undefined ? base?.keyPolicy : "required"),
    modelPolicy: p.model_policy ?? base?.modelPolicy,
    defaultModel: p.default_model ?? base?.defaultModel,
    headers: p.headers ?? base?.headers,
    timeouts: base?.timeouts,
    retry: base?.retry,
    capabilities: withCapabilities({ ...base?.capabilities, ...capabilities }),
    api: p.api ?? base?.api,
    chat: p.chat === undefined ? base?.chat : { ...base?.chat, ...chatDialect(p.chat) },
    requestDefaults: p.request ?? base?.requestDefaults,
    aiSdk: aiSdkProfile(p) ?? base?.aiSdk,
    description: p.description ?? base?.description ?? `profile "${name}" from the config file`,
  };
}
