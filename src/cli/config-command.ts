/**
 * `eddy config`: the effective configuration of a run and where each value came from (keys and
 * URL passwords redacted), and what the run would lack to start (see preflight.ts).
 */
import { existsSync, lstatSync, readlinkSync } from "node:fs";
import { capabilitiesWithEvidence, evidenceChanges } from "../provider/probe/evidence.js";
import { describeWithCredentials, splitUrlCredentials } from "../util/url-credentials.js";
import {
  type EffectiveConfig,
  type Endpoint,
  type RunFlags,
  redactKey,
  resolveConfig,
  resolveWorkspace,
  type Setting,
} from "./config.js";
import { readConfigFile, workspaceConfigPath } from "./config-file.js";
import type { McpServerSetting } from "./config-tools.js";
import { configDigest, trustConfigFile, trustFilePath, withoutUntrusted } from "./config-trust.js";
import { doctorCachePath, formatAge } from "./doctor-cache.js";
import { missingSettings, usageError } from "./preflight.js";
import type { CliIo } from "./run-command.js";
import { terminalSafe } from "./terminal.js";

type Row = [name: string, value: string, source: string];

/**
 * `eddy config --trust`: records the workspace's `eddy.config.json`, as it is now, as trusted
 * (config-trust.ts): its settings that run commands, grant permissions or choose endpoints apply
 * from now on, until the file changes.
 */
export function trustCommand(flags: RunFlags, io: CliIo): number {
  if (flags.config !== undefined)
    throw usageError(
      "--trust trusts the workspace's eddy.config.json; a file given with --config applies whole already",
    );
  const path = workspaceConfigPath(resolveWorkspace(flags, io.cwd).value);
  if (!existsSync(path)) throw usageError(`--trust: ${nothingToTrust(path)}`);
  const { file, text } = readConfigFile(path);
  trustConfigFile(trustFilePath(io.env), path, text);
  const { left } = withoutUntrusted(file);
  const what =
    left.length === 0 ? "it sets nothing that needs trust" : `its ${left.join(", ")} apply from now on`;
  io.stdout.write(
    `${terminalSafe(`trusted ${path} (sha256 ${configDigest(text).slice(0, 12)}…): ${what}, until the file changes`, { oneLine: true })}\n`,
  );
  return 0;
}

/** Why there is no workspace config file at `path` to trust: none, or a symlink to nothing. */
function nothingToTrust(path: string): string {
  let target: string | undefined;
  try {
    if (lstatSync(path).isSymbolicLink()) target = readlinkSync(path);
  } catch {
    // Not there at all.
  }
  if (target === undefined) return `there is no ${path} to trust`;
  // The link's target comes from the repository: shown as data, never as terminal controls.
  const shown = terminalSafe(JSON.stringify(target), { oneLine: true });
  return `${path} is a symlink to ${shown}, which does not exist (a dangling link): point it at the config file to trust, or replace it with the file itself, then run eddy config --trust again`;
}

export function configCommand(flags: RunFlags, io: CliIo): number {
  const config = resolveConfig(flags, io.env, io.cwd);
  const rows: Row[] = [...targetRows(config)];
  const settings: [string, Setting<unknown>][] = [
    ["api", config.api],
    ["transport", config.transport],
    ["model", config.model],
    ["instructions", { ...config.instructions, value: jsonOrNone(config.instructions.value) }],
    ["workspace", config.workspace],
    ["mode", { ...config.stateless, value: config.stateless.value ? "stateless" : modeOf(config) }],
    ["tools_on_follow_up", config.toolsOnFollowUp],
    ["max_tool_calls", config.maxToolCalls],
    ["max_turns", config.maxTurns],
    ["max_retries", config.maxRetries],
    ["connect_timeout_ms", config.connectTimeoutMs],
    ["first_byte_timeout_ms", config.firstByteTimeoutMs],
    ["idle_timeout_ms", config.idleTimeoutMs],
    ["allow_write", config.allowWrite],
    ["allow_shell", config.allowShell],
    ["validate", config.validate],
    ["history_strategy", config.history.strategy],
    ["recent_calls_to_keep", config.history.recentCallsToKeep],
    ["truncation_threshold", config.history.truncationThreshold],
    ["summarization_model", config.history.summarizationModel],
    [
      "request",
      { ...config.request, value: jsonOrNone(config.request.value, (v) => Object.keys(v).length === 0) },
    ],
    [
      "native_tools",
      { ...config.nativeTools, value: config.nativeTools.value ?? "(the provider's capability)" },
    ],
    [
      "tools",
      { ...config.hostedTools, value: config.hostedTools.value.map((t) => t.type).join(", ") || undefined },
    ],
    ["continue_incomplete", config.continueIncomplete],
    ["parallel_tool_calls", config.parallelToolCalls],
    ["tool_concurrency", config.toolConcurrency],
    ["approve", { ...config.approve, value: config.approve.value ?? "ask on a terminal, else auto" }],
    ["sandbox", config.sandbox],
    ["on_limit", config.onLimit],
    ["agents_md", config.agentsMd],
  ];
  for (const [name, setting] of settings) rows.push(settingRow(name, setting));
  for (const server of config.mcpServers)
    rows.push(settingRow(`mcp_servers.${server.name}`, { ...server, value: describeServer(server.value) }));
  rows.push(...composeRows(config));
  // Nearest first: the workspace's file is layered over the user's (config-file.ts).
  rows.push(["config_file", config.configFiles.join(", layered over ") || "(none found)", ""]);
  if (config.configUntrusted !== undefined)
    rows.push([
      "config_untrusted",
      `${config.configUntrusted.join(", ")} left out until the file is trusted (eddy config --trust)`,
      "",
    ]);
  rows.push(doctorRow(config, io));
  for (const problem of missingSettings(config, io.env)) rows.push(["missing", problem, ""]);
  const width = Math.max(...rows.map((r) => r[0].length));
  // Values come from files and the environment: shown, never acted on by the terminal.
  for (const [name, value, source] of rows)
    io.stdout.write(
      terminalSafe(`${name.padEnd(width)}  ${value}${source ? `  (${source})` : ""}`, { oneLine: true }) +
        "\n",
    );
  return 0;
}

function targetRows(config: EffectiveConfig): Row[] {
  const target = config.target;
  if (target.kind === "mock")
    return [["provider", "embedded mock server (demo model)", `default: ${target.why}`]];
  return [
    [
      "provider",
      `${target.profile.name} — ${target.profile.description}`,
      sourceOf({ ...target.chosenBy, value: target.profile.name }),
    ],
    ...endpointRows(target),
    ...target.fallbacks.flatMap((f): Row[] => [
      ["fallback", `${f.profile.name}/${f.model ?? "(the run's model)"}`, `config: ${f.from}`],
      ...endpointRows(f).map(([name, value, source]): Row => [`  ${name}`, value, source]),
    ]),
  ];
}

function endpointRows(endpoint: Endpoint): Row[] {
  return [
    settingRow("base_url", {
      ...endpoint.baseURL,
      value:
        endpoint.baseURL.value === "" && endpoint.profile.aiSdk !== undefined
          ? `(${endpoint.profile.aiSdk.package}'s default)`
          : describeWithCredentials(endpoint.baseURL.value, endpoint.credentials),
    }),
    settingRow(
      "api_key",
      endpoint.apiKey === undefined
        ? undefined
        : { ...endpoint.apiKey, value: redactKey(endpoint.apiKey.value) },
    ),
  ];
}

function settingRow(name: string, setting: Setting<unknown> | undefined): Row {
  if (setting === undefined || setting.value === undefined || setting.value === null) {
    return [name, "(none)", setting === undefined ? "" : sourceOf(setting)];
  }
  return [name, String(setting.value), sourceOf(setting)];
}

/**
 * The config file's `hooks` (the user's own commands: shown as written) and `agents` (by name,
 * with the model each runs on), each with the file it came from.
 */
function composeRows(config: EffectiveConfig): Row[] {
  const rows: Row[] = [];
  for (const [key, value] of Object.entries(config.hooks ?? {}))
    if (value !== undefined) rows.push([`hooks.${key}`, String(value), `config: ${config.hooksFrom[key]}`]);
  if (rows.length === 0) rows.push(["hooks", "(none)", ""]);
  const agents = Object.entries(config.agents);
  for (const [name, agent] of agents)
    rows.push([
      `agents.${name}`,
      `sub-agent on ${agent.model ?? "the run's model"}${agent.tools ? ` (tools: ${agent.tools.join(", ") || "none"})` : ""}`,
      `config: ${config.agentsFrom[name]}`,
    ]);
  if (agents.length === 0) rows.push(["agents", "(none)", ""]);
  return rows;
}

/** A server without its `env` and `headers` values (they may hold tokens) or its URL's password. */
function describeServer(server: McpServerSetting["value"]): string {
  if ("url" in server) {
    const headers = Object.keys(server.headers ?? {});
    const { url, credentials } = splitUrlCredentials(server.url);
    return `${describeWithCredentials(url, credentials)}${headers.length > 0 ? ` (headers: ${headers.join(", ")})` : ""}`;
  }
  const env = Object.keys(server.env ?? {});
  return `${[server.command, ...(server.args ?? [])].join(" ")}${env.length > 0 ? ` (env: ${env.join(", ")})` : ""}`;
}

function jsonOrNone<T>(value: T | undefined, empty: (value: T) => boolean = () => false): string | undefined {
  return value === undefined || empty(value) ? undefined : JSON.stringify(value);
}

function modeOf(config: EffectiveConfig): string {
  if (config.api.value === "chat-completions") return "stateless (Chat Completions)";
  if (config.api.value === "ai-sdk") return "stateless (AI SDK)";
  if (config.target.kind !== "http") return "chained";
  const { capabilities } = config.target.profile;
  if (!capabilitiesWithEvidence(capabilities, config.doctor?.report).previousResponseId)
    return capabilities.previousResponseId
      ? "stateless (eddy doctor: the server cannot chain)"
      : "stateless (provider cannot chain)";
  return "chained";
}

/** What eddy doctor's cached report changes for runs here (doctor-cache.ts). */
function doctorRow(config: EffectiveConfig, io: CliIo): Row {
  const evidence = config.doctor;
  const path = doctorCachePath(io.env) ?? "";
  if (config.target.kind !== "http") return ["doctor", "(not used with the embedded mock)", ""];
  if (evidence?.report === undefined || evidence.ageMs === undefined)
    return ["doctor", evidence?.note ?? "(no report for this endpoint and model: run eddy doctor)", path];
  const changes = evidenceChanges(config.target.profile.capabilities, evidence.report)
    .map((c) => `${c.capability} ${c.value}`)
    .join(", ");
  return [
    "doctor",
    `report from ${formatAge(evidence.ageMs)} ago: ${changes || "no change to the profile"}`,
    path,
  ];
}

function sourceOf(setting: Setting<unknown>): string {
  return setting.from === undefined ? setting.source : `${setting.source}: ${setting.from}`;
}
