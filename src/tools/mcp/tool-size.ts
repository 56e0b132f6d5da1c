/**
 * What one MCP tool may put into every model request: its description (or title, offered when it
 * has no description) at most `MCP_DEFAULTS.maxDescriptionBytes`, cut with a marker saying so, and
 * its input schema at most `MCP_DEFAULTS.maxSchemaBytes` serialized, else offered open (a schema
 * cannot be cut and stay a schema; the server checks the arguments itself). A server's message may
 * be 10 MiB, so one tool could otherwise add 10 MiB to every request of the run
 * (docs/pitfalls.md #106). The tools of one server together take at most
 * `MCP_DEFAULTS.maxServerToolsBytes`: those past it are left out whole, never offered in part
 * (docs/pitfalls.md #111). The tools of all the servers of a run together take at most
 * `MCP_DEFAULTS.maxTotalToolsBytes`, counted the same way, filled in configuration order
 * (`boundedAcross`, docs/pitfalls.md #121).
 */
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { nestsDeeperThan } from "../../util/json.js";
import { shortenText, utf8Head } from "../utf8.js";
import { MCP_DEFAULTS } from "./defaults.js";

/** A listing with its tools bounded, and the names of the tools that were changed. */
export interface BoundedListing {
  tools: Tool[];
  /** Tools whose description or title was cut. */
  cut: string[];
  /** Tools whose input schema was too large and is offered open. */
  opened: string[];
  /** Tools left out: the server's tools before them took `MCP_DEFAULTS.maxServerToolsBytes`. */
  left: string[];
}

/** The schema a tool whose own is too large is offered with. */
const OPEN_SCHEMA = { type: "object", additionalProperties: true } as const;

/** `tools` with every description, title and input schema within the bounds (see the module comment). */
export function boundedTools(
  tools: readonly Tool[],
  maxTotalBytes: number = MCP_DEFAULTS.maxServerToolsBytes,
): BoundedListing {
  const cut: string[] = [];
  const opened: string[] = [];
  const bounded: Tool[] = [];
  let total = 0;
  for (const [index, tool] of tools.entries()) {
    let out = tool;
    const description = cutText(tool.description, MCP_DEFAULTS.maxDescriptionBytes);
    const title = cutText(tool.title, MCP_DEFAULTS.maxDescriptionBytes);
    if (description !== tool.description || title !== tool.title) {
      const { description: _description, title: _title, ...rest } = tool;
      out = {
        ...rest,
        ...(description === undefined ? {} : { description }),
        ...(title === undefined ? {} : { title }),
      };
    }
    let schemaBytes = serializedBytes(tool.inputSchema);
    if (schemaBytes > MCP_DEFAULTS.maxSchemaBytes) {
      out = { ...out, inputSchema: { ...OPEN_SCHEMA } };
      schemaBytes = OPEN_SCHEMA_BYTES;
    }
    total += schemaBytes + headBytes(out);
    if (total > maxTotalBytes)
      return { tools: bounded, cut, opened, left: tools.slice(index).map((t) => t.name) };
    if (out.description !== tool.description || out.title !== tool.title) cut.push(tool.name);
    if (out.inputSchema !== tool.inputSchema) opened.push(tool.name);
    bounded.push(out);
  }
  return { tools: bounded, cut, opened, left: [] };
}

/**
 * `text` when it is at most `maxBytes` UTF-8 bytes; else its head, on a character boundary, and a
 * marker, the whole at most `maxBytes`.
 */
export function cutText(text: string | undefined, maxBytes: number): string | undefined {
  // UTF-8 takes at most 3 bytes per UTF-16 code unit: most texts need no encoding to be measured.
  if (text === undefined || text.length * 3 <= maxBytes) return text;
  const bytes = Buffer.from(text, "utf8");
  if (bytes.length <= maxBytes) return text;
  const marker = ` … [cut by eddy: ${bytes.length} bytes, over the ${maxBytes}-byte limit]`;
  return `${utf8Head(bytes, Math.max(0, maxBytes - Buffer.byteLength(marker)))}${marker}`;
}

const OPEN_SCHEMA_BYTES = Buffer.byteLength(JSON.stringify(OPEN_SCHEMA));

/** The bytes of a tool's name, description and title, as `boundedTools` counts them. */
function headBytes(tool: Tool): number {
  return Buffer.byteLength(JSON.stringify([tool.name, tool.description, tool.title]));
}

/** Each tool's bytes by listing (a listing is the same array until the server lists again). */
const sizes = new WeakMap<readonly Tool[], number[]>();

/**
 * The bytes each tool of a listing `boundedTools` returned takes, counted as it counts them (its
 * input schema serialized, a schema it opened as the open schema, and its name, description, title).
 */
export function offeredBytes(tools: readonly Tool[]): number[] {
  let bytes = sizes.get(tools);
  if (bytes === undefined) {
    bytes = tools.map((tool) => serializedBytes(tool.inputSchema) + headBytes(tool));
    sizes.set(tools, bytes);
  }
  return bytes;
}

/** The tools of every server of a run, bounded together (`boundedAcross`). */
export interface BoundedRun {
  /** How many of each server's tools are offered (its first ones), in the order given. */
  kept: number[];
  /** The servers whose tools are left out (all past the bound), and those tools' names. */
  left: Array<{ server: string; tools: string[] }>;
}

/**
 * The tools of all servers (each listing already `boundedTools`'s), in configuration order, at most
 * `maxTotalBytes` together: the tool that passes it and every tool after it, of this server and
 * the later ones, are left out whole, as `boundedTools` does within one server (docs/pitfalls.md
 * #121).
 */
export function boundedAcross(
  listings: ReadonlyArray<{ server: string; tools: readonly Tool[] }>,
  maxTotalBytes: number = MCP_DEFAULTS.maxTotalToolsBytes,
): BoundedRun {
  const kept: number[] = [];
  const left: BoundedRun["left"] = [];
  let total = 0;
  let full = false;
  for (const { server, tools } of listings) {
    let n = 0;
    if (!full) {
      for (const bytes of offeredBytes(tools)) {
        if (total + bytes > maxTotalBytes) {
          full = true;
          break;
        }
        total += bytes;
        n++;
      }
    }
    kept.push(n);
    if (n < tools.length) left.push({ server, tools: tools.slice(n).map((t) => t.name) });
  }
  return { kept, left };
}

/** The one warning for the tools `boundedAcross` left out, naming a few servers and tools. */
export function acrossWarning(run: BoundedRun): string | undefined {
  if (run.left.length === 0) return undefined;
  const quoted = (name: string) => JSON.stringify(shortenText(name, 64));
  const servers = run.left.slice(0, 5).map(({ server, tools }) => {
    const shown = tools.slice(0, 3).map(quoted).join(", ");
    return `${tools.length} of MCP server ${quoted(server)} (${shown}${tools.length > 3 ? ", …" : ""})`;
  });
  const more = run.left.length > 5 ? `, and tools of ${run.left.length - 5} more servers` : "";
  const count = run.left.reduce((sum, { tools }) => sum + tools.length, 0);
  return `the tools of the MCP servers take more than ${MCP_DEFAULTS.maxTotalToolsBytes} bytes together: ${count} tool${count === 1 ? "" : "s"} past the first ones, in mcp_servers order, are left out: ${servers.join(", ")}${more}`;
}

/**
 * The bytes of `schema` serialized. One nested too deep to serialize safely is left to the schema
 * check (mcp-tools.ts `usableSchema`), which offers it open: it counts as the open schema.
 */
function serializedBytes(schema: unknown): number {
  if (nestsDeeperThan(schema)) return OPEN_SCHEMA_BYTES;
  return Buffer.byteLength(JSON.stringify(schema) ?? "");
}

/**
 * The one warning line for a listing that `boundedTools` changed, naming a few of the tools; none
 * when nothing was changed.
 */
export function boundsWarning(label: string, listing: BoundedListing): string | undefined {
  const names = (list: string[]) => {
    const shown = list.slice(0, 3).map((n) => JSON.stringify(shortenText(n, 64)));
    return `${list.length} tool${list.length === 1 ? "" : "s"} (${shown.join(", ")}${list.length > 3 ? ", …" : ""})`;
  };
  const parts: string[] = [];
  if (listing.cut.length > 0)
    parts.push(
      `the descriptions of ${names(listing.cut)} are over ${MCP_DEFAULTS.maxDescriptionBytes} bytes and are cut`,
    );
  if (listing.opened.length > 0)
    parts.push(
      `the input schemas of ${names(listing.opened)} are over ${MCP_DEFAULTS.maxSchemaBytes} bytes and are offered open (the server checks the arguments)`,
    );
  if (listing.left.length > 0)
    parts.push(
      `its tools take more than ${MCP_DEFAULTS.maxServerToolsBytes} bytes: ${names(listing.left)} past its first ${listing.tools.length} are left out`,
    );
  return parts.length === 0 ? undefined : `${label}: ${parts.join("; ")}`;
}
