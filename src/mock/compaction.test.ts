import { describe, expect, it } from "vitest";
import { decodeCompaction, encodeCompaction, expandCompactions } from "./compaction.js";
import { problemOf } from "./http-error.js";
import type { ConversationItem } from "./state.js";

const user = (id: string, text: string): ConversationItem => ({
  type: "message",
  id,
  role: "user",
  content: [{ type: "input_text", text }],
});
const assistant = (text: string): ConversationItem => ({ type: "message", role: "assistant", content: text });
const at = (i: number) => `input[${i}]`;

describe("compaction content", () => {
  it("round-trips a window, Unicode included, and is opaque (no plain text inside)", () => {
    const window = [user("msg_1", "Grüße — 東京 🚀 code word slate"), assistant("OK.")];
    const content = encodeCompaction(window);
    expect(content.startsWith("eddy-cmp1.")).toBe(true);
    expect(content).not.toContain("slate");
    expect(decodeCompaction(content)).toEqual(window);
  });

  it.each([
    ["another provider's content", "gAAAAABpM0Yj-abc="],
    ["a changed payload", (c: string) => c.replace(/\.(.)/, (_, ch: string) => `.${ch === "A" ? "B" : "A"}`)],
    ["a changed checksum", (c: string) => `${c.slice(0, -1)}${c.endsWith("0") ? "1" : "0"}`],
    ["an extra part", (c: string) => `${c}.x`],
    ["an empty string", ""],
  ])("refuses %s", (_label, make) => {
    const good = encodeCompaction([user("msg_1", "hello")]);
    const content = typeof make === "string" ? make : make(good);
    expect(decodeCompaction(content)).toBeUndefined();
  });
});

describe("expandCompactions", () => {
  it("puts the window in place of the item and drops the kept copies before it: the original order again", () => {
    const window = [
      user("msg_1", "first"),
      assistant("reply"),
      user("msg_2", "second"),
      assistant("reply 2"),
    ];
    const compacted: ConversationItem[] = [
      user("msg_1", "first"),
      user("msg_2", "second"),
      { type: "compaction", id: "cmp_1", encrypted_content: encodeCompaction(window) },
      user("msg_3", "new"),
    ];
    expect(expandCompactions(compacted, at)).toEqual([...window, user("msg_3", "new")]);
  });

  it("leaves items without compaction as they are", () => {
    const items = [user("msg_1", "a"), assistant("b")];
    expect(expandCompactions(items, at)).toEqual(items);
  });

  it("a compaction item it did not produce is a 400 invalid_encrypted_content naming the item", () => {
    const items: ConversationItem[] = [
      user("msg_1", "a"),
      { type: "compaction", encrypted_content: "foreign" },
    ];
    let thrown: unknown;
    try {
      expandCompactions(items, at);
    } catch (error) {
      thrown = error;
    }
    expect(problemOf(thrown)).toMatchObject({
      status: 400,
      error: { code: "invalid_encrypted_content", param: "input[1].encrypted_content" },
    });
  });
});
