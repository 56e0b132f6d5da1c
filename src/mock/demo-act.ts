/**
 * How the demo model carries out an action (`demo-actions.ts`) over one or more responses, and what
 * it says when the action is done or cannot be done. Each response looks at the calls made since
 * the user's message and their outputs, and takes the next step:
 *
 * - **shell** → `shell {command}`; then the command's output (or its exit code and stderr).
 * - **write** → `write_file {path, content}`; an append first reads the file (`read_file`, when
 *   offered) so the new text starts on a line of its own, then `write_file {…, append: true}`; then
 *   "I created notes.txt (5 bytes)." from the tool's artifacts.
 * - **edit** → `read_file {path}`, then `apply_patch` with a patch that replaces the text on every
 *   line holding it (or `write_file` with the new content when only that is offered); then what
 *   changed. Text the file does not hold changes nothing, and the reply says so.
 *
 * A tool the request does not offer gets a reply naming the flag that turns it on in eddy
 * (`--allow-write`, `--allow-shell`) and what the model would have done.
 */
import type { DemoAction } from "./demo-actions.js";
import type { AnsweredCall } from "./demo-answer.js";
import type { DemoCall } from "./demo-intent.js";
import { clip, codeBlock, firstLines, type ParsedOutput, parseOutput, plural } from "./demo-output.js";
import type { ToolPolicy } from "./tool-policy.js";

/** What the request lets the model call. */
export interface ActTools {
  /** Whether the request offers `name` and its tool settings let the model call it. */
  can(name: string): boolean;
  policy: ToolPolicy;
}

/** The next step of an action: a call to make, or the reply that ends it. */
export type ActStep =
  | { kind: "call"; call: DemoCall; rule: string }
  | { kind: "reply"; text: string; rule: string };

const SHELL_PREVIEW_LINES = 20;

/** The next step of `action`, given the calls answered since the user's message (in order). */
export function actStep(action: DemoAction, done: readonly AnsweredCall[], tools: ActTools): ActStep {
  switch (action.kind) {
    case "shell":
      return shellStep(action, done, tools);
    case "write":
      return writeStep(action, done, tools);
    case "edit":
      return editStep(action, done, tools);
  }
}

type Of<K extends DemoAction["kind"]> = Extract<DemoAction, { kind: K }>;

const call = (name: string, args: Record<string, unknown>, rule: string): ActStep => ({
  kind: "call",
  call: { name, args },
  rule,
});
const reply = (text: string, rule: string): ActStep => ({ kind: "reply", text, rule });
const last = (done: readonly AnsweredCall[], ...names: string[]) =>
  done.findLast((c) => names.includes(c.name));

function shellStep(action: Of<"shell">, done: readonly AnsweredCall[], tools: ActTools): ActStep {
  const ran = last(done, "shell", "bash");
  if (ran !== undefined)
    return reply(describeShell(action.command, ran.output), "the command ran, so report it");
  if (!tools.can("shell"))
    return reply(cannot("shell", `I would have run \`${action.command}\`.`, tools), "shell is not offered");
  return call("shell", { command: action.command }, `the message asks to run \`${action.command}\``);
}

function writeStep(action: Of<"write">, done: readonly AnsweredCall[], tools: ActTools): ActStep {
  const wrote = last(done, "write_file");
  if (wrote !== undefined)
    return reply(describeWrite(action, wrote.output), "the file was written, so say so");
  const plan =
    action.content === ""
      ? `I would have created an empty ${action.path}.`
      : `I would have ${action.append ? "appended" : "written"} ${quoteText(action.content)} ${action.append ? "to" : "into"} ${action.path}.`;
  if (!tools.can("write_file")) return reply(cannot("write_file", plan, tools), "write_file is not offered");
  const read = last(done, "read_file");
  if (action.append && read === undefined && tools.can("read_file"))
    return call("read_file", { path: action.path }, "appending: read the file first to see how it ends");
  const before = read === undefined ? undefined : parseOutput(read.output);
  const needsBreak =
    before?.ok === true &&
    before.artifacts.truncated !== true &&
    before.stdout !== "" &&
    !before.stdout.endsWith("\n");
  const content = `${needsBreak ? "\n" : ""}${action.content}`;
  const args = action.append ? { path: action.path, content, append: true } : { path: action.path, content };
  return call("write_file", args, `the message asks to write ${action.path}`);
}

function editStep(action: Of<"edit">, done: readonly AnsweredCall[], tools: ActTools): ActStep {
  const read = last(done, "read_file");
  const edited = last(done, "apply_patch", "write_file");
  if (edited !== undefined)
    return reply(describeEdit(action, edited, read), "the file was edited, so say so");
  const plan = `I would have replaced ${quoteText(action.find)} with ${quoteText(action.replace)} in ${action.path}.`;
  if (!tools.can("apply_patch") && !tools.can("write_file"))
    return reply(cannot("apply_patch", plan, tools), "apply_patch is not offered");
  if (read === undefined) {
    if (tools.can("read_file"))
      return call("read_file", { path: action.path }, "editing: read the file first to find the text");
    return reply(cannot("read_file", plan, tools), "read_file is not offered");
  }
  const before = parseOutput(read.output);
  if (before !== undefined && !before.ok)
    return reply(
      `I couldn’t read ${action.path}: ${(before.error ?? before.stderr).trim() || "unknown error"}. I changed nothing.`,
      "the file could not be read",
    );
  const text = before?.stdout ?? read.output;
  const lines = changedLines(text, action.find);
  if (lines === 0)
    return reply(
      `${action.path} does not contain ${quoteText(action.find)}, so I changed nothing.`,
      "nothing to change",
    );
  const whole = before?.artifacts.truncated !== true;
  if (tools.can("apply_patch"))
    return call(
      "apply_patch",
      { patch: replacePatch(action, text) },
      `the message asks to change ${action.path}`,
    );
  if (!whole)
    return reply(
      `${action.path} is too large for me to rewrite without apply_patch. I changed nothing.`,
      "too large",
    );
  return call(
    "write_file",
    { path: action.path, content: text.split(action.find).join(action.replace) },
    `the message asks to change ${action.path}`,
  );
}

/** A patch that replaces `find` on every line of `text` holding it: one hunk from the first such line to the last. */
export function replacePatch(action: Of<"edit">, text: string): string {
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  const hits = lines.flatMap((l, i) => (l.includes(action.find) ? [i] : []));
  const from = hits[0] ?? 0;
  const to = hits.at(-1) ?? 0;
  const hunk: string[] = [];
  for (const line of lines.slice(from, to + 1)) {
    if (line.includes(action.find)) hunk.push(`-${line}`, `+${line.split(action.find).join(action.replace)}`);
    else hunk.push(` ${line}`);
  }
  return ["*** Begin Patch", `*** Update File: ${action.path}`, "@@", ...hunk, "*** End Patch"].join("\n");
}

function changedLines(text: string, find: string): number {
  return find === "" ? 0 : text.split("\n").filter((l) => l.includes(find)).length;
}

/** Why the model cannot do it here, and the flag that would let it (in eddy). */
function cannot(tool: string, plan: string, tools: ActTools): string {
  const offered = tools.policy.tools.includes(tool);
  if (offered && tools.policy.mode === "none")
    return `I would use the \`${tool}\` tool for that, but tool_choice is "none". ${plan}`;
  if (offered)
    return `I would use the \`${tool}\` tool for that, but this request does not let me call it. ${plan}`;
  switch (tool) {
    case "shell":
      return `I can’t run commands here: run with --allow-shell (this request offers no \`shell\` tool). ${plan}`;
    case "read_file":
      return `I need the \`read_file\` tool to see the file before I change it, and this request does not offer it. ${plan}`;
    default:
      return `I can’t write files here: run with --allow-write (this request offers no \`${tool}\` tool). ${plan}`;
  }
}

/** "I created notes.txt (5 bytes)." from write_file's artifacts. */
function describeWrite(action: Of<"write">, output: string): string {
  const out = parseOutput(output);
  if (out === undefined) return `I wrote ${action.path}. The tool said: ${clip(output.trim(), 200)}`;
  if (!out.ok) return `I couldn’t write ${action.path}: ${failure(out)}.`;
  const a = out.artifacts;
  const path = typeof a.path === "string" ? a.path : action.path;
  const written = typeof a.bytes_written === "number" ? a.bytes_written : undefined;
  const total = typeof a.bytes_total === "number" ? a.bytes_total : written;
  if (written === undefined) return `I wrote ${path}: ${clip(out.stdout.trim(), 200)}`;
  if (a.append === true)
    return `I appended ${plural(written, "byte")} to ${path} (now ${plural(total ?? written, "byte")}).`;
  return `I ${a.created === false ? "overwrote" : "created"} ${path} (${plural(written, "byte")}).`;
}

function describeEdit(action: Of<"edit">, edited: AnsweredCall, read: AnsweredCall | undefined): string {
  const out = parseOutput(edited.output);
  if (out !== undefined && !out.ok) return `I couldn’t change ${action.path}: ${failure(out)}.`;
  const before = read === undefined ? undefined : parseOutput(read.output);
  const n = changedLines(before?.stdout ?? read?.output ?? "", action.find);
  const lines = n > 0 ? ` (${plural(n, "line")} changed)` : "";
  return `I replaced ${quoteText(action.find)} with ${quoteText(action.replace)} in ${action.path}${lines}.`;
}

/** A command's result: its output, or its exit code and stderr when it failed. */
export function describeShell(command: string, output: string): string {
  const out = parseOutput(output);
  const shown = `\`${clip(command, 80)}\``;
  if (out === undefined)
    return `${shown} printed:\n\n${codeBlock(firstLines(output.trim(), SHELL_PREVIEW_LINES), "")}`;
  const stdout = out.stdout.replace(/\n$/, "");
  const stderr = out.stderr.trim();
  const block = (text: string) => codeBlock(firstLines(text, SHELL_PREVIEW_LINES), "");
  if (!out.ok) {
    const why =
      out.exitCode !== undefined && out.exitCode !== 0 && out.error === undefined
        ? `exit code ${out.exitCode}`
        : failure(out);
    const said = stderr !== "" ? `\n\n${block(stderr)}` : stdout !== "" ? `\n\n${block(stdout)}` : "";
    return `${shown} failed (${why}).${said}`;
  }
  const err = stderr === "" ? "" : `\n\nOn stderr:\n\n${block(stderr)}`;
  if (stdout.trim() === "") return `${shown} ran successfully and printed nothing.${err}`;
  return `${shown} printed:\n\n${block(stdout)}${err}`;
}

function failure(out: ParsedOutput): string {
  return (out.error ?? (out.stderr.trim() || `exit code ${out.exitCode ?? "unknown"}`))
    .trim()
    .replace(/\.$/, "");
}

function quoteText(text: string): string {
  return `“${clip(text.replace(/\n/g, "\\n"), 60)}”`;
}
