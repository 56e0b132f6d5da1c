/**
 * The demo model's reading of a request to *do* something, not only to look: write a file, edit
 * one, run a command. Plain regular expressions over the user's message; each returns undefined
 * when the message is not that kind of request (see `demo-model.ts` for the rules in prose).
 *
 * - **shell**: `Run \`ls -la\``, `run the command echo hi`, `execute "npm test"`, `run ls -la` (a
 *   well-known command word right after "run"), `what does \`date\` print?`, `the output of \`uname\``.
 * - **edit**: `replace X with Y in FILE`, `in FILE, change X to Y` (X and Y quoted, or single
 *   phrases).
 * - **write**: a write verb (create, make, write, save, put, store, append, add, touch) at the
 *   start of a clause and a file (a name with an extension, or after "named"/"called"); the
 *   content is quoted text, or what follows "containing", "with the text", "saying", …, or what
 *   sits between the verb and "to FILE" ("write hello to notes.txt"); none makes an empty file.
 *   "append"/"add … to" add to the end instead. A literal `\n` in the content is a line break.
 */
import { fileMentions } from "./demo-intent.js";

/** Something the user asked the demo model to do. */
export type DemoAction =
  | { kind: "write"; path: string; content: string; append: boolean }
  | { kind: "edit"; path: string; find: string; replace: string }
  | { kind: "shell"; command: string };

/** The action `text` asks for, if any (a command first, then an edit, then a write). */
export function detectAction(text: string): DemoAction | undefined {
  return shellAction(text) ?? editAction(text) ?? writeAction(text);
}

/** Commands common enough that "run ls -la" (unquoted) is taken as one. */
const COMMANDS = new Set(
  "ls pwd date echo cat whoami uname hostname uptime df du env printenv wc head tail which node npm npx python python3 git make grep find sort id seq printf true false sleep ps".split(
    " ",
  ),
);
const RUN =
  /\b(?:run|execute|exec)\b(?:\s+(?:the|this|a|that))?(\s+(?:shell\s+|bash\s+)?command\b)?\s*:?\s*/i;
const WHAT_PRINTS =
  /\bwhat\s+(?:does|do|would|will)\s+(?:the\s+command\s+)?(?:`([^`]+)`|"([^"]+)"|“([^”]+)”)\s+(?:print|output|say|show|return|give|produce)/i;
const OUTPUT_OF = /\b(?:output|result)\s+of\s+(?:the\s+command\s+)?(?:`([^`]+)`|"([^"]+)"|“([^”]+)”)/i;

function shellAction(text: string): DemoAction | undefined {
  const asked = WHAT_PRINTS.exec(text) ?? OUTPUT_OF.exec(text);
  const command = asked?.slice(1).find((g) => g !== undefined);
  if (command !== undefined && command.trim() !== "") return { kind: "shell", command: command.trim() };
  const run = RUN.exec(text);
  // "How do I run node?" asks how, not to run it.
  if (run === null || /\bhow\s+(?:do|can|should|would|to)\b[^.?!]*$/i.test(text.slice(0, run.index)))
    return undefined;
  const rest = text.slice(run.index + run[0].length);
  const quotedCommand = /^(?:`([^`]+)`|"([^"]+)"|“([^”]+)”|'([^']+)')/.exec(rest);
  const inQuotes = quotedCommand?.slice(1).find((g) => g !== undefined);
  if (inQuotes !== undefined)
    return inQuotes.trim() === "" ? undefined : { kind: "shell", command: inQuotes.trim() };
  const line = clause(rest);
  const first = line.split(/\s+/)[0] ?? "";
  if (line === "" || (run[1] === undefined && !COMMANDS.has(first))) return undefined;
  return { kind: "shell", command: line };
}

/** The command as typed, up to the end of its line or an "and tell me …" that asks for more. */
function clause(rest: string): string {
  const line = (rest.split("\n")[0] ?? "")
    .replace(/\s+(?:and|then)\s+(?:tell|show|explain|report|let|give|say|describe)\b.*$/i, "")
    .trim();
  // A sentence's full stop is not part of the command (`echo hi.`); a lone `.` argument is (`ls .`).
  return line.replace(/(?<=\w)[.?!]$/, "");
}

const QUOTED = /`([^`]+)`|"([^"]*)"|“([^”]*)”|(?:^|\s)'([^']*)'(?=$|[\s,.;:!?])/g;
const EDIT = /\b(?:replace|change|substitute|swap)\s+(?:all\s+|every\s+|each\s+)?(?:occurrences?\s+of\s+)?/i;

function editAction(text: string): DemoAction | undefined {
  const verb = EDIT.exec(text);
  if (verb === null) return undefined;
  const files = fileMentions(text);
  const path = files[0];
  if (path === undefined) return undefined;
  const rest = text.slice(verb.index + verb[0].length);
  const quotes = [...rest.matchAll(QUOTED)].map((m) => m.slice(1).find((g) => g !== undefined) ?? "");
  if (quotes.length >= 2 && quotes[0] !== "") {
    return {
      kind: "edit",
      path,
      find: unescapeTyped(quotes[0] as string),
      replace: unescapeTyped(quotes[1] as string),
    };
  }
  const plain =
    /^(?:the\s+(?:word|text|string|line|phrase)\s+)?(.+?)\s+(?:with|to|into|by|for)\s+(.+?)(?:\s+(?:in|inside|within)\s+(?:the\s+file\s+)?\S+)?\s*[.!?]?$/i.exec(
      rest.split("\n")[0] ?? "",
    );
  const find = plain?.[1]?.trim();
  const replace = plain?.[2]?.trim();
  if (find === undefined || replace === undefined || find === "" || files.includes(find)) return undefined;
  return { kind: "edit", path, find, replace };
}

const WRITE_VERB =
  /(?:^|[.!?;,:]\s*|\b(?:please|you|to|and|then|now|also)\s+)(create|make|write|save|put|store|append|add|touch|generate)\b/i;
const CONTENT_MARKER =
  /\b(?:containing|that\s+contains|which\s+contains|with\s+(?:the\s+|this\s+)?(?:text|content|contents|words?|line|string|message)|that\s+says|which\s+says|saying|reading)\b\s*:?\s*(?:the\s+(?:text|words?|line|string)\s+)?/i;

function writeAction(text: string): DemoAction | undefined {
  const verb = WRITE_VERB.exec(text);
  if (verb === null || /\b(?:folder|directory|dir)\s+(?:named|called)\b/i.test(text)) return undefined;
  const named = /\b(?:named|called)\s+[`"'“]?([\w@./-]*[\w@-])[`"'”]?/i.exec(text)?.[1];
  const path = named ?? fileMentions(text)[0];
  if (path === undefined || path.includes("..")) return undefined;
  const word = (verb[1] ?? "").toLowerCase();
  const afterVerb = verb.index + verb[0].length;
  const append = word === "append" || word === "add" || /\bto\s+the\s+end\s+of\b/i.test(text);
  const content = writeContent(text, afterVerb, path);
  // Without content only "create FILE" (the file its object) makes one, empty: "make sense of a.txt" does not.
  if (content === undefined && !(CREATE_EMPTY.has(word) && objectIsFile(text.slice(afterVerb), path)))
    return undefined;
  return { kind: "write", path, content: unescapeTyped(content ?? ""), append };
}

const CREATE_EMPTY = new Set(["create", "make", "touch"]);

/** Whether `rest` (after the verb) starts with the file: "notes.txt", "a new file named notes.txt", … */
function objectIsFile(rest: string, path: string): boolean {
  const escaped = path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(
    `^\\s+(?:an?\\s+|the\\s+)?(?:(?:new|empty|blank|text)\\s+)*(?:file\\s+)?(?:(?:named|called)\\s+)?[\`"'“]?${escaped}`,
    "i",
  ).test(rest);
}

/** The text to write: after a content marker, after "with" following the file, or between the verb and "to FILE". */
function writeContent(text: string, afterVerb: number, path: string): string | undefined {
  const marker = CONTENT_MARKER.exec(text);
  if (marker !== null) return payload(text.slice(marker.index + marker[0].length));
  const at = text.indexOf(path, afterVerb);
  if (at !== -1) {
    const withText = /^[`"'”]?\s+with\s+(.+)$/is.exec(text.slice(at + path.length));
    if (withText?.[1] !== undefined) return payload(withText[1]);
  }
  const between = text.slice(afterVerb, at === -1 ? undefined : at);
  const target =
    /^\s*(.+?)\s+(?:to|into|in|at)\s+(?:the\s+end\s+of\s+)?(?:(?:the|a|new)\s+)*(?:file\s+)?(?:(?:named|called)\s+)?[`"'“]?$/is.exec(
      between,
    );
  const given = target?.[1]?.replace(/^(?:the\s+)?(?:text|line|words?|string)\s+/i, "");
  if (given === undefined || /^(?:an?\s+)?(?:empty\s+|new\s+)*file$/i.test(given.trim())) return undefined;
  return payload(given);
}

/** Quoted text when the payload is quoted, else the rest of its line without a closing full stop. */
function payload(rest: string): string {
  const quoted = /^\s*(?:`([^`]*)`|"([^"]*)"|“([^”]*)”|'([^']*)')/.exec(rest);
  const inQuotes = quoted?.slice(1).find((g) => g !== undefined);
  if (inQuotes !== undefined) return inQuotes;
  return (rest.split("\n")[0] ?? "").trim().replace(/[.!]$/, "");
}

/** `\n` and `\t` typed in a message stand for a line break and a tab. */
function unescapeTyped(text: string): string {
  return text.replace(/\\n/g, "\n").replace(/\\t/g, "\t");
}
