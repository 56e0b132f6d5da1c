/** `eddy config`: the effective configuration of a run and where each value came from (keys redacted). */
import { type EffectiveConfig, type RunFlags, redactKey, resolveConfig, type Setting } from "./config.js";
import type { CliIo } from "./run-command.js";

export function configCommand(flags: RunFlags, io: CliIo): number {
  const config = resolveConfig(flags, io.env, io.cwd);
  const rows: [string, string, string][] = [];
  const add = (
    name: string,
    setting: Setting<unknown> | undefined,
    show: (v: unknown) => string = String,
  ) => {
    if (setting === undefined) {
      rows.push([name, "(none)", ""]);
      return;
    }
    rows.push([
      name,
      setting.value === undefined || setting.value === null ? "(none)" : show(setting.value),
      sourceOf(setting),
    ]);
  };
  const target = config.target;
  if (target.kind === "mock")
    rows.push(["provider", "embedded mock server (demo model)", `default: ${target.why}`]);
  else {
    rows.push(["provider", `${target.profile.name} — ${target.profile.description}`, ""]);
    add("base_url", target.baseURL);
    add("api_key", target.apiKey, (v) => redactKey(String(v)));
    for (const f of target.fallbacks)
      rows.push(["fallback", `${f.profile.name}/${f.model ?? "(default model)"}`, "config"]);
  }
  add("model", config.model);
  add("instructions", config.instructions, (v) => JSON.stringify(v));
  add("workspace", config.workspace);
  add("mode", { ...config.stateless, value: config.stateless.value ? "stateless" : modeOf(config) });
  add("max_tool_calls", config.maxToolCalls);
  add("max_turns", config.maxTurns);
  add("max_retries", config.maxRetries);
  add("first_byte_timeout_ms", config.firstByteTimeoutMs);
  add("idle_timeout_ms", config.idleTimeoutMs);
  add("allow_write", config.allowWrite);
  add("allow_shell", config.allowShell);
  add("validate", config.validate);
  rows.push(["config_file", config.configFile ?? "(none found)", ""]);
  const width = Math.max(...rows.map((r) => r[0].length));
  for (const [name, value, source] of rows)
    io.stdout.write(`${name.padEnd(width)}  ${value}${source ? `  (${source})` : ""}\n`);
  return 0;
}

function modeOf(config: EffectiveConfig): string {
  if (config.target.kind === "http" && !config.target.profile.capabilities.previousResponseId)
    return "stateless (provider cannot chain)";
  return "chained";
}

function sourceOf(setting: Setting<unknown>): string {
  return setting.from === undefined ? setting.source : `${setting.source}: ${setting.from}`;
}
