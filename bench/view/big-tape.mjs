// A large tape for measuring `eddy view` (bench/README.md, "eddy view of a large tape"): turns of a
// stateless run until the file reaches the size asked for — each turn a request whose body resends
// the whole history (as stateless runs do, so bodies grow turn by turn), ~1,000 streamed text
// deltas with their output_text_delta frames, three function calls with argument deltas, their
// tool frames with 64 KiB outputs (and a 256 KiB `full_output`), the terminal event with the
// response's output, and turn_ended. Written as tape format 1 (no derived frames), as an older
// eddy recorded it, so the viewer derives them while reading.
//
// Usage: node bench/view/big-tape.mjs OUT.tape [MEGABYTES=200]
import { closeSync, openSync, writeSync } from "node:fs";

const [out, megabytes = "200"] = process.argv.slice(2);
if (out === undefined) {
  console.error("usage: node bench/view/big-tape.mjs OUT.tape [MEGABYTES=200]");
  process.exit(2);
}
const target = Number(megabytes) * 1024 * 1024;
const fd = openSync(out, "w");
let size = 0;
let seq = 0;
let ts = Date.UTC(2026, 0, 1);
const run = "run_big_view";
const write = (value) => {
  const line = `${JSON.stringify(value)}\n`;
  size += Buffer.byteLength(line);
  writeSync(fd, line);
};
const frame = (type, payload) => {
  ts += 1;
  write({ run_id: run, seq: seq++, ts, type, ...payload });
};
const event = (turn, data) => frame("provider_event", { turn, status: "event", event_name: data.type, data });

write({
  type: "tape_header",
  format: 1,
  eddy_version: "0.1.0",
  run_id: run,
  model: "big",
  mode: "stateless",
  input: "Work through the repository.",
  tools: ["read_file", "grep"],
  limits: { max_tool_calls: 1000, max_turns: 1000 },
  provider: { name: "mock", capabilities: {} },
  options: {
    reset_tool_choice: true,
    tools_on_follow_up: "every_request",
    tool_execution: "eager",
    parallel_tool_calls: false,
    validate: true,
  },
  workspace: ".",
});
frame("run_started", {
  model: "big",
  mode: "stateless",
  input: "Work through the repository.",
  tools: ["read_file", "grep"],
});

const history = [{ type: "message", role: "user", content: "Work through the repository." }];
// Text that compresses about as well as real file contents and model output do (a seeded PRNG:
// the same tape every time), not a repeated word that gzip would reduce to nothing.
let state = 42;
const random = () => {
  state = (state * 1103515245 + 12345) & 0x7fffffff;
  return state;
};
const WORDS =
  "const let function return import export from if else for while await async type interface the a of to in is and value data item error result".split(
    " ",
  );
const filler = (n, seed) => {
  let text = `${seed}:`;
  while (text.length < n) {
    const r = random();
    text +=
      r % 7 === 0
        ? `${(r >> 3).toString(36)}\n`
        : `${WORDS[r % WORDS.length]}${(r >> 5) % 3 === 0 ? (r >> 8).toString(16) : ""} `;
  }
  return text.slice(0, n);
};
for (let turn = 0; size < target; turn++) {
  frame("request_started", {
    turn,
    attempt: 1,
    body: { model: "big", input: history, store: false, stream: true },
  });
  frame("response_headers", { turn, attempt: 1, status: 200 });
  const id = `resp_${turn}`;
  const resource = (status, output) => ({
    id,
    object: "response",
    model: "big",
    status,
    output,
    usage: { input_tokens: 1000 * turn, output_tokens: 900 },
  });
  event(turn, { type: "response.created", response: resource("in_progress", []) });
  const msg = `msg_${turn}`;
  event(turn, {
    type: "response.output_item.added",
    output_index: 0,
    item: { type: "message", id: msg, role: "assistant", content: [] },
  });
  let text = "";
  for (let i = 0; i < 1000; i++) {
    const delta = `${filler(6, "w")} `;
    text += delta;
    event(turn, {
      type: "response.output_text.delta",
      item_id: msg,
      output_index: 0,
      content_index: 0,
      delta,
    });
    frame("output_text_delta", { turn, item_id: msg, output_index: 0, content_index: 0, delta });
  }
  const message = {
    type: "message",
    id: msg,
    role: "assistant",
    status: "completed",
    content: [{ type: "output_text", text, annotations: [] }],
  };
  event(turn, { type: "response.output_item.done", output_index: 0, item: message });
  const output = [message];
  const calls = [];
  for (let c = 1; c <= 3; c++) {
    const args = JSON.stringify({ path: `src/file_${turn}_${c}.ts` });
    const call = {
      type: "function_call",
      id: `fc_${turn}_${c}`,
      call_id: `call_${turn}_${c}`,
      name: "read_file",
      arguments: args,
      status: "completed",
    };
    event(turn, {
      type: "response.output_item.added",
      output_index: c,
      item: { ...call, arguments: "", status: "in_progress" },
    });
    for (const piece of args.match(/.{1,8}/g))
      event(turn, {
        type: "response.function_call_arguments.delta",
        item_id: call.id,
        output_index: c,
        delta: piece,
      });
    event(turn, { type: "response.output_item.done", output_index: c, item: call });
    frame("tool_call", {
      turn,
      call_id: call.call_id,
      item_id: call.id,
      name: "read_file",
      arguments: args,
      output_index: c,
    });
    frame("tool_started", { turn, call_id: call.call_id, name: "read_file" });
    const stdout = filler(64 * 1024, `line_${turn}_${c}`);
    const result = JSON.stringify({ tool: "read_file", ok: true, exit_code: 0, stdout, stderr: "" });
    frame("tool_ended", {
      turn,
      call_id: call.call_id,
      name: "read_file",
      ok: true,
      output: result,
      duration_ms: 3,
      truncated: true,
      full_output: filler(256 * 1024, `full_${turn}_${c}`),
    });
    output.push(call);
    calls.push({ call, result });
  }
  event(turn, { type: "response.completed", response: resource("completed", output) });
  frame("turn_ended", {
    turn,
    response_id: id,
    status: "completed",
    usage: { input_tokens: 1000 * turn, output_tokens: 900 },
  });
  history.push(
    ...output,
    ...calls.map(({ call, result }) => ({
      type: "function_call_output",
      call_id: call.call_id,
      output: result,
    })),
  );
}
frame("run_ended", {
  reason: "max_turns",
  output_text: "done",
  response_id: null,
  usage: { input_tokens: 1, output_tokens: 1 },
  turns: 1,
  tool_calls: 1,
  error: { code: "max_turns", message: "stopped" },
});
closeSync(fd);
console.log(`${out}: ${(size / 1024 / 1024).toFixed(1)} MB, ${seq} frames`);
