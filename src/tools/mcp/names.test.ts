import { describe, expect, it } from "vitest";
import { TOOL_NAME_PATTERN } from "../registry.js";
import { mcpToolName, sanitizeNamePart } from "./names.js";

describe("mcpToolName", () => {
  it.each([
    ["plain", "github", "create_issue", "github__create_issue"],
    ["dots and spaces", "my.server", "read file", "my_server__read_file"],
    ["dashes kept", "fs-1", "list-dir", "fs-1__list-dir"],
    ["non-ASCII", "wiki", "søg", "wiki__s_g"],
  ])("%s", (_label, server, tool, expected) => {
    expect(mcpToolName(server, tool)).toBe(expected);
  });

  it("shortens a long name to 64 characters with a hash of the original names", () => {
    const tool = `${"x".repeat(70)}_one`;
    const name = mcpToolName("srv", tool);
    expect(name).toHaveLength(64);
    expect(name).toMatch(TOOL_NAME_PATTERN);
    expect(name.startsWith("srv__xxxx")).toBe(true);
    expect(name).toMatch(/_[0-9a-f]{8}$/);
    expect(mcpToolName("srv", tool)).toBe(name);
    expect(mcpToolName("srv", `${"x".repeat(70)}_two`)).not.toBe(name);
  });

  it("keeps a name of exactly 64 characters as it is", () => {
    const tool = "t".repeat(64 - "srv__".length);
    expect(mcpToolName("srv", tool)).toBe(`srv__${tool}`);
  });

  it("hashes the original names, so names that sanitize alike still shorten apart", () => {
    const long = "y".repeat(80);
    expect(mcpToolName("a.b", long)).not.toBe(mcpToolName("a_b", long));
  });

  it("sanitizeNamePart leaves only [a-zA-Z0-9_-]", () => {
    expect(sanitizeNamePart("a/b:c d.e")).toBe("a_b_c_d_e");
  });
});
