/**
 * Scenario validation and loading. A scenario from a file (JSON or YAML) or a TS object is checked
 * against a strict zod schema (unknown keys are errors, so a typo never silently does nothing);
 * a problem is one `EddyError("scenario_invalid", "<source>: turns[2].items[0].name: …")`.
 */
import { z } from "zod";
import { EddyError } from "../errors.js";
import { importPackage } from "../util/import-package.js";
import { JSON_MAX_DEPTH, nestsDeeperThan, withoutBom } from "../util/json.js";
import { readRegularTextSync } from "../util/regular-file.js";
import { wholeCut } from "../util/text.js";
import type { Scenario } from "./scenario.js";

const nonNegativeInt = z.number().int().min(0);
/**
 * A stall in milliseconds: at most what a Node timer can wait (2^31 − 1 ms, ~24.8 days); a longer
 * one fired after 1 ms with a TimeoutOverflowWarning.
 */
const stallMs = nonNegativeInt.max(
  2 ** 31 - 1,
  "must be at most 2147483647 ms (~24.8 days: a Node timer's limit)",
);
const positiveInt = z.number().int().min(1);
const strings = z.union([z.string(), z.array(z.string())]);
const jsonObject = z.record(z.string(), z.unknown());

const messageItem = z.strictObject({
  type: z.literal("message"),
  text: strings.optional(),
  refusal: z.string().optional(),
  phase: z.enum(["commentary", "final_answer"]).optional(),
  id: z.string().min(1).optional(),
});

const functionCallItem = z.strictObject({
  type: z.literal("function_call"),
  name: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, "must be 1-64 characters of a-z, A-Z, 0-9, _ or -"),
  arguments: z.union([z.string(), jsonObject]).optional(),
  call_id: z.string().min(1).max(64).optional(),
  id: z.string().min(1).optional(),
});

const reasoningItem = z.strictObject({
  type: z.literal("reasoning"),
  summary: strings.optional(),
  content: strings.optional(),
  encrypted_content: z.string().optional(),
  id: z.string().min(1).optional(),
});

/** A header the fault answers with is written to the socket as it is: HTTP's rules, checked when loaded. */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const headerValue = z
  .string()
  .regex(
    /^[\t\x20-\x7e\x80-\xff]*$/,
    "a header value is printable Latin-1 text: no CR, LF, NUL or other control character",
  );

const faults = z.strictObject({
  httpError: z
    .strictObject({
      status: z.number().int().min(400).max(599),
      body: z.unknown().optional(),
      headers: z
        .record(z.string(), headerValue)
        .refine((headers) => Object.keys(headers).every((name) => HEADER_NAME.test(name)), {
          message: "a header name is a token (letters, digits and !#$%&'*+-.^_`|~)",
        })
        .optional(),
    })
    .optional(),
  stallBeforeHeadersMs: stallMs.optional(),
  stallBeforeBodyMs: stallMs.optional(),
  stallAfterEvents: z.strictObject({ afterEvents: nonNegativeInt, ms: stallMs }).optional(),
  errorEvent: z
    .strictObject({
      afterEvents: nonNegativeInt,
      type: z.string().optional(),
      code: z.string().nullable().optional(),
      message: z.string().optional(),
      param: z.string().nullable().optional(),
    })
    .optional(),
  dropAfterEvents: nonNegativeInt.optional(),
  keepAliveEvery: positiveInt.optional(),
  invalidJsonAfterEvents: nonNegativeInt.optional(),
  lineEnding: z.enum(["\n", "\r\n", "\r"]).optional(),
  omitDone: z.boolean().optional(),
  omitEventLines: z.boolean().optional(),
  chunkBytes: positiveInt.optional(),
});

const expectSchema = z.strictObject({
  previousResponseId: z.union([z.boolean(), z.string()]).optional(),
  functionCallOutputs: strings.optional(),
  inputContains: strings.optional(),
  contextContains: strings.optional(),
  tools: z.array(z.string()).optional(),
  instructionsContains: z.string().optional(),
  body: jsonObject.optional(),
});

const turn = z
  .strictObject({
    label: z.string().optional(),
    items: z.array(z.discriminatedUnion("type", [messageItem, functionCallItem, reasoningItem])).optional(),
    status: z.enum(["completed", "incomplete", "failed"]).optional(),
    incompleteReason: z.string().optional(),
    error: z.strictObject({ code: z.string(), message: z.string() }).optional(),
    usage: z
      .strictObject({
        input_tokens: nonNegativeInt.optional(),
        output_tokens: nonNegativeInt.optional(),
        cached_tokens: nonNegativeInt.optional(),
        reasoning_tokens: nonNegativeInt.optional(),
      })
      .optional(),
    expect: expectSchema.optional(),
    faults: faults.optional(),
    rawEvents: z.array(z.union([jsonObject, z.string()])).optional(),
    rawChunks: z.array(z.union([jsonObject, z.string()])).optional(),
    contextWindow: positiveInt.optional(),
    repeat: z.boolean().optional(),
    ignoreToolChoice: z.boolean().optional(),
  })
  .superRefine((t, ctx) => {
    if (t.rawEvents !== undefined && t.items !== undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["rawEvents"],
        message: "a turn has either rawEvents or items, not both",
      });
    }
    if (t.rawChunks !== undefined && (t.items !== undefined || t.rawEvents !== undefined)) {
      ctx.addIssue({
        code: "custom",
        path: ["rawChunks"],
        message: "a turn has one of items, rawEvents or rawChunks",
      });
    }
    for (const [i, item] of (t.items ?? []).entries()) {
      if (item.type === "message" && item.text === undefined && item.refusal === undefined) {
        ctx.addIssue({ code: "custom", path: ["items", i], message: "a message needs `text` or `refusal`" });
      }
    }
    if (t.incompleteReason !== undefined && t.status !== "incomplete") {
      ctx.addIssue({ code: "custom", path: ["incompleteReason"], message: 'only with status "incomplete"' });
    }
    if (t.error !== undefined && t.status !== "failed") {
      ctx.addIssue({ code: "custom", path: ["error"], message: 'only with status "failed"' });
    }
  });

const scenarioSchema = z
  .strictObject({
    name: z.string().optional(),
    description: z.string().optional(),
    contextWindow: positiveInt.optional(),
    turns: z.array(turn).min(1, "a scenario needs at least one turn"),
  })
  .superRefine((s, ctx) => {
    s.turns.forEach((t, i) => {
      if (t.repeat === true && i !== s.turns.length - 1) {
        ctx.addIssue({
          code: "custom",
          path: ["turns", i, "repeat"],
          message: "only the last turn may repeat",
        });
      }
    });
  });

/**
 * Validates a scenario object; `source` names it in error messages (a file path, or "scenario").
 * A scenario nesting deeper than `JSON_MAX_DEPTH` is refused: its raw events were accepted and the
 * mock's `JSON.stringify` of them overflowed while serving, an empty 200 (docs/pitfalls.md #74).
 * Each problem is said in at most `ISSUE_CHARS` characters (100,000 unknown keys were one 10 MB line).
 */
export function parseScenario(value: unknown, source = "scenario"): Scenario {
  if (nestsDeeperThan(value))
    throw new EddyError(
      "scenario_invalid",
      `${source}: the scenario nests deeper than ${JSON_MAX_DEPTH} levels of arrays and objects`,
      { fault: "user", details: { source } },
    );
  const result = scenarioSchema.safeParse(value);
  if (result.success) return result.data as Scenario;
  const messages = result.error.issues
    .slice(0, 5)
    .map((issue) => cutIssue(`${formatPath(issue.path)}: ${issue.message}`));
  const more = result.error.issues.length > 5 ? ` (and ${result.error.issues.length - 5} more)` : "";
  throw new EddyError("scenario_invalid", `${source}: ${messages.join("; ")}${more}`, {
    fault: "user",
    details: { source },
  });
}

/** Characters of one problem in a scenario's error message. */
const ISSUE_CHARS = 300;

function cutIssue(text: string): string {
  return text.length <= ISSUE_CHARS ? text : `${text.slice(0, wholeCut(text, ISSUE_CHARS))}…`;
}

/**
 * Reads and validates a scenario file: `.json`, or `.yaml`/`.yml` (anything else is tried as YAML, a
 * superset of JSON). Errors name it `name`: the path as the user gave it, where `path` was resolved
 * from the command's directory (`eddy mock --scenario`).
 */
export async function loadScenario(path: string, name = path): Promise<Scenario> {
  // Only a regular file, of at most 64 MiB (a FIFO or a device would block or never end).
  const text = readRegularTextSync(path, {
    what: "the scenario file",
    maxBytes: 64 * 1024 * 1024,
    code: "scenario_invalid",
    name,
  });
  const json = path.toLowerCase().endsWith(".json");
  let value: unknown;
  try {
    value = json ? JSON.parse(withoutBom(text)) : await parseYaml(text);
  } catch (error) {
    if (EddyError.isInstance(error)) throw withSource(error, name);
    const reason = error instanceof Error ? error.message.split("\n", 1)[0] : String(error);
    throw new EddyError("scenario_invalid", `${name}: not valid ${json ? "JSON" : "YAML"}: ${reason}`, {
      fault: "user",
      cause: error,
    });
  }
  return parseScenario(value, name);
}

/**
 * A YAML scenario's value. The `yaml` package drops a tag it does not know (`!!js/function`,
 * `!foo`) with a warning printed to stderr and serves the value untagged; here any warning is
 * refused instead, as one line naming the tag, so the scenario is never served other than written.
 */
async function parseYaml(text: string): Promise<unknown> {
  // yaml is loaded only for YAML files: it is the slowest import on the CLI's start-up path.
  const doc = (await importPackage<typeof import("yaml")>("yaml")).parseDocument(text);
  const error = doc.errors[0];
  if (error !== undefined) throw error;
  const warning = doc.warnings[0];
  if (warning !== undefined) {
    const first = warning.message.split("\n", 1)[0] ?? warning.code;
    const reason =
      warning.code === "TAG_RESOLVE_FAILED"
        ? `${first.replace("Unresolved tag: tag:yaml.org,2002:", "Unresolved tag: !!").replace(/:$/, "")}: a scenario holds plain YAML values, remove the tag`
        : first;
    throw new EddyError("scenario_invalid", `not valid YAML: ${reason}`, { fault: "user", cause: warning });
  }
  return doc.toJS();
}

/** `error`'s message prefixed by the scenario file it is about. */
function withSource(error: EddyError, path: string): EddyError {
  return new EddyError(error.code, `${path}: ${error.message}`, {
    fault: error.fault,
    details: { ...error.details, source: path },
    cause: error,
  });
}

/** A zod issue path as a parameter name: `["turns", 2, "items", 0, "name"]` → `turns[2].items[0].name`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`;
    else out += out === "" ? String(key) : `.${String(key)}`;
  }
  return out === "" ? "(root)" : out;
}
