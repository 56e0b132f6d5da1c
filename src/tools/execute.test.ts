import { afterEach, describe, expect, it, vi } from "vitest";
import { EddyError } from "../errors.js";
import { TOOL_DEFAULTS } from "./defaults.js";
import {
  executeToolCall,
  redactSecrets,
  refusedToolOutput,
  secretValuesFromEnv,
  TOOL_EXIT_CODES,
} from "./execute.js";
import type { ToolOutput } from "./output.js";
import { createToolRegistry } from "./registry.js";
import { type ToolContext, type ToolDefinition, toolResult } from "./tool.js";

const open = { type: "object", properties: {}, additionalProperties: true };
const def = (
  name: string,
  execute: ToolDefinition["execute"],
  extra: Partial<ToolDefinition> = {},
): ToolDefinition => ({
  name,
  description: name,
  parameters: open,
  execute,
  ...extra,
});

function waitForAbort(ctx: ToolContext): Promise<never> {
  return new Promise((_, reject) => ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason)));
}

async function call(
  tools: ToolDefinition[],
  name: string,
  args = "{}",
  options: {
    signal?: AbortSignal;
    timeoutMs?: number;
    outputCapBytes?: number;
    redact?: string[];
    secrets?: string[];
  } = {},
) {
  const { secrets, ...execOptions } = options;
  const registry = createToolRegistry(tools, {
    disabled: [{ name: "shell", aliases: ["bash"], reason: "run with --allow-shell to enable it" }],
    ...(secrets === undefined ? {} : { secrets }),
  });
  const result = await executeToolCall(
    registry,
    { callId: "call_1", name, arguments: args },
    { workspace: "/tmp", ...execOptions },
  );
  return { ...result, parsed: JSON.parse(result.output) as ToolOutput };
}

afterEach(() => {
  vi.unstubAllEnvs();
});

describe("executeToolCall: refusals before running", () => {
  it("answers an unknown tool with the available tools (docs/pitfalls.md S32, #47)", async () => {
    const r = await call([def("read_file", () => ""), def("grep", () => "")], "search_web");
    expect(r.ok).toBe(false);
    expect(r.exitCode).toBe(127);
    expect(r.parsed).toEqual({
      tool: "search_web",
      ok: false,
      exit_code: 127,
      stdout: "",
      stderr: "",
      error: {
        code: "tool_not_found",
        message: 'Unknown tool "search_web". Available tools: read_file, grep.',
      },
    });
  });

  it("suggests the tool a near-miss name meant", async () => {
    const r = await call([def("read_file", () => "")], "Read-File");
    expect(r.error?.message).toMatch(/Did you mean "read_file"\?/);
  });

  it("refuses a disabled tool (or its alias) with the way to enable it", async () => {
    const r = await call([def("read_file", () => "")], "bash", '{"command":"ls"}');
    expect(r.parsed.tool).toBe("shell");
    expect(r.error).toEqual({
      code: "tool_disabled",
      message: "shell is disabled: run with --allow-shell to enable it.",
    });
    expect(r.exitCode).toBe(126);
  });

  it("never runs a tool whose arguments are invalid", async () => {
    const execute = vi.fn(() => "ran");
    const strictTool = def("t", execute, {
      parameters: { type: "object", properties: { a: { type: "string" } }, required: ["a"] },
    });
    for (const raw of ["", "null", "[]", '{"a":1}', '{"a":"x",}', '{"a":"x']) {
      const r = await call([strictTool], "t", raw);
      expect(r.ok).toBe(false);
      expect(r.exitCode).toBe(2);
      expect(r.error?.code).toBe("tool_input_invalid");
    }
    expect(execute).not.toHaveBeenCalled();
  });

  it("does not start a tool when the run is already cancelled", async () => {
    const execute = vi.fn(() => "ran");
    const r = await call([def("t", execute)], "t", "{}", { signal: AbortSignal.abort() });
    expect(r.error?.code).toBe("cancelled");
    expect(r.exitCode).toBe(130);
    expect(execute).not.toHaveBeenCalled();
  });
});

describe("executeToolCall: what a tool returns", () => {
  it.each<[string, unknown, Partial<ToolOutput>]>([
    ["a string → stdout", "hello", { ok: true, exit_code: 0, stdout: "hello" }],
    ["undefined → empty", undefined, { ok: true, stdout: "" }],
    ["an object → JSON in stdout", { b: 1, a: [2] }, { ok: true, stdout: '{"b":1,"a":[2]}' }],
    ["a number → JSON in stdout", 42, { ok: true, stdout: "42" }],
    [
      "a ToolResult → as is",
      toolResult({
        ok: false,
        exitCode: 3,
        stdout: "o",
        stderr: "e",
        artifacts: { n: 1 },
        error: { code: "custom", message: "m" },
      }),
      {
        ok: false,
        exit_code: 3,
        stdout: "o",
        stderr: "e",
        artifacts: { n: 1 },
        error: { code: "custom", message: "m" },
      },
    ],
    [
      "a plain object shaped like a result → just JSON",
      { ok: false, stdout: "x" },
      { ok: true, stdout: '{"ok":false,"stdout":"x"}' },
    ],
  ])("%s", async (_label, value, expected) => {
    const r = await call([def("t", () => value)], "t");
    expect(r.parsed).toMatchObject({ tool: "t", ...expected });
  });

  it("passes arguments and context to the tool", async () => {
    const seen: unknown[] = [];
    await call(
      [def("t", (args, ctx) => seen.push(args, ctx.callId, ctx.workspace, ctx.signal.aborted))],
      "t",
      '{"x":1}',
    );
    expect(seen).toEqual([{ x: 1 }, "call_1", "/tmp", false]);
  });

  it("reports the canonical name for an alias", async () => {
    const r = await call([def("shell2", () => "ok", { aliases: ["sh"] })], "sh");
    expect(r.tool).toBe("shell2");
    expect(r.parsed.tool).toBe("shell2");
  });

  it("turns a value that cannot be JSON-encoded into tool_failed", async () => {
    const r = await call([def("t", () => ({ n: 1n }))], "t");
    expect(r.error?.code).toBe("tool_failed");
    expect(r.error?.message).toMatch(/cannot be JSON-encoded/);
  });

  it("is deterministic: nothing run-specific in the output", async () => {
    const a = await call([def("t", () => "same")], "t");
    const b = await call([def("t", () => "same")], "t");
    expect(a.output).toBe(b.output);
    expect(a.output).not.toMatch(/call_1|duration/);
    expect(a.durationMs).toBeGreaterThanOrEqual(0);
  });

  it("caps a large output, keeps the full one aside and uses the tool's hint", async () => {
    const r = await call([def("t", () => "x".repeat(200_000), { truncationHint: "try less" })], "t", "{}", {
      outputCapBytes: 8192,
    });
    expect(r.truncated).toBe(true);
    expect(Buffer.byteLength(r.output)).toBeLessThanOrEqual(8192);
    expect(r.parsed.stdout).toContain("try less");
    expect(JSON.parse(r.fullOutput ?? "").stdout).toHaveLength(200_000);
  });
});

describe("executeToolCall: failures while running (docs/pitfalls.md S34, #48)", () => {
  it("a thrown error becomes a short message: first line, no stack, no env, secrets redacted", async () => {
    vi.stubEnv("ACME_API_KEY", "sk-live-0123456789abcdef");
    const tool = def("t", () => {
      const error = new Error(
        "auth failed for key sk-live-0123456789abcdef\n    at secretFrame (/home/x.js:1:1)",
      );
      (error as Error & { cause: unknown }).cause = { env: { ...process.env } };
      throw error;
    });
    const r = await call([tool], "t", "{}", { secrets: secretValuesFromEnv(process.env) });
    expect(r.exitCode).toBe(1);
    expect(r.error).toEqual({ code: "tool_failed", message: "t failed: auth failed for key [redacted]" });
    expect(r.output).not.toContain("sk-live");
    expect(r.output).not.toContain("secretFrame");
    expect(r.output).not.toContain(process.env.PATH ?? "unlikely");
  });

  it("masks the registry's secrets by default, the call's own redact list when given, nothing else", async () => {
    const tool = def("t", () =>
      Promise.reject(new Error("keys sk-registry-0123456789 and sk-call-0123456789")),
    );
    const secrets = ["sk-registry-0123456789"];
    expect((await call([tool], "t", "{}", { secrets })).error?.message).toBe(
      "t failed: keys [redacted] and sk-call-0123456789",
    );
    expect((await call([tool], "t", "{}", { secrets, redact: ["sk-call-0123456789"] })).error?.message).toBe(
      "t failed: keys sk-registry-0123456789 and [redacted]",
    );
    // Nothing is read from the process environment.
    vi.stubEnv("ACME_API_KEY", "sk-registry-0123456789");
    expect((await call([tool], "t")).error?.message).toBe(
      "t failed: keys sk-registry-0123456789 and sk-call-0123456789",
    );
  });

  it("bounds a long error message", async () => {
    const r = await call([def("t", () => Promise.reject(new Error("e".repeat(10_000))))], "t");
    expect(r.error?.message.length).toBeLessThan(600);
  });

  it("keeps the code of an EddyError", async () => {
    const r = await call(
      [def("t", () => Promise.reject(new EddyError("path_outside_workspace", "t: refused ../x")))],
      "t",
    );
    expect(r.error).toEqual({ code: "path_outside_workspace", message: "t: refused ../x" });
    expect(r.exitCode).toBe(1);
  });

  it("accepts a thrown non-Error", async () => {
    const r = await call([def("t", () => Promise.reject("plain string\nsecond line"))], "t");
    expect(r.error?.message).toBe("t failed: plain string");
  });

  it("times out: aborts the tool's signal, exit 124", async () => {
    let toolSignal: AbortSignal | undefined;
    const tool = def(
      "slow",
      (_args, ctx) => {
        toolSignal = ctx.signal;
        return waitForAbort(ctx);
      },
      { timeoutMs: 30 },
    );
    const r = await call([tool], "slow");
    expect(r.error).toEqual({
      code: "tool_timeout",
      message: "slow did not finish within 30 ms and was stopped.",
    });
    expect(r.exitCode).toBe(124);
    expect(toolSignal?.aborted).toBe(true);
  });

  it("times out even a tool that ignores its signal", async () => {
    const r = await call([def("stuck", () => new Promise(() => {}))], "stuck", "{}", { timeoutMs: 30 });
    expect(r.error?.code).toBe("tool_timeout");
  });

  it("applies TOOL_DEFAULTS.timeoutMs to a tool without a timeout when the run sets none", async () => {
    vi.useFakeTimers();
    try {
      const pending = call([def("stuck", () => new Promise(() => {}))], "stuck");
      await vi.advanceTimersByTimeAsync(TOOL_DEFAULTS.timeoutMs - 1);
      let settled = false;
      void pending.then(() => {
        settled = true;
      });
      await vi.advanceTimersByTimeAsync(0);
      expect(settled).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      const r = await pending;
      expect(r.error).toEqual({
        code: "tool_timeout",
        message: `stuck did not finish within ${TOOL_DEFAULTS.timeoutMs} ms and was stopped.`,
      });
    } finally {
      vi.useRealTimers();
    }
  });

  it("prefers the tool's own timeout over the run default", async () => {
    const tool = def("t", (_a, ctx) => waitForAbort(ctx), { timeoutMs: 20 });
    const r = await call([tool], "t", "{}", { timeoutMs: 60_000 });
    expect(r.error?.message).toMatch(/within 20 ms/);
  });

  it("cancellation: the tool is told through its signal and the call still gets an output", async () => {
    const controller = new AbortController();
    let toolSignal: AbortSignal | undefined;
    const tool = def("t", (_args, ctx) => {
      toolSignal = ctx.signal;
      setTimeout(() => controller.abort(), 10);
      return waitForAbort(ctx);
    });
    const r = await call([tool], "t", "{}", { signal: controller.signal });
    expect(r.ok).toBe(false);
    expect(r.exitCode).toBe(130);
    expect(r.error?.code).toBe("cancelled");
    expect(toolSignal?.aborted).toBe(true);
  });
});

describe("the tool's signal and a tool that returns at once", () => {
  it("a signal read only after a timeout is already aborted, with the timeout as its reason", async () => {
    let context: ToolContext | undefined;
    const tool = def(
      "late",
      (_args, ctx) => {
        context = ctx; // the signal is not read while the call runs
        return new Promise(() => {});
      },
      { timeoutMs: 20 },
    );
    const r = await call([tool], "late");
    expect(r.error?.code).toBe("tool_timeout");
    expect(context?.signal.aborted).toBe(true);
    expect((context?.signal.reason as EddyError | undefined)?.code).toBe("tool_timeout");
  });

  it("a signal read after the run was cancelled is aborted, with the cancellation as its reason", async () => {
    const controller = new AbortController();
    let context: ToolContext | undefined;
    const tool = def("t", (_args, ctx) => {
      context = ctx;
      setTimeout(() => controller.abort(), 5);
      return new Promise(() => {});
    });
    const r = await call([tool], "t", "{}", { signal: controller.signal });
    expect(r.error?.code).toBe("cancelled");
    expect((context?.signal.reason as EddyError | undefined)?.code).toBe("cancelled");
  });

  it("one signal per call, the same object however often it is read", async () => {
    const seen: AbortSignal[] = [];
    const r = await call(
      [def("t", (_a, ctx) => void seen.push(ctx.signal, ctx.signal, { ...ctx }.signal))],
      "t",
    );
    expect(r.ok).toBe(true);
    expect(seen[0]).toBeInstanceOf(AbortSignal);
    expect(new Set(seen).size).toBe(1);
    expect(seen[0]?.aborted).toBe(false);
  });

  it("a tool that returns or throws without a promise is answered as one that resolves or rejects", async () => {
    const returned = await call([def("t", () => ({ answer: 42 }))], "t");
    expect(returned.parsed.stdout).toBe('{"answer":42}');
    const thrown = await call(
      [
        def("t", () => {
          throw new Error("sync failure");
        }),
      ],
      "t",
    );
    expect(thrown.error?.message).toBe("t failed: sync failure");
  });

  it("a tool that cancels the run while it runs, without a promise, ends cancelled", async () => {
    const controller = new AbortController();
    const r = await call(
      [
        def("t", () => {
          controller.abort();
          return "done anyway";
        }),
      ],
      "t",
      "{}",
      { signal: controller.signal },
    );
    expect(r.error?.code).toBe("cancelled");
  });

  it("a thenable that is not a Promise is awaited", async () => {
    // biome-ignore lint/suspicious/noThenProperty: a thenable that is not a Promise is what is tested
    const thenable = { then: (resolve: (v: string) => void) => setTimeout(() => resolve("later"), 5) };
    const r = await call([def("t", () => thenable as unknown as Promise<string>)], "t");
    expect(r.parsed.stdout).toBe("later");
  });
});

describe("terminal tools", () => {
  const params = { type: "object", properties: { decision: { type: "string" } }, required: ["decision"] };

  it("without execute: the validated arguments are the result", async () => {
    const r = await call(
      [{ name: "submit", description: "", parameters: params, terminal: true }],
      "submit",
      '{"decision":"yes"}',
    );
    expect(r.ok).toBe(true);
    expect(r.terminalResult).toEqual({ decision: "yes" });
  });

  it("with execute: only a successful run yields the result", async () => {
    const ok = await call(
      [def("submit", () => "saved", { parameters: params, terminal: true })],
      "submit",
      '{"decision":"a"}',
    );
    expect(ok.terminalResult).toEqual({ decision: "a" });
    const failed = await call(
      [def("submit", () => Promise.reject(new Error("no")), { parameters: params, terminal: true })],
      "submit",
      '{"decision":"a"}',
    );
    expect(failed.terminalResult).toBeUndefined();
  });

  it("invalid arguments to a terminal tool end nothing", async () => {
    const r = await call(
      [{ name: "submit", description: "", parameters: params, terminal: true }],
      "submit",
      "{}",
    );
    expect(r.ok).toBe(false);
    expect(r.terminalResult).toBeUndefined();
  });
});

describe("refusedToolOutput", () => {
  it.each<[string, number]>([
    ["tool_not_allowed", 126],
    ["max_tool_calls", 126],
    ["tool_not_found", 127],
    ["cancelled", 130],
    ["something_else", 1],
  ])("%s → exit %i, same shape as every failure", (code, exit) => {
    const r = refusedToolOutput("grep", code, "not now");
    expect(r).toMatchObject({
      tool: "grep",
      ok: false,
      truncated: false,
      exitCode: exit,
      error: { code, message: "not now" },
    });
    expect(JSON.parse(r.output)).toEqual({
      tool: "grep",
      ok: false,
      exit_code: exit,
      stdout: "",
      stderr: "",
      error: { code, message: "not now" },
    });
  });

  it("exit codes are documented for every code the layer writes", () => {
    expect(TOOL_EXIT_CODES).toMatchObject({
      tool_input_invalid: 2,
      tool_timeout: 124,
      tool_failed: 1,
      path_outside_workspace: 1,
    });
  });
});

describe("secret redaction helpers", () => {
  it("collects secret-looking env values (long enough), longest first", () => {
    expect(
      secretValuesFromEnv({
        OPENAI_API_KEY: "sk-aaaaaaaaaa",
        GH_TOKEN: "ghp_bbbbbbbbbbbbbb",
        PATH: "/usr/bin:/bin",
        SHORT_KEY: "abc",
      }),
    ).toEqual(["ghp_bbbbbbbbbbbbbb", "sk-aaaaaaaaaa"]);
  });

  it("replaces every occurrence", () => {
    expect(redactSecrets("a SECRET1234 b SECRET1234", ["SECRET1234"])).toBe("a [redacted] b [redacted]");
  });
});
