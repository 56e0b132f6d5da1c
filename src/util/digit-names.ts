/**
 * Names a JavaScript object would move (docs/pitfalls.md #123, #126): an object lists an
 * integer-like key ("1", "20") first, in numeric order, whatever the order written, so a record
 * whose entries are started, offered or bounded in the order the configuration writes them (MCP
 * servers, sub-agents) cannot take a name of digits only. Every digits-only name is refused ("01"
 * too, which JavaScript would keep in place): one rule to say.
 */

/** What a record's entries are, for the message. */
export interface NamedEntry {
  /** One of them, with its article: "an MCP server", "a sub-agent". */
  one: string;
  /** The others: "servers", "agents". */
  others: string;
  /** What is renamed: "server", "agent". */
  what: string;
  /** Put before the digits in the name suggested instead: "s", "a". */
  prefix: string;
  /** The longest name allowed (the suggestion is cut to it). @defaultValue no limit */
  maxLength?: number;
}

/** An MCP server of `mcp_servers` (src/tools/mcp/config.ts). */
export const MCP_SERVER_ENTRY: NamedEntry = {
  one: "an MCP server",
  others: "servers",
  what: "server",
  prefix: "s",
};

/** A sub-agent of the config file's `agents` (src/cli/config-compose.ts). */
export const SUB_AGENT_ENTRY: NamedEntry = {
  one: "a sub-agent",
  others: "agents",
  what: "agent",
  prefix: "a",
  maxLength: 64,
};

/** Why `name` cannot name an `entry` (it is digits only), in one line with a name to use instead; else `undefined`. */
export function digitsOnlyNameProblem(name: string, entry: NamedEntry): string | undefined {
  if (!/^[0-9]+$/.test(name)) return undefined;
  const suggested = `${entry.prefix}${name}`.slice(0, entry.maxLength ?? Number.POSITIVE_INFINITY);
  return `${entry.one}'s name may not be digits only (JavaScript would put it before the other ${entry.others}, not where it is written); rename the ${entry.what}, e.g. "${suggested}"`;
}
