import { describe, expect, it } from "vitest";
import { maskAcross, redactAcrossParts } from "./redact.js";

const KEY = "sk-probe-SECRET-123456";

describe("maskAcross", () => {
  it("masks a secret spanning pieces: *** where it starts, its characters out of the others", () => {
    expect(maskAcross(["a sk-pro", "be-SECRET-12", "3456 b"], `a ${KEY} b`, [KEY])).toEqual([
      "a ***",
      "",
      " b",
    ]);
    expect(maskAcross(["a", "b"], "ab", [KEY])).toBeUndefined();
  });
});

describe("redactAcrossParts", () => {
  const part = (text: string) => ({ type: "output_text", text, annotations: [] });
  it("masks a secret split between a message's content parts, wherever the list sits", () => {
    const record = {
      kind: "outcome",
      items: [{ type: "message", content: [part("a sk-probe-SEC"), part("RET-123456 b")] }],
    };
    const masked = redactAcrossParts(record, [KEY]);
    expect(masked.items[0]?.content.map((p) => p.text)).toEqual(["a ***", " b"]);
    expect(JSON.stringify(masked)).not.toContain("SEC");
    // Copy on write: the input is untouched, a clean value comes back as it is.
    expect(record.items[0]?.content[0]?.text).toBe("a sk-probe-SEC");
    const clean = { items: [{ content: [part("hello"), part(" world")] }] };
    expect(redactAcrossParts(clean, [KEY])).toBe(clean);
    expect(redactAcrossParts(record, [])).toBe(record);
  });
});
