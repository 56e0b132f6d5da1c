/**
 * The run settings `eddy batch` and `eddy worker` give every task: the same mapping from the
 * configuration as `eddy run` (run-command.ts `runOptionsFor`: limits, mode, history, request
 * options, …), with the built-in tools (a fresh registry per task, so `shell`'s background jobs
 * end with their task). MCP servers and `--approve ask` are `eddy run`'s only: a batch asks no one.
 */
import type { BatchRunDefaults } from "../batch/run-task.js";
import type { RunOptions } from "../loop/options.js";
import type { Provider } from "../provider/provider.js";
import { type BuiltinTools, createBuiltinTools } from "../tools/builtin/index.js";
import { secretValuesFromEnv } from "../tools/execute.js";
import type { ToolRegistry } from "../tools/registry.js";
import type { EffectiveConfig, Env } from "./config.js";
import { runOptionsFor } from "./run-command.js";
import { registryOf } from "./run-tools.js";

/** The built-ins as `eddy run` configures them (`shell` gets the CLI's environment). */
function builtinsFor(config: EffectiveConfig, env: Env): BuiltinTools {
  return createBuiltinTools({
    allowWrite: config.allowWrite.value,
    allowShell: config.allowShell.value,
    shellEnv: { source: env },
  });
}

/** The built-in tools a task of this configuration gets (a fresh registry each call). */
export function toolRegistryFor(config: EffectiveConfig, env: Env): ToolRegistry {
  return registryOf(builtinsFor(config, env), [], secretValuesFromEnv(env));
}

/** What every task's run starts from, as `eddy run` would set it for this configuration. */
export function batchRunDefaults(
  config: EffectiveConfig,
  env: Env,
  provider: Provider,
  signal: AbortSignal,
  outputSchema: RunOptions["outputSchema"],
): BatchRunDefaults {
  const builtins = builtinsFor(config, env);
  const envSecrets = secretValuesFromEnv(env);
  const options = runOptionsFor(
    {
      config,
      input: "",
      contextRuns: undefined,
      thread: undefined,
      outputSchema,
      tools: { builtins, mcp: undefined, envSecrets },
    },
    {
      registry: registryOf(builtins, [], envSecrets),
      approveMode: "auto",
      onApproval: undefined,
      refreshTools: undefined,
      mcpServers: [],
      mcpTools: [],
      secrets: [],
    },
    provider,
    signal,
  );
  const { input: _input, signal: _signal, tools: _tools, ...run } = options;
  return run;
}
