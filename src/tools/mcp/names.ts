/**
 * The names MCP tools are offered under: `SERVER__TOOL`, fitted to the function-name pattern of
 * the Open Responses spec (`^[a-zA-Z0-9_-]{1,64}$`, `schemas/openresponses/openapi.json`).
 */
import { createHash } from "node:crypto";
import { sanitizeNamePart } from "../../util/name-part.js";
import { MCP_DEFAULTS } from "./defaults.js";

const MAX_NAME_LENGTH = 64;
const HASH_CHARS = 8;

/** `text` with every character outside `[a-zA-Z0-9_-]` replaced by `_`. */
export { sanitizeNamePart } from "../../util/name-part.js";

/**
 * The model-facing name of tool `tool` of server `server`: `server__tool`, each part sanitized.
 * A name over 64 characters keeps its first 55 and ends `_` plus 8 hex digits of a SHA-256 of the
 * *original* server and tool names, so shortening is deterministic (the same name in every run,
 * which keeps the `tools` array byte-identical for prompt caches) and two long names that share
 * a prefix still differ.
 */
export function mcpToolName(server: string, tool: string): string {
  const full = `${sanitizeNamePart(server)}${MCP_DEFAULTS.nameSeparator}${sanitizeNamePart(tool)}`;
  if (full.length <= MAX_NAME_LENGTH) return full;
  const hash = createHash("sha256").update(`${server}\0${tool}`).digest("hex").slice(0, HASH_CHARS);
  return `${full.slice(0, MAX_NAME_LENGTH - HASH_CHARS - 1)}_${hash}`;
}
