/**
 * Batch tasks: one JSON object per line of a TASKS.jsonl file — `{"id", "prompt" | "input",
 * "model"?, "instructions"?, "schema"?, "metadata"?, "max_turns"?, "max_tool_calls"?}`. Other
 * fields are ignored (a dataset's expected answers may ride along). A bad line (invalid JSON, no
 * prompt, a duplicate id, a bad field) is reported with its line number and skipped; it never stops
 * the batch.
 */
import { createHash } from "node:crypto";
import type { OutputSchema } from "../loop/options.js";
import type { ItemParam } from "../protocol/types.js";
import { compileSchema } from "../util/schema.js";

/** One task of a batch: a run's input and the options it sets for itself (they beat the batch's). */
export interface BatchTask {
  /** Unique within the batch; names the task's result line and tape. */
  id: string;
  /** The prompt, or input items. */
  input: string | ItemParam[];
  /** @defaultValue the batch's model */
  model?: string | null;
  /** @defaultValue the batch's instructions */
  instructions?: string;
  /** Structured output for this task. @defaultValue the batch's */
  outputSchema?: OutputSchema;
  /** Copied to the task's result as is (never sent to the provider). @defaultValue none */
  metadata?: Record<string, unknown>;
  /** @defaultValue the batch's */
  maxTurns?: number;
  /** @defaultValue the batch's */
  maxToolCalls?: number;
}

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

/** Parses a TASKS.jsonl text: every good line becomes a task, every bad one a `BadTaskLine`. */
export function parseTasks(text: string): ParsedTasks {
  const tasks: BatchTask[] = [];
  const skipped: BadTaskLine[] = [];
  const seen = new Map<string, number>();
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const raw = (lines[i] ?? "").trim();
    if (raw === "") continue;
    const line = i + 1;
    const parsed = parseTaskLine(raw);
    if (typeof parsed === "string") {
      skipped.push({ line, message: parsed });
      continue;
    }
    const first = seen.get(parsed.id);
    if (first !== undefined) {
      skipped.push({ line, message: `duplicate id ${JSON.stringify(parsed.id)} (first on line ${first})` });
      continue;
    }
    seen.set(parsed.id, line);
    tasks.push(parsed);
  }
  return { tasks, bad: skipped };
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
    return `not valid JSON (${(err as Error).message})`;
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) return "expected a JSON object";
  const record = value as Record<string, unknown>;
  const id = taskId(record.id);
  if (!id.ok) return id.message;
  const input = taskInput(record);
  if (!input.ok) return input.message;
  const task: BatchTask = { id: id.value, input: input.value };
  return readOptions(record, task) ?? task;
}

function taskId(value: unknown): Checked<string> {
  if (value === undefined) return bad('no "id"');
  if (typeof value === "number" && Number.isFinite(value)) return { ok: true, value: String(value) };
  if (typeof value !== "string") return bad('"id" must be a string or a number');
  if (value.trim() === "") return bad('"id" is empty');
  if (value.length > MAX_ID_LENGTH) return bad(`"id" is longer than ${MAX_ID_LENGTH} characters`);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\u0000-\u001f\u007f]/.test(value)) return bad('"id" holds control characters');
  return { ok: true, value };
}

function taskInput(record: Record<string, unknown>): Checked<string | ItemParam[]> {
  const { prompt, input } = record;
  if (prompt !== undefined && input !== undefined) return bad('give "prompt" or "input", not both');
  if (prompt !== undefined) {
    if (typeof prompt !== "string") return bad('"prompt" must be a string');
    return prompt.trim() === "" ? bad('"prompt" is empty') : { ok: true, value: prompt };
  }
  if (input === undefined) return bad('no "prompt" (or "input" items)');
  if (typeof input === "string")
    return input.trim() === "" ? bad('"input" is empty') : { ok: true, value: input };
  if (!Array.isArray(input) || input.length === 0)
    return bad('"input" must be a string or a non-empty array of input items');
  if (!input.every((item) => item !== null && typeof item === "object" && !Array.isArray(item)))
    return bad('every "input" item must be an object');
  return { ok: true, value: input as ItemParam[] };
}

/** Reads the optional fields into `task`; returns what is wrong, if anything. */
function readOptions(record: Record<string, unknown>, task: BatchTask): string | undefined {
  const { model, instructions, schema, metadata } = record;
  if (model !== undefined) {
    if (model !== null && typeof model !== "string") return '"model" must be a string';
    task.model = model;
  }
  if (instructions !== undefined) {
    if (typeof instructions !== "string") return '"instructions" must be a string';
    task.instructions = instructions;
  }
  if (metadata !== undefined) {
    if (metadata === null || typeof metadata !== "object" || Array.isArray(metadata))
      return '"metadata" must be an object';
    task.metadata = metadata as Record<string, unknown>;
  }
  for (const [key, field] of [
    ["max_turns", "maxTurns"],
    ["max_tool_calls", "maxToolCalls"],
  ] as const) {
    const n = record[key];
    if (n === undefined) continue;
    if (typeof n !== "number" || !Number.isInteger(n) || n < 1) return `"${key}" must be an integer ≥ 1`;
    task[field] = n;
  }
  if (schema !== undefined) {
    const outputSchema = taskSchema(schema);
    if (!outputSchema.ok) return outputSchema.message;
    task.outputSchema = outputSchema.value;
  }
  return undefined;
}

function taskSchema(schema: unknown): Checked<OutputSchema> {
  if (schema === null || typeof schema !== "object" || Array.isArray(schema))
    return bad('"schema" must be a JSON Schema object');
  const title = (schema as { title?: unknown }).title;
  const name = (typeof title === "string" ? title : "output").replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, 64);
  try {
    compileSchema('"schema"', schema as Record<string, unknown>);
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
  if (/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/.test(id)) return `${id}.tape`;
  const clean = id
    .replace(/[^A-Za-z0-9._-]/g, "_")
    .replace(/^[._-]+/, "")
    .slice(0, 80);
  const hash = createHash("sha256").update(id).digest("hex").slice(0, 10);
  return `${clean === "" ? "task" : clean}-${hash}.tape`;
}
