/**
 * `grep {pattern, path?, regex?, case_sensitive?, include?, max_results?, include_ignored?}`: search
 * text files in the workspace for a literal string (default) or a regular expression. Prints
 * `path:line:text` lines in a deterministic order (files in walk order, lines ascending). Skips
 * binary files, very large files, hidden entries, what `.gitignore`/`.ignore` exclude (unless
 * `include_ignored`) and `node_modules`. The pattern is compiled here (a bad one is refused before
 * any work); the search itself runs in a worker thread (`grep-search.ts`), which a cancellation
 * or timeout terminates. A file or directory that cannot be read makes the call `ok:false`.
 */
import { TOOL_DEFAULTS } from "../defaults.js";
import { type ToolDefinition, toolResult } from "../tool.js";
import { resolveInWorkspace, workspaceRoot } from "../workspace.js";
import { fsFailure, GLOBS_SCHEMA, type Globs, incompleteError, toolFailure } from "./common.js";
import { compileScanner } from "./grep-matcher.js";
import type { GrepOutcome, GrepRequest } from "./grep-search.js";
import { runInWorker } from "./worker-task.js";

/** Arguments of `grep`. */
export interface GrepArgs {
  pattern: string;
  path?: string;
  regex?: boolean;
  case_sensitive?: boolean;
  include?: Globs;
  max_results?: number;
  include_ignored?: boolean;
}

/** The `grep` tool. */
export const grepTool: ToolDefinition<GrepArgs> = {
  name: "grep",
  readOnly: true,
  description:
    "Search text files in the workspace. Prints one 'path:line:text' line per matching line. The pattern is literal text " +
    "unless regex is true (JavaScript regular expression syntax, run in linear time: no lookahead or backreferences). " +
    "Case-sensitive unless case_sensitive is false. " +
    `path is a file or directory (default: the workspace root); include globs filter file paths. At most max_results matches (default ${TOOL_DEFAULTS.grepMaxResults}). ` +
    `Skips binary files, hidden entries, ${TOOL_DEFAULTS.skipDirs.join("/")} and what .gitignore/.ignore files exclude (include_ignored:true searches those too).`,
  parameters: {
    type: "object",
    properties: {
      pattern: {
        type: "string",
        minLength: 1,
        maxLength: TOOL_DEFAULTS.grepMaxPatternChars,
        description: "Text (or regular expression, with regex:true) to find.",
      },
      path: {
        type: "string",
        description: "File or directory relative to the workspace root. Default: the root.",
      },
      regex: { type: "boolean", description: "Treat pattern as a regular expression. Default false." },
      case_sensitive: { type: "boolean", description: "Match case exactly. Default true." },
      include: { ...GLOBS_SCHEMA, description: 'Only search files matching these globs (e.g. "*.ts").' },
      max_results: {
        type: "integer",
        minimum: 1,
        maximum: TOOL_DEFAULTS.grepMaxResultsLimit,
        description: `Most matching lines to print. Default ${TOOL_DEFAULTS.grepMaxResults}.`,
      },
      include_ignored: {
        type: "boolean",
        description: `Also search what .gitignore/.ignore files exclude, and ${TOOL_DEFAULTS.skipDirs.join(", ")}. Default false.`,
      },
    },
    required: ["pattern"],
    additionalProperties: false,
  },
  truncationHint: "narrow the pattern, path or include, or lower max_results",
  async execute(args, { workspace, signal }) {
    const spec = {
      pattern: args.pattern,
      regex: args.regex === true,
      caseSensitive: args.case_sensitive !== false,
    };
    compileScanner(spec); // refuses a bad pattern here, before a worker is involved
    const root = await workspaceRoot(workspace);
    const target = await resolveInWorkspace(root, args.path ?? ".", "grep");
    const max = args.max_results ?? TOOL_DEFAULTS.grepMaxResults;
    const request: GrepRequest = {
      ...spec,
      root,
      target: { absolute: target.absolute, display: target.display },
      include: args.include,
      maxResults: max,
      includeIgnored: args.include_ignored === true,
    };
    let outcome: GrepOutcome;
    try {
      outcome = await runInWorker<GrepOutcome>("grep", request, signal);
    } catch (error) {
      throw fsFailure("grep", error, target.display);
    }
    if (outcome.special === true) {
      throw toolFailure("tool_failed", `grep: ${target.display} is not a regular file or directory`);
    }
    return toToolResult(args, target.display, outcome, max);
  },
};

function toToolResult(args: GrepArgs, display: string, outcome: GrepOutcome, max: number) {
  const notes = [...outcome.unreadable, ...outcome.skipped].map((message) => `grep: ${message}`);
  if (!outcome.complete) {
    notes.push(
      `grep: stopped after ${max} matches (there are more); narrow the pattern, path or include, or raise max_results.`,
    );
  }
  if (outcome.binary > 0) notes.push(`grep: skipped ${outcome.binary} binary file(s).`);
  if (outcome.large > 0) {
    notes.push(`grep: skipped ${outcome.large} file(s) larger than ${TOOL_DEFAULTS.grepMaxFileBytes} bytes.`);
  }
  if (outcome.results.length === 0) {
    notes.push(
      `grep: no matches for ${JSON.stringify(args.pattern)} in ${display} (${outcome.searched} file(s) searched).`,
    );
  }
  const failed = outcome.unreadable.length > 0;
  return toolResult({
    ok: !failed,
    stdout: outcome.results.join("\n"),
    stderr: notes.join("\n"),
    artifacts: {
      path: display,
      matches: outcome.results.length,
      files_searched: outcome.searched,
      truncated: !outcome.complete,
    },
    ...(failed ? { error: incompleteError("grep", outcome.unreadable, "search") } : {}),
  });
}
