/**
 * The composition settings of the CLI (docs/architecture.md, "Composing runs"): `--on-limit`
 * (`on_limit`), `--no-agents-md` (`agents_md`), the config file's `hooks` (commands run before and
 * after each tool call, cli/hook-commands.ts) and `agents` (sub-agents offered as tools,
 * loop/agent-tool.ts). Precedence as everywhere: flag > config file > default.
 */
import { z } from "zod";
import { digitsOnlyNameProblem, SUB_AGENT_ENTRY } from "../util/digit-names.js";
import type { ConfigSources, Setting } from "./config.js";
import { configPath } from "./config-origin.js";

/** A sub-agent's name: it becomes a tool name. */
const AGENT_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * A sub-agent's name in the config file: a tool name, and not digits only — an object lists such
 * a name first, whatever the order written, and the agents are offered in the order the file
 * writes them (docs/pitfalls.md #126).
 */
function agentNameSchema() {
  return z
    .string()
    .regex(AGENT_NAME, "agent names are 1–64 letters, digits, _ or -")
    .superRefine((name, ctx) => {
      const problem = digitsOnlyNameProblem(name, SUB_AGENT_ENTRY);
      if (problem !== undefined) ctx.addIssue({ code: "custom", message: problem });
    });
}

/** `hooks` in the config file: shell command lines (`sh -c`), and how long each may take. */
function hooksSchema() {
  return z
    .object({
      before_tool_call: z.string().min(1).optional(),
      after_tool_call: z.string().min(1).optional(),
      timeout_ms: z.number().int().min(1).max(600_000).optional(),
    })
    .strict();
}

/** One entry of `agents` in the config file. */
function agentSchema() {
  return z
    .object({
      instructions: z.string().min(1),
      description: z.string().min(1).max(1024).optional(),
      model: z.string().min(1).optional(),
      tools: z.array(z.string().min(1)).optional(),
      max_turns: z.number().int().min(1).optional(),
    })
    .strict();
}

/**
 * The config-file keys of this module (spread into the config schema, which is built on the first
 * file read: cli/config-file.ts `configSchema`).
 */
export function composeConfigKeys() {
  return {
    on_limit: z.enum(["stop", "answer"]).optional(),
    agents_md: z.boolean().optional(),
    hooks: hooksSchema().optional(),
    agents: z.record(agentNameSchema(), agentSchema()).optional(),
  };
}

/** The config file's `hooks`. */
export type HookCommandsConfig = z.infer<ReturnType<typeof hooksSchema>>;

/** One of the config file's `agents`. */
export type AgentConfig = z.infer<ReturnType<typeof agentSchema>>;

/** What a run does at a limit (`--on-limit`). */
export type OnLimit = "stop" | "answer";

/** The flags of this module, as commander parsed them. */
export interface ComposeFlags {
  onLimit?: OnLimit;
  /** `--no-agents-md` makes this false (commander); absent or true means "not given". */
  agentsMd?: boolean;
}

/** What this module adds to the effective configuration. */
export interface ComposeSettings {
  onLimit: Setting<OnLimit>;
  /** Read AGENTS.md files into the instructions (loop/instruction-files.ts). */
  agentsMd: Setting<boolean>;
  /** The hook commands (config file only). */
  hooks: HookCommandsConfig | undefined;
  /** The sub-agents offered as tools (config file only). */
  agents: Readonly<Record<string, AgentConfig>>;
  /** The config file each of `hooks`' keys came from (`before_tool_call` → path), for `eddy config`. */
  hooksFrom: Readonly<Record<string, string>>;
  /** The config file each of `agents` came from (name → path), for `eddy config`. */
  agentsFrom: Readonly<Record<string, string>>;
}

/** Resolves `--on-limit`, `--no-agents-md`, `hooks` and `agents`. */
export function resolveComposeSettings(
  flags: ComposeFlags,
  s: Pick<ConfigSources, "file" | "path" | "origins">,
): ComposeSettings {
  const { file } = s;
  const fromConfig = (key: string) => ({ source: "config" as const, from: configPath(s, key) ?? "config" });
  return {
    onLimit:
      flags.onLimit !== undefined
        ? { value: flags.onLimit, source: "flag" }
        : file.on_limit !== undefined
          ? { value: file.on_limit, ...fromConfig("on_limit") }
          : { value: "stop", source: "default" },
    agentsMd:
      flags.agentsMd === false
        ? { value: false, source: "flag" }
        : file.agents_md !== undefined
          ? { value: file.agents_md, ...fromConfig("agents_md") }
          : { value: true, source: "default" },
    hooks: file.hooks,
    agents: file.agents ?? {},
    hooksFrom: filesOf(s, "hooks", file.hooks),
    agentsFrom: filesOf(s, "agents", file.agents),
  };
}

/** The config file each entry of the object setting `key` came from. */
function filesOf(
  s: Pick<ConfigSources, "path" | "origins">,
  key: string,
  value: object | undefined,
): Record<string, string> {
  return Object.fromEntries(
    Object.keys(value ?? {}).map((name) => [name, configPath(s, `${key}.${name}`) ?? "config"]),
  );
}
