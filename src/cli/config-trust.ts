/**
 * A workspace's `eddy.config.json` is a file of the repository: a clone brings it, and a run with
 * `--allow-write` (or a sandboxed shell) can write it. Read as the user's own settings, it started
 * commands (`mcp_servers`, `hooks`), granted what only the invocation may grant (`allow_shell`,
 * `sandbox: false`, `approve`, hosted `tools`) and sent a key to a URL it chose (`base_url`,
 * `profiles`). So such a file's settings of that kind — `TRUST_KEYS` — apply only once the user
 * trusts it (`eddy config --trust`), and only while it is the file they trusted: the trust is kept
 * by the file's sha256 in `~/.config/eddy/trusted.json`, so a file that changed since (a model
 * rewrote it, a pull changed it) is untrusted again. Untrusted, those keys are left out and named
 * on stderr with the way to trust them; every other setting of the file applies.
 *
 * `--config FILE` names the file on the command line: the user chose it, so all of it applies. So
 * does the user's own `~/.config/eddy/config.json`, and a workspace's file when the environment
 * says `EDDY_TRUST_CONFIG=1` (a CI job whose repository is its own).
 */
import { createHash } from "node:crypto";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { EddyError } from "../errors.js";
import { isJsonObject, parseJsonObject } from "../util/json.js";
import { makeDirSync } from "../util/make-dir.js";
import { readRegularTextSync, writeRegularFileSync } from "../util/regular-file.js";
import type { Env } from "./config-file.js";

/** The keys of a workspace config file that apply only once it is trusted (see the module comment). */
export const TRUST_KEYS = [
  "base_url",
  "profiles",
  "mcp_servers",
  "hooks",
  "allow_write",
  "allow_shell",
  "sandbox",
  "approve",
  "tools",
] as const;

/** The largest trust file read. */
const TRUST_MAX_BYTES = 1024 * 1024;

/** The user's config folder: `$XDG_CONFIG_HOME/eddy`, else `~/.config/eddy`. */
export function userConfigDir(env: Env): string {
  const base =
    env.XDG_CONFIG_HOME !== undefined && env.XDG_CONFIG_HOME !== ""
      ? env.XDG_CONFIG_HOME
      : join(env.HOME ?? homedir(), ".config");
  return join(base, "eddy");
}

/** Where trusted workspace files are recorded: beside the user's config file (`~/.config/eddy/`). */
export function trustFilePath(env: Env): string {
  return join(userConfigDir(env), "trusted.json");
}

/** The sha256 of a config file's text, as the trust file keeps it. */
export function configDigest(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/** The trusted files (absolute path → sha256); a missing or unreadable trust file trusts nothing. */
function readTrusted(path: string): Record<string, string> {
  let text: string;
  try {
    text = readRegularTextSync(path, {
      what: "trust file",
      maxBytes: TRUST_MAX_BYTES,
      code: "invalid_config",
    });
  } catch {
    return {};
  }
  const value = parseJsonObject(text);
  const files = isJsonObject(value) && isJsonObject(value.files) ? value.files : {};
  const out: Record<string, string> = {};
  for (const [file, digest] of Object.entries(files))
    if (typeof digest === "string" && /^[0-9a-f]{64}$/.test(digest)) out[file] = digest;
  return out;
}

/** Whether the config file at `path`, whose text is `text`, is the one the user trusted. */
export function isTrusted(trustFile: string, path: string, text: string): boolean {
  const trusted = readTrusted(trustFile);
  const file = resolve(path);
  return Object.hasOwn(trusted, file) && trusted[file] === configDigest(text);
}

/** Records the config file at `path` (its current text) as trusted. */
export function trustConfigFile(trustFile: string, path: string, text: string): void {
  const files = { ...readTrusted(trustFile), [resolve(path)]: configDigest(text) };
  try {
    makeDirSync(dirname(trustFile));
    writeRegularFileSync(trustFile, `${JSON.stringify({ version: 1, files }, null, 2)}\n`, {
      what: "the trust file",
      code: "invalid_config",
    });
  } catch (err) {
    throw new EddyError(
      "invalid_config",
      `cannot record the trust in ${trustFile}: ${err instanceof Error ? err.message : String(err)}`,
      { fault: "user" },
    );
  }
}

/**
 * The file's settings without the keys that need trust, and which of them were left out (empty
 * when none was set or the file is trusted).
 */
export function withoutUntrusted<T extends Record<string, unknown>>(file: T): { kept: T; left: string[] } {
  const left = TRUST_KEYS.filter((key) => file[key] !== undefined && !restricts(key, file[key]));
  if (left.length === 0) return { kept: file, left };
  const kept = { ...file };
  for (const key of left) delete kept[key];
  return { kept, left };
}

/**
 * A value of a trust key that only takes away — no writes, no shell, the sandbox on, calls asked,
 * denied or deferred — applies untrusted: leaving it out would make the run less safe.
 */
function restricts(key: (typeof TRUST_KEYS)[number], value: unknown): boolean {
  switch (key) {
    case "allow_write":
    case "allow_shell":
      return value === false;
    case "sandbox":
      return value === true;
    case "approve":
      return value === "ask" || value === "deny" || value === "defer";
    default:
      return false;
  }
}

/** The notice for a workspace file whose settings that need trust were left out (one line). */
export function untrustedNotice(path: string, keys: readonly string[]): string {
  return `eddy: ${path} sets ${keys.join(", ")}, left out: a workspace's config file may run commands, grant permissions or choose where keys go only once you trust it — check it, then run eddy config --trust (or give those settings as flags, or pass --config ${path})`;
}
