import Ajv2020 from "ajv/dist/2020.js";
import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { EddyError } from "../errors.js";
import { LOOP_DEFAULTS } from "./defaults.js";
import {
  absentBySchema,
  absentField,
  budgetOverruns,
  checkPartialRunSpec,
  mergeRunSpecs,
  type PartialRunSpec,
  partialSpecShape,
  resolveRunSpec,
  resolveWhole,
  runSpecSchema,
  specKeys,
  withinBudgets,
} from "./run-spec.js";

function problem(input: unknown): EddyError {
  try {
    resolveRunSpec(input);
  } catch (err) {
    if (err instanceof EddyError) return err;
    throw err;
  }
  throw new Error("expected the spec to be refused");
}

describe("resolveRunSpec", () => {
  it("applies every default once, from loop/defaults.ts", () => {
    const spec = resolveRunSpec({ model: "m", input: "hi" });
    expect(spec.max_tool_calls).toBe(LOOP_DEFAULTS.maxToolCalls);
    expect(spec.max_turns).toBe(LOOP_DEFAULTS.maxTurns);
    expect(spec.tool_concurrency).toBe(LOOP_DEFAULTS.toolConcurrency);
    expect(spec.tools_on_follow_up).toBe(LOOP_DEFAULTS.toolsOnFollowUp);
    expect(spec.mode).toBe("auto");
  });

  it("is plain data: a resolved spec survives JSON and resolves to itself", () => {
    const spec = resolveRunSpec({
      model: "m",
      input: [{ type: "message", role: "user", content: "hi" }],
      instructions: "be brief",
      max_turns: 3,
      request: { temperature: 0.5 },
      history: { strategy: "text-embed" },
      output_schema: { name: "answer", schema: { type: "object" } },
    });
    const copy = JSON.parse(JSON.stringify(spec));
    expect(copy).toEqual(spec);
    expect(resolveRunSpec(copy)).toEqual(spec);
  });

  it("names the bad field and what was given", () => {
    const err = problem({ model: "m", input: "hi", max_turns: "many" });
    expect(err.code).toBe("invalid_run_spec");
    expect(err.fault).toBe("user");
    expect(err.message).toContain("max_turns");
    expect(err.message).toContain('"many"');
    expect(err.details?.field).toBe("max_turns");
  });

  it.each([
    ["an unknown key", { model: "m", input: "hi", allow_shell: true }, "allow_shell"],
    ["an empty input", { model: "m", input: "" }, "input"],
    ["a negative limit", { model: "m", input: "hi", max_tool_calls: -1 }, "max_tool_calls"],
    ["a thread name with a path", { model: "m", input: "hi", thread: "../etc" }, "thread"],
    ["a run id with a slash", { model: "m", input: "hi", run_id: "a/b" }, "run_id"],
    ["a loop-owned request key", { model: "m", input: "hi", request: { tools: [] } }, "tools"],
    ["a mode that does not exist", { model: "m", input: "hi", mode: "sometimes" }, "mode"],
    ["a model name with an escape sequence", { model: "gpt\u001b]0;PWNED\u0007", input: "hi" }, "model"],
    ["a model name with a direction override", { model: "gpt\u202e5", input: "hi" }, "model"],
    [
      "a summarization model with a C1 control",
      { model: "m", input: "hi", history: { summarization_model: "s\u009b2J" } },
      "summarization_model",
    ],
  ])("refuses %s", (_label, input, field) => {
    expect(problem(input).message).toContain(field);
  });

  it("says a number too large for a double as what it became (JSON.stringify said null)", () => {
    const err = problem(JSON.parse('{"model":"m","input":"hi","max_turns":1e400}'));
    expect(err.message).toContain("max_turns");
    expect(err.message).toContain("(got Infinity)");
  });

  it.each([null, 42, "a string", [], undefined])("refuses %j as a whole", (input) => {
    expect(problem(input).code).toBe("invalid_run_spec");
  });

  it("turns a zod output schema into JSON Schema (a spec stays data)", () => {
    const spec = resolveRunSpec({
      model: "m",
      input: "hi",
      output_schema: { name: "city", schema: z.object({ name: z.string() }) },
    });
    expect(spec.output_schema?.schema).toMatchObject({
      type: "object",
      properties: { name: { type: "string" } },
    });
    expect(JSON.parse(JSON.stringify(spec))).toEqual(spec);
  });
});

/** What resolving gave: the spec with its keys in order (JSON keeps them), or the error's code and message. */
function outcome(resolve: (input: unknown) => unknown, input: unknown): unknown {
  try {
    const spec = resolve(input) as Record<string, unknown>;
    return { keys: Object.keys(spec), spec };
  } catch (err) {
    if (err instanceof EddyError) return { code: err.code, message: err.message, details: err.details };
    throw err;
  }
}

/** Values, good and bad, for each field of a spec (and for keys that are not one). */
const FIELD_VALUES: Record<string, unknown[]> = {
  version: [1, 2, undefined],
  model: ["m", null, "", "x".repeat(300), 7, "m\u0007", undefined],
  input: ["hi", "", [{ type: "message", role: "user", content: "hi" }], [], [1], undefined],
  instructions: ["be brief", 3, undefined],
  mode: ["auto", "chained", "stateless", "sometimes", undefined],
  max_turns: [1, 3, 0, 2.5, "many", undefined],
  max_tool_calls: [5, -1, undefined],
  tools: [["a"], [""], "a", undefined],
  tool_choice: ["auto", "none", { type: "function", name: "a" }, "maybe", undefined],
  parallel_tool_calls: [true, "yes", undefined],
  native_tools: [true, "auto", "sometimes", undefined],
  hosted_tools: [[], [{ type: "web_search" }], [{}], undefined],
  stop_when: [[{ type: "turn_count_is", count: 2 }], [{ type: "nope" }], undefined],
  request: [{}, { temperature: 0.5 }, { tools: [] }, [], undefined],
  history: [{}, { strategy: "text-embed" }, { strategy: "none" }, { recent_calls_to_keep: -1 }, undefined],
  output_schema: [{ name: "a", schema: { type: "object" } }, { name: "a b", schema: {} }, undefined],
  transport: ["sse", "websocket", "pigeon", undefined],
  thread: ["t1", "../etc", undefined],
  run_id: ["run_1", "a/b", undefined],
  allow_shell: [true],
  ["__proto__"]: [{ model: "evil" }],
  toString: ["x"],
};

describe("resolveRunSpec, fieldwise", () => {
  it("gives exactly what one parse of the whole object gives, keys and errors alike", () => {
    const keys = Object.keys(FIELD_VALUES);
    const spec = fc
      .subarray(keys)
      .chain((chosen) =>
        fc.tuple(
          ...chosen.map((k) =>
            fc.constantFrom(...(FIELD_VALUES[k] as unknown[])).map((v) => [k, v] as const),
          ),
        ),
      )
      .map((pairs) => {
        // defineProperty: `__proto__` becomes an own key, as JSON.parse makes it.
        const input: Record<string, unknown> = {};
        for (const [k, v] of pairs)
          Object.defineProperty(input, k, { value: v, enumerable: true, writable: true, configurable: true });
        return input;
      });
    fc.assert(
      fc.property(spec, (input) => {
        expect(outcome(resolveRunSpec, input)).toStrictEqual(outcome(resolveWhole, input));
      }),
      { numRuns: 2_000 },
    );
  });

  it("does the same for what JSON.parse makes, and for objects that are not plain", () => {
    const parsed = JSON.parse('{"input":"hi","__proto__":{"model":"evil"}}');
    expect(outcome(resolveRunSpec, parsed)).toStrictEqual(outcome(resolveWhole, parsed));
    expect(problem(parsed).message).toContain("__proto__");
    const inherited = Object.create({ model: "inherited" }) as Record<string, unknown>;
    inherited.input = "hi";
    expect(outcome(resolveRunSpec, inherited)).toStrictEqual(outcome(resolveWhole, inherited));
    class Spec {
      input = "hi";
    }
    expect(outcome(resolveRunSpec, new Spec())).toStrictEqual(outcome(resolveWhole, new Spec()));
  });

  it("gives every spec its own defaults: changing one spec changes no other", () => {
    const a = resolveRunSpec({ input: "hi" });
    a.hosted_tools.push({ type: "web_search" } as never);
    (a.request as Record<string, unknown>).temperature = 2;
    a.history.strategy = "text-embed";
    const b = resolveRunSpec({ input: "hi" });
    expect(b.hosted_tools).toEqual([]);
    expect(b.request).toEqual({});
    expect(b.history).toEqual(resolveWhole({ input: "hi" }).history);
  });

  it("leaves out a field exactly as its own schema does (SPEC_DEFAULTS against each .default)", () => {
    expect(specKeys()).toHaveLength(30);
    for (const key of specKeys()) expect([key, absentField(key)]).toStrictEqual([key, absentBySchema(key)]);
  });

  it("builds the schemas of the fields a spec gives, and no other (a run's start: bench/README.md)", async () => {
    vi.resetModules();
    const fresh = await import("./run-spec.js");
    expect(fresh.builtFieldNames()).toEqual([]);
    const spec = fresh.resolveRunSpec({ model: "demo", input: "What is in package.json?" });
    expect(fresh.builtFieldNames()).toEqual(["model", "input"]);
    expect(spec).toStrictEqual(resolveWhole({ model: "demo", input: "What is in package.json?" }));
    fresh.resolveRunSpec({ input: "hi", max_turns: 3, history: { strategy: "native" } });
    expect(fresh.builtFieldNames()).toEqual(["model", "input", "max_turns", "history"]);
  });
});

describe("runSpecSchema", () => {
  const ajv = new Ajv2020.default({ strict: false });
  const validate = ajv.compile(runSpecSchema);

  it("is versioned and accepts what resolveRunSpec resolves", () => {
    expect(String(runSpecSchema.$id)).toMatch(/run-spec\.v1\.json$/);
    const spec = resolveRunSpec({ model: "m", input: "hi", max_turns: 2 });
    expect(validate(JSON.parse(JSON.stringify(spec)))).toBe(true);
  });

  it("refuses what resolveRunSpec refuses", () => {
    expect(validate({ model: "m", input: "hi", max_turns: "many" })).toBe(false);
    expect(validate({ model: "m", input: "hi", allow_shell: true })).toBe(false);
    expect(validate({ model: "m\u001b[2J", input: "hi" })).toBe(false);
  });
});

describe("partial specs", () => {
  it("keeps only the given fields (defaults wait for the merge)", () => {
    expect(checkPartialRunSpec({ max_turns: 2 })).toEqual({ max_turns: 2 });
    expect(() => checkPartialRunSpec({ max_turns: 0.5 }, "tasks.jsonl:3")).toThrow(
      /tasks\.jsonl:3.*max_turns/,
    );
  });

  it("checks every partial spec with one schema, made once (docs/pitfalls.md #104)", () => {
    checkPartialRunSpec({ max_turns: 2 });
    const shape = partialSpecShape();
    checkPartialRunSpec({ input: "hi" });
    expect(partialSpecShape()).toBe(shape);
  });

  it("merges request and history one level deep; the task wins", () => {
    const merged = mergeRunSpecs(
      { model: "a", request: { temperature: 1, top_p: 0.5 }, history: { strategy: "native" } },
      { model: "b", request: { temperature: 0 } },
    );
    expect(merged).toEqual({
      model: "b",
      request: { temperature: 0, top_p: 0.5 },
      history: { strategy: "native" },
    });
  });
});

describe("withinBudgets", () => {
  it("brings a budget above the invocation's (or the default it left) down to it, keeps lower ones and other fields", () => {
    const asked = { max_turns: 99, max_tool_calls: 2, request: { max_output_tokens: 9000, temperature: 1 } };
    expect(withinBudgets(asked, {})).toEqual({ ...asked, max_turns: LOOP_DEFAULTS.maxTurns });
    expect(withinBudgets(asked, { max_turns: 200, request: { max_output_tokens: 100 } })).toEqual({
      max_turns: 99,
      max_tool_calls: 2,
      request: { max_output_tokens: 100, temperature: 1 },
    });
    expect(budgetOverruns(asked, { max_turns: 5 })).toEqual([{ field: "max_turns", asked: 99, limit: 5 }]);
  });

  it("with onlySet, only the budgets the invocation sets limit (a coordinator's flags)", () => {
    expect(
      withinBudgets({ max_turns: 99, max_tool_calls: 500 }, { max_turns: 5 }, { onlySet: true }),
    ).toEqual({
      max_turns: 5,
      max_tool_calls: 500,
    });
  });

  it("leaves a value that is not a number to resolveRunSpec to refuse", () => {
    const bad = { max_turns: "many" } as unknown as PartialRunSpec;
    expect(withinBudgets(bad, {})).toBe(bad);
  });
});
