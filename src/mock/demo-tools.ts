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

/**
 * Arguments for a tool built from its parameters schema and the message (see the module comment);
 * `toolName` (an MCP tool's `SERVER__TOOL` too) lets free text start after the tool's own name
 * ("echo hello" → `hello`).
 */
export function argumentsFromSchema(schema: unknown, text: string, toolName = ""): Record<string, unknown> {
  const used: Used = { quotes: 0, numbers: new Set() };
  const tool = toolName.includes("__") ? toolName.slice(toolName.lastIndexOf("__") + 2) : toolName;
  const value = build(schema, { root: schema, text, depth: 0, tool, used }, "");
  return isJsonObject(value) ? (value as Record<string, unknown>) : {};
}

interface BuildContext {
  root: unknown;
  text: string;
  depth: number;
  /** The tool's own name (without an MCP server prefix). */
  tool: string;
  /** What earlier properties took from the message, so the next one takes the next quote or number. */
  used: Used;
}

interface Used {
  quotes: number;
  /** Offsets in the message of the numbers already given to a property. */
  numbers: Set<number>;
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
      // Optional properties too, when the message gives them a value ("limit: 5", "lang=fr").
      const named = Object.keys(properties).filter(
        (k) => !required.includes(k) && k !== "" && namedValue(k, ctx.text) !== undefined,
      );
      return Object.fromEntries(
        [...required, ...named].map((key) => [key, build(properties[key] ?? {}, inner, key)]),
      );
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
      return numberFor(schema, name, ctx);
    case "boolean":
      return words(ctx.text).some((w) => words(name).includes(w));
    case "null":
      return null;
    default:
      return stringFor(schema, name, ctx);
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

function stringFor(schema: Schema, name: string, ctx: BuildContext): string {
  const value = stringFromText(schema, name, ctx) ?? stringFromSchema(schema, name);
  const max = typeof schema.maxLength === "number" ? schema.maxLength : undefined;
  return max === undefined ? value : Array.from(value).slice(0, max).join("");
}

/** A value the message gives for the property, when its name (or format) says which. */
function stringFromText(schema: Schema, name: string, ctx: BuildContext): string | undefined {
  const { text } = ctx;
  const pair = name === "" ? undefined : namedValue(name, text);
  if (pair !== undefined) return pair;
  const format = typeof schema.format === "string" ? schema.format : "";
  const description = typeof schema.description === "string" ? schema.description : "";
  if (/uri|url/i.test(format) || /(?:^|_)(?:url|uri|link)$/i.test(name))
    return /https?:\/\/[^\s"'<>)]*[^\s"'<>),.;:!?]/.exec(text)?.[0];
  if (format === "email" || /e-?mail/i.test(name)) return /[\w.+-]+@[\w-]+(?:\.[\w-]+)+/.exec(text)?.[0];
  if (format === "date" || format === "date-time") return /\d{4}-\d{2}-\d{2}(?:T[\d:.]+Z?)?/.exec(text)?.[0];
  if (/(?:^|_)(?:path|file|filename|filepath)$/i.test(name)) return fileMentions(text)[0];
  if (PLACE.test(name) || PLACE.test(description)) return place(text);
  if (FREE_TEXT.test(name))
    return nextQuote(ctx) ?? afterToolName(text, ctx.tool) ?? (text.trim() === "" ? undefined : text.trim());
  if (NAMEISH.test(name)) return nextQuote(ctx) ?? capitalized(text);
  return nextQuote(ctx) ?? wordAfterName(name, text);
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

function numberFor(schema: Schema, name: string, ctx: BuildContext): number {
  const integer = typeOf(schema) === "integer";
  const min = typeof schema.minimum === "number" ? schema.minimum : undefined;
  const max = typeof schema.maximum === "number" ? schema.maximum : undefined;
  let value = numberFromText(name, ctx);
  value ??= min ?? (max !== undefined && max < 1 ? max : 1);
  if (min !== undefined) value = Math.max(value, min);
  if (max !== undefined) value = Math.min(value, max);
  return integer ? Math.round(value) : value;
}

const NUMBER = /(?:^|[^\w.])(-?\d+(?:\.\d+)?)(?![\w.])/g;

/**
 * A number of the message for the property: one next to its name ("3 days", "ms: 50", "a=2"),
 * else the next number no other property took ("add 2 and 3" → a 2, b 3).
 */
function numberFromText(name: string, ctx: BuildContext): number | undefined {
  const numbers = [...ctx.text.matchAll(NUMBER)].map((m) => ({
    at: m.index + m[0].indexOf(m[1] as string),
    value: Number(m[1]),
  }));
  if (name !== "") {
    const n = escapeRegExp(name.replace(/_/g, " "));
    const near = new RegExp(
      `\\b${n}\\b\\s*(?:[:=]|is|of)?\\s*(-?\\d+(?:\\.\\d+)?)(?![\\w.])|(?:^|[^\\w.])(-?\\d+(?:\\.\\d+)?)\\s*${n}\\b`,
      "i",
    ).exec(ctx.text);
    const found =
      near === null
        ? undefined
        : numbers.find((x) => x.at >= near.index && x.at < near.index + near[0].length);
    if (found !== undefined) {
      ctx.used.numbers.add(found.at);
      return found.value;
    }
  }
  const next = numbers.find((x) => !ctx.used.numbers.has(x.at));
  if (next === undefined) return undefined;
  ctx.used.numbers.add(next.at);
  return next.value;
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

const QUOTES = /"([^"]+)"|`([^`]+)`|“([^”]+)”/g;

/** The next quoted text no other property took (the first again once all are taken). */
function nextQuote(ctx: BuildContext): string | undefined {
  const quotes = [...ctx.text.matchAll(QUOTES)].map((m) => m.slice(1).find((g) => g !== undefined) as string);
  const quote = quotes[ctx.used.quotes] ?? quotes[0];
  if (quote !== undefined) ctx.used.quotes++;
  return quote;
}

/** A value the message gives the property by name: `name: value`, `name=value`, `name is value`. */
function namedValue(name: string, text: string): string | undefined {
  const pair = new RegExp(`\\b${escapeRegExp(name)}\\s*(?:[:=]|\\bis\\b)\\s*("[^"]+"|[^\\s,;]+)`, "i").exec(
    text,
  );
  return pair?.[1]?.replace(/^"|"$/g, "");
}

/** What follows the tool's own name in the message: "Echo hello world" → "hello world". */
function afterToolName(text: string, tool: string): string | undefined {
  if (tool === "") return undefined;
  const name = escapeRegExp(tool).replace(/[_-]/g, "[\\s_-]");
  const at = new RegExp(`\\b${name}\\b`, "i").exec(text);
  if (at === null) return undefined;
  const rest = text
    .slice(at.index + at[0].length)
    .replace(/^\s*(?:[:,]\s*)?(?:(?:back|for|about|with|me|the|text|message|words?)\s+)*/i, "")
    .trim()
    .replace(/[.!?]$/, "");
  return rest === "" ? undefined : rest;
}

/** The word after the property's name: "repo eddy" → "eddy", "for user ada" → "ada". */
function wordAfterName(name: string, text: string): string | undefined {
  if (name === "") return undefined;
  const n = escapeRegExp(name).replace(/_/g, "[\\s_]");
  const m = new RegExp(`\\b${n}\\s+(?:named\\s+|called\\s+)?([\\w@./:#-]*\\w)`, "i").exec(text);
  const word = m?.[1];
  return word === undefined || STOP.has(word.toLowerCase()) ? undefined : word;
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
