/**
 * The zod schema of a scenario (scenario-load.ts validates with it), built on first use: building
 * it is ~15 ms of zod at start-up, which a mock with no scenario — the demo run's — never needs.
 */
import { z } from "zod";

/** A header the fault answers with is written to the socket as it is: HTTP's rules, checked when loaded. */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

let built: ReturnType<typeof buildScenarioSchema> | undefined;

/** The scenario schema (built once, on the first call). */
export function scenarioSchema(): ReturnType<typeof buildScenarioSchema> {
  built ??= buildScenarioSchema();
  return built;
}

function buildScenarioSchema() {
  const b = basics();
  const { positiveInt } = b;
  const turn = turnSchema(b);
  return z
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
}

type Basics = ReturnType<typeof basics>;

function basics() {
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
  return { nonNegativeInt, stallMs, positiveInt, strings, jsonObject };
}

function itemSchema(b: Basics) {
  const { strings, jsonObject } = b;
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
  return z.discriminatedUnion("type", [messageItem, functionCallItem, reasoningItem]);
}

function faultsSchema(b: Basics) {
  const { nonNegativeInt, stallMs, positiveInt } = b;
  const headerValue = z
    .string()
    .regex(
      /^[\t\x20-\x7e\x80-\xff]*$/,
      "a header value is printable Latin-1 text: no CR, LF, NUL or other control character",
    );

  return z.strictObject({
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
}

function expectSchema(b: Basics) {
  const { strings, jsonObject } = b;
  return z.strictObject({
    previousResponseId: z.union([z.boolean(), z.string()]).optional(),
    functionCallOutputs: strings.optional(),
    inputContains: strings.optional(),
    contextContains: strings.optional(),
    tools: z.array(z.string()).optional(),
    instructionsContains: z.string().optional(),
    body: jsonObject.optional(),
  });
}

function turnSchema(b: Basics) {
  const { nonNegativeInt, positiveInt, jsonObject } = b;
  const faults = faultsSchema(b);
  return z
    .strictObject({
      label: z.string().optional(),
      items: z.array(itemSchema(b)).optional(),
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
      expect: expectSchema(b).optional(),
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
          ctx.addIssue({
            code: "custom",
            path: ["items", i],
            message: "a message needs `text` or `refusal`",
          });
        }
      }
      if (t.incompleteReason !== undefined && t.status !== "incomplete") {
        ctx.addIssue({
          code: "custom",
          path: ["incompleteReason"],
          message: 'only with status "incomplete"',
        });
      }
      if (t.error !== undefined && t.status !== "failed") {
        ctx.addIssue({ code: "custom", path: ["error"], message: 'only with status "failed"' });
      }
    });
}
