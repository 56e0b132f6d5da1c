/**
 * zod issues as one-line problems that name the field and the value that was given:
 * `max_turns: expected an integer ≥ 1 (got "many")`. Generic (a leaf of `util/`): the run spec,
 * the tape header, queue jobs and task files all report their problems this way.
 */
import type { z } from "zod";

const MAX_PROBLEMS = 6;

/**
 * `["history", "strategy"]` → `history.strategy`; `["input", 0]` → `input[0]`; the root is `root`.
 * A key that is not a plain name (an untrusted input's key may hold a newline or an escape) is
 * shown as a JSON string, so the path stays one line: `request."a\nb"`.
 */
export function fieldPath(path: readonly PropertyKey[], root = "(root)"): string {
  let out = "";
  for (const p of path) {
    if (typeof p === "number") out += `[${p}]`;
    else {
      const name = /^[A-Za-z0-9_$-]+$/.test(String(p)) ? String(p) : JSON.stringify(String(p));
      out += out === "" ? name : `.${name}`;
    }
  }
  return out === "" ? root : out;
}

/** The problems of a failed parse of `input`, each `field: what is wrong (got VALUE)`, at most six. */
export function zodProblems(error: z.ZodError, input: unknown): string[] {
  const problems = error.issues.flatMap((issue) => issueLines(issue, input));
  const unique = [...new Set(problems)];
  if (unique.length <= MAX_PROBLEMS) return unique;
  return [...unique.slice(0, MAX_PROBLEMS), `(${unique.length - MAX_PROBLEMS} more problems)`];
}

/** The first problem's field path (for errors that name one field), or undefined for the root. */
export function firstProblemField(error: z.ZodError): string | undefined {
  const issue = error.issues[0];
  if (issue === undefined) return undefined;
  if (issue.code === "unrecognized_keys") return fieldPath([...issue.path, issue.keys[0] ?? ""]);
  return issue.path.length === 0 ? undefined : fieldPath(issue.path);
}

function issueLines(issue: z.core.$ZodIssue, input: unknown): string[] {
  if (issue.code === "unrecognized_keys")
    return issue.keys.map((key) => `${fieldPath([...issue.path, key])}: is not a known field`);
  const field = fieldPath(issue.path);
  const given = valueAt(input, issue.path);
  if (given.found === false) return [`${field}: is required`];
  return [`${field}: ${message(issue)} (got ${preview(given.value)})`];
}

/** zod's message, shortened where it is wordy ("Invalid input: expected number, received string"). */
function message(issue: z.core.$ZodIssue): string {
  // A message the schema wrote itself ("must not be empty") says it best.
  if (!/^(Invalid|Too small|Too big|Unrecognized)/.test(issue.message)) return issue.message;
  switch (issue.code) {
    case "invalid_type":
      return `expected ${withArticle(issue.expected === "int" ? "integer" : issue.expected)}`;
    case "too_small":
      return issue.origin === "number" || issue.origin === "int"
        ? `must be ≥ ${String(issue.minimum)}`
        : issue.origin === "string"
          ? `must be at least ${String(issue.minimum)} characters`
          : `must have at least ${String(issue.minimum)} entries`;
    case "too_big":
      return issue.origin === "number" || issue.origin === "int"
        ? `must be ≤ ${String(issue.maximum)}`
        : issue.origin === "string"
          ? `must be at most ${String(issue.maximum)} characters`
          : `must have at most ${String(issue.maximum)} entries`;
    case "invalid_value":
      return `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}`;
    case "invalid_union":
      return "matches none of the allowed forms";
    default:
      return issue.message.replace(/^Invalid input: /, "");
  }
}

function withArticle(noun: string): string {
  return /^[aeiou]/.test(noun) ? `an ${noun}` : `a ${noun}`;
}

function valueAt(input: unknown, path: readonly PropertyKey[]): { found: boolean; value?: unknown } {
  let current: unknown = input;
  for (const key of path) {
    if (current === null || typeof current !== "object") return { found: false };
    if (!Object.hasOwn(current, key)) return { found: false };
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return { found: true, value: current };
}

/** A short, single-line, control-character-free rendering of a given value. */
function preview(value: unknown): string {
  let text: string;
  try {
    // JSON says null for a number too large for a double (1e400 parses as Infinity).
    text =
      typeof value === "number" && !Number.isFinite(value)
        ? String(value)
        : (JSON.stringify(value) ?? String(value));
  } catch {
    text = String(value);
  }
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed
  text = text.replace(/[\u0000-\u001f\u007f-\u009f]/g, "?");
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
}
