import { describe, expect, it } from "vitest";
import { parseViewTape } from "./read.js";
import { buildRunView } from "./run-model.js";
import type { OutputItemView, ToolCallView } from "./view-data.js";

/** Builds a tape's text from frame payloads: envelope (run_id, contiguous seq, ts) added. */
function tape(
  frames: Array<Record<string, unknown>>,
  options: { header?: boolean; t0?: number } = {},
): string {
  const t0 = options.t0 ?? 1_800_000_000_000;
  const header = {
    type: "tape_header",
    format: 1,
    eddy_version: "0.1.0",
    run_id: "run_t",
    model: "m",
    mode: "chained",
    input: "go",
    tools: ["read_file", "write_file", "apply_patch"],
    limits: { max_tool_calls: 32, max_turns: 20 },
    provider: { name: "acme", capabilities: {} },
    options: {},
    workspace: ".",
  };
  const lines = frames.map((f, seq) =>
    JSON.stringify({ run_id: "run_t", seq, ts: t0 + ((f.at as number) ?? seq), ...f, at: undefined }),
  );
  return `${[...(options.header === false ? [] : [JSON.stringify(header)]), ...lines].join("\n")}\n`;
}

const view = (frames: Array<Record<string, unknown>>, options?: { header?: boolean }) =>
  buildRunView(parseViewTape(tape(frames, options), "test.tape"));

const started = { type: "run_started", model: "m", mode: "chained", input: "go", tools: ["read_file"] };
const ended = (extra: Record<string, unknown> = {}) => ({
  type: "run_ended",
  reason: "completed",
  output_text: "done",
  response_id: "resp_2",
  usage: { input_tokens: 10, output_tokens: 5 },
  turns: 1,
  tool_calls: 0,
  ...extra,
});
const request = (turn: number, attempt = 1, model = "m") => ({
  type: "request_started",
  turn,
  attempt,
  body: { model, input: "go" },
});
const event = (turn: number, data: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  type: "provider_event",
  turn,
  status: "event",
  event_name: data.type,
  data,
  ...extra,
});
const delta = (turn: number, item_id: string, text: string) => ({
  type: "output_text_delta",
  turn,
  item_id,
  output_index: 0,
  content_index: 0,
  delta: text,
});
const turnEnded = (
  turn: number,
  usage: Record<string, unknown> | null = { input_tokens: 1, output_tokens: 1 },
) => ({
  type: "turn_ended",
  turn,
  response_id: `resp_${turn}`,
  status: "completed",
  usage,
});
const toolFrames = (
  turn: number,
  call_id: string,
  name: string,
  args: unknown,
  output: unknown,
  ok = true,
) => [
  {
    type: "tool_call",
    turn,
    call_id,
    item_id: `fc_${call_id}`,
    name,
    arguments: JSON.stringify(args),
    output_index: 0,
  },
  { type: "tool_started", turn, call_id, name },
  {
    type: "tool_ended",
    turn,
    call_id,
    name,
    ok,
    output: typeof output === "string" ? output : JSON.stringify(output),
    duration_ms: 3,
  },
];
const callOf = (item: OutputItemView | undefined): ToolCallView => {
  if (item?.kind !== "tool") throw new Error(`not a tool item: ${JSON.stringify(item)}`);
  return item.call;
};

describe("buildRunView: header facts", () => {
  it("takes model, mode, provider, reason, counts, tokens and duration from the frames and the header", () => {
    const v = view([
      { ...started, at: 0 },
      { ...request(0), at: 10 },
      { ...turnEnded(0), at: 90 },
      {
        ...ended({
          usage: {
            input_tokens: 100,
            output_tokens: 20,
            input_tokens_details: { cached_tokens: 40 },
            output_tokens_details: { reasoning_tokens: 7 },
          },
        }),
        at: 250,
      },
    ]);
    expect(v).toMatchObject({
      run_id: "run_t",
      model: "m",
      provider: "acme",
      mode: "chained",
      reason: "completed",
      turns: 1,
      tool_calls: 0,
      tokens: { input: 100, output: 20, cached: 40, reasoning: 7 },
      duration_ms: 250,
      answer: "done",
      partial: false,
      frames: 4,
      eddy_version: "0.1.0",
    });
  });

  it("shows the error of a failed run and the result of a structured one", () => {
    const failed = view([
      started,
      request(0),
      ended({ reason: "failed", error: { code: "server_error", message: "boom" } }),
    ]);
    expect(failed.error).toEqual({ code: "server_error", message: "boom" });
    const structured = view([started, ended({ result: { ok: 1 } })]);
    expect(JSON.parse(structured.result ?? "")).toEqual({ ok: 1 });
  });

  it("a tape cut by a crash: no run_ended, the answer so far, the partial last line dropped", () => {
    const text = tape([started, request(0), delta(0, "msg_1", "half an "), delta(0, "msg_1", "answer")]);
    const cut = `${text}{"run_id":"run_t","seq":4,"ts":1,"type":"output_te`;
    const parsed = parseViewTape(cut, "cut.tape");
    expect(parsed.cut).toBe(true);
    const v = buildRunView(parsed);
    expect(v).toMatchObject({ reason: "unfinished", partial: true, answer: "half an answer", frames: 4 });
    expect(parsed.lines).toHaveLength(4);
  });

  it("reads a frame log without a header (eddy run --json output)", () => {
    const v = view([started, request(0), turnEnded(0), ended()], { header: false });
    expect(v.provider).toBeUndefined();
    expect(v.model).toBe("m");
    expect(v.reason).toBe("completed");
  });

  it("lists MCP servers from run_started", () => {
    const v = view([{ ...started, mcp_servers: ["files", { name: "git", command: "git-mcp" }] }, ended()]);
    expect(v.mcp_servers).toEqual(["files", "git"]);
  });
});

describe("buildRunView: a tape not as eddy writes it", () => {
  it("a second run_ended does not hide how the run ended: the first one stands, the other is a note (found by a probe)", () => {
    const v = view([
      started,
      ended({ reason: "failed", error: { code: "x", message: "HIDDEN-FAILURE" } }),
      ended({ reason: "completed" }),
    ]);
    expect(v.reason).toBe("failed");
    expect(v.error?.message).toBe("HIDDEN-FAILURE");
    expect(v.notes.map((n) => n.title)).toEqual(["Another run_ended after the run ended (completed)"]);
  });

  it("notes the first break in seq (a gap, a repeat, a step back), once", () => {
    const text = tape([started, request(0), ended()])
      .split("\n")
      .map((line) => line.replace('"seq":1,', '"seq":5,'))
      .join("\n");
    const v = buildRunView(parseViewTape(text, "test.tape"));
    expect(v.notes.map((n) => n.title)).toEqual(["seq 5 after seq 0: the frames are not contiguous"]);
    expect(view([started, request(0), ended()]).notes).toEqual([]);
  });
});

describe("buildRunView: attempts and the timeline", () => {
  it("times request → first byte → first event → first token per attempt; marks retries and fallbacks", () => {
    const v = view([
      { ...started, at: 0 },
      { ...request(0, 1), at: 10 },
      { type: "response_headers", turn: 0, attempt: 1, status: 429, request_id: "req_1", at: 30 },
      {
        type: "request_failed",
        turn: 0,
        attempt: 1,
        code: "rate_limited",
        message: "slow down",
        kind: "http",
        retryable: true,
        status: 429,
        at: 31,
      },
      { type: "retry", turn: 0, attempt: 2, delay_ms: 500, reason: "rate_limited", at: 31 },
      { ...request(0, 2), at: 531 },
      {
        type: "request_failed",
        turn: 0,
        attempt: 2,
        code: "server_error",
        message: "503",
        kind: "http",
        retryable: true,
        at: 600,
      },
      { type: "retry", turn: 0, attempt: 3, delay_ms: 0, reason: "fallback:backup", at: 600 },
      { ...request(0, 3, "backup-model"), at: 605 },
      { type: "response_headers", turn: 0, attempt: 3, status: 200, at: 640 },
      {
        ...event(0, { type: "response.created", response: { id: "resp_0", model: "backup-model-2026" } }),
        at: 650,
      },
      {
        ...event(0, { type: "response.output_text.delta", item_id: "msg_1", output_index: 0, delta: "hi" }),
        at: 700,
      },
      { ...delta(0, "msg_1", "hi"), at: 700 },
      {
        ...event(0, { type: "response.completed", response: { id: "resp_0", model: "backup-model-2026" } }),
        at: 700,
      },
      { ...turnEnded(0), at: 720 },
      { ...ended({ output_text: "hi" }), at: 721 },
    ]);
    const turn = v.turn_views[0];
    expect(turn?.model).toBe("backup-model-2026");
    expect(turn?.attempts[0]).toEqual({
      attempt: 1,
      start: 1_800_000_000_010,
      model: "m",
      headers: 1_800_000_000_030,
      http_status: 429,
      request_id: "req_1",
      end: 1_800_000_000_031,
      failed: { code: "rate_limited", message: "slow down", kind: "http", http_status: 429 },
      retry: { delay_ms: 500, reason: "rate_limited", ts: 1_800_000_000_031 },
    });
    expect(turn?.attempts[1]).toMatchObject({
      attempt: 2,
      failed: { code: "server_error" },
      retry: { delay_ms: 0, reason: "fallback:backup", fallback: "backup" },
    });
    const last = turn?.attempts.at(-1);
    expect(last).toMatchObject({
      attempt: 3,
      model: "backup-model",
      headers: 1_800_000_000_640,
      first_event: 1_800_000_000_650,
      first_token: 1_800_000_000_700,
      // The stream's last event, not turn_ended (which may wait for tools).
      end: 1_800_000_000_700,
    });
    expect(v.markers.map((m) => [m.kind, m.label])).toEqual([
      ["retry", "retry 2 in 500 ms (rate_limited)"],
      ["fallback", "fallback to backup (attempt 3)"],
    ]);
  });

  it("records mode changes, cancels and tool spans", () => {
    const v = view([
      started,
      request(0),
      {
        type: "mode_changed",
        turn: 0,
        from: "chained",
        to: "stateless",
        reason: "previous_response_not_found",
      },
      ...toolFrames(0, "c1", "read_file", { path: "a" }, { ok: true }),
      { type: "cancel_requested", turn: 0, reason: "SIGINT" },
      ended({ reason: "cancelled", error: { code: "cancelled", message: "SIGINT" } }),
    ]);
    expect(v.mode_changes).toEqual(["chained → stateless"]);
    expect(v.markers.map((m) => m.kind)).toEqual(["mode_changed", "cancel"]);
    expect(v.tool_spans).toEqual([
      expect.objectContaining({ call_id: "c1", name: "read_file", ok: true, turn: 0 }),
    ]);
    expect(v.turn_views[0]?.notes.map((n) => n.title)).toEqual(["Mode changed", "Cancel requested"]);
  });
});

describe("buildRunView: output items", () => {
  it("orders items by output index: reasoning (done wins over deltas), messages from deltas, tool calls", () => {
    const reasoning = {
      type: "reasoning",
      id: "rs_1",
      summary: [{ type: "summary_text", text: "Think **first**." }],
      encrypted_content: "enc",
    };
    const v = view([
      started,
      request(0),
      event(0, {
        type: "response.output_item.added",
        output_index: 0,
        item: { type: "reasoning", id: "rs_1", summary: [] },
      }),
      event(0, {
        type: "response.reasoning_summary_text.delta",
        output_index: 0,
        summary_index: 0,
        delta: "Think",
      }),
      event(0, { type: "response.output_item.done", output_index: 0, item: reasoning }),
      event(0, {
        type: "response.output_item.added",
        output_index: 1,
        item: { type: "message", id: "msg_1", content: [] },
      }),
      delta(0, "msg_1", "Let me "),
      delta(0, "msg_1", "look."),
      event(0, {
        type: "response.output_item.done",
        output_index: 1,
        item: { type: "message", id: "msg_1", content: [{ type: "output_text", text: "Let me look." }] },
      }),
      event(0, {
        type: "response.output_item.done",
        output_index: 2,
        item: { type: "function_call", id: "fc_c1", call_id: "c1", name: "read_file", arguments: "{}" },
      }),
      event(0, {
        type: "response.output_item.done",
        output_index: 3,
        item: {
          type: "function_call",
          id: "fc_c2",
          call_id: "c2",
          name: "grep",
          arguments: "{",
          status: "incomplete",
        },
      }),
      event(0, {
        type: "response.output_item.done",
        output_index: 4,
        item: { type: "web_search_call", id: "ws_1", status: "completed" },
      }),
      ...toolFrames(0, "c1", "read_file", {}, "plain text output"),
      turnEnded(0),
      ended(),
    ]);
    const items = v.turn_views[0]?.items ?? [];
    expect(items.map((i) => i.kind)).toEqual(["reasoning", "message", "tool", "unrun_call", "other"]);
    expect(items[0]).toEqual({
      kind: "reasoning",
      item_id: "rs_1",
      summary: ["Think **first**."],
      content: [],
      encrypted: true,
    });
    expect(items[1]).toMatchObject({ kind: "message", text: "Let me look." });
    expect(callOf(items[2])).toMatchObject({ call_id: "c1", ok: true, output: "plain text output" });
    expect(callOf(items[2]).output_json).toBeUndefined();
    expect(items[3]).toMatchObject({ kind: "unrun_call", name: "grep", status: "incomplete" });
    expect(items[4]).toMatchObject({ kind: "other", type: "web_search_call" });
  });

  it("takes reasoning summaries from their deltas when the item never finished, and refusals from the done item", () => {
    const v = view([
      started,
      request(0),
      event(0, {
        type: "response.output_item.added",
        output_index: 0,
        item: { type: "reasoning", id: "rs_1" },
      }),
      event(0, {
        type: "response.reasoning_summary_text.delta",
        output_index: 0,
        summary_index: 0,
        delta: "a",
      }),
      event(0, {
        type: "response.reasoning_summary_text.delta",
        output_index: 0,
        summary_index: 0,
        delta: "b",
      }),
      event(0, {
        type: "response.reasoning_summary_text.delta",
        output_index: 0,
        summary_index: 1,
        delta: "c",
      }),
      event(0, {
        type: "response.output_item.added",
        output_index: 1,
        item: { type: "message", id: "msg_r" },
      }),
      event(0, { type: "response.refusal.delta", output_index: 1, delta: "I can't" }),
      event(0, {
        type: "response.output_item.done",
        output_index: 1,
        item: { type: "message", id: "msg_r", content: [{ type: "refusal", refusal: "I can't" }] },
      }),
      turnEnded(0),
    ]);
    const items = v.turn_views[0]?.items ?? [];
    expect(items[0]).toMatchObject({ kind: "reasoning", summary: ["ab", "c"] });
    expect(items[1]).toMatchObject({ kind: "message", refusal: "I can't", text: "" });
  });

  it("a response that arrives whole (no item events) still shows its output", () => {
    const v = view([
      started,
      request(0),
      event(0, {
        type: "response.completed",
        response: {
          id: "resp_0",
          model: "m",
          output: [{ type: "message", id: "msg_1", content: [{ type: "output_text", text: "whole" }] }],
        },
      }),
      turnEnded(0),
    ]);
    expect(v.turn_views[0]?.items).toEqual([{ kind: "message", item_id: "msg_1", text: "whole" }]);
  });

  it("on the Chat Completions path (events are chunks) messages come from text deltas and calls from tool frames", () => {
    const chunk = {
      id: "chatcmpl_1",
      object: "chat.completion.chunk",
      choices: [{ delta: { content: "Hi" } }],
    };
    const v = view([
      started,
      request(0),
      { type: "provider_event", turn: 0, status: "event", data: chunk },
      delta(0, "msg_chat", "Hi"),
      ...toolFrames(0, "call_9", "read_file", { path: "x" }, { ok: true }),
      turnEnded(0),
    ]);
    expect(v.turn_views[0]?.items.map((i) => i.kind)).toEqual(["message", "tool"]);
  });

  it("a retry starts the turn's output over", () => {
    const v = view([
      started,
      request(0, 1),
      event(0, {
        type: "response.output_item.done",
        output_index: 0,
        item: { type: "reasoning", id: "rs_old" },
      }),
      {
        type: "request_failed",
        turn: 0,
        attempt: 1,
        code: "stream_truncated",
        message: "cut",
        kind: "truncated",
        retryable: true,
      },
      { type: "retry", turn: 0, attempt: 2, delay_ms: 1, reason: "stream_truncated" },
      request(0, 2),
      event(0, {
        type: "response.output_item.done",
        output_index: 0,
        item: { type: "reasoning", id: "rs_new" },
      }),
      turnEnded(0),
    ]);
    expect(v.turn_views[0]?.items.map((i) => (i.kind === "reasoning" ? i.item_id : i.kind))).toEqual([
      "rs_new",
    ]);
  });
});

describe("buildRunView: findings and notes", () => {
  it("collects validation findings and undecodable events", () => {
    const v = view([
      started,
      request(0),
      event(
        0,
        { type: "response.created", response: { id: "r" } },
        { errors: ["/response must have required property 'model'"] },
      ),
      { type: "provider_event", turn: 0, status: "invalid_json", raw: "{oops" },
      { type: "provider_event", turn: 0, status: "empty", raw: "" },
      turnEnded(0),
    ]);
    expect(v.findings).toBe(2);
    expect(v.turn_views[0]?.findings).toEqual([
      {
        seq: 2,
        turn: 0,
        event: "response.created",
        messages: ["/response must have required property 'model'"],
      },
      { seq: 3, turn: 0, event: "invalid_json", messages: ["not JSON: {oops"] },
    ]);
  });

  it("shows this round's frames and unknown frame types as notes, and approvals on their call", () => {
    const v = view([
      started,
      {
        type: "context_compiled",
        turn: 0,
        bundle_id: "ctx_1",
        strategy: "summary",
        item_count: 3,
        token_estimate: 812,
      },
      request(0),
      {
        type: "tool_call",
        turn: 0,
        call_id: "c1",
        item_id: "fc_1",
        name: "write_file",
        arguments: "{}",
        output_index: 0,
      },
      { type: "approval_requested", turn: 0, call_id: "c1", name: "write_file" },
      { type: "approval_decided", turn: 0, call_id: "c1", decision: "approved", by: "user" },
      { type: "tool_started", turn: 0, call_id: "c1", name: "write_file" },
      {
        type: "tool_ended",
        turn: 0,
        call_id: "c1",
        name: "write_file",
        ok: true,
        output: "{}",
        duration_ms: 1,
      },
      { type: "context_compacted", turn: 0, items_before: 40, items_after: 6 },
      { type: "x_from_the_future", payload: { deep: [1, 2, 3] }, note: "x".repeat(1000) },
      turnEnded(0),
      ended(),
    ]);
    const turn = v.turn_views[0];
    expect(turn?.notes.map((n) => [n.title, n.known])).toEqual([
      ["Context compiled", true],
      ["Context compacted", true],
    ]);
    expect(turn?.notes[0]?.fields).toEqual([
      ["turn", "0"],
      ["bundle_id", "ctx_1"],
      ["strategy", "summary"],
      ["item_count", "3"],
      ["token_estimate", "812"],
    ]);
    expect(v.notes.map((n) => [n.type, n.known])).toEqual([["x_from_the_future", false]]);
    const note = v.notes[0]?.fields.find(([k]) => k === "note")?.[1] ?? "";
    expect(note.length).toBeLessThan(500);
    expect(note).toContain("600 more characters");
    const call = callOf(turn?.items[0]);
    expect(call.approval?.map((n) => n.title)).toEqual(["Approval requested", "Approval decided"]);
    expect(call.approval?.[1]?.fields).toContainEqual(["decision", "approved"]);
    expect(v.markers.map((m) => m.label)).toEqual([
      "Context compiled",
      "Context compacted",
      "x_from_the_future",
    ]);
  });
});

describe("buildRunView: file writes as diffs", () => {
  const readOutput = (path: string, text: string, artifacts: Record<string, unknown> = {}) => ({
    tool: "read_file",
    ok: true,
    exit_code: 0,
    stdout: text,
    stderr: "",
    artifacts: {
      path,
      bytes: text.length,
      total_lines: 2,
      start_line: 1,
      end_line: 2,
      truncated: false,
      ...artifacts,
    },
  });

  it("diffs write_file against the last full read or write of the same file", () => {
    const v = view([
      started,
      request(0),
      ...toolFrames(0, "r1", "read_file", { path: "./a.txt" }, readOutput("a.txt", "one\ntwo\n")),
      ...toolFrames(0, "w1", "write_file", { path: "a.txt", content: "one\n2\n" }, { ok: true }),
      ...toolFrames(0, "w2", "write_file", { path: "a.txt", content: "three\n", append: true }, { ok: true }),
      ...toolFrames(0, "w3", "write_file", { path: "b.txt", content: "new\n" }, { ok: true }),
      turnEnded(0),
    ]);
    const calls = (v.turn_views[0]?.items ?? []).map(callOf);
    expect(calls[1]?.file_diff).toEqual({
      path: "a.txt",
      before: "one\ntwo\n",
      after: "one\n2\n",
      append: false,
    });
    expect(calls[2]?.file_diff).toEqual({
      path: "a.txt",
      before: "one\n2\n",
      after: "one\n2\nthree\n",
      append: true,
    });
    expect(calls[3]?.file_diff).toEqual({ path: "b.txt", before: null, after: "new\n", append: false });
  });

  it("forgets a file after a partial read, a patch, or a failed write", () => {
    const patch = "*** Begin Patch\n*** Update File: c.txt\n@@\n-x\n+y\n*** End Patch";
    const v = view([
      started,
      request(0),
      ...toolFrames(0, "r1", "read_file", { path: "a.txt" }, readOutput("a.txt", "one\n", { end_line: 1 })),
      ...toolFrames(0, "w1", "write_file", { path: "a.txt", content: "A" }, { ok: true }),
      ...toolFrames(0, "r2", "read_file", { path: "c.txt" }, readOutput("c.txt", "x\ny\n")),
      ...toolFrames(0, "p1", "apply_patch", { patch }, { ok: true }),
      ...toolFrames(0, "w2", "write_file", { path: "c.txt", content: "C" }, { ok: true }),
      ...toolFrames(
        0,
        "w3",
        "write_file",
        { path: "d.txt", content: "D" },
        { ok: false, error: { code: "tool_failed", message: "no" } },
        false,
      ),
      ...toolFrames(0, "w4", "write_file", { path: "d.txt", content: "E" }, { ok: true }),
      turnEnded(0),
    ]);
    const calls = (v.turn_views[0]?.items ?? []).map(callOf);
    expect(calls[1]?.file_diff?.before).toBeNull();
    expect(calls[3]?.patch).toBe(patch);
    expect(calls[4]?.file_diff?.before).toBeNull();
    expect(calls[6]?.file_diff?.before).toBeNull();
  });

  it("marks capped outputs and keeps the size of the uncapped one", () => {
    const v = view([
      started,
      request(0),
      {
        type: "tool_call",
        turn: 0,
        call_id: "c",
        item_id: "fc",
        name: "grep",
        arguments: "{}",
        output_index: 0,
      },
      { type: "tool_started", turn: 0, call_id: "c", name: "grep" },
      {
        type: "tool_ended",
        turn: 0,
        call_id: "c",
        name: "grep",
        ok: true,
        output: "{}",
        duration_ms: 1,
        truncated: true,
        full_output: "y".repeat(5000),
      },
    ]);
    expect(callOf(v.turn_views[0]?.items[0])).toMatchObject({ truncated: true, full_output_chars: 5000 });
  });
});
