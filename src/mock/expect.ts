/**
 * Checks a request against a scenario turn's `expect`. Each mismatch is one sentence saying what
 * was expected and what came; the handler answers them with HTTP 400 `scenario_mismatch`.
 */
import type { ItemParam } from "../protocol/types.js";
import { isJsonObject } from "../util/json.js";
import type { MockRequestBody } from "./request.js";
import type { ScenarioExpect } from "./scenario.js";
import type { Conversation } from "./state.js";
import { itemText } from "./usage.js";

/** What a request's `expect` is checked against. */
export interface ExpectRequest {
  /** The request as an Open Responses body (a chat request translated). */
  body: MockRequestBody;
  /** The body as the client sent it: `expect.body` is matched against it. */
  sent: Record<string, unknown>;
  conversation: Conversation;
}

/** The mismatches of `request` against `expect` (empty when it matches). */
export function checkExpect(expect: ScenarioExpect, request: ExpectRequest): string[] {
  const { body, sent, conversation } = request;
  const { input } = conversation;
  const out: string[] = [];
  const previous = body.previous_response_id ?? null;
  const want = expect.previousResponseId;
  if (want === true && previous === null) out.push("expected a previous_response_id; got none");
  if (want === false && previous !== null) out.push(`expected no previous_response_id; got '${previous}'`);
  if (typeof want === "string" && previous !== want) {
    out.push(`expected previous_response_id '${want}'; got ${previous === null ? "none" : `'${previous}'`}`);
  }
  const outputs = input.flatMap((i) => (i.type === "function_call_output" ? [i.call_id] : []));
  for (const callId of list(expect.functionCallOutputs)) {
    if (!outputs.includes(callId)) {
      const got = outputs.length > 0 ? `outputs for ${outputs.map((c) => `'${c}'`).join(", ")}` : "none";
      out.push(
        `expected a function_call_output for call_id '${callId}'; got ${got} (input: ${describeInput(input)})`,
      );
    }
  }
  const text = input.map(itemText).join("\n");
  for (const needle of list(expect.inputContains)) {
    if (!text.includes(needle))
      out.push(`expected the input to contain ${JSON.stringify(needle)}; got ${quote(text)}`);
  }
  if (expect.contextContains !== undefined) {
    const seen = conversation.context.map(itemText).join("\n");
    for (const needle of list(expect.contextContains)) {
      if (!seen.includes(needle))
        out.push(
          `expected the model to see ${JSON.stringify(needle)} in the conversation; got ${quote(seen)}`,
        );
    }
  }
  const offered = (body.tools ?? []).map((t) => t.name);
  for (const name of expect.tools ?? []) {
    if (!offered.includes(name)) {
      out.push(
        `expected tool '${name}' to be offered; got ${offered.length > 0 ? offered.join(", ") : "no tools"}`,
      );
    }
  }
  if (
    expect.instructionsContains !== undefined &&
    !(body.instructions ?? "").includes(expect.instructionsContains)
  ) {
    out.push(
      `expected instructions containing ${JSON.stringify(expect.instructionsContains)}; got ${quote(body.instructions ?? "")}`,
    );
  }
  if (expect.body !== undefined) {
    const mismatch = subsetMismatch(expect.body, sent, "body");
    if (mismatch !== undefined) out.push(mismatch);
  }
  return out;
}

/** The first place where `actual` does not contain `expected` (objects by key, arrays element by element). */
export function subsetMismatch(expected: unknown, actual: unknown, path: string): string | undefined {
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual) || actual.length !== expected.length) {
      return `expected ${path} to be an array of ${expected.length}; got ${short(actual)}`;
    }
    for (const [i, e] of expected.entries()) {
      const m = subsetMismatch(e, actual[i], `${path}[${i}]`);
      if (m !== undefined) return m;
    }
    return undefined;
  }
  if (expected !== null && typeof expected === "object") {
    if (!isJsonObject(actual)) {
      return `expected ${path} to be an object; got ${short(actual)}`;
    }
    for (const [key, e] of Object.entries(expected)) {
      const m = subsetMismatch(e, (actual as Record<string, unknown>)[key], `${path}.${key}`);
      if (m !== undefined) return m;
    }
    return undefined;
  }
  return Object.is(expected, actual)
    ? undefined
    : `expected ${path} = ${short(expected)}; got ${short(actual)}`;
}

function describeInput(input: readonly ItemParam[]): string {
  if (input.length === 0) return "no items";
  return input.map((i) => ("role" in i ? `${i.type}(${i.role})` : (i.type ?? "item_reference"))).join(", ");
}

function list(value: string | string[] | undefined): string[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}

function quote(text: string): string {
  return text === "" ? "nothing" : JSON.stringify(text.length > 160 ? `${text.slice(0, 160)}…` : text);
}

function short(value: unknown): string {
  if (value === undefined) return "nothing";
  const json = JSON.stringify(value);
  return json.length > 120 ? `${json.slice(0, 120)}…` : json;
}
