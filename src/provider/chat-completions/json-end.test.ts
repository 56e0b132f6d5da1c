import { describe, expect, it } from "vitest";
import { JsonEnd } from "./json-end.js";

/** Feeds `text` in pieces of `size` characters; whether it is complete at the end. */
function completeIn(text: string, size: number): boolean {
  const end = new JsonEnd();
  for (let i = 0; i < text.length; i += size) end.feed(text.slice(i, i + size));
  return end.complete(text);
}

describe("JsonEnd: whether streamed arguments are whole JSON", () => {
  it.each([
    ["an empty object", "{}", true],
    ["an object", '{"path":"a.txt","n":1}', true],
    ["braces inside a string", '{"text":"}{]["}', true],
    ["an escaped quote", '{"text":"say \\"}\\" now"}', true],
    ["an escaped backslash before the closing quote", '{"text":"a\\\\"}', true],
    ["nested objects and arrays", '{"a":[{"b":[1,2]},{}],"c":{"d":null}}', true],
    ["an array", "[1,2,3]", true],
    ["whitespace around it", ' \n {"a":1} \t', true],
    ["an open object", '{"path":"a', false],
    ["an open string holding a brace", '{"text":"}', false],
    ["nothing yet", "", false],
    ["whitespace only", "  ", false],
    ["text after the value", '{"a":1} x', false],
    ["a second value", "{}{}", false],
    ["a bare number (it could still grow)", "12", false],
    ["a bare string", '"x"', false],
    ["balanced but not JSON", "{a}", false],
  ])("%s: %s → %s", (_label, text, expected) => {
    for (const size of [1, 2, 3, 7, 1000]) expect(completeIn(text, size)).toBe(expected);
  });

  it("parses at most once, however often it is asked", () => {
    const end = new JsonEnd();
    let text = "";
    const parse = JSON.parse;
    let parses = 0;
    JSON.parse = (...args: Parameters<typeof JSON.parse>) => {
      parses++;
      return parse(...args);
    };
    try {
      for (const piece of ['{"a":', '"b"', "}", " ", "\n"]) {
        text += piece;
        end.feed(piece);
        end.complete(text);
        end.complete(text);
      }
    } finally {
      JSON.parse = parse;
    }
    expect(end.complete(text)).toBe(true);
    expect(parses).toBe(1);
  });
});
