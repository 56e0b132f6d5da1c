import { describe, expect, it } from "vitest";
import { hostedTool } from "./hosted-tools.js";

describe("hosted tools by name", () => {
  it.each([
    ["web_search", { type: "web_search" }],
    ["code_interpreter", { type: "code_interpreter", container: { type: "auto" } }],
    ["image_generation", { type: "image_generation" }],
    ["file_search:vs_abc", { type: "file_search", vector_store_ids: ["vs_abc"] }],
    [
      "mcp:zip1=https://zip1.io/mcp",
      { type: "mcp", server_label: "zip1", server_url: "https://zip1.io/mcp" },
    ],
  ])("%s", (spec, tool) => {
    expect(hostedTool(spec)).toEqual(tool);
  });

  it.each([
    ["web_search:x", "--tool web_search takes no argument"],
    ["file_search", "--tool file_search needs the vector store id(s)"],
    ["mcp:docs", "--tool mcp needs LABEL=URL"],
    ["mcp:bad label=https://x", "--tool mcp needs LABEL=URL"],
    [
      "search",
      'unknown hosted tool "search" (known: web_search, file_search, code_interpreter, image_generation, mcp)',
    ],
  ])("%s is refused", (spec, message) => {
    expect(() => hostedTool(spec)).toThrow(message);
  });
});
