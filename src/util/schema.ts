/**
 * User-supplied schemas — tool parameters, structured-output schemas: a JSON Schema (validated
 * with ajv, draft 2020-12) or a zod schema (converted with zod's own `z.toJSONSchema`, validated
 * with zod so transforms and defaults apply). Each schema is compiled once. Messages name the bad
 * field. Generic (a leaf of `util/`): the tools layer and the loop both use it.
 *
 * ajv is loaded by the first JSON Schema compiled at run time: importing it costs more than most
 * runs spend validating (bench/README.md, "startup"), and the built-in tools' validators are
 * compiled ahead of time (`registerPrecompiled`).
 */
import { createRequire } from "node:module";
import type * as AjvModule from "ajv/dist/2020.js";
import type { Ajv2020, CodeOptions, ErrorObject, ValidateFunction } from "ajv/dist/2020.js";
import type * as Re2js from "re2js";
import { type ZodType, z } from "zod";
import { EddyError } from "../errors.js";
import { isJsonObject } from "./json.js";

/** ajv's pluggable regular expression engine. */
type RegExpEngine = NonNullable<CodeOptions["regExp"]>;

/** A JSON Schema object. */
export type JsonSchema = { [key: string]: unknown };

/** A compiled parameter schema. */
export interface CompiledSchema {
  /** The JSON Schema the model sees (`$schema` removed: it is noise in a request). */
  readonly jsonSchema: JsonSchema;
  /** Checks parsed arguments; on success returns the value the tool gets (zod may transform it). */
  validate(value: unknown): SchemaCheck;
}

/** Result of a schema check: the value to use, or the problems, each naming its field. */
export type SchemaCheck = { ok: true; value: unknown } | { ok: false; problems: string[] };

const MAX_PROBLEMS = 6;

/**
 * ajv's options, here and for the validators compiled ahead of time (`registerPrecompiled`).
 * `addUsedSchema: false` keeps compiled schemas out of ajv's registry, so two tools whose schemas
 * share an `$id` do not collide; formats are annotations only.
 */
export const AJV_OPTIONS = {
  allErrors: true,
  strict: false,
  addUsedSchema: false,
  validateFormats: false,
  logger: false,
} as const;

let sharedAjv: Ajv2020 | undefined;
let untrustedAjv: Ajv2020 | undefined;

/**
 * One ajv instance for all registries, created (and ajv loaded) by the first JSON Schema compiled.
 * `untrusted`: the instance for schemas from elsewhere (an MCP server's), whose `pattern`s and
 * `patternProperties` run in linear time (`linearRegExp`).
 */
function ajv(untrusted = false): Ajv2020 {
  // ajv is a CommonJS package: require() gives the same instance an import would.
  const load = () => (createRequire(import.meta.url)("ajv/dist/2020.js") as typeof AjvModule).Ajv2020;
  if (untrusted) {
    untrustedAjv ??= new (load())({ ...AJV_OPTIONS, code: { regExp: linearRegExp } });
    return untrustedAjv;
  }
  sharedAjv ??= new (load())(AJV_OPTIONS);
  return sharedAjv;
}

/**
 * ajv's regular expression engine for untrusted schemas: re2js (RE2 semantics, linear time), so a
 * pattern such as `^(a+)+$` cannot stall the process on a crafted value (native RegExp
 * backtracks exponentially). A pattern RE2 cannot run (lookahead, backreferences) makes the schema
 * unusable: compiling it throws, naming the pattern.
 */
const linearRegExp: RegExpEngine = Object.assign(
  (pattern: string): ReturnType<RegExpEngine> => {
    // Loaded with the first untrusted pattern; its CommonJS build keeps compiling synchronous.
    const { RE2JS } = createRequire(import.meta.url)("re2js") as typeof Re2js;
    try {
      return RE2JS.compile(RE2JS.translateRegExp(pattern));
    } catch (error) {
      throw new Error(
        `its pattern ${JSON.stringify(pattern)} cannot be checked in linear time (${(error as Error).message.replace(/^error parsing regexp: /, "")})`,
      );
    }
  },
  { code: 'require("re2js").RE2JS.compile' },
);

/** True for a zod (v4) schema. */
export function isZodSchema(value: unknown): value is ZodType {
  return value !== null && typeof value === "object" && "_zod" in value;
}

/**
 * Compiled schemas by schema object. Compiling costs ~1 ms for a JSON Schema (ajv code generation)
 * and ~40 µs for zod's JSON Schema export, and `runAgent({tools: [...]})` builds a registry per run:
 * the same schema object is compiled once. Schemas are treated as immutable once compiled.
 */
const compiled = new WeakMap<object, CompiledSchema>();
/** The compiled schemas whose patterns run in linear time (`untrusted`). */
const linear = new WeakSet<CompiledSchema>();

/** Options of `compileSchema`. */
export interface CompileSchemaOptions {
  /**
   * The schema comes from elsewhere (an MCP server): its `pattern`s run on RE2 (linear time), and
   * one RE2 cannot run makes the schema unusable. The compiled schema is cached for the same
   * object, so a later `compileSchema` without the option (the registry's) gets it.
   * @defaultValue false
   */
  untrusted?: boolean;
}

/**
 * Compiles a schema that must describe a JSON object; throws `invalid_config` naming `owner`
 * (e.g. `tool "read_file"`, `output schema "Answer"`) when the schema is unusable.
 */
export function compileSchema(
  owner: string,
  parameters: JsonSchema | ZodType,
  options: CompileSchemaOptions = {},
): CompiledSchema {
  const untrusted = options.untrusted === true;
  const cacheable = parameters !== null && typeof parameters === "object";
  const hit = cacheable ? compiled.get(parameters) : undefined;
  if (hit !== undefined && (!untrusted || linear.has(hit))) return hit;
  const result = isZodSchema(parameters)
    ? compileZod(owner, parameters)
    : compileJsonSchema(owner, parameters, untrusted);
  if (cacheable) compiled.set(parameters, result);
  if (untrusted) linear.add(result);
  return result;
}

/**
 * Compiles a schema a recording holds (an MCP server's, from a tape header) as `untrusted`; when
 * one of its patterns cannot run in linear time (a lookahead, a backreference), as a check that
 * the arguments are an object, for this object and every later `compileSchema` of it, while the
 * model still sees the schema. A replay declares what was recorded and never runs a recorded
 * pattern on the backtracking engine: a tape is untrusted too (src/tools/mcp/offline.ts). Throws
 * `invalid_config` as `compileSchema` does for a schema that is unusable for any other reason.
 */
export function compileRecordedSchema(owner: string, parameters: JsonSchema): CompiledSchema {
  try {
    return compileSchema(owner, parameters, { untrusted: true });
  } catch (error) {
    // Compiling runs no pattern: a schema the native engine compiles failed only for its patterns.
    // A clone, so the native form is not cached for `parameters`.
    compileSchema(owner, structuredClone(parameters));
    if (!isJsonObject(parameters)) throw error;
    const { $schema: _ignored, ...jsonSchema } = parameters;
    const result: CompiledSchema = {
      jsonSchema,
      validate: (value) =>
        isJsonObject(value) ? { ok: true, value } : { ok: false, problems: ["arguments: must be object"] },
    };
    compiled.set(parameters, result);
    linear.add(result);
    return result;
  }
}

function compileJsonSchema(owner: string, parameters: JsonSchema, untrusted: boolean): CompiledSchema {
  if (!isJsonObject(parameters)) {
    throw invalid(owner, "the schema must be a JSON Schema object");
  }
  const { $schema: _ignored, ...jsonSchema } = parameters;
  checkObjectSchema(owner, jsonSchema);
  let validator: ValidateFunction;
  try {
    validator = ajv(untrusted).compile(jsonSchema);
  } catch (error) {
    throw invalid(owner, `the schema is not a valid JSON Schema: ${(error as Error).message}`, error);
  }
  return checkedBy(jsonSchema, validator);
}

/** An ajv validator, compiled at run time or ahead of time: true when valid, else `errors`. */
export interface PrecompiledValidator {
  (value: unknown): boolean;
  errors?: ErrorObject[] | null;
}

function checkedBy(jsonSchema: JsonSchema, validator: PrecompiledValidator): CompiledSchema {
  return {
    jsonSchema,
    validate(value) {
      if (validator(value)) return { ok: true, value };
      return { ok: false, problems: formatAjvErrors(validator.errors ?? []) };
    },
  };
}

/**
 * Makes `validate`, an ajv standalone validator compiled ahead of time with `AJV_OPTIONS` from a
 * schema whose JSON was `source`, the compiled form of `schema`: `compileSchema(owner, schema)`
 * then needs no ajv (the built-in tools: src/tools/builtin/precompiled.ts). Does nothing when
 * `schema` no longer serializes to `source` (the validator is stale: ajv compiles the schema as
 * any other) or was compiled already.
 */
export function registerPrecompiled(
  schema: JsonSchema,
  source: string,
  validate: PrecompiledValidator,
): void {
  if (compiled.has(schema) || JSON.stringify(schema) !== source) return;
  const { $schema: _ignored, ...jsonSchema } = schema;
  compiled.set(schema, checkedBy(jsonSchema, validate));
}

function compileZod(owner: string, schema: ZodType): CompiledSchema {
  let converted: JsonSchema;
  try {
    converted = z.toJSONSchema(schema, { io: "input" }) as JsonSchema;
  } catch (error) {
    throw invalid(
      owner,
      `its zod schema cannot be expressed as JSON Schema: ${(error as Error).message}`,
      error,
    );
  }
  const { $schema: _ignored, ...jsonSchema } = converted;
  checkObjectSchema(owner, jsonSchema);
  return {
    jsonSchema,
    validate(value) {
      const result = z.safeParse(schema, value);
      if (result.success) return { ok: true, value: result.data };
      const problems = result.error.issues.map((issue) => {
        const field = formatPath(issue.path.map((p) => (typeof p === "symbol" ? String(p) : p)));
        return `${field}: ${issue.message}`;
      });
      return { ok: false, problems: dedupe(problems) };
    },
  };
}

/** Function tools and structured outputs are JSON objects: a root schema must not declare another type. */
function checkObjectSchema(owner: string, schema: JsonSchema): void {
  const type = schema.type;
  if (type !== undefined && type !== "object") {
    throw invalid(
      owner,
      `the schema must describe a JSON object (type "object"), got type ${JSON.stringify(type)}`,
    );
  }
}

function invalid(owner: string, message: string, cause?: unknown): EddyError {
  return new EddyError("invalid_config", `${owner}: ${message}`, {
    fault: "user",
    cause,
    details: { owner },
  });
}

/** ajv errors as "field: problem" lines, most specific first, without anyOf/oneOf noise. */
function formatAjvErrors(errors: ErrorObject[]): string[] {
  const problems: string[] = [];
  for (const e of errors) {
    const segments = e.instancePath
      .split("/")
      .slice(1)
      .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
    const params = e.params as Record<string, unknown>;
    switch (e.keyword) {
      case "required":
        problems.push(
          `${formatPath([...segments, String(params.missingProperty)])}: is required but missing`,
        );
        break;
      case "additionalProperties":
        problems.push(
          `${formatPath([...segments, String(params.additionalProperty)])}: is not a known property`,
        );
        break;
      case "enum":
        problems.push(`${formatPath(segments)}: must be one of ${JSON.stringify(params.allowedValues)}`);
        break;
      case "anyOf":
      case "oneOf":
        // The branch errors already say what was expected.
        break;
      default:
        problems.push(`${formatPath(segments)}: ${e.message ?? e.keyword}`);
    }
  }
  return dedupe(problems);
}

/** `["include", 0]` → `include[0]`; the root is called "arguments". */
function formatPath(path: readonly (string | number)[]): string {
  if (path.length === 0) return "arguments";
  let out = "";
  for (const p of path) {
    if (typeof p === "number" || /^\d+$/.test(p)) out += `[${p}]`;
    else out += out === "" ? p : `.${p}`;
  }
  return out === "" ? "arguments" : out;
}

function dedupe(problems: string[]): string[] {
  const unique = [...new Set(problems)];
  if (unique.length <= MAX_PROBLEMS) return unique;
  return [...unique.slice(0, MAX_PROBLEMS), `(${unique.length - MAX_PROBLEMS} more problems)`];
}
