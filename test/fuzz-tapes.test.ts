/**
 * Fuzzing tapes and queue jobs (fast-check): a tape is read back by `eddy replay` and `eddy resume`
 * from wherever it came (a colleague, a bug report, a worker's Redis), and a queue job comes from
 * whoever can write to the Redis. Real tapes recorded against the mock are mutated — a field given
 * another value or type, a key removed, lines dropped, repeated, swapped or cut — and read as the
 * CLI reads them. The property: a clear error (an `EddyError` of one line) or an outcome, never a
 * TypeError, a RangeError or an `internal_error` run. `EDDY_FUZZ_RUNS` / `EDDY_FUZZ_SEED`
 * (test/support/fuzz.ts) make it the long form.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkQueuedTask, resultProblem } from "../src/batch/queue.js";
import { resumeRun } from "../src/batch/resume.js";
import { parseTasks } from "../src/batch/task.js";
import { replayTools } from "../src/cli/replay-tools.js";
import { createPolicy } from "../src/loop/policy.js";
import { resolveRunSpec } from "../src/loop/run-spec.js";
import { replayTape } from "../src/replay/replay.js";
import { parseTape, readTape, type Tape } from "../src/replay/tape.js";
import { fuzzParams, fuzzTimeout, isClearError, nastyJson, nastyString, objectWith } from "./support/fuzz.js";
import { recordMockRun } from "./support/record.js";
import { createScriptedProvider } from "./support/scripted.js";

const root = mkdtempSync(join(tmpdir(), "eddy-fuzz-tapes-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const workspace = join(root, "ws");
let case_ = 0;

/** The lines of real tapes: one run that wrote a file, one that read, one cut mid-run (resumable). */
const bases: string[][] = [];

beforeAll(async () => {
  mkdirSync(workspace, { recursive: true });
  writeFileSync(join(workspace, "package.json"), '{"name":"demo"}\n');
  writeFileSync(join(workspace, "notes.md"), "# notes\n");
  const prompts = ["Add buy stamps to notes.md", "What is in package.json?"];
  for (const [i, prompt] of prompts.entries()) {
    const tape = join(root, `base${i}.tape`);
    await recordMockRun({ prompt, workspace, tape, allowWrite: i === 0 });
    bases.push(readFileSync(tape, "utf8").trimEnd().split("\n"));
  }
  // The same run as a crash leaves it: the frames up to its first tool call's start.
  const cut = bases[1] as string[];
  const started = cut.findIndex((l) => l.includes('"type":"tool_started"'));
  bases.push(cut.slice(0, started > 0 ? started + 1 : Math.ceil(cut.length / 2)));
}, 60_000);

// ---------------------------------------------------------------------------------------------
// Mutations

type Mutation =
  | { op: "set"; line: number; path: number[]; value: unknown }
  | { op: "delete"; line: number; path: number[] }
  | { op: "drop" | "repeat"; line: number }
  | { op: "swap"; line: number; other: number }
  | { op: "cut"; at: number };

const path = fc.array(fc.nat(), { minLength: 1, maxLength: 5 });
const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({ op: fc.constant("set" as const), line: fc.nat(), path, value: nastyJson }),
  },
  { weight: 2, arbitrary: fc.record({ op: fc.constant("delete" as const), line: fc.nat(), path }) },
  {
    weight: 1,
    arbitrary: fc.record({ op: fc.constantFrom("drop" as const, "repeat" as const), line: fc.nat() }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("swap" as const), line: fc.nat(), other: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("cut" as const), at: fc.nat() }) },
);
const mutatedTape = fc
  .tuple(fc.nat(), fc.array(mutation, { minLength: 1, maxLength: 3 }))
  .map(([base, ops]) => applyAll(bases[base % bases.length] as string[], ops));

function applyAll(lines: readonly string[], ops: readonly Mutation[]): string {
  let values: unknown[] = lines.map((l) => JSON.parse(l));
  let cutAt: number | undefined;
  for (const m of ops) {
    const n = values.length;
    if (n === 0) break;
    if (m.op === "set" || m.op === "delete") values[m.line % n] = edit(values[m.line % n], m);
    else if (m.op === "drop") values = values.filter((_, i) => i !== m.line % n);
    else if (m.op === "repeat") values.splice(m.line % n, 0, values[m.line % n]);
    else if (m.op === "swap") {
      const [a, b] = [m.line % n, m.other % n];
      [values[a], values[b]] = [values[b], values[a]];
    } else if (m.op === "cut") cutAt = m.at;
  }
  const text = `${values.map((v) => JSON.stringify(v)).join("\n")}\n`;
  return cutAt === undefined ? text : text.slice(0, cutAt % (text.length + 1));
}

/** `value` with the node `m.path` leads to (a walk choosing keys and indexes) set or removed. */
function edit(value: unknown, m: { op: "set" | "delete"; path: number[]; value?: unknown }): unknown {
  const copy = structuredClone(value);
  let parent: Record<string, unknown> | unknown[] | undefined;
  let key: string | number | undefined;
  let node: unknown = copy;
  for (const step of m.path) {
    if (node === null || typeof node !== "object") break;
    const keys: (string | number)[] = Array.isArray(node) ? node.map((_, i) => i) : Object.keys(node);
    if (keys.length === 0) break;
    parent = node as Record<string, unknown>;
    key = keys[step % keys.length] as string | number;
    node = (parent as Record<string | number, unknown>)[key];
  }
  if (parent === undefined || key === undefined) return m.op === "set" ? m.value : copy;
  if (m.op === "set") (parent as Record<string | number, unknown>)[key] = m.value;
  else if (Array.isArray(parent)) parent.splice(key as number, 1);
  else delete parent[key as string];
  return copy;
}

/** The tape at `text`, read as the CLI reads one (undefined when refused clearly). */
function readFuzzed(text: string): { tape: Tape; file: string } | undefined {
  const file = join(root, `t${case_++}.tape`);
  writeFileSync(file, text);
  try {
    return { tape: readTape(file), file };
  } catch (error) {
    expect(isClearError(error), String((error as Error)?.stack)).toBe(true);
    return undefined;
  }
}

/** The first recorded tape with every frame of `type` changed by `mutate`, as tape text. */
function baseWith(type: string, mutate: (frame: Record<string, unknown>) => void): string {
  const lines = (bases[0] as string[]).map((line) => {
    const frame = JSON.parse(line) as Record<string, unknown>;
    if (frame.type !== type) return line;
    mutate(frame);
    return JSON.stringify(frame);
  });
  return `${lines.join("\n")}\n`;
}

function expectClear(error: unknown): void {
  expect(isClearError(error), String((error as Error)?.stack ?? error)).toBe(true);
}

// ---------------------------------------------------------------------------------------------

describe("fuzz: tapes", () => {
  it("the recorded tapes themselves replay to a match (the fuzz starts from good tapes)", async () => {
    for (const lines of bases.slice(0, 2)) {
      const read = readFuzzed(`${lines.join("\n")}\n`) as { tape: Tape; file: string };
      const { registry } = replayTools(read.tape.header, read.tape.frames, {}, read.file);
      const outcome = await replayTape(read.tape, { registry, workspace });
      expect(outcome.verdict.match).toBe(true);
    }
  });

  it("a provider_event whose raw is not a string, or that has no data, replays without an internal error (found by the fuzz, seed 320514924)", async () => {
    for (const mutate of [
      (f: Record<string, unknown>) => {
        delete f.data;
        delete f.raw;
      },
      (f: Record<string, unknown>) => {
        f.raw = 42;
      },
    ]) {
      const read = readFuzzed(baseWith("provider_event", mutate));
      if (read === undefined) continue; // refused on read: a clear error, checked by readFuzzed
      const { registry } = replayTools(read.tape.header, read.tape.frames, {}, read.file);
      const outcome = await replayTape(read.tape, { registry, workspace, stallMs: 100 });
      expect(outcome.result.error?.code).not.toBe("internal_error");
    }
  });

  it("a request_started without a body, or whose tools are not objects, gives the replay's tools without a TypeError (found by the fuzz, seed 400911341)", async () => {
    for (const mutate of [
      (f: Record<string, unknown>) => {
        delete f.body;
      },
      (f: Record<string, unknown>) => {
        f.body = { ...(f.body as object), tools: [null, 7, "x", { type: "function" }] };
      },
    ]) {
      const read = readFuzzed(baseWith("request_started", mutate));
      if (read === undefined) continue; // refused on read: a clear error, checked by readFuzzed
      const { registry } = replayTools(read.tape.header, read.tape.frames, {}, read.file);
      expect(registry.names().length).toBeGreaterThan(0);
    }
  });

  it("a frame whose turn or call_id is an object that cannot become a string is refused on read (found by the fuzz in CI: resume threw a TypeError keying its calls)", async () => {
    for (const mutate of [
      (f: Record<string, unknown>) => {
        f.turn = { toString: 1, valueOf: 2 };
      },
      (f: Record<string, unknown>) => {
        f.call_id = { toString: null };
      },
    ]) {
      const text = baseWith("tool_started", mutate);
      const read = readFuzzed(text);
      expect(read).toBeUndefined(); // refused on read, with a clear error (checked by readFuzzed)
      expect(() => parseTape(text)).toThrow(/tool_started\) has a `(turn|call_id)` that is not/);
    }
  });

  it(
    "eddy replay of a mutated tape: a clear error, or a replay that matches or names where it diverges",
    async () => {
      await fc.assert(
        fc.asyncProperty(mutatedTape, async (text) => {
          const read = readFuzzed(text);
          if (read === undefined) return;
          try {
            const { registry, refreshTools } = replayTools(read.tape.header, read.tape.frames, {}, read.file);
            const outcome = await replayTape(read.tape, {
              registry,
              workspace,
              stallMs: 100,
              ...(refreshTools === undefined ? {} : { refreshTools }),
            });
            expect(outcome.result.error?.code).not.toBe("internal_error");
            if (!outcome.verdict.match) expect(outcome.verdict.index).toBeGreaterThanOrEqual(0);
          } catch (error) {
            expectClear(error);
          }
        }),
        fuzzParams(80),
      );
    },
    fuzzTimeout(80, 120_000),
  );

  it(
    "eddy resume of a mutated tape: a clear error, or a run that ends without an internal error",
    async () => {
      const provider = createScriptedProvider([{ items: [{ type: "message", text: "done" }] }]);
      await fc.assert(
        fc.asyncProperty(mutatedTape, async (text) => {
          const read = readFuzzed(text);
          if (read === undefined) return;
          try {
            const { registry } = replayTools(read.tape.header, read.tape.frames, {}, read.file);
            const handle = resumeRun(read.tape, {
              provider,
              registry,
              workspace,
              policy: createPolicy({ allowWrite: true, approve: "deny" }),
            });
            for await (const _ of handle);
            const result = await handle.result;
            expect(result.error?.code).not.toBe("internal_error");
          } catch (error) {
            expectClear(error);
          }
        }),
        fuzzParams(80),
      );
    },
    fuzzTimeout(80, 120_000),
  );
});

// ---------------------------------------------------------------------------------------------
// Queue jobs

const goodTask = parseTasks('{"id":"t1","prompt":"hi"}\n').tasks[0];
const spec = objectWith({
  input: fc.oneof(nastyString, fc.constant([{ type: "message", role: "user", content: "hi" }]), nastyJson),
  model: nastyString,
  max_turns: fc.integer({ min: -1, max: 5 }),
  tools: fc.array(nastyString, { maxLength: 2 }),
  run_id: nastyString,
  thread: nastyString,
  request: nastyJson,
  output_schema: nastyJson,
});
const job = fc.oneof(
  objectWith({
    batch: fc.oneof(fc.constantFrom("abcd1234", "../../etc", "ABCDEFGH1", ""), nastyString),
    task: fc.oneof(
      objectWith({ id: fc.oneof(nastyString, fc.integer()), spec, metadata: nastyJson }),
      nastyJson,
    ),
    retry: fc.oneof(fc.boolean(), nastyJson),
    workspacePerTask: fc.oneof(fc.boolean(), nastyJson),
  }),
  nastyJson,
);

describe("fuzz: queue job payloads", () => {
  it("a good job passes the check unchanged", () => {
    const data = { batch: "abcd1234", task: goodTask, retry: false, workspacePerTask: false };
    expect(checkQueuedTask(JSON.parse(JSON.stringify(data)))).toEqual(data);
  });

  it("a worker's result from Redis is checked before it is written: shape, and the task's own id", () => {
    const good = {
      id: "t1",
      reason: "completed",
      outputText: "hi",
      usage: { input_tokens: 1, output_tokens: 2, total_tokens: 3 },
      turns: 1,
      toolCalls: 0,
      durationMs: 5,
    };
    expect(resultProblem(good, "t1")).toBeUndefined();
    expect(resultProblem({ ...good, usage: null }, "t1")).toBeUndefined();
    for (const [bad, problem] of [
      [[good], /not an object/],
      [{ ...good, id: "t2" }, /its id is not the task's/],
      [{ ...good, id: { a: 1 } }, /its id is not the task's/],
      [{ ...good, reason: "done\u001b[2J" }, /reason/],
      [{ ...good, outputText: undefined }, /outputText/],
      [{ ...good, usage: { input_tokens: "0999" } }, /usage/],
      [{ ...good, turns: "many" }, /turns/],
      [{ ...good, durationMs: { a: 1 } }, /durationMs/],
      [{ ...good, tape: 5 }, /tape/],
      [{ ...good, error: "boom" }, /error/],
      [{ ...good, usage: { input_tokens: 1, output_tokens: 2, total_tokens: "EVIL" } }, /usage/],
      [{ ...good, resumes: "abcdef" }, /resumes/],
      [{ ...good, metadata: "str" }, /metadata/],
      [{ ...good, skippedFiles: 42 }, /skippedFiles/],
      // Written to Redis by hand: the coordinator's results line then overflowed the stack and
      // ended the batch "internal error" with no result line and no summary.
      [{ ...good, result: JSON.parse(`${"[".repeat(100_000)}${"]".repeat(100_000)}`) }, /nests deeper than/],
    ] as const)
      expect(resultProblem(bad, "t1")).toMatch(problem);
  });

  it("a key holding a newline is named in one line (found by this fuzz)", () => {
    expect(() => checkQueuedTask({ "a\nb": null })).toThrow(/^queue job: "a\\nb": is not a known field$/);
    expect(() => resolveRunSpec({ input: "hi", "x\ny": 1 })).toThrow(
      /^run spec: "x\\ny": is not a known field$/,
    );
  });

  it("data nested deeper than the stack is refused by name, wherever it sits (it overflowed the checks)", () => {
    const deep = JSON.parse(`${"[".repeat(20_000)}${"]".repeat(20_000)}`);
    const job = (spec: object, metadata?: unknown) => ({
      batch: "abcd1234",
      retry: false,
      workspacePerTask: false,
      task: { id: "t1", spec, ...(metadata === undefined ? {} : { metadata }) },
    });
    for (const data of [
      job({ input: "hi", request: { metadata: deep } }),
      job({ input: [{ type: "message", role: "user", content: deep }] }),
      job({ input: "hi" }, deep),
    ])
      expect(() => checkQueuedTask(data)).toThrow(
        /^queue job: nests deeper than 1032 levels of arrays and objects$/,
      );
  });

  it(
    "checkQueuedTask: a clear error, or a job whose batch id is a safe name and whose task a tasks line could be",
    () => {
      fc.assert(
        fc.property(job, (data) => {
          let checked: ReturnType<typeof checkQueuedTask>;
          try {
            checked = checkQueuedTask(data);
          } catch (error) {
            expectClear(error);
            return;
          }
          expect(checked.batch).toMatch(/^[a-z0-9]{8,40}$/);
          expect(typeof checked.retry).toBe("boolean");
          const line = JSON.stringify({ ...checked.task.spec, id: checked.task.id });
          expect(parseTasks(line).tasks).toHaveLength(1);
        }),
        fuzzParams(500),
      );
    },
    fuzzTimeout(500, 20_000),
  );
});
