import { describe, expect, it } from "vitest";
import type { Frame } from "../frames/frame.js";
import { HumanRenderer, usageText } from "./render-human.js";
import { mcpEventLine, observeApart, RunView } from "./run-view.js";
import { stylesFor } from "./terminal.js";

const plain = stylesFor({ write: () => {} }, {});
const delta = (text: string, seq: number) =>
  ({
    type: "output_text_delta",
    run_id: "r",
    seq,
    ts: 0,
    turn: 0,
    item_id: "m",
    output_index: 0,
    content_index: 0,
    delta: text,
  }) as unknown as Frame;

describe("RunView", () => {
  it("holds frames and notices while paused and shows them in order on resume", () => {
    const shown: string[] = [];
    const view = new RunView(
      (f) => shown.push(`frame ${f.seq}`),
      (line) => shown.push(line),
    );
    view.render(delta("a", 0));
    view.pause();
    view.render(delta("b", 1));
    view.say("notice");
    view.render(delta("c", 2));
    expect(shown).toEqual(["frame 0"]);
    view.resume();
    expect(shown).toEqual(["frame 0", "frame 1", "notice", "frame 2"]);
    view.render(delta("d", 3));
    expect(shown.at(-1)).toBe("frame 3");
  });

  it("human: a prompt gets a line of its own (the answer's line is ended first on a shared terminal)", () => {
    let out = "";
    let err = "";
    const renderer = new HumanRenderer({
      stdout: { write: (t: string) => (out += t), isTTY: true },
      stderr: { write: (t: string) => (err += t), isTTY: true },
      styles: plain,
      now: () => 0,
    });
    const view = RunView.human(renderer, { write: (t: string) => (err += t) }, plain);
    view.render(delta("partial answer", 0));
    view.render({
      type: "approval_requested",
      run_id: "r",
      seq: 1,
      ts: 0,
      turn: 0,
      call_id: "c",
      name: "shell",
      arguments: "{}",
    } as Frame);
    expect(out).toBe("partial answer\n");
    view.say("⚙ a notice");
    expect(err).toBe("⚙ a notice\n");
  });
});

describe("a view that throws stops alone (docs/pitfalls.md #95)", () => {
  const line = (what: string, type: string, why: string) =>
    `eddy: ${what} stopped at a ${type} frame (${why}); the run goes on without it: what it records and its exit code are unaffected\n`;

  it("says so once on stderr, renders nothing more, sends its notices to stderr; renderAgain renders again", () => {
    let err = "";
    const shown: string[] = [];
    const view = new RunView(
      (f) => {
        if (f.seq === 1) throw new Error("boom\n    at render (x.ts:1:1)");
        shown.push(`frame ${f.seq}`);
      },
      (l) => shown.push(`notice ${l}`),
      { what: "the terminal view", stderr: { write: (t: string) => (err += t) }, styles: plain },
    );
    view.render(delta("a", 0));
    expect(() => view.render(delta("b", 1))).not.toThrow();
    view.render(delta("c", 2));
    view.say("a notice");
    expect(shown).toEqual(["frame 0"]);
    expect(err).toBe(`${line("the terminal view", "output_text_delta", "boom")}a notice\n`);
    view.renderAgain();
    view.render(delta("d", 3));
    expect(shown).toEqual(["frame 0", "frame 3"]);
  });

  it("a failure while held (an approval prompt open) is said when the view resumes", () => {
    let err = "";
    const view = new RunView(
      () => {
        throw new Error("late");
      },
      () => {},
      { what: "the terminal view", stderr: { write: (t: string) => (err += t) }, styles: plain },
    );
    view.pause();
    view.render(delta("a", 0));
    expect(err).toBe("");
    view.resume();
    expect(err).toBe(line("the terminal view", "output_text_delta", "late"));
  });

  it("human: the spinner a failed view left going is stopped", () => {
    let err = "";
    let out = 0;
    const renderer = new HumanRenderer({
      stdout: {
        write: () => {
          out++;
          throw new Error("EPIPE");
        },
      },
      stderr: { write: (t: string) => (err += t), isTTY: true },
      styles: plain,
      now: () => 0,
    });
    const view = RunView.human(renderer, { write: (t: string) => (err += t) }, plain);
    const started = { run_id: "r", ts: 0, turn: 0, call_id: "c", name: "shell" };
    view.render({ ...started, seq: 0, type: "tool_started" } as Frame);
    expect(err).toContain("shell");
    view.render(delta("answer", 1));
    expect(out).toBe(1);
    // The spinner's line was cleared, and the failure said.
    expect(err).toContain("\r\x1b[2K");
    expect(err.endsWith(line("the terminal view", "output_text_delta", "EPIPE"))).toBe(true);
  });

  it("an exception's message reaches the terminal as one inert line, cut, whatever the thrown value", () => {
    let err = "";
    const stderr = { write: (t: string) => (err += t) };
    const thrown: unknown[] = [
      new Error(`\u001b]0;pwned\u0007title ${"x".repeat(10_000)}`),
      JSON.parse('{"toString": 1}'),
      undefined,
    ];
    for (const value of thrown) {
      err = "";
      const observe = observeApart(
        "tracing (--otel)",
        () => {
          throw value;
        },
        stderr,
        plain,
      );
      observe(delta("a", 0));
      observe(delta("b", 1));
      expect(err.split("\n")).toHaveLength(2);
      expect(err.length).toBeLessThan(600);
      expect(err).toMatch(/^eddy: tracing \(--otel\) stopped at a output_text_delta frame \(/);
      expect(err).not.toContain("\u001b");
      expect(err).not.toContain("\u0007");
    }
  });

  it("observeApart: a stderr that throws as well is left alone", () => {
    const observe = observeApart(
      "saving generated images",
      () => {
        throw new Error("x");
      },
      {
        write: () => {
          throw new Error("stderr gone");
        },
      },
      plain,
    );
    expect(() => observe(delta("a", 0))).not.toThrow();
  });
});

describe("mcpEventLine", () => {
  it.each([
    [
      { type: "server_ready", server: "fs", tools: 3, message: 'MCP server "fs" is ready (3 tools)' },
      '⚙ MCP server "fs" is ready (3 tools)',
    ],
    [
      { type: "server_failed", server: "fs", message: 'MCP server "fs" failed to start: boom' },
      'eddy: MCP server "fs" failed to start: boom',
    ],
    [
      { type: "server_exited", server: "fs", message: 'MCP server "fs" exited with code 3' },
      'eddy: MCP server "fs" exited with code 3',
    ],
    [
      { type: "tools_changed", server: "fs", tools: 4, message: 'MCP server "fs" changed its tools (4 now)' },
      '⚙ MCP server "fs" changed its tools (4 now)',
    ],
    [{ type: "warning", server: "fs", message: "odd schema" }, "⚠ odd schema"],
  ] as const)("%o", (event, line) => {
    expect(mcpEventLine(event, plain)).toBe(line);
  });
});

describe("the summary line's token counts", () => {
  const usage = (input: number, output: number) =>
    ({
      input_tokens: input,
      output_tokens: output,
      total_tokens: input + output,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens_details: { reasoning_tokens: 0 },
    }) as const;

  it("says unknown when no turn reported usage, marks estimates and unreported turns", () => {
    expect(usageText(usage(0, 0), { reported: 0, unreported: 2, estimated: 0 })).toBe("tokens unknown");
    expect(usageText(usage(0, 0), { reported: 0, unreported: 0, estimated: 0 })).toBe("tokens unknown");
    expect(usageText(usage(1200, 5), { reported: 1, unreported: 0, estimated: 0 })).toBe(
      "1,200 in / 5 out tokens",
    );
    expect(usageText(usage(10, 5), { reported: 0, unreported: 0, estimated: 1 })).toBe(
      "~10 in / ~5 out tokens (estimated)",
    );
    expect(usageText(usage(10, 5), { reported: 1, unreported: 1, estimated: 0 })).toBe(
      "10 in / 5 out tokens (1 turn unreported)",
    );
  });

  it("a run whose server sent no usage ends with 'tokens unknown', not '0 in / 0 out'", () => {
    let err = "";
    const renderer = new HumanRenderer({
      stdout: { write: () => true },
      stderr: { write: (t: string) => (err += t) },
      styles: plain,
      now: () => 0,
    });
    const envelope = { run_id: "r", ts: 0 };
    renderer.onFrame({
      ...envelope,
      seq: 0,
      type: "turn_ended",
      turn: 0,
      response_id: "x",
      status: "completed",
      usage: null,
    } as Frame);
    renderer.onFrame({
      ...envelope,
      seq: 1,
      type: "run_ended",
      reason: "completed",
      output_text: "hi",
      response_id: "x",
      usage: usage(0, 0),
      turns: 1,
      tool_calls: 0,
    } as unknown as Frame);
    expect(err).toContain("tokens unknown");
    expect(err).not.toContain("0 in / 0 out");
  });
});

describe("RunView.json", () => {
  const ended = (fields: Record<string, unknown>) =>
    ({
      type: "run_ended",
      run_id: "r",
      seq: 1,
      ts: 0,
      turns: 1,
      tool_calls: 0,
      ...fields,
    }) as unknown as Frame;

  it("writes frames only on stdout; a run that ended with an error also says so on stderr, once", () => {
    let out = "";
    let err = "";
    const view = RunView.json(
      { write: (t: string) => (out += t) },
      { write: (t: string) => (err += t) },
      plain,
    );
    view.render(delta("a", 0));
    view.render(
      ended({ reason: "provider_error", error: { code: "not_event_stream", message: "got text/html" } }),
    );
    expect(
      out
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l).type),
    ).toEqual(["output_text_delta", "run_ended"]);
    expect(err).toBe("eddy: provider_error: got text/html\n");
  });

  it("says nothing on stderr for a run that completed", () => {
    let err = "";
    const view = RunView.json({ write: () => {} }, { write: (t: string) => (err += t) }, plain);
    view.render(ended({ reason: "completed" }));
    expect(err).toBe("");
  });
});
