/**
 * `grep {pattern, path?, regex?, case_sensitive?, include?, max_results?}`: search text files in the
 * workspace for a literal string (default) or a JavaScript regular expression. Prints
 * `path:line:text` lines in a deterministic order (files in walk order, lines ascending). Skips
 * binary files, very large files, hidden entries and `node_modules`/`.git`.
 */
import { readFile, stat } from "node:fs/promises";
import { TOOL_DEFAULTS } from "../defaults.js";
import { type ToolDefinition, toolResult } from "../tool.js";
import { shortenText } from "../utf8.js";
import { resolveInWorkspace, workspaceRoot } from "../workspace.js";
import {
  fsFailure,
  GLOBS_SCHEMA,
  type Globs,
  globMatcher,
  looksBinary,
  throwIfAborted,
  toolFailure,
} from "./common.js";
import { walk } from "./walk.js";

/** Arguments of `grep`. */
export interface GrepArgs {
  pattern: string;
  path?: string;
  regex?: boolean;
  case_sensitive?: boolean;
  include?: Globs;
  max_results?: number;
}

interface Counters {
  searched: number;
  binary: number;
  large: number;
}

/** The `grep` tool. */
export const grepTool: ToolDefinition<GrepArgs> = {
  name: "grep",
  description:
    "Search text files in the workspace. Prints one 'path:line:text' line per matching line. The pattern is literal text " +
    "unless regex is true (JavaScript regular expression syntax). Case-sensitive unless case_sensitive is false. " +
    `path is a file or directory (default: the workspace root); include globs filter file paths. At most max_results matches (default ${TOOL_DEFAULTS.grepMaxResults}). ` +
    `Skips binary files, hidden entries and ${TOOL_DEFAULTS.skipDirs.join("/")}.`,
  parameters: {
    type: "object",
    properties: {
      pattern: {
        type: "string",
        minLength: 1,
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
    },
    required: ["pattern"],
    additionalProperties: false,
  },
  truncationHint: "narrow the pattern, path or include, or lower max_results",
  async execute(args, { workspace, signal }) {
    const matches = lineMatcher(args);
    const target = await resolveInWorkspace(await workspaceRoot(workspace), args.path ?? ".", "grep");
    let isDir: boolean;
    try {
      const info = await stat(target.absolute);
      isDir = info.isDirectory();
      if (!isDir && !info.isFile()) {
        throw toolFailure("tool_failed", `grep: ${target.display} is not a regular file or directory`);
      }
    } catch (error) {
      throw fsFailure("grep", error, target.display);
    }
    const max = args.max_results ?? TOOL_DEFAULTS.grepMaxResults;
    const include = globMatcher(args.include);
    const counters: Counters = { searched: 0, binary: 0, large: 0 };
    const results: string[] = [];
    const notes: string[] = [];

    const searchFile = async (absolute: string, display: string): Promise<boolean> => {
      throwIfAborted(signal);
      const size = (await stat(absolute)).size;
      if (size > TOOL_DEFAULTS.grepMaxFileBytes) {
        counters.large++;
        return true;
      }
      const bytes = await readFile(absolute);
      if (looksBinary(bytes)) {
        counters.binary++;
        return true;
      }
      counters.searched++;
      const lines = bytes.toString("utf8").split("\n");
      for (let i = 0; i < lines.length; i++) {
        const line = (lines[i] ?? "").replace(/\r$/, "");
        if (!matches(line)) continue;
        if (results.length === max) return false;
        results.push(`${display}:${i + 1}:${shortenText(line, TOOL_DEFAULTS.grepMaxLineChars)}`);
      }
      return true;
    };

    let complete = true;
    if (!isDir) {
      complete = await searchFile(target.absolute, target.display).catch((error: unknown) => {
        throw fsFailure("grep", error, target.display);
      });
    } else {
      for await (const entry of walk(target.absolute, target.display, {
        maxDepth: Number.POSITIVE_INFINITY,
        includeHidden: false,
        signal,
        onError: (message) => notes.push(`grep: ${message}`),
      })) {
        if (entry.kind !== "file" || (include !== undefined && !include(entry.display))) continue;
        try {
          complete = await searchFile(entry.absolute, entry.display);
        } catch (error) {
          throwIfAborted(signal);
          notes.push(
            `grep: skipped ${fsFailure("grep", error, entry.display).message.replace(/^grep: /, "")}`,
          );
        }
        if (!complete) break;
      }
    }

    if (!complete) {
      notes.push(
        `grep: stopped after ${max} matches (there are more); narrow the pattern, path or include, or raise max_results.`,
      );
    }
    if (counters.binary > 0) notes.push(`grep: skipped ${counters.binary} binary file(s).`);
    if (counters.large > 0) {
      notes.push(
        `grep: skipped ${counters.large} file(s) larger than ${TOOL_DEFAULTS.grepMaxFileBytes} bytes.`,
      );
    }
    if (results.length === 0) {
      notes.push(
        `grep: no matches for ${JSON.stringify(args.pattern)} in ${target.display} (${counters.searched} file(s) searched).`,
      );
    }
    return toolResult({
      ok: true,
      stdout: results.join("\n"),
      stderr: notes.join("\n"),
      artifacts: {
        path: target.display,
        matches: results.length,
        files_searched: counters.searched,
        truncated: !complete,
      },
    });
  },
};

/** The per-line test for the arguments; an invalid regular expression is the model's to fix. */
function lineMatcher(args: GrepArgs): (line: string) => boolean {
  const caseSensitive = args.case_sensitive !== false;
  if (args.regex !== true) {
    if (caseSensitive) return (line) => line.includes(args.pattern);
    const re = new RegExp(args.pattern.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "i");
    return (line) => re.test(line);
  }
  let re: RegExp;
  try {
    re = new RegExp(args.pattern, caseSensitive ? "" : "i");
  } catch (error) {
    throw toolFailure(
      "tool_input_invalid",
      `grep: invalid regular expression ${JSON.stringify(args.pattern)}: ${(error as Error).message}; fix it, or set regex:false to search for the literal text`,
    );
  }
  return (line) => re.test(line);
}
