/**
 * The demo model and function tools it does not know (anything but eddy's own tools, whose rules
 * are in `demo-intent.ts`): it calls the offered tool whose name and description share the most
 * words with the user's message, with arguments built from the tool's JSON Schema, and after the
 * output comes back it answers from it (`demo-answer.ts`).
 *
 * Arguments: every required property gets a plausible value. `const`, then an `enum` value the
 * message names (else the first), then `default`; strings come from the message when the property
 * name says what it holds (a place after "in"/"at" for `location`/`city`, a file name for `path`,
 * a URL, an e-mail, quoted text or the message itself for `query`/`text`, a `name: value` pair
 * naming the property), else from the schema (`format`, an `examples` value, an "e.g." in the
 * description); numbers from the message for count-like names, else the smallest allowed (1 when
 * that is free); booleans true when the message names the property; nested objects and arrays
 * (one element, or `minItems`) recursively; `$ref`s into `$defs`/`definitions` are followed.
 */
import type { FunctionToolParam } from "../protocol/types.js";
import { isJsonObject } from "../util/json.js";
import { fileMentions } from "./demo-intent.js";
import { mayCall, type ToolPolicy } from "./tool-policy.js";

/**
 * eddy's own tools: the demo model calls these only by its rules for them (`demo-intent.ts`).
 * The list repeats `BUILTIN_TOOL_NAMES` (src/tools/builtin/index.ts) because the mock may not
 * import tools/; `demo-tools.test.ts` checks that the two agree.
 */
export const EDDY_TOOLS: ReadonlySet<string> = new Set([
  "read_file",
  "list_dir",
  "grep",
  "write_file",
  "apply_patch",
  "shell",
]);

const STOP = new Set(
  "the and for with from into about what whats which who whom whose where when why how does did are was were will would should could can cannot please tell give show get set current like this that these those there here you your yours our its have has had not all any some one two out let make want need know just also than then them they their use using used value values return returns given".split(
    " ",
  ),
);

/** The offered tool (not one of eddy's, callable under `policy`) that best matches `text`, if any shares a word with it. */
export function bestForeignTool(
  text: string,
  tools: readonly FunctionToolParam[],
  policy: ToolPolicy,
): FunctionToolParam | undefined {
  const asked = new Set(words(text));
  let best: { tool: FunctionToolParam; score: number } | undefined;
  for (const tool of tools) {
    if (EDDY_TOOLS.has(tool.name) || !mayCall(policy, tool.name)) continue;
    const score = new Set(words(`${tool.name} ${tool.description ?? ""}`).filter((w) => asked.has(w))).size;
    if (score > 0 && (best === undefined || score > best.score)) best = { tool, score };
  }
  return best?.tool;
}

/** Arguments for `tool` built from its parameters schema and the message (see the module comment). */
export function argumentsFromSchema(schema: unknown, text: string): Record<string, unknown> {
  const value = build(schema, { root: schema, text, depth: 0 }, "");
  return isJsonObject(value) ? (value as Record<string, unknown>) : {};
}

interface BuildContext {
  root: unknown;
  text: string;
  depth: number;
}

type Schema = Record<string, unknown>;

function build(raw: unknown, ctx: BuildContext, name: string): unknown {
  const schema = resolve(raw, ctx.root);
  if (schema === undefined || ctx.depth > 8) return null;
  if ("const" in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) {
    const lower = ctx.text.toLowerCase();
    return (
      schema.enum.find((v) => typeof v === "string" && lower.includes(v.toLowerCase())) ?? schema.enum[0]
    );
  }
  if ("default" in schema) return schema.default;
  for (const key of ["anyOf", "oneOf", "allOf"]) {
    const options = schema[key];
    if (Array.isArray(options) && options.length > 0) {
      const option = options.find((o) => resolve(o, ctx.root)?.type !== "null") ?? options[0];
      return build(option, ctx, name);
    }
  }
  const inner = { ...ctx, depth: ctx.depth + 1 };
  switch (typeOf(schema)) {
    case "object": {
      const properties = (schema.properties ?? {}) as Record<string, unknown>;
      const required = Array.isArray(schema.required)
        ? schema.required.filter((k) => typeof k === "string")
        : [];
      return Object.fromEntries(required.map((key) => [key, build(properties[key] ?? {}, inner, key)]));
    }
    case "array": {
      const min = typeof schema.minItems === "number" ? schema.minItems : 1;
      const item = name.endsWith("s") ? name.slice(0, -1) : name;
      return Array.from({ length: Math.min(Math.max(min, 1), 3) }, () =>
        build(schema.items ?? {}, inner, item),
      );
    }
    case "integer":
    case "number":
      return numberFor(schema, name, ctx.text);
    case "boolean":
      return words(ctx.text).some((w) => words(name).includes(w));
    case "null":
      return null;
    default:
      return stringFor(schema, name, ctx.text);
  }
}

function resolve(raw: unknown, root: unknown): Schema | undefined {
  let schema = raw;
  for (let hops = 0; hops < 8; hops++) {
    if (!isJsonObject(schema)) return undefined;
    const ref = (schema as Schema).$ref;
    if (typeof ref !== "string") return schema as Schema;
    const match = /^#\/(\$defs|definitions)\/(.+)$/.exec(ref);
    const defs = match === null ? undefined : (root as Schema | null)?.[match[1] as string];
    schema = defs !== null && typeof defs === "object" ? (defs as Schema)[match?.[2] ?? ""] : undefined;
  }
  return undefined;
}

function typeOf(schema: Schema): unknown {
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== "null") : schema.type;
  if (type === undefined && schema.properties !== undefined) return "object";
  return type;
}

const PLACE = /location|city|place|address|country|region|state|destination|origin|town|where/i;
const FREE_TEXT =
  /^(?:q|query|search|term|keywords?|prompt|question|text|message|input|content|body|topic|description)$/i;
const NAMEISH = /(?:^|_)(?:name|title|person|user|username|author)$/i;

function stringFor(schema: Schema, name: string, text: string): string {
  const value = stringFromText(schema, name, text) ?? stringFromSchema(schema, name);
  const max = typeof schema.maxLength === "number" ? schema.maxLength : undefined;
  return max === undefined ? value : Array.from(value).slice(0, max).join("");
}

/** A value the message gives for the property, when its name (or format) says which. */
function stringFromText(schema: Schema, name: string, text: string): string | undefined {
  const pair =
    name === ""
      ? null
      : new RegExp(`\\b${escapeRegExp(name)}\\s*(?:[:=]|is)\\s*("[^"]+"|[^\\s,;]+)`, "i").exec(text);
  if (pair?.[1] !== undefined) return pair[1].replace(/^"|"$/g, "");
  const format = typeof schema.format === "string" ? schema.format : "";
  const description = typeof schema.description === "string" ? schema.description : "";
  if (/uri|url/i.test(format) || /(?:^|_)(?:url|uri|link)$/i.test(name))
    return /https?:\/\/[^\s"'<>)]*[^\s"'<>),.;:!?]/.exec(text)?.[0];
  if (format === "email" || /e-?mail/i.test(name)) return /[\w.+-]+@[\w-]+(?:\.[\w-]+)+/.exec(text)?.[0];
  if (format === "date" || format === "date-time") return /\d{4}-\d{2}-\d{2}(?:T[\d:.]+Z?)?/.exec(text)?.[0];
  if (/(?:^|_)(?:path|file|filename|filepath)$/i.test(name)) return fileMentions(text)[0];
  if (PLACE.test(name) || PLACE.test(description)) return place(text);
  if (FREE_TEXT.test(name)) return quoted(text) ?? (text.trim() === "" ? undefined : text.trim());
  if (NAMEISH.test(name)) return quoted(text) ?? capitalized(text);
  return quoted(text);
}

/** A value from the schema alone: its format, an example, or a placeholder naming the property. */
function stringFromSchema(schema: Schema, name: string): string {
  switch (schema.format) {
    case "date":
      return "2026-01-01";
    case "date-time":
      return "2026-01-01T00:00:00Z";
    case "email":
      return "user@example.com";
    case "uri":
    case "url":
      return "https://example.com";
    case "uuid":
      return "00000000-0000-4000-8000-000000000000";
  }
  const examples = schema.examples;
  if (Array.isArray(examples) && typeof examples[0] === "string") return examples[0];
  const description = typeof schema.description === "string" ? schema.description : "";
  const example = /\b(?:e\.g\.|for example|such as)[,:]?\s*["'`]?([^"'`;)\n]+?)["'`]?(?:[.;)]|$)/i.exec(
    description,
  )?.[1];
  if (example !== undefined) return example.trim();
  if (/^(?:lang|language|locale)$/i.test(name)) return "en";
  return name === "" ? "example" : `example ${name.replace(/_/g, " ")}`;
}

function numberFor(schema: Schema, name: string, text: string): number {
  const integer = typeOf(schema) === "integer";
  const min = typeof schema.minimum === "number" ? schema.minimum : undefined;
  const max = typeof schema.maximum === "number" ? schema.maximum : undefined;
  let value: number | undefined;
  if (/count|limit|number|num|amount|quantity|max|size|top|n$|days|hours|minutes|age|year/i.test(name)) {
    const found = /(?:^|[^\w.])(-?\d+(?:\.\d+)?)(?![\w.])/.exec(text)?.[1];
    if (found !== undefined) value = Number(found);
  }
  value ??= min ?? (max !== undefined && max < 1 ? max : 1);
  if (min !== undefined) value = Math.max(value, min);
  if (max !== undefined) value = Math.min(value, max);
  return integer ? Math.round(value) : value;
}

/** A place named after "in", "at", "near", "for", "from" or "to": "in San Francisco, CA" → "San Francisco, CA". */
function place(text: string): string | undefined {
  const after = /\b(?:in|at|near|for|from|to)\s+((?:[A-Z][\w'-]*)(?:(?:\s+|,\s*)(?:[A-Z][\w'-]*))*)/.exec(
    text,
  )?.[1];
  return after ?? capitalized(text);
}

/** The first run of capitalized words that does not start the sentence. */
function capitalized(text: string): string | undefined {
  return /(?<=[a-z0-9,]\s+)((?:[A-Z][\w'-]*)(?:\s+[A-Z][\w'-]*)*)/.exec(text)?.[1];
}

function quoted(text: string): string | undefined {
  const m = /"([^"]+)"|`([^`]+)`|“([^”]+)”/.exec(text);
  return m?.slice(1).find((g) => g !== undefined);
}

/** Lower-case content words, split at non-letters and camelCase/snake_case boundaries, plural `s` dropped. */
function words(text: string): string[] {
  return text
    .replace(/([a-z])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length >= 3 && !STOP.has(w))
    .map((w) => (w.length > 3 && w.endsWith("s") && !w.endsWith("ss") ? w.slice(0, -1) : w));
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
