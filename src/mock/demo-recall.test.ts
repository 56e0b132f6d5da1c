import { describe, expect, it } from "vitest";
import { post } from "../../test/support/mock-sse.js";
import { askedSubjects, recallReply, statedFacts } from "./demo-recall.js";
import { createMockHandler } from "./handler.js";

describe("demo-recall: facts the user stated", () => {
  it.each([
    ["My name is Ada.", [["name", "Ada"]]],
    ["my favourite colour is teal", [["favourite colour", "teal"]]],
    [
      "My name is Ada and my home town is Leeds, thanks.",
      [
        ["name", "Ada"],
        ["home town", "Leeds"],
      ],
    ],
    ["What is my name?", []],
    ["Hello there", []],
  ])("%j states %j", (text, expected) => {
    expect([...statedFacts([text]).values()].map((f) => [f.subject, f.value])).toEqual(expected);
  });

  it("takes the latest statement of a subject", () => {
    expect(statedFacts(["My name is Ada.", "Actually my name is Grace."]).get("name")?.value).toBe("Grace");
  });

  it.each([
    ["What is my name?", ["name"]],
    ["what's my favourite colour", ["favourite colour"]],
    ["What is my name and what is my favourite colour?", ["name", "favourite colour"]],
    ["Do you remember my name?", ["name"]],
    ["What is in package.json?", []],
  ])("%j asks about %j", (text, expected) => {
    expect(askedSubjects(text)).toEqual(expected);
  });

  it("answers from earlier messages, says when a fact was never given, acknowledges statements", () => {
    const asked = "What is my name? And what's my favourite colour?";
    expect(recallReply(["My name is Ada.", "My favourite colour is teal.", asked], asked)).toBe(
      "Your name is Ada. Your favourite colour is teal.",
    );
    expect(recallReply(["My name is Ada.", "What is my age?"], "What is my age?")).toBe(
      "You haven’t told me your age in this conversation.",
    );
    expect(recallReply(["My name is Ada."], "My name is Ada.")).toBe("Noted: your name is Ada.");
    expect(recallReply(["Hello"], "Hello")).toBeUndefined();
  });
});

describe("the demo model remembers what the conversation says", () => {
  const ask = async (input: unknown[]) => {
    const res = await post(createMockHandler(), { model: "eddy-demo", input });
    const body = (await res.json()) as { output?: { content?: { text: string }[] }[] };
    expect(res.status, JSON.stringify(body)).toBe(200);
    return body.output?.[0]?.content?.[0]?.text;
  };
  const user = (text: string) => ({ type: "message", role: "user", content: text });

  it("answers a question about a fact stated earlier in its input", async () => {
    expect(
      await ask([
        user("My name is Ada."),
        {
          type: "message",
          role: "assistant",
          content: [{ type: "output_text", text: "Noted: your name is Ada.", annotations: [] }],
        },
        user("What is my name?"),
      ]),
    ).toBe("Your name is Ada.");
  });

  it("does not know a fact its input does not carry", async () => {
    expect(await ask([user("What is my name?")])).toBe("You haven’t told me your name in this conversation.");
  });
});
