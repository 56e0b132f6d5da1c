import { describe, expect, it } from "vitest";
import { EddyError } from "../errors.js";
import { BATCH_DEFAULTS } from "./defaults.js";
import { parseTasks, tapeFileName } from "./task.js";

describe("the tasks file", () => {
  it("refuses a schema whose pattern cannot run in linear time as a bad line (docs/pitfalls.md #102)", () => {
    const schema = { type: "object", properties: { x: { type: "string", pattern: "^(?=a)(a+)+$" } } };
    const { tasks, bad } = parseTasks(JSON.stringify({ id: "t", prompt: "x", schema }));
    expect(tasks).toEqual([]);
    expect(bad).toEqual([{ line: 1, message: expect.stringMatching(/cannot be checked in linear time/) }]);
  });

  it("reads every good line and reports each bad one with its line number", () => {
    const text = [
      '{"id": "a", "prompt": "What is in package.json?"}',
      "",
      "not json",
      '{"id": "b"}',
      '{"id": "a", "prompt": "again"}',
      '{"id": 7, "input": [{"role": "user", "content": "hi"}], "model": "m2", "instructions": "Be brief.", "max_turns": 3, "metadata": {"k": 1}, "expected": "ignored"}',
      '{"prompt": "no id"}',
      '{"id": "c", "prompt": "x", "schema": {"type": "object", "title": "An Answer"}}',
      '{"id": "d", "prompt": "x", "max_tool_calls": 0}',
      '{"id": "e", "prompt": "x", "input": "y"}',
      "[1, 2]",
      `{"id": "f", "prompt": "x", "metadata": {"k": ${"[".repeat(20_000)}${"]".repeat(20_000)}}}`,
      "\u001b]52;c;aGk=\u0007{",
    ].join("\n");
    const { tasks, bad } = parseTasks(text);
    expect(tasks.map((t) => t.id)).toEqual(["a", "7", "c"]);
    expect(tasks[1]).toEqual({
      id: "7",
      spec: {
        input: [{ role: "user", content: "hi" }],
        model: "m2",
        instructions: "Be brief.",
        max_turns: 3,
      },
      metadata: { k: 1 },
    });
    expect(tasks[2]?.spec.output_schema).toEqual({
      name: "An_Answer",
      schema: { type: "object", title: "An Answer" },
    });
    expect(bad).toEqual([
      { line: 3, message: expect.stringMatching(/^not valid JSON/) },
      { line: 4, message: 'no "prompt" (or "input" items)' },
      { line: 5, message: 'duplicate id "a" (first on line 1)' },
      { line: 7, message: 'no "id"' },
      { line: 9, message: "max_tool_calls: must be ≥ 1 (got 0)" },
      { line: 10, message: 'give "prompt" or "input", not both' },
      { line: 11, message: "expected a JSON object" },
      // Refused before its results line could not be written (JSON.stringify overflowed the stack).
      { line: 12, message: "nests deeper than 1000 levels" },
      // V8's message quotes the line: its control characters come out as text.
      { line: 13, message: expect.stringMatching(/^not valid JSON \(.*\\u001b\]52;c;aGk=\\u0007/) },
    ]);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: what must not be in a message
    for (const b of bad) expect(b.message).not.toMatch(/[\u0000-\u001f]/);
  });

  it("a task is a partial spec: any spec field it sets is checked, fields a batch owns are refused", () => {
    const text = [
      '{"id": "a", "prompt": "x", "request": {"temperature": 0.2}, "history": {"strategy": "text-embed"}}',
      '{"id": "b", "prompt": "x", "max_turns": "many"}',
      '{"id": "c", "prompt": "x", "thread": "t"}',
      '{"id": "d", "prompt": "x", "run_id": "run_x"}',
      '{"id": "e", "prompt": "x", "request": {"tools": []}}',
    ].join("\n");
    const { tasks, bad } = parseTasks(text);
    expect(tasks.map((t) => t.spec)).toEqual([
      { input: "x", request: { temperature: 0.2 }, history: { strategy: "text-embed" } },
    ]);
    expect(bad.map((b) => b.message)).toEqual([
      'max_turns: expected a number (got "many")',
      '"thread" cannot be set by a task (the batch sets it for every task)',
      '"run_id" cannot be set by a task (the batch sets it for every task)',
      expect.stringMatching(/^request\.tools: is set by the loop/),
    ]);
  });

  it("names tapes after their task, safely", () => {
    expect(tapeFileName("task-1.a")).toBe("task-1.a.tape");
    const odd = tapeFileName("../etc/passwd");
    expect(odd).toMatch(/^etc_passwd-[0-9a-f]{10}\.tape$/);
    expect(tapeFileName("a/b")).not.toBe(tapeFileName("a_b"));
  });

  it("no id takes the tape name of another: a plain id shaped like a hashed name is hashed, and a shared name is refused", () => {
    const hashed = tapeFileName("a b");
    expect(hashed).toBe("a_b-c8687a08aa.tape");
    expect(tapeFileName("a_b-c8687a08aa")).not.toBe(hashed);
    const { tasks, bad } = parseTasks(
      [
        { id: "a b", input: "list the files" },
        { id: "a_b-c8687a08aa", input: "what is my name?" },
      ]
        .map((t) => JSON.stringify(t))
        .join("\n"),
    );
    expect(tasks.map((t) => t.id)).toEqual(["a b", "a_b-c8687a08aa"]);
    expect(bad).toEqual([]);
    expect(new Set(tasks.map((t) => tapeFileName(t.id))).size).toBe(2);
  });
});

describe("a tasks text of more bad lines than a tasks file has (docs/pitfalls.md #109)", () => {
  const max = BATCH_DEFAULTS.maxBadTaskLines;
  const good = '{"id": "a", "prompt": "hi"}';

  /** The error `parseTasks` throws for `text`. */
  function refusal(text: string, source?: string): EddyError {
    try {
      parseTasks(text, source === undefined ? {} : { source });
    } catch (err) {
      if (EddyError.isInstance(err)) return err;
      throw err;
    }
    throw new Error("not refused");
  }

  it("two million bad lines: refused at the line past the bound, naming the source, the count and the first", () => {
    const err = refusal(`${good}\n${"x\n".repeat(2_000_000)}`, "the tasks file t.jsonl");
    expect(err.code).toBe("invalid_argument");
    expect(err.fault).toBe("user");
    expect(err.message).toBe(
      `the tasks file t.jsonl has more than 1,000 bad lines by line ${max + 2} (the first, line 2: not valid JSON (Unexpected token 'x', "x" is not valid JSON)): it does not look like a tasks file (one JSON task a line); fix it and run again — no task was run and nothing was written`,
    );
  });

  it("as many bad lines as the bound is still a batch: each one skipped", () => {
    const { tasks, bad } = parseTasks(`${"x\n".repeat(max)}${good}\n`);
    expect(tasks.map((t) => t.id)).toEqual(["a"]);
    expect(bad).toHaveLength(max);
  });

  it("duplicates count as bad lines: two million copies of one task are refused", () => {
    const err = refusal(`${good}\n`.repeat(2_000_000));
    expect(err.message).toContain('(the first, line 2: duplicate id "a" (first on line 1))');
  });

  it("NUL bytes: lines of them are bad lines, and the message holds none", () => {
    const err = refusal("\u0000\n".repeat(2_000_000));
    expect(err.message).toContain("more than 1,000 bad lines by line 1001 ");
    expect(err.message).not.toContain("\u0000");
    const one = parseTasks(`${good}\n{"id": "b", "prompt": "x\u0000y"}\n`);
    expect(one.tasks.map((t) => t.id)).toEqual(["a"]);
    expect(one.bad).toEqual([
      { line: 2, message: expect.stringMatching(/^not valid JSON \(Bad control character/) },
    ]);
  });

  it("one huge line is one bad line, said in a bounded message", () => {
    const { tasks, bad } = parseTasks(`${good}\n${"x".repeat(20 * 1024 * 1024)}\n`);
    expect(tasks).toHaveLength(1);
    expect(bad).toHaveLength(1);
    expect(bad[0]?.message.length).toBeLessThan(250);
  });
});

describe("a task id is shown on terminals and names files", () => {
  it("refuses C0 and C1 controls and the characters that turn text around", () => {
    for (const id of ["a\u0007b", "c1\u009b31mRED", "evil\u202egnp.exe", "x\u2066y", "m\u200fn"]) {
      const { tasks, bad } = parseTasks(JSON.stringify({ id, input: "hi" }));
      expect(tasks).toHaveLength(0);
      expect(bad[0]?.message).toMatch(/"id" holds control or direction characters/);
    }
    expect(parseTasks(JSON.stringify({ id: "ünïcode-名", input: "hi" })).tasks).toHaveLength(1);
  });
});
