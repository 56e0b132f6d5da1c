/**
 * `list_dir {path?, recursive?, max_depth?, include?, exclude?, include_hidden?}`: the entries below a
 * workspace directory, one workspace-relative path per line (joined with "\n": the reference system
 * glued them together), directories marked with a trailing `/`, in a deterministic tree order.
 */
import { stat } from "node:fs/promises";
import { TOOL_DEFAULTS } from "../defaults.js";
import { type ToolDefinition, toolResult } from "../tool.js";
import { resolveInWorkspace, workspaceRoot } from "../workspace.js";
import { fsFailure, GLOBS_SCHEMA, type Globs, globMatcher, toolFailure } from "./common.js";
import { walk } from "./walk.js";

/** Arguments of `list_dir`. */
export interface ListDirArgs {
  path?: string;
  recursive?: boolean;
  max_depth?: number;
  include?: Globs;
  exclude?: Globs;
  include_hidden?: boolean;
}

/** The `list_dir` tool. */
export const listDirTool: ToolDefinition<ListDirArgs> = {
  name: "list_dir",
  description:
    "List a directory in the workspace: one path per line, relative to the workspace root, directories end with '/'. " +
    `Recursive listing goes max_depth levels deep (default ${TOOL_DEFAULTS.listMaxDepth}); include/exclude are globs ` +
    "matched against workspace-relative paths (a glob without '/' matches the file name at any depth). " +
    `Hidden entries are skipped unless include_hidden is true; ${TOOL_DEFAULTS.skipDirs.join(" and ")} are listed but not entered. ` +
    `At most ${TOOL_DEFAULTS.listMaxEntries} entries.`,
  parameters: {
    type: "object",
    properties: {
      path: { type: "string", description: "Directory relative to the workspace root. Default: the root." },
      recursive: { type: "boolean", description: "List subdirectories too. Default false." },
      max_depth: {
        type: "integer",
        minimum: 1,
        description: `Deepest level to list (1 = direct children). Default 1, or ${TOOL_DEFAULTS.listMaxDepth} when recursive.`,
      },
      include: { ...GLOBS_SCHEMA, description: 'Only list entries matching these globs (e.g. "*.ts").' },
      exclude: {
        ...GLOBS_SCHEMA,
        description: "Skip entries matching these globs (excluded directories are not entered).",
      },
      include_hidden: { type: "boolean", description: "List dot-files and dot-directories. Default false." },
    },
    additionalProperties: false,
  },
  truncationHint: "list a narrower path, or use max_depth, include or exclude",
  async execute(args, { workspace, signal }) {
    const target = await resolveInWorkspace(await workspaceRoot(workspace), args.path ?? ".", "list_dir");
    try {
      if (!(await stat(target.absolute)).isDirectory()) {
        throw toolFailure(
          "tool_failed",
          `list_dir: ${target.display} is a file, not a directory; use read_file to read it`,
        );
      }
    } catch (error) {
      throw fsFailure("list_dir", error, target.display);
    }
    const maxDepth = args.max_depth ?? (args.recursive === true ? TOOL_DEFAULTS.listMaxDepth : 1);
    const include = globMatcher(args.include);
    const exclude = globMatcher(args.exclude);
    const limit = TOOL_DEFAULTS.listMaxEntries;
    const lines: string[] = [];
    const problems: string[] = [];
    let truncated = false;
    for await (const entry of walk(target.absolute, target.display, {
      maxDepth,
      includeHidden: args.include_hidden === true,
      descend: (e) => exclude === undefined || !exclude(e.display),
      signal,
      onError: (message) => problems.push(`list_dir: ${message}`),
    })) {
      if (exclude?.(entry.display)) continue;
      // include filters what is printed, not where the walk goes: matches deep down still show.
      if (include !== undefined && !include(entry.display)) continue;
      if (lines.length === limit) {
        truncated = true;
        break;
      }
      lines.push(entry.kind === "dir" ? `${entry.display}/` : entry.display);
    }
    if (truncated) {
      problems.push(
        `list_dir: stopped after ${limit} entries (there are more); list a narrower path, or use max_depth, include or exclude.`,
      );
    } else if (lines.length === 0) {
      problems.push(`list_dir: ${target.display} has no entries${filtersNote(args)}.`);
    }
    return toolResult({
      ok: true,
      stdout: lines.join("\n"),
      stderr: problems.join("\n"),
      artifacts: { path: target.display, entries: lines.length, truncated },
    });
  },
};

function filtersNote(args: ListDirArgs): string {
  const filters: string[] = [];
  if (args.include !== undefined) filters.push("include");
  if (args.exclude !== undefined) filters.push("exclude");
  if (args.include_hidden !== true) filters.push("hidden entries skipped");
  return filters.length === 0 ? "" : ` (filters: ${filters.join(", ")})`;
}
