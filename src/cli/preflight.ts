/**
 * What must hold before `eddy run` sends anything: a usable workspace, the key a profile needs, a
 * model when the server has no default, and no two credentials fighting over one header. Each
 * problem is found here, at start, and exits 2 naming what is missing and where to set it —
 * instead of a request without `Authorization` that comes back 401 (or a 400 for the model).
 */
import { accessSync, constants, statSync } from "node:fs";
import { EddyError } from "../errors.js";
import { keyRequired, modelRequired } from "../provider/profiles.js";
import { type EffectiveConfig, type Endpoint, type Env, openAIKeyAllowed, type Setting } from "./config.js";
import { USAGE_ERROR } from "./exit-codes.js";

/** A usage error: one line on stderr, exit 2. */
export function usageError(message: string): EddyError {
  return new EddyError("invalid_argument", message, { fault: "user", details: { exitCode: USAGE_ERROR } });
}

/** The file-system calls `checkWorkspace` makes (injectable: root passes every access check). */
export interface WorkspaceProbe {
  isDirectory(path: string): boolean;
  /** Throws (an `ErrnoException`) when the directory cannot be listed and entered. */
  canReadAndEnter(path: string): void;
}

const nodeProbe: WorkspaceProbe = {
  isDirectory: (path) => {
    try {
      return statSync(path).isDirectory();
    } catch {
      return false;
    }
  },
  canReadAndEnter: (path) => accessSync(path, constants.R_OK | constants.X_OK),
};

/**
 * Throws a usage error when the workspace is missing, not a directory, or not readable and
 * searchable: the file tools would otherwise answer every call with "permission denied".
 */
export function checkWorkspace(path: string, probe: WorkspaceProbe = nodeProbe): void {
  if (!probe.isDirectory(path))
    throw usageError(`workspace ${JSON.stringify(path)} does not exist or is not a directory`);
  try {
    probe.canReadAndEnter(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? "denied";
    throw usageError(
      `workspace ${JSON.stringify(path)} is not readable (${code}): eddy needs read and execute permission on it (chmod u+rx, or pick another --workspace)`,
    );
  }
}

/** Every setting the run lacks, as one message each; empty when it can start. */
export function missingSettings(config: EffectiveConfig, env: Env): string[] {
  const target = config.target;
  if (target.kind === "mock") return [];
  const problems: string[] = [];
  const primary = keyProblem(target, env, `provider ${target.profile.name}`, true);
  if (primary !== undefined) problems.push(primary);
  for (const endpoint of [target, ...target.fallbacks]) {
    const unsendable = unsendableKey(endpoint.apiKey);
    if (unsendable !== undefined) problems.push(unsendable);
  }
  if (
    target.credentials !== undefined &&
    target.apiKey !== undefined &&
    target.profile.apiKeyHeader === undefined
  ) {
    problems.push(
      `the base URL carries user:password and an API key is set too (${describeKeySource(target.apiKey)}): both would go in the Authorization header — drop one`,
    );
  }
  for (const fallback of target.fallbacks) {
    const problem = keyProblem(fallback, env, `fallback ${fallback.spec}`, false);
    if (problem !== undefined) problems.push(problem);
  }
  if (config.model.value === null && modelRequired(target.profile)) {
    problems.push(
      `no model for provider ${target.profile.name}: give --model NAME, set EDDY_MODEL, or put "model" in the config file`,
    );
  }
  return problems;
}

/** Throws a usage error (exit 2) listing what the run lacks, before anything is sent. */
export function assertReadyToRun(config: EffectiveConfig, env: Env): void {
  const problems = missingSettings(config, env);
  if (problems.length > 0) throw usageError(problems.join("; "));
}

/**
 * "provider openai needs an API key: set OPENAI_API_KEY (or --api-key / OPENRESPONSES_API_KEY)".
 * URL credentials count as authorization (a proxy in front of the provider may add the key).
 * Fallbacks read only their profile's variables.
 */
function keyProblem(endpoint: Endpoint, env: Env, what: string, primary: boolean): string | undefined {
  if (endpoint.apiKey !== undefined || endpoint.credentials !== undefined) return undefined;
  if (!keyRequired(endpoint.profile)) return undefined;
  const vars = endpoint.profile.apiKeyEnv;
  let where: string;
  if (vars.length === 0) {
    where = primary
      ? "give --api-key or set OPENRESPONSES_API_KEY"
      : `name its variable with api_key_env in the config file's "${endpoint.profile.name}" profile`;
  } else where = `set ${vars.join(" or ")}${primary ? " (or --api-key / OPENRESPONSES_API_KEY)" : ""}`;
  const withheld =
    vars.includes("OPENAI_API_KEY") && env.OPENAI_API_KEY && !openAIKeyAllowed(endpoint.baseURL)
      ? ` — OPENAI_API_KEY is set, but eddy sends it only to api.openai.com or OPENAI_BASE_URL, not ${endpoint.baseURL.value}`
      : "";
  return `${what} needs an API key: ${where}${withheld}`;
}

/**
 * A key an HTTP header cannot carry: a control character (a carriage return or line break copied
 * with it, `$(cat key.txt)` of a CRLF file) or one past U+00FF (a "…" pasted from a page). Sent,
 * it failed inside fetch as "cannot reach … ERR_INVALID_CHAR", retried three times and exited 1
 * with "is the server running?". The key itself is never shown.
 */
function unsendableKey(key: Setting<string> | undefined): string | undefined {
  if (key === undefined) return undefined;
  for (let i = 0; i < key.value.length; i++) {
    const c = key.value.charCodeAt(i);
    if (c === 0x09 || (c >= 0x20 && c !== 0x7f && c <= 0xff)) continue;
    const what =
      c < 0x20 || c === 0x7f
        ? `a control character (U+${c.toString(16).toUpperCase().padStart(4, "0")}, a line break or carriage return copied with it?)`
        : "a character an HTTP header cannot carry (past U+00FF, e.g. a pasted …)";
    return `the API key from ${describeKeySource(key)} holds ${what} at position ${i + 1}: set it again without it`;
  }
  return undefined;
}

/** The 401 hint: where this endpoint's key comes from. */
export function keyHint(endpoint: Endpoint): string {
  const vars = endpoint.profile.apiKeyEnv;
  const from = [...vars, "--api-key", "OPENRESPONSES_API_KEY"].filter((v, i, all) => all.indexOf(v) === i);
  return `provider ${endpoint.profile.name} reads its key from ${from.slice(0, -1).join(", ")} or ${from.at(-1)}`;
}

function describeKeySource(setting: Setting<string>): string {
  if (setting.source === "flag") return "--api-key";
  return setting.from ?? setting.source;
}
