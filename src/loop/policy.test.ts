import { describe, expect, it } from "vitest";
import { EddyError } from "../errors.js";
import {
  assertPolicy,
  checkHostedTools,
  checkPolicy,
  createPolicy,
  DEFAULT_POLICY,
  type Policy,
} from "./policy.js";

describe("MCP tools are allowed by the server that offers them (checkPolicy)", () => {
  it("a server whose name is not a plain function name allows the tools it is offered under", () => {
    // Server "docs.v2 beta" offers its tools as docs_v2_beta__TOOL (tools/mcp/names.ts).
    const policy = createPolicy({ mcpServers: ["docs.v2 beta"] });
    expect(checkPolicy(["docs_v2_beta__search"], policy)).toEqual([]);
    expect(checkPolicy(["docs_v3_beta__search"], policy).map((p) => p.permission.server)).toEqual([
      "docs_v3_beta",
    ]);
  });
});

const docs = { type: "mcp", server_label: "docs", server_url: "https://docs.example/mcp" };

describe("hosted tools are allowed only as the local invocation declares them (checkHostedTools)", () => {
  const policy = createPolicy({ hostedTools: [{ type: "web_search" }, docs] });

  it("a declared tool passes, whatever the order of its keys", () => {
    expect(checkHostedTools([{ type: "web_search" }], policy)).toEqual([]);
    expect(
      checkHostedTools(
        [{ server_url: "https://docs.example/mcp", type: "mcp", server_label: "docs" }],
        policy,
      ),
    ).toEqual([]);
  });

  it.each([
    ["a tool never declared", { type: "code_interpreter", container: { type: "auto" } }, "code_interpreter"],
    ["the same label at another server", { ...docs, server_url: "https://evil.example/mcp" }, "mcp:docs"],
    ["the declared server without its approvals", { ...docs, require_approval: "never" }, "mcp:docs"],
    ["a declared tool with a field added", { type: "web_search", search_context_size: "high" }, "web_search"],
  ])("%s is refused, named, and the message carries no URL", (_what, tool, name) => {
    const problems = checkHostedTools([tool], policy);
    expect(problems.map((p) => p.tool)).toEqual([name]);
    expect(problems[0]?.permission.permission).toBe("hostedTool");
    expect(problems[0]?.message).not.toContain("example");
  });

  it("the default policy declares none; a policy recorded before hostedTools existed is read as none", () => {
    expect(checkHostedTools([{ type: "web_search" }], DEFAULT_POLICY)).toHaveLength(1);
    const { hostedTools: _, ...old } = policy;
    expect(checkHostedTools([{ type: "web_search" }], old)).toHaveLength(1);
  });

  it("a type named like an Object member gets the generic flag, not the member", () => {
    for (const type of ["constructor", "toString", "__proto__"]) {
      const [problem] = checkHostedTools([{ type }], createPolicy());
      expect(problem?.permission.flag).toBe("--tool NAME[:ARG]");
    }
  });

  it("createPolicy copies the list: changing the caller's array later widens nothing", () => {
    const list = [{ type: "web_search" }];
    const copied = createPolicy({ hostedTools: list });
    list.push(docs);
    expect(checkHostedTools([docs], copied)).toHaveLength(1);
  });

  it("assertPolicy names the hosted tool and the flag that declares it (policy_denied, a user error)", () => {
    let thrown: unknown;
    try {
      assertPolicy([], createPolicy(), "the tape's run", [docs, { type: "web_search" }]);
    } catch (err) {
      thrown = err;
    }
    expect(EddyError.isInstance(thrown) && thrown.code).toBe("policy_denied");
    expect(EddyError.isInstance(thrown) && thrown.fault).toBe("user");
    const message = (thrown as Error).message;
    expect(message).toContain('"mcp:docs"');
    expect(message).toContain("--tool mcp:LABEL=URL");
    expect(message).toContain("--tool web_search");
    expect(message).not.toContain("docs.example");
  });
});

describe("a policy from plain JS or a parsed file grants nothing by a wrong value", () => {
  it("createPolicy refuses wrong types and unknown approval modes, naming the field", () => {
    const bad: [unknown, RegExp][] = [
      [{ approve: "Deny" }, /policy: approve: "Deny" is not an approval mode/],
      [{ approve: "ask " }, /approve: "ask " is not/],
      [{ allowWrite: "false" }, /policy: allowWrite: must be true or false, got "false"/],
      [{ allowShell: 0 }, /allowShell: must be true or false, got 0/],
      [{ sandbox: "yes" }, /sandbox: must be/],
      [{ mcpServers: "fs" }, /mcpServers: must be a list/],
      [{ hostedTools: {} }, /hostedTools: must be a list/],
    ];
    for (const [fields, message] of bad) {
      expect(() => createPolicy(fields as Partial<Policy>)).toThrow(message);
      try {
        createPolicy(fields as Partial<Policy>);
      } catch (err) {
        expect(EddyError.isInstance(err) && err.code).toBe("invalid_argument");
      }
    }
  });

  it("a hand-made policy whose flags are not strictly true allows no writer or shell", () => {
    const loose = { ...DEFAULT_POLICY, allowWrite: "false", allowShell: 1 } as unknown as Policy;
    expect(() => assertPolicy(["write_file", "shell"], loose, "the run")).toThrow(
      /--allow-write and --allow-shell/,
    );
  });
});
