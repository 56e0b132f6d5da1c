/**
 * Hosted tools by name (`--tool NAME[:ARG]`, the config file's `tools`): the tool declarations a
 * provider runs itself, in the shapes of the OpenAI captures under test/fixtures/captures/openai/
 * (openai-web-search-tool.1, openai-file-search-tool.1, openai-code-interpreter-tool.1,
 * openai-image-generation-tool.1, openai-mcp-tool.1). Nothing about them runs locally: their
 * items come back as records (and `mcp_approval_request`s go through the approval flow).
 */
import { EddyError } from "../errors.js";
import type { HostedTool } from "./tool-declarations.js";

/** The hosted tools eddy knows by name, with what their `:ARG` is. */
export const HOSTED_TOOL_NAMES = {
  web_search: "no argument",
  file_search: "the vector store id(s), comma-separated: file_search:vs_123",
  code_interpreter: "no argument",
  image_generation: "no argument",
  mcp: "LABEL=URL of a remote MCP server: mcp:docs=https://example.com/mcp",
} as const;

/** `NAME[:ARG]` → the tool declaration. Throws `invalid_argument` naming the known tools. */
export function hostedTool(spec: string): HostedTool {
  const colon = spec.indexOf(":");
  const name = colon < 0 ? spec : spec.slice(0, colon);
  const arg = colon < 0 ? undefined : spec.slice(colon + 1);
  const needsNone = (tool: HostedTool): HostedTool => {
    if (arg !== undefined) throw usage(`--tool ${name} takes no argument (got ${JSON.stringify(spec)})`);
    return tool;
  };
  switch (name) {
    case "web_search":
      return needsNone({ type: "web_search" });
    case "code_interpreter":
      return needsNone({ type: "code_interpreter", container: { type: "auto" } });
    case "image_generation":
      return needsNone({ type: "image_generation" });
    case "file_search": {
      const ids = (arg ?? "").split(",").filter((id) => id.trim() !== "");
      if (ids.length === 0) throw usage(`--tool file_search needs ${HOSTED_TOOL_NAMES.file_search}`);
      return { type: "file_search", vector_store_ids: ids.map((id) => id.trim()) };
    }
    case "mcp":
      return mcpTool(arg, spec);
    default:
      throw usage(
        `--tool: unknown hosted tool ${JSON.stringify(name)} (known: ${Object.keys(HOSTED_TOOL_NAMES).join(", ")})`,
      );
  }
}

function mcpTool(arg: string | undefined, spec: string): HostedTool {
  const eq = arg?.indexOf("=") ?? -1;
  const label = arg === undefined || eq <= 0 ? "" : arg.slice(0, eq);
  const url = arg === undefined || eq <= 0 ? "" : arg.slice(eq + 1);
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(label) || !/^https?:\/\/\S+$/i.test(url)) {
    throw usage(`--tool mcp needs ${HOSTED_TOOL_NAMES.mcp} (got ${JSON.stringify(spec)})`);
  }
  return { type: "mcp", server_label: label, server_url: url };
}

function usage(message: string): EddyError {
  return new EddyError("invalid_argument", message, { fault: "user" });
}
