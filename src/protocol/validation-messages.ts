/**
 * Turns the errors of a generated ajv validator into the short messages recorded in frames.
 * Called only when a value is invalid, so nothing here is on the hot path.
 *
 * The validators are compiled with `allErrors` (every deviation is reported, not just the first)
 * and with ajv's `discriminator` keyword for the spec's discriminated unions (see
 * scripts/update-openresponses-types.mjs). That leaves three things to do here:
 *
 * - **Unions.** ajv reports a failed union's branch errors before the union's own error.
 *   The generator compiles the spec's nullable wrappers (`anyOf: [X, {type: "null"}]`) to
 *   `if: {type: "null"}, else: X`, whose failure is X's own errors (the "if" error is dropped);
 *   a wrapper left as `anyOf` around a non-null value also reports X's errors:
 *   "/item matches no schema of its union" would hide that a message item's annotation was the
 *   problem. Any other failed union becomes one message naming the value's `type`, with the first
 *   error of a branch that accepted that `type`, when there is one.
 * - **Size.** The missing required properties of one object make one message
 *   (`/response is missing required properties "a", "b"`); a message repeated at other array
 *   indices is kept once, with "(and N more at other array indices)"; at most `MAX_MESSAGES`
 *   messages are returned, then one "… and N more validation errors".
 * - **Wording.** A `type` a discriminated union lacks reads "/item has type "web_search_call",
 *   which the spec does not define here".
 */
import type { CompiledValidator } from "./generated/response-validators.cjs";

/** At most this many messages per value (then one "… and N more validation errors"). */
export const MAX_MESSAGES = 8;

type AjvError = NonNullable<CompiledValidator["errors"]>[number];

/** What one reported problem is before it becomes text. */
type Problem = { kind: "missing"; at: string; props: string[] } | { kind: "text"; text: string };

/** Formats a failed validation. Never empty. */
export function formatValidationErrors(errors: CompiledValidator["errors"], data: unknown): string[] {
  const problems: Problem[] = [];
  const missingAt = new Map<string, { kind: "missing"; at: string; props: string[] }>();
  for (const item of collapseUnions(errors ?? [], data)) {
    if (typeof item !== "string" && item.keyword === "required") {
      const prop = JSON.stringify(String(item.params.missingProperty));
      const known = missingAt.get(item.instancePath);
      if (known === undefined) {
        const problem = { kind: "missing" as const, at: item.instancePath, props: [prop] };
        missingAt.set(item.instancePath, problem);
        problems.push(problem);
      } else if (!known.props.includes(prop)) known.props.push(prop);
      continue;
    }
    problems.push({ kind: "text", text: typeof item === "string" ? item : formatOne(item, data) });
  }

  const reported: { message: string; template: string; repeats: number }[] = [];
  for (const p of problems) {
    const message =
      p.kind === "text"
        ? p.text
        : `${pathText(p.at)} is missing required ${p.props.length === 1 ? "property" : "properties"} ${p.props.join(", ")}`;
    const template = message.replace(/\/\d+(?=[/ ])/g, "/*");
    const same = reported.find((r) => r.template === template);
    if (same === undefined) reported.push({ message, template, repeats: 0 });
    else if (same.message !== message) same.repeats++;
  }
  const out = reported.map((r) =>
    r.repeats === 0 ? r.message : `${r.message} (and ${r.repeats} more at other array indices)`,
  );
  if (out.length === 0) return ["invalid (no detail from the validator)"];
  if (out.length <= MAX_MESSAGES) return out;
  const more = out.length - MAX_MESSAGES;
  return [...out.slice(0, MAX_MESSAGES), `… and ${more} more validation error${more === 1 ? "" : "s"}`];
}

/** Replaces each failed union's branch errors by what they mean (see the module comment). */
function collapseUnions(errors: readonly AjvError[], data: unknown): (AjvError | string)[] {
  const out: { path: string; item: AjvError | string }[] = [];
  for (const e of errors) {
    // A failed `else` already reported its own errors; "must match "else" schema" adds nothing.
    if (e.keyword === "if") continue;
    if (e.keyword !== "oneOf" && e.keyword !== "anyOf") {
      out.push({ path: e.instancePath, item: e });
      continue;
    }
    // ajv pushes a union's branch errors right before the union's own error.
    const at = e.instancePath;
    let first = out.length;
    while (first > 0 && isAtOrUnder(out[first - 1]?.path ?? "", at)) first--;
    const branches = out.splice(first);
    const value = pointerGet(data, at);
    const nullBranch = branches.findIndex(
      (b) =>
        typeof b.item !== "string" &&
        b.path === at &&
        b.item.keyword === "type" &&
        b.item.params.type === "null",
    );
    if (value !== null && nullBranch !== -1) {
      branches.splice(nullBranch, 1);
      out.push(...branches);
      continue;
    }
    out.push({ path: at, item: describeUnionFailure(at, branches, value, data) });
  }
  return out.map((o) => o.item);
}

function describeUnionFailure(
  at: string,
  branches: { path: string; item: AjvError | string }[],
  value: unknown,
  data: unknown,
): string {
  const type = value !== null && typeof value === "object" ? (value as { type?: unknown }).type : undefined;
  if (typeof type !== "string")
    return `${pathText(at)} matches no schema of its union (${describeJsonType(value)})`;
  // The first error of a branch whose own `type` check passed (anything but "/type must be one of …").
  const typePath = `${at}/type`;
  const closest = branches.find(
    (b) =>
      typeof b.item === "string" ||
      !(b.path === typePath && (b.item.keyword === "enum" || b.item.keyword === "const")),
  );
  if (closest === undefined)
    return `${pathText(at)} has type "${type}", which matches no schema of its union`;
  const detail = typeof closest.item === "string" ? closest.item : formatOne(closest.item, data);
  return `${pathText(at)} has type "${type}" but matches no schema of its union (e.g. ${detail})`;
}

function formatOne(e: AjvError, data: unknown): string {
  const path = pathText(e.instancePath);
  switch (e.keyword) {
    case "discriminator": {
      const tag = String(e.params.tag);
      return e.params.error === "mapping"
        ? `${path} has ${tag} ${JSON.stringify(e.params.tagValue)}, which the spec does not define here`
        : `${e.instancePath}/${tag} must be a string`;
    }
    case "required":
      return `${path} is missing required property ${JSON.stringify(String(e.params.missingProperty))}`;
    case "additionalProperties":
      return `${path} has unexpected property "${String(e.params.additionalProperty)}"`;
    case "enum": {
      const allowed = Array.isArray(e.params.allowedValues)
        ? e.params.allowedValues.map((v) => JSON.stringify(v))
        : [];
      return `${path} must be one of ${allowed.join(", ")} (got ${JSON.stringify(pointerGet(data, e.instancePath))})`;
    }
    default:
      return `${path} ${e.message ?? e.keyword}`;
  }
}

function pathText(instancePath: string): string {
  return instancePath === "" ? "/" : instancePath;
}

function isAtOrUnder(path: string, ancestor: string): boolean {
  return path === ancestor || path.startsWith(`${ancestor}/`);
}

function pointerGet(data: unknown, pointer: string): unknown {
  if (pointer === "") return data;
  let cur: unknown = data;
  for (const raw of pointer.slice(1).split("/")) {
    const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (cur === null || typeof cur !== "object") return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}

/** "null", "an array", "an object", "a string", … */
export function describeJsonType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}
