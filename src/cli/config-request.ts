/**
 * The settings of issue 17 in the CLI configuration: request options (`--reasoning-effort`, …,
 * config keys `reasoning_effort`, …, and a profile's `request` defaults), native tools
 * (`--native-tools`, `native_tools`), hosted tools (`--tool`, `tools`) and `--continue-incomplete`
 * (`continue_incomplete`). Precedence as everywhere: flag > config file > profile > default; each
 * request option is checked against the spec (loop/request-options.ts), naming the flag or key.
 */
import { z } from "zod";
import { hostedTool } from "../loop/hosted-tools.js";
import { REQUEST_OPTION_NAMES, type RequestOptions, requestFields } from "../loop/request-options.js";
import type { HostedTool } from "../loop/tool-declarations.js";
import type { CreateResponseBody } from "../protocol/types.js";
import type { ProviderProfile } from "../provider/profiles.js";
import type { ConfigSources, Setting } from "./config.js";
import { configError } from "./config-file.js";
import { configPath } from "./config-origin.js";

/**
 * The request-option keys of the config file (top level, and a profile's `request`), built when the
 * config file's schema is (cli/config-file.ts `configSchema`: on the first file read).
 */
export function requestKeys() {
  return {
    reasoning_effort: z.string().optional(),
    reasoning_summary: z.string().optional(),
    verbosity: z.string().optional(),
    max_output_tokens: z.number().optional(),
    temperature: z.number().optional(),
    top_p: z.number().optional(),
    service_tier: z.string().optional(),
    prompt_cache_key: z.string().optional(),
    include: z.array(z.string()).optional(),
    metadata: z.record(z.string(), z.string()).optional(),
  };
}

/** The config-file keys of this module (spread into the config schema). */
export function extraConfigKeys() {
  return {
    ...requestKeys(),
    native_tools: z.boolean().optional(),
    tools: z.array(z.string()).optional(),
    continue_incomplete: z.boolean().optional(),
  };
}

/** The schemas of the request-option keys. */
type RequestKeySchemas = ReturnType<typeof requestKeys>;

/** Request options as written in a config file (snake_case keys). */
export type RequestKeys = { [K in keyof RequestKeySchemas]?: z.infer<RequestKeySchemas[K]> };

/** The flags of this module, as commander parsed them. */
export interface RequestFlags extends RequestOptions {
  nativeTools?: boolean;
  /** `--tool NAME[:ARG]`, repeatable. */
  tool?: string[];
  /** `--image PATH|URL`, repeatable. */
  image?: string[];
  /** `--file PATH|URL`, repeatable. */
  file?: string[];
  continueIncomplete?: boolean;
}

/** What this module adds to the effective configuration. */
export interface RequestSettings {
  /** The checked request fields (`RunOptions.request`), and where the options came from. */
  request: Setting<Partial<CreateResponseBody>>;
  nativeTools: Setting<boolean | undefined>;
  hostedTools: Setting<HostedTool[]>;
  continueIncomplete: Setting<boolean>;
}

/** Resolves the request options, native and hosted tools and `continue_incomplete`. */
export function resolveRequestSettings(
  s: ConfigSources & { flags: RequestFlags },
  profile: ProviderProfile | undefined,
): RequestSettings {
  const { flags } = s;
  const at = (key: string) => configPath(s, key);
  const file = s.file as RequestKeys & {
    native_tools?: boolean;
    tools?: string[];
    continue_incomplete?: boolean;
  };
  const fromProfile = optionsFromKeys((profile?.requestDefaults ?? {}) as RequestKeys);
  const fromFile = optionsFromKeys(file);
  const fromFlags = Object.fromEntries(
    Object.keys(REQUEST_OPTION_NAMES)
      .map((k) => [k, flags[k as keyof RequestOptions]])
      .filter(([, v]) => v !== undefined),
  ) as RequestOptions;
  // Each layer is checked with its own names, so a bad value is reported where it was written.
  requestFields(fromProfile, (o) => `profile ${profile?.name}: request.${REQUEST_OPTION_NAMES[o].key}`);
  requestFields(
    fromFile,
    (o) => `config file ${at(REQUEST_OPTION_NAMES[o].key)}: ${REQUEST_OPTION_NAMES[o].key}`,
  );
  const merged: RequestOptions = { ...fromProfile, ...fromFile, ...fromFlags };
  const metadata = { ...fromProfile.metadata, ...fromFile.metadata, ...fromFlags.metadata };
  if (Object.keys(metadata).length > 0) merged.metadata = metadata;
  const request = requestFields(merged, (o) => REQUEST_OPTION_NAMES[o].flag);
  const source = sourceOf([fromFlags, "flag"], [fromFile, "config"], [fromProfile, "profile"]);
  const toolSpecs = flags.tool ?? file.tools;
  let hosted: HostedTool[];
  try {
    hosted = (toolSpecs ?? []).map(hostedTool);
  } catch (error) {
    if (flags.tool === undefined)
      throw configError(`config file ${at("tools")}: tools: ${(error as Error).message}`);
    throw error;
  }
  return {
    request: { value: request, source, ...(source === "profile" && profile ? { from: profile.name } : {}) },
    nativeTools: pickBoolean(flags.nativeTools, file.native_tools, at("native_tools"), undefined),
    hostedTools: {
      value: hosted,
      source: flags.tool !== undefined ? "flag" : file.tools !== undefined ? "config" : "default",
    },
    continueIncomplete: pickBoolean(
      flags.continueIncomplete,
      file.continue_incomplete,
      at("continue_incomplete"),
      false,
    ),
  };
}

/** Config-file keys → options. */
export function optionsFromKeys(keys: RequestKeys): RequestOptions {
  const out: RequestOptions = {};
  for (const [option, names] of Object.entries(REQUEST_OPTION_NAMES) as [
    keyof RequestOptions,
    { key: string },
  ][]) {
    const value = keys[names.key as keyof RequestKeys];
    if (value !== undefined) (out as Record<string, unknown>)[option] = value;
  }
  return out;
}

function sourceOf(...layers: [RequestOptions, Setting<unknown>["source"]][]): Setting<unknown>["source"] {
  return layers.find(([options]) => Object.keys(options).length > 0)?.[1] ?? "default";
}

function pickBoolean<D extends boolean | undefined>(
  flag: boolean | undefined,
  file: boolean | undefined,
  path: string | undefined,
  fallback: D,
): Setting<boolean | D> {
  if (flag === true) return { value: true, source: "flag" };
  if (file !== undefined) return { value: file, source: "config", from: path ?? "config" };
  return { value: fallback, source: "default" };
}
