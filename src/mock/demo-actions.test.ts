import { describe, expect, it } from "vitest";
import { type DemoAction, detectAction } from "./demo-actions.js";

const write = (path: string, content: string, append = false): DemoAction => ({
  kind: "write",
  path,
  content,
  append,
});
const shell = (command: string): DemoAction => ({ kind: "shell", command });
const edit = (path: string, find: string, replace: string): DemoAction => ({
  kind: "edit",
  path,
  find,
  replace,
});

describe("detectAction", () => {
  it.each<[string, DemoAction]>([
    ["Create a file named notes.txt containing the text hello", write("notes.txt", "hello")],
    ["Create notes.txt", write("notes.txt", "")],
    ["make an empty file called log.md", write("log.md", "")],
    ["create notes.txt with hello world", write("notes.txt", "hello world")],
    ["Write hello to notes.txt", write("notes.txt", "hello")],
    ["write 'hello world' into notes.txt", write("notes.txt", "hello world")],
    ['Write "line1\\nline2" to a.txt', write("a.txt", "line1\nline2")],
    ["Please create a new file called todo.md with the content: buy milk.", write("todo.md", "buy milk")],
    ["Save the text 42 in answer.txt", write("answer.txt", "42")],
    ["Append 'second line' to notes.txt", write("notes.txt", "second line", true)],
    ["add the line bye to notes.txt", write("notes.txt", "bye", true)],
    ["Replace hello with goodbye in notes.txt", edit("notes.txt", "hello", "goodbye")],
    ["In notes.txt, change hello to goodbye.", edit("notes.txt", "hello", "goodbye")],
    ['replace "foo bar" with "baz" in src/a.ts', edit("src/a.ts", "foo bar", "baz")],
    ["Run `ls -la`", shell("ls -la")],
    ["run the command echo hi", shell("echo hi")],
    ["Run ls -la", shell("ls -la")],
    ["what does `date` print?", shell("date")],
    ["What is the output of `uname -s`?", shell("uname -s")],
    ["Run the command `echo hi > out.txt` and tell me what happened", shell("echo hi > out.txt")],
  ])("%s", (text, expected) => {
    expect(detectAction(text)).toEqual(expected);
  });

  it.each([
    "What is in package.json?",
    "What does notes.txt contain?",
    "Can you make sense of notes.txt?",
    "Create a folder named src",
    "Run the tests",
    "How do I run node?",
    "What is in this image?",
    "My name is Ada.",
    "Search for TODO",
    "Tell me a joke",
  ])("%s → nothing to do", (text) => {
    expect(detectAction(text)).toBeUndefined();
  });
});
