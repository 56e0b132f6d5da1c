import { describe, expect, it } from "vitest";
import { type Frame, type FrameOf, frame } from "../frames/frame.js";
import { HumanRenderer } from "./render-human.js";
import { stylesFor } from "./terminal.js";

const ESC = "\u001b";
const HOSTILE = `x${ESC}]0;pwned\u0007${ESC}[2J${ESC}]52;c;Y3VybA==\u0007\u009b2J`;
// biome-ignore lint/suspicious/noControlCharactersInRegex: what must never reach a terminal
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

function renderer(options: { stdoutTty?: boolean } = {}) {
  const out = { stdout: "", stderr: "" };
  const r = new HumanRenderer({
    stdout: { write: (t: string) => (out.stdout += t), isTTY: options.stdoutTty === true },
    stderr: { write: (t: string) => (out.stderr += t), isTTY: false },
    styles: stylesFor({ write: () => true }, {}),
    now: () => 0,
  });
  const render = (frames: Frame[]) => {
    for (const f of frames) r.onFrame(f);
  };
  return { out, render };
}

function toolFrames(callId: string, name: string, args: string, output: object, ok = false): Frame[] {
  return [
    frame("tool_call", {
      turn: 0,
      call_id: callId,
      item_id: `fc_${callId}`,
      name,
      arguments: args,
      output_index: 0,
    }),
    frame("tool_started", { turn: 0, call_id: callId, name }),
    frame("tool_ended", {
      turn: 0,
      call_id: callId,
      name,
      ok,
      output: JSON.stringify(output),
      duration_ms: 1,
    }),
  ];
}

const runEnded = (extra: Partial<FrameOf<"run_ended">> = {}): Frame =>
  frame("run_ended", {
    reason: "completed",
    output_text: "",
    response_id: null,
    usage: { input_tokens: 1, output_tokens: 1 } as never,
    turns: 1,
    tool_calls: 0,
    ...extra,
  });

const delta = (text: string): Frame =>
  frame("output_text_delta", { turn: 0, item_id: "msg_1", output_index: 0, content_index: 0, delta: text });

describe("the human view shows what the provider sends, never lets the terminal obey it", () => {
  it("a hostile tool name and error in the → and ✗ lines, and a hostile error message", () => {
    const { out, render } = renderer();
    render([
      ...toolFrames("c1", HOSTILE, `{"a":"${ESC}[2J"}`, {
        ok: false,
        error: { code: "unknown_tool", message: `Unknown tool ${HOSTILE}` },
      }),
      runEnded({ reason: "failed", error: { code: "x", message: `failed: ${HOSTILE}` } }),
    ]);
    expect(out.stderr).toContain("→ x");
    expect(out.stderr).toContain("✗ x");
    expect(out.stderr).toContain("Unknown tool x");
    expect(out.stderr).not.toMatch(CONTROL);
  });

  it("on a terminal the answer is stripped too (also a sequence split across deltas); piped, it is passed on byte for byte", () => {
    const tty = renderer({ stdoutTty: true });
    tty.render([delta(`Hello ${HOSTILE}\n`), runEnded()]);
    expect(tty.out.stdout).toBe("Hello x\n");
    const pieces = renderer({ stdoutTty: true });
    const text = `Hello ${HOSTILE} bye\n`;
    pieces.render([...(text.match(/.{1,3}/gsu) ?? []).map(delta), runEnded()]);
    expect(pieces.out.stdout).toBe("Hello x bye\n");
    const piped = renderer({ stdoutTty: false });
    piped.render([delta(`Hello ${HOSTILE}\n`), runEnded()]);
    expect(piped.out.stdout).toBe(`Hello ${HOSTILE}\n`);
  });

  it("reasoning summaries from reasoning_delta frames, each part on its own line, stripped", () => {
    const { out, render } = renderer();
    const reasoning = (index: number, text: string): Frame =>
      frame("reasoning_delta", {
        turn: 0,
        item_id: "rs_1",
        output_index: 0,
        channel: "summary",
        index,
        delta: text,
      });
    render([
      reasoning(0, "Look "),
      reasoning(0, `first${ESC}[2J.`),
      reasoning(1, "Then act."),
      frame("reasoning_delta", {
        turn: 0,
        item_id: "rs_1",
        output_index: 0,
        channel: "text",
        index: 0,
        delta: "raw",
      }),
      frame("item_done", { turn: 0, output_index: 0, item: { type: "reasoning", id: "rs_1", summary: [] } }),
      runEnded(),
    ]);
    expect(out.stderr.split("\n").slice(0, 2)).toEqual(["thinking: Look first.", "thinking: Then act."]);
    expect(out.stderr).not.toContain("raw");
  });
});

describe("calls beyond the tool-call budget", () => {
  const refused = (i: number) =>
    toolFrames(`c${i}`, "read_file", '{"path":"a"}', {
      tool: "read_file",
      ok: false,
      error: {
        code: "max_tool_calls",
        message: "The run's tool-call budget (32) is spent; this call did not run.",
      },
    });

  it("are counted on one line, not listed one by one", () => {
    const { out, render } = renderer();
    const frames: Frame[] = [...toolFrames("ok", "read_file", '{"path":"b"}', { ok: true }, true)];
    for (let i = 0; i < 80_000; i++) frames.push(...refused(i));
    frames.push(
      frame("turn_ended", { turn: 0, response_id: null, status: "completed", usage: null }),
      runEnded({ reason: "max_tool_calls", error: { code: "max_tool_calls", message: "budget spent" } }),
    );
    render(frames);
    const lines = out.stderr.trimEnd().split("\n");
    expect(lines.length).toBeLessThan(10);
    expect(out.stderr).toContain("✓ read_file");
    // The first refusal says why; the rest are one count.
    expect(out.stderr).toContain("tool-call budget (32) is spent");
    expect(out.stderr).toContain("✗ 79,999 more calls not run: the run's tool-call budget is spent");
  });

  it("a call after the budget that is not refused still gets its lines", () => {
    const { out, render } = renderer();
    render([
      ...refused(1),
      ...refused(2),
      ...toolFrames("late", "grep", "{}", {
        ok: false,
        error: { code: "invalid_arguments", message: "bad" },
      }),
      runEnded(),
    ]);
    expect(out.stderr).toContain("✗ 1 more call not run");
    expect(out.stderr).toContain("→ grep {}");
    expect(out.stderr).toContain("✗ grep");
  });
});

describe("long names and arguments on stderr", () => {
  it("a 100 KB tool name and 10 MB of arguments are shown cut, each line short", () => {
    const { out, render } = renderer();
    const name = `n${"a".repeat(100_000)}`;
    render(
      toolFrames("c1", name, `{"path":"${"b".repeat(10_000_000)}"}`, { error: { code: "x", message: "no" } }),
    );
    const lines = out.stderr.split("\n").filter((l) => l !== "");
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line.length).toBeLessThan(400);
    expect(out.stderr).toContain(`n${"a".repeat(78)}…`);
    expect(out.stderr).toContain('{"path":"bbb');
  });
});

describe("the answer's final text against what streamed", () => {
  const done = (text: string, index = 0): Frame =>
    frame("item_done", {
      turn: 0,
      output_index: index,
      item: {
        type: "message",
        id: "msg_1",
        role: "assistant",
        status: "completed",
        content: [{ type: "output_text", text, annotations: [] }],
      },
    });

  it("a message that streamed no delta is shown from its final text", () => {
    const { out, render } = renderer();
    render([done("hello world"), runEnded({ output_text: "hello world" })]);
    expect(out.stdout).toBe("hello world\n");
  });

  it("a message shown as it streamed is not shown again", () => {
    const { out, render } = renderer();
    render([delta("hello "), delta("world"), done("hello world"), runEnded({ output_text: "hello world" })]);
    expect(out.stdout).toBe("hello world\n");
    expect(out.stderr).not.toContain("differs");
  });

  it("a final text that differs from the deltas is said on stderr, with the final text", () => {
    const { out, render } = renderer();
    render([delta("hello world"), done("DIFFERENT"), runEnded({ output_text: "DIFFERENT" })]);
    expect(out.stdout).toBe("hello world\n");
    expect(out.stderr).toContain("the provider's final answer differs from the text it streamed");
    expect(out.stderr).toContain("DIFFERENT");
  });

  it("on a terminal the final text is shown safe too", () => {
    const { out, render } = renderer({ stdoutTty: true });
    render([done(HOSTILE), runEnded()]);
    expect(out.stdout).not.toMatch(CONTROL);
    expect(out.stdout).toContain("x");
  });
});

describe("an answer that leaves a control string open", () => {
  it("does not swallow the next turn's answer (eddy chat shows many turns)", () => {
    const { out, render } = renderer({ stdoutTty: true });
    const turnEnded = (turn: number) =>
      frame("turn_ended", { turn, response_id: "r", status: "completed", usage: null });
    render([delta("Your name is A\u001b]52."), turnEnded(0)]);
    render([
      frame("output_text_delta", {
        turn: 1,
        item_id: "msg_2",
        output_index: 0,
        content_index: 0,
        delta: "Hello again",
      }),
    ]);
    expect(out.stdout).toContain("Your name is A");
    expect(out.stdout).toContain("Hello again");
    expect(out.stdout).not.toMatch(CONTROL);
  });
});

describe("the context note", () => {
  const compiled = (runs: number, left?: number): Frame =>
    frame("context_compiled", {
      bundle_id: "b",
      strategy: "recent_messages_v1",
      item_count: runs * 2,
      token_estimate: 10,
      tokenizer: "estimate",
      runs,
      thread: "big1",
      ...(left === undefined ? {} : { runs_left_out: left }),
    });

  it("says runs left out over the budget (it said no earlier runs)", () => {
    const { out, render } = renderer();
    render([compiled(0, 1)]);
    expect(out.stderr).toContain(
      "↺ thread big1: no earlier runs; 1 older run left out (over the context budget)",
    );
    const two = renderer();
    two.render([compiled(1, 2)]);
    expect(two.out.stderr).toContain(
      "1 earlier run of thread big1 (2 items, ~10 tokens); 2 older runs left out",
    );
    const none = renderer();
    none.render([compiled(0)]);
    expect(none.out.stderr).toContain("↺ thread big1: no earlier runs\n");
  });
});

describe("a surrogate pair split across two deltas (found by a probe: piped, the answer got two U+FFFD)", () => {
  const delta = (text: string) =>
    frame("output_text_delta", { turn: 0, item_id: "msg_1", output_index: 0, content_index: 0, delta: text });
  const wellFormed = (text: string) =>
    !/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text);

  it("each write to stdout is whole text; the answer is byte for byte", () => {
    for (const tty of [false, true]) {
      const writes: string[] = [];
      const r = new HumanRenderer({
        stdout: { write: (t: string) => writes.push(t), isTTY: tty },
        stderr: { write: () => true, isTTY: false },
        styles: stylesFor({ write: () => true }, {}),
        now: () => 0,
      });
      for (const f of [delta("a\ud83d"), delta("\ude00b"), runEnded()]) r.onFrame(f);
      expect(writes.every(wellFormed)).toBe(true);
      expect(writes.join("")).toBe("a\ud83d\ude00b\n");
    }
  });

  it("a half whose other half never comes is still written when the run ends", () => {
    const { out, render } = renderer();
    render([delta("a\ud83d"), runEnded()]);
    expect(out.stdout).toBe("a\ud83d\n");
  });
});
