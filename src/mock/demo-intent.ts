/**
 * The demo model's reading of a user message: which built-in tool would answer it, with which
 * arguments. Plain, documented regular expressions (see `demo-model.ts` for the rules in prose).
 */

/** A tool call the demo model would like to make. */
export interface DemoCall {
  name: string;
  args: Record<string, unknown>;
}

const SEARCH =
  /\b(?:search(?:es|ing)?|grep|find|look(?:ing)? for|occurrences? of|usages? of|where (?:is|are))\b/i;
const LIST_VERB =
  /\b(?:list|ls|show|what(?:'s| is| are)?|which)\b[^.?!]*?\b(?:files?|folders?|director(?:y|ies)|dirs?|contents|entries)\b/i;
const WHAT_IS_IN =
  /\bwhat(?:'s| is| are)?\s+(?:in|inside)\s+(?:the\s+|this\s+|my\s+)?(?:current\s+)?([\w./-]+)/i;
const PLACES = /^(?:folder|directory|dir|repo|repository|project|workspace|here|cwd)$/i;
/** "What is in this image?" asks about an attachment, not a folder named "image". */
const ATTACHED =
  /^(?:images?|pictures?|photos?|screenshots?|attachments?|attached|pdfs?|documents?|scans?)$/i;
const FILE =
  /(?:^|[\s"'`(<[])((?:[\w@.-]+\/)*[\w@-][\w@.-]*\.[A-Za-z][A-Za-z0-9]{0,7})(?=$|[\s"'`),:;!?>\]]|\.(?:\s|$))/g;
const NOT_FILES = /^(?:e\.g|i\.e|etc|vs|a\.m|p\.m|(?:node|next|nuxt|vue|react|express|three|d3|deno)\.js)$/i;
const STOP = new Set(
  "a an the for of to in on at all any every word words string strings text term usages uses use references reference occurrences occurrence it this that out me files file code project repo some where is are what how why which whether if says say tell".split(
    " ",
  ),
);

/** The calls that would answer `text`, in order (empty when no tool fits). */
export function detectCalls(text: string): DemoCall[] {
  const files = fileMentions(text);
  const search = SEARCH.exec(text);
  if (search !== null) {
    const pattern = quoted(text) ?? wordAfter(text, search.index + search[0].length, files);
    if (pattern !== undefined) {
      const path = files[0] ?? folderMention(text);
      return [{ name: "grep", args: path === undefined ? { pattern } : { pattern, path } }];
    }
  }
  const whatIsIn = WHAT_IS_IN.exec(text);
  const inFolder =
    whatIsIn?.[1] !== undefined &&
    !/\.[A-Za-z]/.test(whatIsIn[1]) &&
    !STOP.has(whatIsIn[1].toLowerCase()) &&
    !ATTACHED.test(whatIsIn[1]);
  if (LIST_VERB.test(text) || inFolder) {
    const named =
      inFolder && whatIsIn?.[1] !== undefined && !PLACES.test(whatIsIn[1]) ? whatIsIn[1] : undefined;
    return [{ name: "list_dir", args: { path: named ?? folderMention(text) ?? "." } }];
  }
  const range = lineRange(text);
  return files.slice(0, 3).map((path) => ({ name: "read_file", args: { path, ...range } }));
}

/** Path-like tokens with an extension: `package.json`, `src/x.ts`, `./README.md`. */
export function fileMentions(text: string): string[] {
  const out: string[] = [];
  for (const match of text.matchAll(FILE)) {
    const path = (match[1] ?? "").replace(/^\.\//, "");
    if (path === "" || NOT_FILES.test(path) || /^\d/.test(path) || path.includes("..")) continue;
    if (!out.includes(path)) out.push(path);
  }
  return out;
}

/** A folder named with a trailing slash (`src/`), or after "in"/"under" (`in src`). */
function folderMention(text: string): string | undefined {
  const slash = /(?:^|\s)`?((?:[\w@.-]+\/)+)`?(?=$|[\s,.;:!?])/.exec(text)?.[1];
  if (slash !== undefined) return slash.replace(/\/$/, "") || ".";
  const named =
    /\b(?:in|under|inside)\s+(?:the\s+)?`?([\w@-]+(?:\/[\w@.-]+)*)`?\s*(?:folder|directory|dir)?(?=$|[\s,.;:!?])/i.exec(
      text,
    )?.[1];
  if (
    named === undefined ||
    STOP.has(named.toLowerCase()) ||
    PLACES.test(named) ||
    ATTACHED.test(named) ||
    /\.[A-Za-z]/.test(named)
  )
    return undefined;
  return named;
}

/** The first quoted term: "…", '…', `…`, “…”. */
function quoted(text: string): string | undefined {
  const m = /"([^"]+)"|`([^`]+)`|“([^”]+)”|(?:^|\s)'([^']+)'/.exec(text);
  return m?.slice(1).find((g) => g !== undefined);
}

/** The first word after `from` that is not filler and not a file mention. */
function wordAfter(text: string, from: number, files: string[]): string | undefined {
  for (const word of text.slice(from).split(/[\s,;:!?]+/)) {
    const w = word.replace(/^[("'`]+|[)"'`.]+$/g, "");
    if (w === "" || STOP.has(w.toLowerCase()) || files.includes(w)) continue;
    return w;
  }
  return undefined;
}

/** "lines 10-20" / "lines 10 to 20" / "first 5 lines". */
function lineRange(text: string): { start_line?: number; end_line?: number } {
  const range = /\blines?\s+(\d+)\s*(?:-|–|to|through)\s*(\d+)/i.exec(text);
  if (range !== null) return { start_line: Number(range[1]), end_line: Number(range[2]) };
  const first = /\bfirst\s+(\d+)\s+lines\b/i.exec(text);
  if (first !== null) return { start_line: 1, end_line: Number(first[1]) };
  return {};
}

/** Arguments for a call the demo must make without a matching request (`tool_choice` forces it). */
export function defaultArgs(name: string, text: string): Record<string, unknown> {
  const detected = detectCalls(text).find((c) => c.name === name);
  if (detected !== undefined) return detected.args;
  if (name === "list_dir") return { path: "." };
  if (name === "read_file") return { path: fileMentions(text)[0] ?? "README.md" };
  if (name === "grep") return { pattern: quoted(text) ?? "TODO" };
  return {};
}
