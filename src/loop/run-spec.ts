/**
 * `RunSpec`: a run described as plain, JSON-serialisable data (docs/architecture.md, "One home for
 * a run's settings") — the model, the input, the instructions, limits, tool selection, request and
 * history options, structured output, continuation mode, transport, thread and context. Its live
 * dependencies (provider, tools, signal, clock, observers) are `RunDeps` (run-deps.ts), and what
 * the machine allows (write, shell, sandbox, approvals, MCP servers) is a local `Policy`
 * (policy.ts), never part of a spec.
 *
 * One zod schema is the source of truth: the TypeScript types, the exported JSON Schema
 * (`runSpecSchema`, versioned) and every check of untrusted specs (tapes, task files, queue jobs,
 * HTTP requests) come from it. `resolveRunSpec` applies every default once — nothing downstream
 * falls back to `LOOP_DEFAULTS` again. Keys are snake_case, like the Open Responses request body.
 */
import { type ZodType, z } from "zod";
import { EddyError } from "../errors.js";
import type { ContextCompilation } from "../frames/frame.js";
import { HISTORY_DEFAULTS, HISTORY_STRATEGIES } from "../history/options.js";
import type { CreateResponseBody, ItemParam, ToolChoiceParam } from "../protocol/types.js";
import { TOOL_DEFAULTS } from "../tools/defaults.js";
import { NO_CONTROL_CHARS } from "../util/control-chars.js";
import { lazyObject, once } from "../util/lazy-object.js";
import { compileSchema, isZodSchema, type JsonSchema } from "../util/schema.js";
import { firstProblemField, zodProblems } from "../util/zod-problems.js";
import { LOOP_DEFAULTS } from "./defaults.js";
import { requestProblem } from "./request-options.js";
import type { HostedTool } from "./tool-declarations.js";

/** The version of the RunSpec schema (`runSpecSchema.$id` names it). */
export const RUN_SPEC_VERSION = 1;

/** A thread name: 1–64 letters, digits, `.`, `_`, `-`, not starting with `.` (context/threads.ts). */
const THREAD_NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}$/;
/** A run id: safe as a file-name component. */
const RUN_ID = /^[A-Za-z0-9_-]{1,128}$/;
/** A structured-output name (the Open Responses `text.format.name` pattern). */
const OUTPUT_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** A JSON object of any fields (the schemas below are built on first use: `specFields`). */
const jsonObject = () => z.record(z.string(), z.unknown());

/** The `history` field's schema. */
const historyShape = () =>
  z.strictObject({
    /** `native` (function_call items), `text-embed` (results as text) or `auto` (by the provider). */
    strategy: z.enum(HISTORY_STRATEGIES).default(SPEC_DEFAULTS.history.strategy),
    /** Tool calls kept verbatim when older ones are folded into a summary. */
    recent_calls_to_keep: z.int().min(0).max(100_000).default(SPEC_DEFAULTS.history.recent_calls_to_keep),
    /** History size (tokens) past which older calls are folded. */
    truncation_threshold: z.int().min(1).default(SPEC_DEFAULTS.history.truncation_threshold),
    /** The model that writes summaries; absent: extractive summaries, no model call. */
    summarization_model: z
      .string()
      .min(1)
      .max(256)
      .regex(NO_CONTROL_CHARS, "holds control or direction characters")
      .optional(),
  });

/** The `output_schema` field's schema. */
const outputSchemaShape = () =>
  z.strictObject({
    name: z.string().regex(OUTPUT_NAME, "must be 1–64 letters, digits, _ or -"),
    schema: jsonObject(),
    strict: z.boolean().default(true),
    description: z.string().max(4096).optional(),
  });

/** The `context` field's schema. */
const contextShape = () =>
  z.strictObject({
    items: z.array(jsonObject()),
    compiled: z.looseObject({
      bundle_id: z.string().regex(/^[0-9a-f]{64}$/, "must be a sha256 hex digest"),
      strategy: z.string(),
      item_count: z.int().min(0),
      token_estimate: z.number().min(0),
      tokenizer: z.string(),
      runs: z.int().min(0),
      thread: z.string().regex(THREAD_NAME).optional(),
      summary_method: z.string().optional(),
    }),
  });

/** The request body fields the loop owns: a spec's `request` cannot set them. */
const LOOP_OWNED = [
  "model",
  "instructions",
  "input",
  "previous_response_id",
  "tools",
  "tool_choice",
  "parallel_tool_calls",
  "max_tool_calls",
  "stream",
] as const;

/** What a spec says instead of each of `LOOP_OWNED` in `request`. */
const LOOP_OWNED_HINTS: Record<(typeof LOOP_OWNED)[number], string> = {
  model: "use the spec's model field",
  instructions: "use the spec's instructions field",
  input: "use the spec's input field",
  previous_response_id: 'the loop chains its own turns; use mode "chained" or "stateless"',
  tools: "use the spec's tools / hosted_tools fields",
  tool_choice: "use the spec's tool_choice field",
  parallel_tool_calls: "use the spec's parallel_tool_calls field",
  max_tool_calls: "use the spec's max_tool_calls field",
  stream: "a run always streams",
};

/** The `request` field's schema: any JSON object, but not the loop's own fields or out-of-range values. */
const requestShape = () =>
  jsonObject().superRefine((request, ctx) => {
    for (const key of LOOP_OWNED) {
      if (key in request)
        ctx.addIssue({
          code: "custom",
          path: [key],
          message: `is set by the loop, not by request (${LOOP_OWNED_HINTS[key]})`,
        });
    }
    const problem = requestProblem(request);
    if (problem !== undefined) ctx.addIssue({ code: "custom", path: problem.path, message: problem.message });
  });

/**
 * The value each defaulted field takes when a spec leaves it out: the one place the schemas below
 * read their defaults from, and what the fieldwise path copies without building those fields'
 * schemas (run-spec.test.ts checks each against its schema's own default).
 */
const SPEC_DEFAULTS = {
  version: RUN_SPEC_VERSION,
  model: null,
  mode: "auto",
  max_tool_calls: LOOP_DEFAULTS.maxToolCalls,
  max_turns: LOOP_DEFAULTS.maxTurns,
  reset_tool_choice: LOOP_DEFAULTS.resetToolChoice,
  tools_on_follow_up: LOOP_DEFAULTS.toolsOnFollowUp,
  tool_execution: LOOP_DEFAULTS.toolExecution,
  parallel_tool_calls: LOOP_DEFAULTS.parallelToolCalls,
  tool_concurrency: LOOP_DEFAULTS.toolConcurrency,
  native_tools: "auto",
  native_shell: "shell",
  hosted_tools: [],
  continue_incomplete: false,
  on_limit: "stop",
  request: {},
  history: {
    strategy: HISTORY_DEFAULTS.strategy,
    recent_calls_to_keep: HISTORY_DEFAULTS.recentCallsToKeep,
    truncation_threshold: HISTORY_DEFAULTS.truncationThreshold,
  },
} as const;

/** The fields a spec must give (every other one is optional or has its `SPEC_DEFAULTS` value). */
const REQUIRED_FIELDS: ReadonlySet<string> = new Set(["input"]);

/**
 * How to build each field's schema, in the spec's key order (see the `RunSpec` doc comments). Built
 * on first use, field by field: zod builds a schema in tens of microseconds a method call, and a
 * run's start gives two fields (`model`, `input`) of thirty (bench/README.md, "Start-up").
 */
const FIELD_BUILDERS = {
  /** The version of this schema the spec was written against. */
  version: () => z.literal(RUN_SPEC_VERSION).default(SPEC_DEFAULTS.version),
  model: () =>
    z
      .string()
      .min(1)
      .max(256)
      .regex(NO_CONTROL_CHARS, "holds control or direction characters")
      .nullable()
      .default(SPEC_DEFAULTS.model),
  input: () => z.union([z.string().min(1, "must not be empty"), z.array(jsonObject()).min(1)]),
  instructions: () => z.string().optional(),
  instruction_files: () => z.array(z.string().min(1).max(4096)).max(256).optional(),
  mode: () => z.enum(["auto", "chained", "stateless"]).default(SPEC_DEFAULTS.mode),
  max_tool_calls: () => z.int().min(1).max(1_000_000).default(SPEC_DEFAULTS.max_tool_calls),
  max_turns: () => z.int().min(1).max(100_000).default(SPEC_DEFAULTS.max_turns),
  tools: () => z.array(z.string().min(1).max(128)).max(4096).optional(),
  tool_choice: () =>
    z.union([z.enum(["none", "auto", "required"]), z.looseObject({ type: z.string() })]).optional(),
  reset_tool_choice: () => z.boolean().default(SPEC_DEFAULTS.reset_tool_choice),
  tools_on_follow_up: () =>
    z.enum(["every_request", "first_request"]).default(SPEC_DEFAULTS.tools_on_follow_up),
  tool_execution: () => z.enum(["eager", "after_response"]).default(SPEC_DEFAULTS.tool_execution),
  parallel_tool_calls: () => z.boolean().default(SPEC_DEFAULTS.parallel_tool_calls),
  tool_concurrency: () => z.int().min(1).max(1024).default(SPEC_DEFAULTS.tool_concurrency),
  tool_timeout_ms: () => z.int().min(1).max(86_400_000).optional(),
  tool_output_cap_bytes: () =>
    z
      .int()
      .min(256)
      .max(1 << 30)
      .optional(),
  native_tools: () => z.union([z.boolean(), z.literal("auto")]).default(SPEC_DEFAULTS.native_tools),
  native_shell: () => z.enum(["shell", "local_shell"]).default(SPEC_DEFAULTS.native_shell),
  hosted_tools: () =>
    z
      .array(z.looseObject({ type: z.string().min(1) }))
      .max(64)
      .default([]),
  continue_incomplete: () => z.boolean().default(SPEC_DEFAULTS.continue_incomplete),
  on_limit: () => z.enum(["stop", "answer"]).default(SPEC_DEFAULTS.on_limit),
  stop_when: () =>
    z
      .array(
        z.discriminatedUnion("type", [
          z.strictObject({ type: z.literal("turn_count_is"), count: z.int().min(1).max(100_000) }),
          z.strictObject({ type: z.literal("has_tool_call"), name: z.string().min(1).max(128) }),
        ]),
      )
      .max(64)
      .optional(),
  request: () => requestShape().default({}),
  history: () => historyShape().prefault({}),
  output_schema: () => outputSchemaShape().optional(),
  transport: () => z.enum(["sse", "websocket"]).optional(),
  thread: () =>
    z.string().regex(THREAD_NAME, "must be 1–64 letters, digits, ., _ or - (not starting with .)").optional(),
  context: () => contextShape().optional(),
  run_id: () => z.string().regex(RUN_ID, "must be 1–128 letters, digits, _ or -").optional(),
};

/** A RunSpec's field names. */
type SpecKey = keyof typeof FIELD_BUILDERS;

/** Each field's schema, as `FIELD_BUILDERS` builds it. */
type SpecFields = { [K in SpecKey]: ReturnType<(typeof FIELD_BUILDERS)[K]> };

/** The field names, in the schema's key order; a Map lookup, so `__proto__` or `toString` is simply unknown. */
const SPEC_KEYS: ReadonlyMap<string, SpecKey> = new Map(
  (Object.keys(FIELD_BUILDERS) as SpecKey[]).map((key) => [key, key]),
);

/** The field schemas built so far. */
const builtFields = new Map<SpecKey, ZodType>();

/** One field's schema, built on its first use. */
function fieldSchema<K extends SpecKey>(key: K): SpecFields[K] {
  let schema = builtFields.get(key);
  if (schema === undefined) {
    schema = FIELD_BUILDERS[key]();
    builtFields.set(key, schema);
  }
  return schema as SpecFields[K];
}

/** The whole spec's schema (every field built). */
function buildSpecShape() {
  const shape = Object.fromEntries([...SPEC_KEYS.values()].map((key) => [key, fieldSchema(key)]));
  return z.strictObject(shape as SpecFields);
}

/** The whole spec's schema's type. */
type SpecShape = ReturnType<typeof buildSpecShape>;

/** The whole spec's schema, made on first use (a bad spec, the JSON Schema, a partial spec). */
const specShape: () => SpecShape = once(buildSpecShape);

/**
 * A run as data, every default applied (what `resolveRunSpec` returns, what a tape's header
 * carries as `spec`):
 * - `model`: the model, or null to let the server choose. Default null.
 * - `input`: the prompt, or input items. Required.
 * - `instructions`: sent on every request. Default none.
 * - `instruction_files`: the AGENTS.md files whose text `instructions` includes (instruction-files.ts),
 *   listed in `run_started.instruction_files`. Default none.
 * - `mode`: `chained` (previous_response_id), `stateless` (the whole history, store:false) or
 *   `auto` (chained unless the provider cannot chain). Default `auto`.
 * - `max_tool_calls` (32), `max_turns` (20): the run's limits (`LOOP_DEFAULTS`).
 * - `tools`: names of the tools offered, a selection of what the run's tools (`RunDeps.tools`)
 *   and the local policy allow. Default: every tool the run has.
 * - `tool_choice`, `reset_tool_choice` (true), `tools_on_follow_up` (`every_request`),
 *   `tool_execution` (`eager`), `parallel_tool_calls` (false), `tool_concurrency` (4),
 *   `tool_timeout_ms`, `tool_output_cap_bytes`: how tools are offered and run.
 * - `native_tools` (`auto`: the provider's capability), `native_shell` (`shell`), `hosted_tools`
 *   ([]): OpenAI's native tool types and the provider's own tools.
 * - `continue_incomplete` (false): continue an answer cut off by max_output_tokens once.
 * - `on_limit` (`stop`): what a run that reaches `max_turns` or `max_tool_calls` does — `stop`, or
 *   `answer`: one last request with no tools, so the user gets an answer (the reason stays the limit).
 * - `stop_when`: stop conditions that are data (`turnCountIs`, `hasToolCall`, stop-when.ts); the
 *   first that holds after a turn ends the run `stop_condition`. Default none.
 * - `request` ({}): extra request fields (reasoning, temperature, metadata, …; not the loop's own).
 * - `history`: the run's ToolHistoryManager settings (`HISTORY_DEFAULTS`).
 * - `output_schema`: structured output (a JSON Schema the final answer must match).
 * - `transport`: `sse` or `websocket`, for whoever builds the provider (the CLI, `eddy serve`);
 *   `runAgent` streams through the provider it is given.
 * - `thread`: the thread the run continues (`runAgentOnThread`), `context`: the compiled context it
 *   starts from (items + the `context_compiled` payload); `run_id`: fixed run id.
 */
export type RunSpec = Omit<z.output<SpecShape>, ProtocolTyped> & ProtocolFields;

/** Fields the schema checks loosely (their items are the Open Responses request's) and types by the protocol. */
type ProtocolTyped = "input" | "context" | "tool_choice" | "hosted_tools" | "request";

/** The protocol types of those fields. */
interface ProtocolFields {
  input: string | ItemParam[];
  context?: { items: ItemParam[]; compiled: ContextCompilation };
  tool_choice?: ToolChoiceParam;
  hosted_tools: HostedTool[];
  request: Partial<CreateResponseBody>;
}

/** A RunSpec as written by hand or received: every field optional except `input`, defaults not yet applied. */
export type RunSpecInput = Omit<z.input<SpecShape>, ProtocolTyped | "output_schema"> &
  Pick<ProtocolFields, "input" | "context" | "tool_choice"> &
  Partial<Pick<ProtocolFields, "hosted_tools" | "request">> & {
    /** Structured output; `schema` may be a zod schema in a program (converted to JSON Schema once). */
    output_schema?: Omit<z.input<ReturnType<typeof outputSchemaShape>>, "schema"> & {
      schema: JsonSchema | ZodType;
    };
  };

/** A spec without its input yet (a batch's shared settings, a session's, a server's defaults). */
export type PartialRunSpec = Partial<RunSpecInput>;

/** The continuation mode a spec asks for. */
export type RunSpecMode = RunSpec["mode"];

/** The history settings of a resolved spec. */
export type RunSpecHistory = RunSpec["history"];

/** The structured-output settings of a resolved spec. */
export type RunSpecOutputSchema = NonNullable<RunSpec["output_schema"]>;

/**
 * The JSON Schema (draft 2020-12) of a RunSpec as accepted on input — what `eddy serve` validates
 * `POST /v1/runs` against and its `/openapi.json` describes, what a tape header's `spec` and a
 * queue job's spec are checked with. Generated from the same zod schema `resolveRunSpec` uses.
 * A few cross-field rules JSON Schema cannot say (which `request` keys the loop owns, their
 * ranges) are `resolveRunSpec`'s alone: a spec the schema accepts may still be refused there, so
 * `resolveRunSpec` is the check to trust, the schema a description for other tools.
 */
export const runSpecSchema: Readonly<Record<string, unknown>> = lazyObject(() =>
  // Built on first use (util/lazy-object.ts): converting the schema at import time cost every
  // `eddy run` start-up, which never reads it.
  Object.freeze({
    $id: `https://eddy.dev/schemas/run-spec.v${RUN_SPEC_VERSION}.json`,
    title: "RunSpec",
    ...(z.toJSONSchema(specShape(), { io: "input", unrepresentable: "any" }) as Record<string, unknown>),
  }),
);

/**
 * Checks a spec (untrusted: a tape, a task line, a queue job, an HTTP body, a program's object)
 * and applies every default once. Throws `EddyError` `invalid_run_spec` (fault `user`) whose
 * message names each bad field and what was given — `max_turns: expected an integer (got "many")`
 * — and whose `details.field` is the first one. `source` prefixes the message (a file, a job id).
 *
 * @example
 * ```ts
 * const spec = resolveRunSpec({ model: "gpt-5-mini", input: "What is in package.json?", max_turns: 5 });
 * spec.max_tool_calls; // 32: the default, applied here once
 * ```
 */
export function resolveRunSpec(input: unknown, source?: string): RunSpec {
  const given = withJsonOutputSchema(input);
  return resolveFieldwise(given) ?? resolveWhole(given, source);
}

/**
 * `resolveRunSpec` by one parse of the whole object with `specShape`: the reference the fieldwise
 * path is tested against (run-spec.test.ts), and the path that words every error.
 * @internal
 */
export function resolveWhole(given: unknown, source?: string): RunSpec {
  const parsed = specShape().safeParse(given);
  if (!parsed.success) throw specError(parsed.error, given, source);
  return parsed.data as RunSpec;
}

/**
 * What a field becomes when a spec leaves it out: its `SPEC_DEFAULTS` value, left out too
 * (optional), or a refusal (required). The fieldwise path reads it instead of building the
 * schemas of fields a spec does not give; run-spec.test.ts asks every field's schema the same.
 * @internal
 */
export function absentField(key: string): { required: boolean; value: unknown } {
  if (REQUIRED_FIELDS.has(key)) return { required: true, value: undefined };
  return {
    required: false,
    value: Object.hasOwn(SPEC_DEFAULTS, key) ? SPEC_DEFAULTS[key as keyof typeof SPEC_DEFAULTS] : undefined,
  };
}

/** What a field's own schema makes of it left out (run-spec.test.ts: the reference for `absentField`). @internal */
export function absentBySchema(key: string): { required: boolean; value: unknown } {
  const name = SPEC_KEYS.get(key);
  if (name === undefined) throw new Error(`no RunSpec field ${key}`);
  const parsed = fieldSchema(name).safeParse(undefined);
  return { required: !parsed.success, value: parsed.data };
}

/** The fields whose schemas this module has built so far, in build order (run-spec.test.ts). @internal */
export function builtFieldNames(): string[] {
  return [...builtFields.keys()];
}

/** The RunSpec's field names, in the schema's key order. @internal */
export function specKeys(): string[] {
  return [...SPEC_KEYS.keys()];
}

/**
 * The same result as `resolveWhole` for a plain object whose fields all pass their own schemas,
 * for a fraction of the work on a run's start (bench/README.md, "The turn"): only the fields given
 * are parsed, each with its own schema (built on first use); every other field takes a fresh copy
 * of its default. Undefined when anything is wrong (an unknown key, a bad or missing field, not a plain
 * object): the whole parse then says what.
 */
function resolveFieldwise(given: unknown): RunSpec | undefined {
  if (given === null || typeof given !== "object") return undefined;
  const proto = Object.getPrototypeOf(given);
  if (proto !== Object.prototype && proto !== null) return undefined;
  const fields = given as Record<string, unknown>;
  for (const key of Object.keys(fields)) if (!SPEC_KEYS.has(key)) return undefined;
  const spec: Record<string, unknown> = {};
  // In the schema's key order, as the whole parse returns them (a tape's header is byte-stable).
  for (const key of SPEC_KEYS.values()) {
    if (Object.hasOwn(fields, key)) {
      const parsed = fieldSchema(key).safeParse(fields[key]);
      if (!parsed.success) return undefined;
      spec[key] = parsed.data;
      continue;
    }
    const left = absentField(key);
    if (left.required) return undefined;
    if (left.value !== undefined) spec[key] = freshCopy(left.value);
  }
  // Every field passed its own schema and every absent one took its default: the shape of a RunSpec.
  return spec as unknown as RunSpec;
}

/** A deep copy of a default (JSON data), so no two specs share a mutable array or object. */
function freshCopy(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(freshCopy);
  if (value !== null && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, freshCopy(v)]));
  return value;
}

let partialShape: ReturnType<SpecShape["partial"]> | undefined;

/**
 * The spec's fields, each optional: one schema, made on first use. `specShape().partial()` builds a
 * new schema, and zod compiles each schema on its first parse: made per call it cost ~1.4 ms a
 * task line, 217 s before a 100,000-task batch started (docs/pitfalls.md #104).
 */
export function partialSpecShape(): ReturnType<SpecShape["partial"]> {
  partialShape ??= specShape().partial();
  return partialShape;
}

/** Like `resolveRunSpec` for a spec without its input (a batch's or a server's shared settings). */
export function checkPartialRunSpec(input: unknown, source?: string): PartialRunSpec {
  const given = withJsonOutputSchema(input);
  const parsed = partialSpecShape().safeParse(given);
  if (!parsed.success) throw specError(parsed.error, given, source);
  // The given fields only: defaults are applied once, by resolveRunSpec, after merging.
  return given as PartialRunSpec;
}

/**
 * `over` merged over `base`: a field `over` sets wins; `request` and `history` are merged one level
 * deep (a task's `temperature` keeps the batch's `reasoning`). Neither is checked here.
 */
export function mergeRunSpecs(base: PartialRunSpec, over: PartialRunSpec): PartialRunSpec {
  const merged: PartialRunSpec = { ...base, ...over };
  if (base.request !== undefined && over.request !== undefined)
    merged.request = { ...base.request, ...over.request };
  if (base.history !== undefined && over.history !== undefined)
    merged.history = { ...base.history, ...over.history };
  return merged;
}

/**
 * The budgets a spec from elsewhere (a task line, a queue job, a request body, a tape being resumed)
 * may lower but never raise: each is at most the local invocation's value, or this default when the
 * invocation sets none (docs/architecture.md, "One home for a run's settings").
 */
const BUDGETS = [
  ["max_turns", LOOP_DEFAULTS.maxTurns],
  ["max_tool_calls", LOOP_DEFAULTS.maxToolCalls],
  ["tool_concurrency", LOOP_DEFAULTS.toolConcurrency],
  ["tool_timeout_ms", TOOL_DEFAULTS.timeoutMs],
  ["tool_output_cap_bytes", TOOL_DEFAULTS.outputCapBytes],
] as const;

/** A budget of a spec above the local invocation's: the field, what the spec asks and the most it may have. */
export interface BudgetOverrun {
  /** `max_turns`, …, or `request.max_output_tokens`. */
  field: string;
  asked: number;
  limit: number;
}

/** How `budgetOverruns` and `withinBudgets` read the local settings. */
export interface BudgetOptions {
  /**
   * Only the budgets `local` sets limit (a coordinator's flags, when each worker's own limits
   * still apply after). @defaultValue false: a budget `local` leaves out is at most its default
   */
  onlySet?: boolean;
}

/**
 * Every budget of `spec` above what `local` (the invocation's own settings) allows — `max_turns`,
 * `max_tool_calls`, `tool_concurrency`, `tool_timeout_ms`, `tool_output_cap_bytes` (each at most
 * the invocation's value, or its default when the invocation sets none) and
 * `request.max_output_tokens` (at most the invocation's, when it sets one). Values that are not
 * numbers are left to `resolveRunSpec` to refuse.
 */
export function budgetOverruns(
  spec: PartialRunSpec,
  local: PartialRunSpec,
  options: BudgetOptions = {},
): BudgetOverrun[] {
  const overruns: BudgetOverrun[] = [];
  for (const [field, fallback] of BUDGETS) {
    const asked: unknown = spec[field];
    const limit: unknown = local[field] ?? (options.onlySet === true ? undefined : fallback);
    if (typeof asked === "number" && typeof limit === "number" && asked > limit)
      overruns.push({ field, asked, limit });
  }
  const asked: unknown = spec.request?.max_output_tokens;
  const limit: unknown = local.request?.max_output_tokens;
  if (typeof asked === "number" && typeof limit === "number" && asked > limit)
    overruns.push({ field: "request.max_output_tokens", asked, limit });
  return overruns;
}

/**
 * `spec` (a task's, a job's or a request's merged over the invocation's) with every budget above
 * the invocation's brought down to it (`budgetOverruns`): such a spec may lower a budget, never
 * raise it. Permissions are the `Policy`'s, never a spec's (policy.ts).
 */
export function withinBudgets(
  spec: PartialRunSpec,
  local: PartialRunSpec,
  options: BudgetOptions = {},
): PartialRunSpec {
  const overruns = budgetOverruns(spec, local, options);
  if (overruns.length === 0) return spec;
  const capped: PartialRunSpec = { ...spec };
  for (const { field, limit } of overruns) {
    if (field === "request.max_output_tokens") capped.request = { ...spec.request, max_output_tokens: limit };
    else capped[field as (typeof BUDGETS)[number][0]] = limit;
  }
  return capped;
}

/**
 * The budget fields `spec` sets (those `withinBudgets` reads), and nothing else: what a resume
 * checks of the invocation's settings before it caps a tape's budgets with them.
 */
export function budgetsOf(spec: PartialRunSpec): PartialRunSpec {
  const out: PartialRunSpec = {};
  for (const [field] of BUDGETS) if (spec[field] !== undefined) out[field] = spec[field];
  const tokens = spec.request?.max_output_tokens;
  if (tokens !== undefined) out.request = { max_output_tokens: tokens };
  return out;
}

/** A zod output schema in a program's spec becomes its JSON Schema (a spec is data). */
function withJsonOutputSchema(input: unknown): unknown {
  if (input === null || typeof input !== "object") return input;
  const spec = input as { output_schema?: { schema?: unknown; name?: unknown } };
  const schema = spec.output_schema?.schema;
  if (!isZodSchema(schema)) return input;
  const owner = `output schema ${JSON.stringify(spec.output_schema?.name ?? "")}`;
  return {
    ...spec,
    output_schema: { ...spec.output_schema, schema: compileSchema(owner, schema).jsonSchema },
  };
}

function specError(error: z.ZodError, given: unknown, source: string | undefined): EddyError {
  const problems = zodProblems(error, given);
  const where = source === undefined ? "run spec" : source;
  const field = firstProblemField(error);
  return new EddyError("invalid_run_spec", `${where}: ${problems.join("; ")}`, {
    fault: "user",
    details: { field: field ?? "", problems },
  });
}
