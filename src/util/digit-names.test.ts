import { describe, expect, it } from "vitest";
import { digitsOnlyNameProblem, MCP_SERVER_ENTRY, SUB_AGENT_ENTRY } from "./digit-names.js";

describe("digitsOnlyNameProblem (docs/pitfalls.md #123, #126)", () => {
  it.each(["0", "01", "20", "4294967295", "12345678901234567890"])(
    "refuses %j, naming a name to use instead",
    (name) => {
      expect(digitsOnlyNameProblem(name, MCP_SERVER_ENTRY)).toBe(
        `an MCP server's name may not be digits only (JavaScript would put it before the other servers, not where it is written); rename the server, e.g. "s${name}"`,
      );
      expect(digitsOnlyNameProblem(name, SUB_AGENT_ENTRY)).toBe(
        `a sub-agent's name may not be digits only (JavaScript would put it before the other agents, not where it is written); rename the agent, e.g. "a${name}"`,
      );
    },
  );

  it.each(["", "-1", "1.5", "1e3", "1a", "a1", "1_0", " 1", "1\n", "\u00001", "١٢"])(
    "takes %j (not ASCII digits only: an object keeps it in place, or another rule refuses it)",
    (name) => {
      expect(digitsOnlyNameProblem(name, SUB_AGENT_ENTRY)).toBeUndefined();
    },
  );

  it("cuts the suggestion to the longest name allowed", () => {
    expect(digitsOnlyNameProblem("9".repeat(64), SUB_AGENT_ENTRY)).toContain(`e.g. "a${"9".repeat(63)}"`);
    expect(digitsOnlyNameProblem("9".repeat(100), MCP_SERVER_ENTRY)).toContain(`e.g. "s${"9".repeat(100)}"`);
  });
});
