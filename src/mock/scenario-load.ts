/**
 * Scenario validation and loading. A scenario from a file (JSON or YAML) or a TS object is checked
 * against a strict zod schema (unknown keys are errors, so a typo never silently does nothing);
 * a problem is one `EddyError("scenario_invalid", "<source>: turns[2].items[0].name: …")`.
 */
import { EddyError } from "../errors.js";
import { importPackage } from "../util/import-package.js";
import { JSON_MAX_DEPTH, nestsDeeperThan, withoutBom } from "../util/json.js";
import { readRegularTextSync } from "../util/regular-file.js";
import { wholeCut } from "../util/text.js";
import type { Scenario } from "./scenario.js";
import { scenarioSchema } from "./scenario-schema.js";

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
  const result = scenarioSchema().safeParse(value);
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
