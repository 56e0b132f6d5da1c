/**
 * # The demo model
 *
 * What answers when the mock server runs without a scenario (`eddy run` with no provider
 * configured, `eddy mock` with no `--scenario`). It is not a language model: a handful of
 * deterministic rules, so the same conversation always gets the same answer.
 *
 * It reads the **last user message** and what happened after it in the conversation (the chain of
 * `previous_response_id`, or the full history a stateless client resends):
 *
 * 1. **The message asks it to do something** (`demo-actions.ts`, carried out by `demo-act.ts`):
 *    - write a file ("Create a file named notes.txt containing the text hello", "write X to FILE",
 *      "create FILE with …", "append … to FILE") → `write_file {path, content[, append]}` (an
 *      append reads the file first, so the text starts on a line of its own);
 *    - change text in a file ("replace X with Y in FILE") → `read_file`, then `apply_patch` (or
 *      `write_file` when only that is offered);
 *    - run a command ("Run \`ls -la\`", "run the command echo hi", "what does \`date\` print?") →
 *      `shell {command}`;
 *    then a short summary of the result ("I created notes.txt (5 bytes).", the command's output,
 *    the error). When the tool is not offered it says which flag enables it in eddy
 *    (`--allow-write`, `--allow-shell`) and what it would have done.
 * 2. **A tool would answer it, and the request offers that tool** → it calls the tool:
 *    - a search (`search`, `grep`, `find`, `look for`, `where is`, …) with a term (the first quoted
 *      text, else the next meaningful word) → `grep {pattern, path?}` (path: a file or folder named
 *      in the message);
 *    - a listing (`list the files`, `what files …`, `what is in the folder`, `what's in src`) →
 *      `list_dir {path}` (`"."` unless a folder is named, e.g. `src/`); not when the message asks
 *      about what it carries ("What is in this image?" with an image attached);
 *    - file names with an extension (`package.json`, `src/x.ts`; up to 3) → one `read_file {path}`
 *      each (plus `start_line`/`end_line` for "lines 10-20" or "first 5 lines").
 *    Calls already made since that user message are not repeated; with `parallel_tool_calls:
 *    false` or `max_tool_calls` they are made one response at a time.
 *    - a function tool that is not one of eddy's own (e.g. `get_weather`, an MCP server's
 *      `NAME__TOOL`), when its name or description shares a word with the message → the best
 *      match, with arguments from the message where it can (quoted text, the words after the
 *      tool's name, numbers), else built from its JSON Schema (`demo-tools.ts`).
 * 3. **All its calls are answered** (`function_call_output`s came back) → it replies in text that
 *    uses the outputs (eddy's `{tool, ok, exit_code, stdout, stderr, …}` JSON, else the raw
 *    string): a file's first lines in a code block and, for JSON such as package.json, its
 *    top-level keys, name/version/description, scripts and dependency counts; a folder's entry
 *    count and names; a search's match count per file; a command's output; another tool's fields;
 *    for `ok: false`, the error.
 * 4. **The message carries images or files** (`input_image`, `input_file`; `image_url` and `file`
 *    parts through Chat Completions) → it names each one's MIME type and size in bytes, an image's
 *    pixel dimensions, a file's name, a text file's line count and first line, a PDF's version and
 *    page count (see `demo-attachments.ts`); URLs are not downloaded.
 * 5. **The message states or asks about a fact the user gave** ("my name is Ada", "what is my
 *    name?") → it acknowledges the statement, or answers from what the user's messages in the
 *    conversation stated — earlier turns, a resent history, a context bundle (`demo-recall.ts`).
 * 6. **Otherwise** it says what it is (eddy's built-in offline demo model), what it can do, and how
 *    to use a real model; if a tool would have helped but is not offered (or `tool_choice` is
 *    `"none"`), it says which one.
 *
 * It honours `tool_choice` (`none`: never calls; `required` or a named function: always calls, with
 * arguments guessed from the message, e.g. `list_dir {path: "."}`; `allowed_tools`: only those),
 * `parallel_tool_calls` and `max_tool_calls`. With `reasoning` set it first emits a reasoning item
 * naming the rule it applied (its `encrypted_content` is sent when `include` asks for it). With a
 * `json_schema` text format the reply is a JSON value built from the schema. Text streams in
 * word-sized deltas.
 */
import type { ItemParam } from "../protocol/types.js";
import { isJsonObject } from "../util/json.js";
import { actStep } from "./demo-act.js";
import { detectAction } from "./demo-actions.js";
import { type AnsweredCall, answerCalls } from "./demo-answer.js";
import { describeAttachments } from "./demo-attachments.js";
import { type DemoCall, defaultArgs, detectCalls } from "./demo-intent.js";
import { sampleFromSchema } from "./demo-json.js";
import { recallReply } from "./demo-recall.js";
import { argumentsFromSchema, bestForeignTool, EDDY_TOOLS } from "./demo-tools.js";
import type { PlannedItem, TurnPlan } from "./plan.js";
import type { MockRequestBody } from "./request.js";
import type { Conversation, ConversationItem } from "./state.js";
import { callableTools, mayCall, type ToolPolicy } from "./tool-policy.js";

/** What the demo model sees. */
export interface DemoModelInput {
  body: MockRequestBody;
  conversation: Conversation;
  policy: ToolPolicy;
}

const BUILTINS = ["read_file", "list_dir", "grep"];

/** The demo model's answer (see the module comment for the rules). */
export function demoModel({ body, conversation, policy }: DemoModelInput): TurnPlan {
  const turn = readTurn(conversation);
  const decision = decide(turn, body, policy);
  let items: PlannedItem[];
  if (decision.kind === "calls") {
    items = decision.calls.map((c) => ({
      type: "function_call",
      name: c.name,
      arguments: JSON.stringify(c.args),
    }));
  } else {
    let reply = decision.text;
    const format = body.text?.format;
    if (format !== undefined && format !== null && format.type !== "text") {
      reply = JSON.stringify(sampleFromSchema(format.schema ?? {}, reply));
    }
    items = [{ type: "message", parts: [{ type: "output_text", text: reply }] }];
  }
  const effort = body.reasoning?.effort;
  if (effort !== undefined && effort !== null && effort !== "none") {
    const summary = body.reasoning?.summary ? [`Rule: ${decision.rule}.`] : [];
    const state = Buffer.from(JSON.stringify({ model: "eddy-demo", rule: decision.rule })).toString(
      "base64url",
    );
    items.unshift({ type: "reasoning", summary, content: [], encrypted_content: `eddy-demo.${state}` });
  }
  return { items, status: "completed" };
}

/** The conversation as the rules read it: the last user message and what happened after it. */
interface Turn {
  text: string;
  /** Content parts of the last user message (for attachments). */
  parts: unknown[];
  /** The text of every user message up to and including the last one. */
  userTexts: string[];
  /** Calls made since the last user message. */
  made: Array<{ name: string; arguments: string }>;
  /** Those of them that were answered, with their outputs, in order. */
  answered: AnsweredCall[];
}

type Decision =
  | { kind: "calls"; calls: DemoCall[]; rule: string }
  | { kind: "reply"; text: string; rule: string };

function readTurn({ context }: Conversation): Turn {
  const lastUser = findLastIndex(context, (i) => i.type === "message" && "role" in i && i.role === "user");
  const since = context.slice(lastUser + 1);
  const made = since.flatMap((i) => (i.type === "function_call" ? [i] : []));
  const outputs = new Map<string, string>();
  for (const i of since) if (i.type === "function_call_output") outputs.set(i.call_id, outputText(i.output));
  return {
    text: lastUser === -1 ? "" : messageText(context[lastUser]),
    parts: contentParts(context[lastUser]),
    userTexts: userTexts(context.slice(0, lastUser + 1)),
    made,
    answered: made
      .filter((c) => outputs.has(c.call_id))
      .map((c) => ({ name: c.name, args: parseArgs(c.arguments), output: outputs.get(c.call_id) ?? "" })),
  };
}

/** Which rule answers the turn: an action, a tool that would answer it, else a reply. */
function decide(turn: Turn, body: MockRequestBody, policy: ToolPolicy): Decision {
  const { text } = turn;
  const offered = new Set(policy.tools);
  const tools = body.tools ?? [];
  const foreign = bestForeignTool(text, tools, policy);
  const action = detectAction(text);
  if (action !== undefined) {
    const step = actStep(action, turn.answered, { can: (n) => offered.has(n) && mayCall(policy, n), policy });
    if (step.kind === "call") return { kind: "calls", calls: [step.call], rule: step.rule };
    // An action the request has no tool for, when one of its own tools fits: use that instead.
    const blocked = step.rule.endsWith("is not offered");
    if (!blocked || foreign === undefined || turn.made.some((c) => c.name === foreign.name))
      return { kind: "reply", text: step.text, rule: step.rule };
  }
  const wanted = aboutAttachments(turn) ? [] : detectCalls(text);
  const doable = wanted.filter((c) => offered.has(c.name) && mayCall(policy, c.name));
  const key = (name: string, args: string) => `${name}\u0000${canonical(args)}`;
  const done = new Set(turn.made.map((c) => key(c.name, c.arguments)));
  const calls = doable.filter((c) => !done.has(key(c.name, JSON.stringify(c.args))));
  const argsFor = (name: string) =>
    EDDY_TOOLS.has(name)
      ? defaultArgs(name, text)
      : argumentsFromSchema(tools.find((t) => t.name === name)?.parameters, text, name);
  if (calls.length === 0 && foreign !== undefined && !turn.made.some((c) => c.name === foreign.name)) {
    const rule = `the message matches the ${foreign.name} tool, so call it with arguments from the message and its schema`;
    return { kind: "calls", calls: [{ name: foreign.name, args: argsFor(foreign.name) }], rule };
  }
  if (calls.length === 0 && policy.mode === "required") {
    const callable = callableTools(policy);
    const name =
      callable.find((n) => wanted.some((c) => c.name === n)) ??
      foreign?.name ??
      callable.find((n) => BUILTINS.includes(n)) ??
      callable[0];
    const rule = `tool_choice requires a call, so call ${name ?? "a tool"}`;
    if (name !== undefined) return { kind: "calls", calls: [{ name, args: argsFor(name) }], rule };
  }
  if (calls.length > 0)
    return { kind: "calls", calls, rule: `the message asks for ${calls.map(describeCall).join(", ")}` };
  return answer(turn, wanted, policy);
}

/**
 * Whether the message asks about what it carries ("What is in the attached file?", "What's in this
 * image?") rather than about the workspace: it has attachments and names no file, folder or search.
 */
function aboutAttachments(turn: Turn): boolean {
  if (describeAttachments(turn.parts).length === 0) return false;
  const calls = detectCalls(turn.text);
  const listsHere = /\b(?:list|ls|folder|director(?:y|ies)|here|workspace|repo)\b/i.test(turn.text);
  return calls.every((c) => c.name === "list_dir" && c.args.path === ".") && !listsHere;
}

/** The reply when no call is to be made: tool outputs, attachments, recalled facts, or an introduction. */
function answer(turn: Turn, wanted: DemoCall[], policy: ToolPolicy): Decision {
  if (turn.answered.length > 0) {
    const rule = `${turn.answered.length} tool output(s) came back, so summarize them`;
    return { kind: "reply", text: answerCalls(turn.answered), rule };
  }
  const attachments = describeAttachments(turn.parts);
  if (attachments.length > 0) {
    const rule = "the message carries images or files, so describe them";
    return { kind: "reply", text: describeAttached(attachments), rule };
  }
  const recalled = recallReply(turn.userTexts, turn.text);
  if (recalled !== undefined) {
    const rule = "the message states or asks about facts the user gave, so answer from the conversation";
    return { kind: "reply", text: recalled, rule };
  }
  return {
    kind: "reply",
    text: introduction(turn.text, wanted, policy),
    rule: "no tool fits the message, so introduce myself",
  };
}

function introduction(text: string, wanted: DemoCall[], policy: ToolPolicy): string {
  const intro =
    "I’m eddy’s built-in offline demo model: not a language model, just a few deterministic rules, so eddy works with no network and no API key.";
  const asked = text.trim() === "" ? "" : ` You wrote “${clip(text.trim(), 80)}”;`;
  let situation: string;
  const first = wanted[0];
  if (first !== undefined && policy.mode === "none") {
    situation = `${asked} I would answer that with the \`${first.name}\` tool, but tool_choice is "none".`;
  } else if (first !== undefined) {
    situation = `${asked} I would answer that with the \`${first.name}\` tool, but this request does not let me call it (offered: ${policy.tools.join(", ") || "no tools"}).`;
  } else {
    situation = `${asked ? `${asked} I can’t answer that without a real model.` : ""}`;
  }
  const can =
    "What I can do with eddy’s tools: read files you name (“What is in package.json?”), list a folder (“List the files here”), search (“Search for TODO”), write and edit files (“Create a file named notes.txt containing the text hello”, with --allow-write) and run commands (“Run `ls -la`”, with --allow-shell) — then summarize what the tools returned.";
  const real =
    "To use a real model, set OPENRESPONSES_BASE_URL (or OPENAI_API_KEY), or pass --base-url and --api-key.";
  return `${intro}${situation}\n\n${can}\n\n${real}`;
}

function describeAttached(attachments: string[]): string {
  const list = attachments.map((a) => `- ${a}`).join("\n");
  const what = attachments.length === 1 ? "one attachment" : `${attachments.length} attachments`;
  return `You sent ${what}:\n\n${list}\n\nI’m eddy’s built-in offline demo model: I can tell an attachment’s type and size, not what it shows. A real model can.`;
}

/** The text of every user message, in order. */
function userTexts(items: readonly ConversationItem[]): string[] {
  return items.filter((i) => i.type === "message" && "role" in i && i.role === "user").map(messageText);
}

function contentParts(item: ConversationItem | undefined): unknown[] {
  if (item === undefined || !("content" in item) || !Array.isArray(item.content)) return [];
  return item.content;
}

function describeCall(call: DemoCall): string {
  return `${call.name} ${JSON.stringify(call.args)}`;
}

function messageText(item: ConversationItem | undefined): string {
  if (item === undefined || !("content" in item)) return "";
  const content = item.content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part) => ("text" in part && typeof part.text === "string" ? part.text : ""))
    .filter((t) => t !== "")
    .join("\n");
}

function outputText(output: Extract<ItemParam, { type: "function_call_output" }>["output"]): string {
  if (typeof output === "string") return output;
  return output.map((part) => ("text" in part ? part.text : "")).join("");
}

function parseArgs(args: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(args);
    return isJsonObject(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** Arguments compared by value, whatever their key order or spacing. */
function canonical(args: string): string {
  const value = parseArgs(args);
  return JSON.stringify(Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : 1))));
}

function findLastIndex<T>(items: readonly T[], test: (item: T) => boolean): number {
  for (let i = items.length - 1; i >= 0; i--) if (test(items[i] as T)) return i;
  return -1;
}

function clip(text: string, max: number): string {
  const points = Array.from(text.replace(/\s+/g, " "));
  return points.length > max ? `${points.slice(0, max).join("")}…` : points.join("");
}
