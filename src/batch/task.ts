/**
 * Batch tasks: one JSON object per line of a TASKS.jsonl file — `{"id", "prompt" | "input",
 * "schema"?, "metadata"?, …}` plus any `RunSpec` field a task may set for itself (`model`,
 * `instructions`, `max_turns`, `max_tool_calls`, `output_schema`, `request`, `history`, …): a task
 * is a partial spec merged over the batch's; its budgets (`max_turns`, …) may only lower the batch's
 * (`withinBudgets`, applied in run-task.ts). Fields that are neither are ignored (a dataset's
 * expected answers may ride along). A bad line (invalid JSON, no prompt, a duplicate id, a bad
 * field) is reported with its line number and skipped; it never stops the batch — unless there are
 * more than `BATCH_DEFAULTS.maxBadTaskLines` of them: the text is then refused whole (docs/pitfalls.md #109).
 */
import { createHash } from "node:crypto";
import { EddyError } from "../errors.js";
import { checkPartialRunSpec, type PartialRunSpec } from "../loop/run-spec.js";
import { hasControlChars } from "../util/control-chars.js";
import { forEachLine, JSON_MAX_DEPTH, jsonErrorReason, nestsDeeperThan } from "../util/json.js";
import { compileSchema } from "../util/schema.js";
import { BATCH_DEFAULTS } from "./defaults.js";

/** One task of a batch: its id, its own spec fields (they win over the batch's) and its metadata. */
export interface BatchTask {
  /** Unique within the batch; names the task's result line and tape. */
  id: string;
  /** The task's input and the spec fields it sets for itself (merged over the batch's spec). */
  spec: PartialRunSpec;
  /** Copied to the task's result as is (never sent to the provider). @defaultValue none */
  metadata?: Record<string, unknown>;
}

/** Spec fields a task cannot set: the batch owns run ids and the provider; threads are `eddy run`'s. */
const BATCH_OWNED = ["run_id", "thread", "context", "transport", "version"] as const;

/** The RunSpec fields a task line may carry (the rest of its fields are ignored). */
const SPEC_FIELDS = new Set([
  "model",
  "input",
  "instructions",
  "instruction_files",
  "mode",
  "max_tool_calls",
  "max_turns",
  "on_limit",
  "stop_when",
  "tools",
  "tool_choice",
  "reset_tool_choice",
  "tools_on_follow_up",
  "tool_execution",
  "parallel_tool_calls",
  "tool_concurrency",
  "tool_timeout_ms",
  "tool_output_cap_bytes",
  "native_tools",
  "native_shell",
  "hosted_tools",
  "continue_incomplete",
  "request",
  "history",
  "output_schema",
  ...BATCH_OWNED,
]);

/** A line of the tasks file that was skipped, and why. */
export interface BadTaskLine {
  /** 1-based line number. */
  line: number;
  message: string;
}

/** The tasks of a file, in order, and the lines that were skipped. */
export interface ParsedTasks {
  tasks: BatchTask[];
  bad: BadTaskLine[];
}

/** Longest task id (it names a file). */
const MAX_ID_LENGTH = 200;

/** How `parseTasks` names its text and how many bad lines it takes. */
export interface ParseTasksOptions {
  /** The text as the error names it: `the tasks file tasks.jsonl`. @defaultValue "the tasks" */
  source?: string;
  /** Bad lines taken (each skipped) before the text is refused whole. @defaultValue BATCH_DEFAULTS.maxBadTaskLines (1,000) */
  maxBadLines?: number;
}

/**
 * Parses a TASKS.jsonl text: every good line becomes a task, every bad one a `BadTaskLine`. More
 * than `maxBadLines` bad lines throw `invalid_argument` (a user error) at the line that passes
 * the bound, naming the count and the first: the rest is not read (docs/pitfalls.md #109).
 */
export function parseTasks(text: string, options: ParseTasksOptions = {}): ParsedTasks {
  const maxBad = options.maxBadLines ?? BATCH_DEFAULTS.maxBadTaskLines;
  const tasks: BatchTask[] = [];
  const skipped: BadTaskLine[] = [];
  const seen = new Map<string, number>();
  const files = new Map<string, { id: string; line: number }>();
  // One line at a time: a file of millions of lines is not split into as many strings at once.
  forEachLine(text, (rawLine, index) => {
    const raw = rawLine.trim();
    if (raw === "") return;
    const line = index + 1;
    const parsed = parseTaskLine(raw);
    const problem = typeof parsed === "string" ? parsed : duplicateProblem(parsed, line, seen, files);
    if (problem === undefined) tasks.push(parsed as BatchTask);
    else skipped.push({ line, message: problem });
    if (skipped.length > maxBad) throw tooManyBadLines(options.source ?? "the tasks", maxBad, line, skipped);
  });
  return { tasks, bad: skipped };
}

/**
 * Why a task cannot join the ones before it (its id taken, or its tape file name), else undefined
 * and it is counted in.
 */
function duplicateProblem(
  task: BatchTask,
  line: number,
  seen: Map<string, number>,
  files: Map<string, { id: string; line: number }>,
): string | undefined {
  const first = seen.get(task.id);
  if (first !== undefined) return `duplicate id ${JSON.stringify(task.id)} (first on line ${first})`;
  // Two ids must not share a tape or a workspace copy (both are named by tapeFileName).
  const file = tapeFileName(task.id);
  const other = files.get(file);
  if (other !== undefined)
    return `id ${JSON.stringify(task.id)} would share its tape file ${file} with id ${JSON.stringify(other.id)} (line ${other.line}): rename one`;
  seen.set(task.id, line);
  files.set(file, { id: task.id, line });
  return undefined;
}

function tooManyBadLines(source: string, max: number, line: number, bad: readonly BadTaskLine[]): EddyError {
  const first = bad[0] as BadTaskLine;
  return new EddyError(
    "invalid_argument",
    `${source} has more than ${max.toLocaleString("en-US")} bad lines by line ${line} (the first, line ${first.line}: ${first.message.slice(0, 200)}): it does not look like a tasks file (one JSON task a line); fix it and run again — no task was run and nothing was written`,
    { fault: "user" },
  );
}

/** A checked value, or what is wrong with it. */
type Checked<T> = { ok: true; value: T } | { ok: false; message: string };

const bad = <T>(message: string): Checked<T> => ({ ok: false, message });

/** One line as a task, or what is wrong with it. */
export function parseTaskLine(raw: string): BatchTask | string {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (err) {
    return `not valid JSON (${jsonErrorReason(err)})`;
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) return "expected a JSON object";
  if (nestsDeeperThan(value)) return `nests deeper than ${JSON_MAX_DEPTH} levels`;
  const record = value as Record<string, unknown>;
  const id = taskId(record.id);
  if (!id.ok) return id.message;
  const spec = taskSpec(record);
  if (!spec.ok) return spec.message;
  const task: BatchTask = { id: id.value, spec: spec.value };
  const { metadata } = record;
  if (metadata !== undefined) {
    if (metadata === null || typeof metadata !== "object" || Array.isArray(metadata))
      return '"metadata" must be an object';
    task.metadata = metadata as Record<string, unknown>;
  }
  return task;
}

function taskId(value: unknown): Checked<string> {
  if (value === undefined) return bad('no "id"');
  if (typeof value === "number" && Number.isFinite(value)) return { ok: true, value: String(value) };
  if (typeof value !== "string") return bad('"id" must be a string or a number');
  if (value.trim() === "") return bad('"id" is empty');
  if (value.length > MAX_ID_LENGTH) return bad(`"id" is longer than ${MAX_ID_LENGTH} characters`);
  if (hasControlChars(value)) return bad('"id" holds control or direction characters');
  return { ok: true, value };
}

/** The line's spec fields (with `prompt` as `input` and `schema` as `output_schema`), checked. */
function taskSpec(record: Record<string, unknown>): Checked<PartialRunSpec> {
  const { prompt, input, schema } = record;
  if (prompt !== undefined && input !== undefined) return bad('give "prompt" or "input", not both');
  if (prompt === undefined && input === undefined) return bad('no "prompt" (or "input" items)');
  if (prompt !== undefined && typeof prompt !== "string") return bad('"prompt" must be a string');
  if (typeof (prompt ?? input) === "string" && String(prompt ?? input).trim() === "")
    return bad(`"${prompt !== undefined ? "prompt" : "input"}" is empty`);
  if (schema !== undefined && record.output_schema !== undefined)
    return bad('give "schema" or "output_schema", not both');
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record)) if (SPEC_FIELDS.has(key)) fields[key] = value;
  for (const key of BATCH_OWNED)
    if (key in fields) return bad(`"${key}" cannot be set by a task (the batch sets it for every task)`);
  fields.input = prompt ?? input;
  if (schema !== undefined) {
    const outputSchema = taskSchema(schema);
    if (!outputSchema.ok) return outputSchema;
    fields.output_schema = outputSchema.value;
  }
  try {
    return { ok: true, value: checkPartialRunSpec(fields, "task") };
  } catch (err) {
    // "task: max_turns: expected an integer (got …)" → the field's own words.
    return bad(EddyError.isInstance(err) ? err.message.replace(/^task: /, "") : String(err));
  }
}

function taskSchema(schema: unknown): Checked<{ name: string; schema: Record<string, unknown> }> {
  if (schema === null || typeof schema !== "object" || Array.isArray(schema))
    return bad('"schema" must be a JSON Schema object');
  const title = (schema as { title?: unknown }).title;
  const name = (typeof title === "string" ? title : "output").replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, 64);
  try {
    // As the run compiles it (patterns in linear time), so a schema it would refuse is a bad line.
    compileSchema('"schema"', schema as Record<string, unknown>, { untrusted: true });
  } catch (err) {
    return bad((err as Error).message);
  }
  return {
    ok: true,
    value: { name: name === "" ? "output" : name, schema: schema as Record<string, unknown> },
  };
}

/**
 * The file name of a task's tape: the id itself when it is a plain file name, else a cleaned-up
 * id with a short hash of the real one (so two ids never share a tape).
 */
export function tapeFileName(id: string): string {
  // A plain id ending like a hashed name (`-` and 10 hex digits) is hashed too: `a_b-c8687a08aa` is
  // the name of id "a b", so that id may not have it as well.
  if (/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/.test(id) && !/-[0-9a-f]{10}$/.test(id)) return `${id}.tape`;
  const clean = id
    .replace(/[^A-Za-z0-9._-]/g, "_")
    .replace(/^[._-]+/, "")
    .slice(0, 80);
  const hash = createHash("sha256").update(id).digest("hex").slice(0, 10);
  return `${clean === "" ? "task" : clean}-${hash}.tape`;
}
