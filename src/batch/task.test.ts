import { describe, expect, it } from "vitest";
import { parseTasks, tapeFileName } from "./task.js";

describe("the tasks file", () => {
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
    ].join("\n");
    const { tasks, bad } = parseTasks(text);
    expect(tasks.map((t) => t.id)).toEqual(["a", "7", "c"]);
    expect(tasks[1]).toEqual({
      id: "7",
      input: [{ role: "user", content: "hi" }],
      model: "m2",
      instructions: "Be brief.",
      maxTurns: 3,
      metadata: { k: 1 },
    });
    expect(tasks[2]?.outputSchema).toEqual({
      name: "An_Answer",
      schema: { type: "object", title: "An Answer" },
    });
    expect(bad).toEqual([
      { line: 3, message: expect.stringMatching(/^not valid JSON/) },
      { line: 4, message: 'no "prompt" (or "input" items)' },
      { line: 5, message: 'duplicate id "a" (first on line 1)' },
      { line: 7, message: 'no "id"' },
      { line: 9, message: '"max_tool_calls" must be an integer ≥ 1' },
      { line: 10, message: 'give "prompt" or "input", not both' },
      { line: 11, message: "expected a JSON object" },
    ]);
  });

  it("names tapes after their task, safely", () => {
    expect(tapeFileName("task-1.a")).toBe("task-1.a.tape");
    const odd = tapeFileName("../etc/passwd");
    expect(odd).toMatch(/^etc_passwd-[0-9a-f]{10}\.tape$/);
    expect(tapeFileName("a/b")).not.toBe(tapeFileName("a_b"));
  });
});
