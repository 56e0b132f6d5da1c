/**
 * Fixtures for the run viewer's tests: a scenario that exercises every section of the page (a
 * retry, reasoning, a read then a write shown as a diff, a patch, a failing tool, an answer
 * carrying HTML injection, an undecodable event), tapes edited to hold frame types this
 * eddy does not know, a batch folder in the documented format, and a 100k-frame tape.
 */
import { readFileSync, writeFileSync } from "node:fs";
import type { Scenario } from "../../src/mock/index.js";

/** The workspace file the rich scenario reads, rewrites and patches. */
export const NOTES_BEFORE = "# Notes\n\n- remember the milk\n- call Alice\n";
export const NOTES_AFTER = "# Notes\n\n- remember the milk\n- call Alice\n- buy stamps\n";

/** Markdown that tries every way of running script or reaching the network from the page. */
export const HOSTILE_MARKDOWN = [
  "# Done",
  "The notes are **updated**. Here is `code` and a [safe link](https://example.org/docs).",
  "<script>window.__xss = 1</script>",
  '<img src="x" onerror="window.__xss = 2">',
  "[click me](javascript:window.__xss=3)",
  "![remote pixel](http://127.0.0.1:9/pixel.png)",
  "</script><script>window.__xss = 4</script>",
  '<iframe src="javascript:window.__xss=5"></iframe>',
  '<a href="#" onclick="window.__xss = 6">a handler</a>',
  '<svg><animate onbegin="window.__xss = 7" attributeName="x" dur="1s"/></svg>',
  "<style>body { display: none }</style>",
  "| file | change |\n| --- | --- |\n| notes.md | + buy stamps |",
].join("\n\n");

/**
 * An answer that, with the page's own classes, lays a fake "completed" run header over the real
 * one (`.raw-rows` is absolutely positioned), names an element `raw` as the page's raw frames are
 * named, and opens a dialog (positioned by the browser over the page).
 */
export const OVERLAY_MARKDOWN = [
  '<div class="raw-rows"><section class="card run-header"><dl class="facts"><div class="fact"><dt>reason</dt>' +
    '<dd><span class="badge ok">completed</span></dd></div></dl><p>All checks passed. Safe to merge.</p>' +
    "<p>.</p><p>.</p><p>.</p><p>.</p><p>.</p><p>.</p><p>.</p><p>.</p></section></div>",
  '<p id="raw" name="raw" data-view="batch" aria-controls="raw">ids</p>',
  "<dialog open>a dialog</dialog>",
].join("\n\n");

/** A tool name that is HTML. */
export const HOSTILE_TOOL = '<img src=x onerror="window.__xss = 8">';

/** Tool frames a model could cause (an unknown tool with an HTML name), for `insertFrames`. */
export function hostileToolFrames(turn: number): Array<Record<string, unknown>> {
  const call = { turn, call_id: "call_evil", name: HOSTILE_TOOL };
  const output = JSON.stringify({
    tool: HOSTILE_TOOL,
    ok: false,
    exit_code: 1,
    stdout: "</script><script>window.__xss = 9</script>",
    stderr: "",
    error: { code: "tool_not_found", message: `unknown tool ${HOSTILE_TOOL}` },
  });
  return [
    {
      type: "tool_call",
      ...call,
      item_id: "fc_evil",
      arguments: '{"x":"</script><script>window.__xss = 10</script>"}',
      output_index: 0,
    },
    { type: "tool_started", ...call },
    { type: "tool_ended", ...call, ok: false, output, duration_ms: 0 },
  ];
}

const PATCH = [
  "*** Begin Patch",
  "*** Update File: notes.md",
  "@@",
  "-- call Alice",
  "+- call Alice at 5",
  "*** End Patch",
].join("\n");

/** Every section of the page in one run (with `allowWrite`), ending with `answer`. */
export const richScenario = (answer: string): Scenario => ({
  name: "viewer fixture",
  turns: [
    { label: "rate limited", faults: { httpError: { status: 429, headers: { "retry-after-ms": "15" } } } },
    {
      items: [
        { type: "reasoning", summary: ["The user wants **notes.md** updated, so I read it first."] },
        { type: "function_call", name: "read_file", arguments: { path: "notes.md" }, call_id: "call_read" },
      ],
      usage: { input_tokens: 900, output_tokens: 40 },
    },
    {
      items: [
        {
          type: "function_call",
          name: "write_file",
          arguments: { path: "notes.md", content: NOTES_AFTER },
          call_id: "call_write",
        },
      ],
    },
    {
      items: [
        { type: "function_call", name: "apply_patch", arguments: { patch: PATCH }, call_id: "call_patch" },
      ],
    },
    {
      items: [
        {
          type: "function_call",
          name: "read_file",
          arguments: { path: "missing.txt" },
          call_id: "call_missing",
        },
      ],
    },
    {
      items: [{ type: "message", text: answer, phase: "final_answer" }],
      faults: { invalidJsonAfterEvents: 3 },
      usage: { input_tokens: 1400, output_tokens: 120 },
    },
  ],
});

/**
 * Inserts frames after the first frame of type `after`, renumbering every `seq` (as a newer eddy
 * would have written them): frame types this viewer does not know, and this round's new ones.
 */
export function insertFrames(tapePath: string, after: string, frames: Array<Record<string, unknown>>): void {
  const lines = readFileSync(tapePath, "utf8").trimEnd().split("\n");
  const [header, ...rest] = lines as [string, ...string[]];
  const parsed = rest.map((l) => JSON.parse(l) as Record<string, unknown>);
  const at = parsed.findIndex((f) => f.type === after) + 1;
  const anchor = parsed[at - 1] as Record<string, unknown>;
  const inserted = frames.map((f) => ({ run_id: anchor.run_id, seq: 0, ts: anchor.ts, ...f }));
  const all = [...parsed.slice(0, at), ...inserted, ...parsed.slice(at)];
  all.forEach((f, i) => {
    f.seq = i;
  });
  writeFileSync(tapePath, `${[header, ...all.map((f) => JSON.stringify(f))].join("\n")}\n`);
}

/**
 * A tape of `2 × words + 5` frames: one turn streaming `words` words, each a provider event plus
 * its `output_text_delta` frame. One word, "needle", sits near the end for searches.
 */
export function bigTape(path: string, words: number): void {
  const run = "run_big";
  const t0 = Date.UTC(2026, 0, 1);
  const out: string[] = [];
  let seq = 0;
  const push = (type: string, payload: Record<string, unknown>, ts: number) =>
    out.push(JSON.stringify({ run_id: run, seq: seq++, ts, type, ...payload }));
  out.push(
    JSON.stringify({
      type: "tape_header",
      format: 1,
      eddy_version: "0.1.0",
      run_id: run,
      model: "big",
      mode: "chained",
      input: "Say a lot.",
      tools: [],
      limits: { max_tool_calls: 32, max_turns: 20 },
      provider: { name: "mock", capabilities: {} },
      options: {
        reset_tool_choice: true,
        tools_on_follow_up: "every_request",
        tool_execution: "eager",
        parallel_tool_calls: false,
        validate: true,
      },
      workspace: ".",
    }),
  );
  push("run_started", { model: "big", mode: "chained", input: "Say a lot.", tools: [] }, t0);
  push(
    "request_started",
    { turn: 0, attempt: 1, body: { model: "big", input: "Say a lot.", stream: true } },
    t0,
  );
  push("response_headers", { turn: 0, attempt: 1, status: 200 }, t0 + 5);
  let text = "";
  for (let i = 0; i < words; i++) {
    const delta = i === words - 10 ? "needle " : `word${i} `;
    text += delta;
    const ts = t0 + 10 + Math.floor(i / 50);
    const data = {
      type: "response.output_text.delta",
      item_id: "msg_1",
      output_index: 0,
      content_index: 0,
      delta,
      sequence_number: i,
    };
    push("provider_event", { turn: 0, status: "event", event_name: data.type, data }, ts);
    push("output_text_delta", { turn: 0, item_id: "msg_1", output_index: 0, content_index: 0, delta }, ts);
  }
  const end = t0 + 20 + Math.floor(words / 50);
  const usage = { input_tokens: 10, output_tokens: words };
  push("turn_ended", { turn: 0, response_id: "resp_big", status: "completed", usage }, end);
  push(
    "run_ended",
    { reason: "completed", output_text: text, response_id: "resp_big", usage, turns: 1, tool_calls: 0 },
    end,
  );
  writeFileSync(path, `${out.join("\n")}\n`);
}
