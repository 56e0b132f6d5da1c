import { describe, expect, it } from "vitest";
import { mcpResultToToolResult } from "./result.js";

describe("mcpResultToToolResult", () => {
  it("joins text blocks", () => {
    const r = mcpResultToToolResult("s__t", {
      content: [
        { type: "text", text: "one" },
        { type: "text", text: "two" },
      ],
    });
    expect(r).toMatchObject({ ok: true, exitCode: 0, stdout: "one\ntwo", stderr: "" });
    expect(r.error).toBeUndefined();
  });

  it.each([
    ["absent from the text", [{ type: "text" as const, text: "done" }], 'done\n{"b":1,"a":[2]}'],
    [
      "the same JSON in another key order",
      [{ type: "text" as const, text: '{"a":[2],"b":1}' }],
      '{"a":[2],"b":1}',
    ],
    ["no content at all", [], '{"b":1,"a":[2]}'],
  ])("adds structuredContent as JSON when it is %s", (_label, content, stdout) => {
    expect(mcpResultToToolResult("s__t", { content, structuredContent: { b: 1, a: [2] } }).stdout).toBe(
      stdout,
    );
  });

  it("sizes base64 payloads without decoding them", () => {
    const data = (n: number) => Buffer.alloc(n).toString("base64");
    const r = mcpResultToToolResult("s__t", {
      content: [
        { type: "image", data: data(1), mimeType: "image/gif" },
        { type: "image", data: data(2), mimeType: "image/gif" },
        { type: "audio", data: data(3), mimeType: "audio/ogg" },
      ],
    });
    expect(r.stdout.split("\n")).toEqual([
      "[image: image/gif, 1 bytes, not shown]",
      "[image: image/gif, 2 bytes, not shown]",
      "[audio: audio/ogg, 3 bytes, not shown]",
    ]);
  });

  it("lists resource links with what is known about them", () => {
    const r = mcpResultToToolResult("s__t", {
      content: [
        { type: "resource_link", uri: "file:///a", name: "a" },
        { type: "resource_link", uri: "file:///b", name: "b", mimeType: "text/plain", size: 12 },
      ],
    });
    expect(r.stdout).toBe(
      "[resource link: a <file:///a>]\n[resource link: b <file:///b> (text/plain, 12 bytes)]",
    );
  });

  it("isError becomes ok:false with the first text line as the message", () => {
    const r = mcpResultToToolResult("s__t", {
      content: [{ type: "text", text: "  bad input  \nmore" }],
      isError: true,
    });
    expect(r).toMatchObject({
      ok: false,
      exitCode: 1,
      stdout: "  bad input  \nmore",
      error: { code: "tool_failed", message: "s__t reported an error: bad input" },
    });
    expect(mcpResultToToolResult("s__t", { content: [], isError: true }).error?.message).toBe(
      "s__t reported an error: no details given",
    );
  });

  it("encodes a legacy {toolResult} answer as JSON", () => {
    expect(mcpResultToToolResult("s__t", { toolResult: { n: 1 } })).toMatchObject({
      ok: true,
      stdout: '{"n":1}',
    });
  });

  it("notes a content type it does not know instead of dropping it", () => {
    const block = { type: "hologram", data: "…" } as unknown as { type: "text"; text: string };
    expect(mcpResultToToolResult("s__t", { content: [block] }).stdout).toBe("[hologram content, not shown]");
  });
});
