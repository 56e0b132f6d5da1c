/**
 * `list_dir {path?, recursive?, max_depth?, include?, exclude?, include_hidden?, include_ignored?}`:
 * the entries below a workspace directory, one workspace-relative path per line (joined with "\n":
 * the reference system glued them together), directories marked with a trailing `/`, in a
 * deterministic tree order. What `.gitignore`/`.ignore` exclude is left out unless
 * `include_ignored` (`ignore-rules.ts`). A directory that cannot be read makes the call `ok:false`
 * (the entries that could be listed are still shown).
 */
import { TOOL_DEFAULTS } from "../defaults.js";
import { type ToolDefinition, toolResult } from "../tool.js";
import { resolveInWorkspace, workspaceRoot } from "../workspace.js";
import { type AnchoredDir, openDir } from "../workspace-fs.js";
import { fsFailure, GLOBS_SCHEMA, type Globs, globMatcher, incompleteError, toolFailure } from "./common.js";
import { walkRules } from "./ignore-rules.js";
import { walk } from "./walk.js";

/** Arguments of `list_dir`. */
export interface ListDirArgs {
  path?: string;
  recursive?: boolean;
  max_depth?: number;
  include?: Globs;
  exclude?: Globs;
  include_hidden?: boolean;
  include_ignored?: boolean;
}

/** The `list_dir` tool. */
export const listDirTool: ToolDefinition<ListDirArgs> = {
  name: "list_dir",
  readOnly: true,
  description:
    "List a directory in the workspace: one path per line, relative to the workspace root, directories end with '/'. " +
    `Recursive listing goes max_depth levels deep (default ${TOOL_DEFAULTS.listMaxDepth}); include/exclude are globs ` +
    "matched against workspace-relative paths (a glob without '/' matches the file name at any depth). " +
    "Hidden entries are skipped unless include_hidden is true; entries excluded by .gitignore/.ignore files (and .git) " +
    `are skipped unless include_ignored is true; ${TOOL_DEFAULTS.skipDirs.join(" and ")} is listed but not entered. ` +
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
      include_ignored: {
        type: "boolean",
        description: `Also list what .gitignore/.ignore files exclude, .git, and enter ${TOOL_DEFAULTS.skipDirs.join(", ")}. Default false.`,
      },
    },
    additionalProperties: false,
  },
  truncationHint: "list a narrower path, or use max_depth, include or exclude",
  async execute(args, { workspace, signal }) {
    const root = await workspaceRoot(workspace);
    const target = await resolveInWorkspace(root, args.path ?? ".", "list_dir");
    let start: AnchoredDir;
    try {
      start = await openDir(root, target.absolute, { tool: "list_dir", display: target.display });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOTDIR") {
        throw toolFailure(
          "tool_failed",
          `list_dir: ${target.display} is a file, not a directory; use read_file to read it`,
        );
      }
      throw fsFailure("list_dir", error, target.display);
    }
    try {
      return await listEntries(root, start, target.display, args, signal);
    } finally {
      await start.close();
    }
  },
};

async function listEntries(
  root: string,
  start: AnchoredDir,
  display: string,
  args: ListDirArgs,
  signal: AbortSignal,
) {
  const maxDepth = args.max_depth ?? (args.recursive === true ? TOOL_DEFAULTS.listMaxDepth : 1);
  const include = globMatcher(args.include, "list_dir");
  const exclude = globMatcher(args.exclude, "list_dir");
  const limit = TOOL_DEFAULTS.listMaxEntries;
  const lines: string[] = [];
  const problems: string[] = [];
  const unreadable: string[] = [];
  let truncated = false;
  for await (const entry of walk(start, display, {
    maxDepth,
    includeHidden: args.include_hidden === true,
    ignore: await walkRules(root, display, args.include_ignored === true, "list_dir"),
    descend: (e) => exclude === undefined || !exclude(e.display),
    signal,
    onError: (message) => unreadable.push(message),
    onSkip: (message) => problems.push(`list_dir: ${message}`),
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
  for (const message of unreadable) problems.push(`list_dir: ${message}`);
  if (truncated) {
    problems.push(
      `list_dir: stopped after ${limit} entries (there are more); list a narrower path, or use max_depth, include or exclude.`,
    );
  } else if (lines.length === 0 && unreadable.length === 0) {
    problems.push(`list_dir: ${display} has no entries${filtersNote(args)}.`);
  }
  return toolResult({
    ok: unreadable.length === 0,
    stdout: lines.join("\n"),
    stderr: problems.join("\n"),
    artifacts: { path: display, entries: lines.length, truncated },
    ...(unreadable.length === 0 ? {} : { error: incompleteError("list_dir", unreadable, "listing") }),
  });
}

function filtersNote(args: ListDirArgs): string {
  const filters: string[] = [];
  if (args.include !== undefined) filters.push("include");
  if (args.exclude !== undefined) filters.push("exclude");
  if (args.include_hidden !== true) filters.push("hidden entries skipped");
  if (args.include_ignored !== true) filters.push("ignored entries skipped");
  return filters.length === 0 ? "" : ` (filters: ${filters.join(", ")})`;
}
