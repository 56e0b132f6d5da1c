import { describe, expect, it } from "vitest";
import { capJson, cutMarker } from "./json-cut.js";
import { capJsonOrText, capValue } from "./limits.js";

/** A conversation of `count` messages, each `size` characters of text. */
function messages(count: number, size: number): string {
  return JSON.stringify(
    Array.from({ length: count }, (_, i) => ({
      role: i % 2 === 0 ? "user" : "assistant",
      parts: [{ type: "text", content: `${i}:${"m".repeat(size)}` }],
      ...(i % 2 === 1 ? { finish_reason: "stop" } : {}),
    })),
  );
}

const leftOut = (text: string) => Number(/…\[(\d+) characters left out\]/.exec(text)?.[1]);

describe("a JSON attribute cut at the length limit stays JSON (docs/pitfalls.md #116)", () => {
  it("a 2 MB conversation cut at 8192 characters: parseable, within the limit, whole messages first, a marker saying how much was left out", () => {
    const json = messages(40, 50_000);
    const cut = capJson(json, 8192);
    expect(cut.length).toBeLessThanOrEqual(8192);
    expect(cut.length).toBeGreaterThan(8100); // the room is used, not given up
    const parsed = JSON.parse(cut) as Array<{ role: string; parts: Array<{ content: string }> }>;
    expect(parsed[0]?.role).toBe("user");
    const last = parsed.at(-1)?.parts.at(-1)?.content ?? "";
    expect(last).toMatch(/…\[\d+ characters left out\]$/);
    // The count is what the JSON text lost: the whole minus what was kept of it.
    expect(leftOut(cut)).toBe(json.length - (cut.length - cutMarker(leftOut(cut)).length - '"}]}]'.length));
  });

  it("what fits is kept whole: several small messages then the cut one", () => {
    const json = messages(10, 300);
    const cut = capJson(json, 2000);
    const parsed = JSON.parse(cut) as Array<{ role: string; finish_reason?: string }>;
    expect(parsed.length).toBeGreaterThanOrEqual(4);
    expect(parsed[1]).toMatchObject({ role: "assistant", finish_reason: "stop" });
    expect(JSON.stringify(parsed.slice(0, -1))).toBe(
      JSON.stringify(JSON.parse(json).slice(0, parsed.length - 1)),
    );
  });

  it("every limit from 0 to 700 gives JSON within the limit (escapes, surrogate pairs, nesting)", () => {
    const json = JSON.stringify([
      {
        role: "user",
        parts: [{ type: "text", content: 'quote " backslash \\ newline \n tab \t 😀😀😀 \u0001 é' }],
      },
      { role: "tool", parts: [{ type: "tool_call_response", id: "c1", response: { a: [1, "two", null] } }] },
      { role: "assistant", parts: [{ type: "text", content: "😀".repeat(100) }] },
    ]);
    expect(json.length).toBeGreaterThan(300);
    for (let max = 0; max <= 700; max++) {
      const cut = capJson(json, max);
      expect(cut.length, `max ${max}`).toBeLessThanOrEqual(max);
      if (max >= 2) expect(() => JSON.parse(cut), `max ${max}: ${cut}`).not.toThrow();
      // No lone half of a surrogate pair is made by the cut.
      expect(cut, `max ${max}`).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])/);
    }
    expect(capJson(json, 1)).toBe("");
    expect(capJson(json, 0)).toBe("");
    expect(capJson(json, 10)).toBe("[]"); // not even `[{"role":"` and a marker fit
    expect(capJson(json, 10_000)).toBe(json);
  });

  it("a key is never cut, only string values", () => {
    const json = JSON.stringify({ ["k".repeat(500)]: "v".repeat(500) });
    for (const max of [50, 400, 520, 700]) {
      const parsed = JSON.parse(capJson(json, max)) as Record<string, string>;
      for (const key of Object.keys(parsed)) expect(key).toBe("k".repeat(500));
    }
    expect(capJson(json, 50)).toBe("{}");
  });

  it("JSON with whitespace between tokens (a model's tool arguments) is cut as JSON too", () => {
    const args = `{ "path" : "notes.txt" ,\n  "pad": "${"x".repeat(5000)}" }`;
    const cut = capJsonOrText(args, 300);
    expect(cut.length).toBeLessThanOrEqual(300);
    expect(JSON.parse(cut)).toMatchObject({ path: "notes.txt" });
  });

  it("text that is not JSON is cut as text, with …", () => {
    const cut = capJsonOrText(`{"path": "a", ${"x".repeat(500)}`, 100);
    expect(cut).toHaveLength(100);
    expect(cut.endsWith("…")).toBe(true);
  });

  it("capValue cuts the GenAI JSON attributes as JSON and others as text", () => {
    const json = messages(3, 1000);
    const limits = { valueLength: 500, arrayLength: 128 };
    expect(() => JSON.parse(String(capValue(json, limits, "gen_ai.input.messages")))).not.toThrow();
    expect(() => JSON.parse(String(capValue(json, limits, "gen_ai.output.messages")))).not.toThrow();
    expect(() => JSON.parse(String(capValue(json, limits, "gen_ai.tool.call.arguments")))).not.toThrow();
    expect(String(capValue(json, limits, "eddy.other")).endsWith("…")).toBe(true);
    expect(capValue(json, { valueLength: 0, arrayLength: 1 }, "eddy.other")).toBe("");
  });
});
