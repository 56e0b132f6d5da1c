import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { failingTapeStore, type TapeFaults } from "../../test/support/failing-tapes.js";
import { createScriptedProvider, type Script } from "../../test/support/scripted.js";
import { createPolicy } from "../loop/policy.js";
import type { PartialRunSpec } from "../loop/run-spec.js";
import { validateStreamingEvent } from "../protocol/validate.js";
import { replayTape } from "../replay/replay.js";
import { readTape } from "../replay/tape.js";
import { createToolRegistry } from "../tools/registry.js";
import { defineTool } from "../tools/tool.js";
import { hasControlChars } from "../util/control-chars.js";
import { createServeHandler } from "./handler.js";
import { createResponsesFace } from "./responses.js";
import { createRunService } from "./runs.js";
import { jsonRequest } from "./test-support/request.js";

const TOKEN = "face-token-5678";
const SECRET = "sk-very-secret";
const call = (name: string, args = "{}") =>
  ({ items: [{ type: "function_call", name, arguments: args }] }) as Script;
const text = (t: string) => ({ items: [{ type: "message", text: t }] }) as Script;

interface Probe {
  aborted: boolean;
  disposed: number;
}

function setup(
  scripts: Script[] = [text("hello")],
  faults: TapeFaults = { failAfter: Number.POSITIVE_INFINITY },
  spec: PartialRunSpec = {},
) {
  const dir = mkdtempSync(join(tmpdir(), "eddy-face-"));
  const probe: Probe = { aborted: false, disposed: 0 };
  const wait = defineTool({
    name: "wait",
    description: "Waits until cancelled",
    parameters: { type: "object", properties: {} },
    execute: (_args, ctx) =>
      new Promise<string>((resolve) =>
        ctx.signal.addEventListener("abort", () => {
          probe.aborted = true;
          resolve("stopped");
        }),
      ),
  });
  const leak = defineTool({
    name: "leak",
    description: "Prints a key",
    parameters: { type: "object", properties: {} },
    execute: () => `the key is ${SECRET}`,
  });
  const provider = createScriptedProvider(scripts);
  const service = createRunService({
    provider,
    spec: { model: "m", ...spec },
    policy: createPolicy(),
    tools: () => {
      const registry = createToolRegistry([wait, leak]);
      return { ...registry, dispose: () => registry.dispose().then(() => void probe.disposed++) };
    },
    workspace: dir,
    dataDir: dir,
    secrets: [SECRET],
    tapeStore: failingTapeStore(faults),
  });
  const face = createResponsesFace(service.runtime, { token: TOKEN, maxBodyBytes: 4096 });
  const handler = createServeHandler(service, { token: TOKEN, maxBodyBytes: 4096, extra: face.handle });
  const send = (
    method: string,
    path: string,
    body?: unknown,
    o: { token?: string; signal?: AbortSignal } = {},
  ) =>
    handler(
      jsonRequest(
        method,
        path,
        body,
        o.token === "" ? {} : { authorization: `Bearer ${o.token ?? TOKEN}` },
        o.signal,
      ),
    );
  return { send, probe, dir, service, provider, tools: [wait, leak] };
}

async function error(response: Response) {
  return ((await response.json()) as { error: { code: string; message: string; param: string | null } })
    .error;
}

describe("the Open Responses face refuses hostile input", () => {
  it("401 without the token or with a wrong one", async () => {
    const { send } = setup();
    expect((await send("POST", "/v1/responses", { model: "eddy", input: "hi" }, { token: "" })).status).toBe(
      401,
    );
    expect(
      (await send("GET", "/v1/responses/resp_eddy_0001", undefined, { token: "wrong-token-1" })).status,
    ).toBe(401);
  });

  it("413 for a body over the limit", async () => {
    const { send } = setup();
    const res = await send("POST", "/v1/responses", { model: "eddy", input: "x".repeat(10_000) });
    expect(res.status).toBe(413);
  });

  it("400 naming the problem for bad JSON and wrong types", async () => {
    const { send } = setup();
    const bad = await send("POST", "/v1/responses", "{not json");
    expect(bad.status).toBe(400);
    expect((await error(bad)).code).toBe("invalid_json");
    const wrong = await send("POST", "/v1/responses", { model: "eddy", input: "hi", temperature: "hot" });
    expect(wrong.status).toBe(400);
    expect((await error(wrong)).message).toContain("temperature");
    const noModel = await send("POST", "/v1/responses", { input: "hi" });
    expect((await error(noModel)).param).toBe("model");
  });

  it("400 naming the field for a hostile max_output_tokens or max_tool_calls: wrong types, negative, fractions, huge, control characters", async () => {
    const { send, dir } = setup();
    const hostile: [string, unknown][] = [
      ["max_output_tokens", "100000"],
      ["max_output_tokens", "9\u0007\u001b[2J"],
      ["max_output_tokens", -5],
      ["max_output_tokens", 15],
      ["max_output_tokens", 100.5],
      ["max_output_tokens", [100]],
      ["max_output_tokens", true],
      ["max_tool_calls", 0],
      ["max_tool_calls", -1],
      ["max_tool_calls", 2.5],
      ["max_tool_calls", "3"],
      ["max_tool_calls", { n: 3 }],
    ];
    for (const [field, value] of hostile) {
      const res = await send("POST", "/v1/responses", { model: "eddy", input: "hi", [field]: value });
      expect(res.status, `${field}: ${JSON.stringify(value)}`).toBe(400);
      const text = await res.text();
      expect(hasControlChars(text)).toBe(false);
      expect(JSON.parse(text).error.message).toContain(field);
    }
    // A number JSON cannot hold: 1e400 parses as Infinity.
    const infinite = await send(
      "POST",
      "/v1/responses",
      '{"model":"eddy","input":"hi","max_output_tokens":1e400}',
    );
    expect(infinite.status).toBe(400);
    expect((await error(infinite)).message).toContain("max_output_tokens");
    const tapes = join(dir, "responses");
    expect(existsSync(tapes) ? readdirSync(tapes) : []).toEqual([]);
  });

  it("400 for input nested deeper than 1,000 levels: no run, no tape (a deep one hung the response)", async () => {
    const { send, dir } = setup();
    const deep = `${"[".repeat(1500)}${"]".repeat(1500)}`;
    const res = await send(
      "POST",
      "/v1/responses",
      `{"model":"eddy","input":[{"type":"message","role":"user","content":${deep}}]}`,
    );
    expect(res.status).toBe(400);
    expect((await error(res)).message).toMatch(/nests deeper than 1000 levels/);
    const tapes = join(dir, "responses");
    expect(existsSync(tapes) ? readdirSync(tapes) : []).toEqual([]);
  });

  it("404 for an unknown previous_response_id and for tricks in /v1/responses/{id}", async () => {
    const { send } = setup();
    const unknown = await send("POST", "/v1/responses", {
      model: "eddy",
      input: "hi",
      previous_response_id: "resp_x",
    });
    expect(unknown.status).toBe(404);
    expect((await error(unknown)).code).toBe("previous_response_not_found");
    // An id the answer quotes comes back inert (found by a probe: its C1 CSI and direction override were raw).
    const steering = await send("POST", "/v1/responses", {
      model: "eddy",
      input: "hi",
      previous_response_id: "resp_\u009b2J\u202e",
    });
    const text = await steering.text();
    expect(steering.status).toBe(404);
    expect(hasControlChars(text)).toBe(false);
    expect(JSON.parse(text).error.message).toContain("resp_\u009b2J\u202e");
    for (const path of [
      "/v1/responses/..%2F..%2Fetc%2Fpasswd",
      "/v1/responses/%E0%A4%A",
      "/v1/responses/a/b",
    ]) {
      const res = await send("GET", path);
      expect(res.status, path).toBe(404);
    }
  });

  it("403 naming the flag for a tool beyond the server's policy; 400 for shadowing a server tool", async () => {
    const { send } = setup();
    const shell = { type: "function", name: "shell", parameters: { type: "object", properties: {} } };
    const denied = await send("POST", "/v1/responses", { model: "eddy", input: "hi", tools: [shell] });
    expect(denied.status).toBe(403);
    expect((await error(denied)).message).toContain("--allow-shell");
    const taken = { ...shell, name: "leak" };
    const shadow = await send("POST", "/v1/responses", { model: "eddy", input: "hi", tools: [taken] });
    expect(shadow.status).toBe(400);
    expect((await error(shadow)).param).toBe("tools[0].name");
  });

  it("a client leaving mid-stream cancels the run and disposes its tools", async () => {
    const { send, probe } = setup([call("wait"), text("never")]);
    // The call's arguments stream from its announcement; the tool runs once the call is done.
    const { stop } = await streamUntil(send, { model: "eddy", input: "wait" }, callDone("wait"));
    await stop();
    for (let i = 0; i < 200 && (!probe.aborted || probe.disposed === 0); i++)
      await new Promise((r) => setTimeout(r, 25));
    expect(probe.aborted).toBe(true);
    expect(probe.disposed).toBe(1);
  });

  it("a run that goes on past the server's run deadline (a tool that never ends) is cancelled: the response fails", async () => {
    const { send, probe, dir, service } = setup([call("wait"), text("never")]);
    service.runtime.runTimeoutMs = 300;
    const res = await send("POST", "/v1/responses", { model: "eddy", input: "wait" });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { status: string }).status).toBe("failed");
    expect(probe.aborted).toBe(true);
    const [tape] = readdirSync(join(dir, "responses")).map((n) => readTape(join(dir, "responses", n)));
    const asked = tape?.frames.find((f) => f.type === "cancel_requested") as { reason: string } | undefined;
    expect(asked?.reason).toMatch(/longer than this server allows \(300 ms, eddy serve --run-timeout\)/);
  });

  it("a client gone before the stream began: the run never starts and its tools are disposed", async () => {
    const { send, probe } = setup([text("never")]);
    const res = await send("POST", "/v1/responses", { model: "eddy", input: "hi", stream: true });
    expect(res.status).toBe(200);
    await res.body?.cancel();
    expect(probe.disposed).toBe(1);
  });

  it("no secret in a streamed response: a tool's output is masked, every event validates", async () => {
    const { send } = setup([call("leak"), text("done")]);
    const res = await send("POST", "/v1/responses", { model: "eddy", input: "leak", stream: true });
    const body = await res.text();
    expect(body).not.toContain(SECRET);
    const events = body
      .split("\n")
      .filter((l) => l.startsWith("data: {"))
      .map((l) => JSON.parse(l.slice(6)));
    for (const event of events) expect(validateStreamingEvent(event)).toBeUndefined();
    const types = events.map((e) => e.type);
    expect(types.at(-1)).toBe("response.completed");
    expect(events.at(-1).response.output.map((i: { type: string }) => i.type)).toEqual([
      "function_call",
      "function_call_output",
      "message",
    ]);
  });
});

/** The SSE events of a face response, parsed. */
function sseEvents(body: string): Array<Record<string, unknown> & { type: string }> {
  return body
    .split("\n")
    .filter((l) => l.startsWith("data: {"))
    .map((l) => JSON.parse(l.slice(6)));
}

type FaceEvent = Record<string, unknown> & { type: string };

/**
 * Starts a streamed response to `body` and reads it until `enough` holds for the complete events
 * read so far; `stop` then goes away as a client would (abort + cancel).
 */
async function streamUntil(
  send: ReturnType<typeof setup>["send"],
  body: Record<string, unknown>,
  enough: (events: FaceEvent[]) => boolean,
): Promise<{ events: FaceEvent[]; stop: () => Promise<void> }> {
  const controller = new AbortController();
  const res = await send("POST", "/v1/responses", { ...body, stream: true }, { signal: controller.signal });
  expect(res.status).toBe(200);
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let seen = "";
  let events: FaceEvent[] = [];
  while (!enough(events)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the stream ended first: ${seen}`);
    seen += decoder.decode(value, { stream: true });
    events = sseEvents(seen.slice(0, seen.lastIndexOf("\n\n") + 2));
  }
  const stop = async () => {
    controller.abort();
    await reader.cancel().catch(() => {});
  };
  return { events, stop };
}

/** The concatenated deltas of events of `type`. */
const deltasOf = (events: FaceEvent[], type: string) =>
  events
    .filter((e) => e.type === type)
    .map((e) => e.delta)
    .join("");

/** The call to `name` is done (the tool runs from here on). */
const callDone = (name: string) => (events: FaceEvent[]) =>
  events.some((e) => e.type === "response.output_item.done" && (e.item as { name?: string }).name === name);

describe("the Open Responses face streams a message as its text comes", () => {
  const TEXT = "hello there, world!"; // the scripted upstream sends it in 4-character pieces

  it("each upstream piece goes out as it comes, before the upstream message has ended", async () => {
    // The upstream stops for a minute before its output_text.done (event 8: created, item added,
    // part added, then the five pieces): the client has every piece before that.
    const { send, probe } = setup([{ items: [{ type: "message", text: TEXT }], pauses: { 8: 60_000 } }]);
    const { events, stop } = await streamUntil(
      send,
      { model: "eddy", input: "hi" },
      (e) => deltasOf(e, "response.output_text.delta") === TEXT,
    );
    for (const event of events) expect(validateStreamingEvent(event)).toBeUndefined();
    expect(events.filter((e) => e.type === "response.output_text.delta").map((e) => e.delta)).toEqual([
      "hell",
      "o th",
      "ere,",
      " wor",
      "ld!",
    ]);
    expect(events.some((e) => e.type === "response.output_item.done")).toBe(false);
    await stop();
    await expect.poll(() => probe.disposed).toBe(1);
  });

  it("the message's events come in the spec's order and its final text is the streamed one", async () => {
    const { send } = setup([call("leak"), { items: [{ type: "message", text: TEXT }] }]);
    const res = await send("POST", "/v1/responses", { model: "eddy", input: "go", stream: true });
    const events = sseEvents(await res.text());
    for (const event of events) expect(validateStreamingEvent(event)).toBeUndefined();
    const message = events.filter(
      (e) =>
        e.type.startsWith("response.output_text") ||
        e.type.startsWith("response.content_part") ||
        ((e.type === "response.output_item.added" || e.type === "response.output_item.done") &&
          (e.item as { type: string }).type === "message"),
    );
    expect(message.map((e) => e.type)).toEqual([
      "response.output_item.added",
      "response.content_part.added",
      ...Array(5).fill("response.output_text.delta"),
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
    ]);
    expect(new Set(message.map((e) => e.output_index))).toEqual(new Set([2])); // after the call and its output
    expect(message.at(-3)?.text).toBe(TEXT);
    const sequence = events.map((e) => e.sequence_number);
    expect(sequence).toEqual(sequence.map((_, i) => i));
    const final = events.at(-1) as {
      type: string;
      response: { output: Array<{ type: string; status: string }> };
    };
    expect(final.type).toBe("response.completed");
    expect(final.response.output.map((i) => [i.type, i.status])).toEqual([
      ["function_call", "completed"],
      ["function_call_output", "completed"],
      ["message", "completed"],
    ]);
  });

  it("text that looks like SSE framing or holds control characters stays inside its delta events", async () => {
    const hostile = 'a\n\nevent: response.completed\ndata: {"type":"x"}\n\n\u001b[2J\u0007\r\u0000z';
    const { send } = setup([{ items: [{ type: "message", text: hostile }] }]);
    const res = await send("POST", "/v1/responses", { model: "eddy", input: "hi", stream: true });
    const events = sseEvents(await res.text());
    for (const event of events) expect(validateStreamingEvent(event)).toBeUndefined();
    expect(events.filter((e) => e.type === "response.completed")).toHaveLength(1);
    const deltas = events.filter((e) => e.type === "response.output_text.delta").map((e) => e.delta);
    expect(deltas.join("")).toBe(hostile);
    expect(events.at(-1)?.type).toBe("response.completed");
  });

  it("a reasoning summary streams too, before the answer, each piece as it comes", async () => {
    const { send } = setup([
      {
        items: [
          { type: "reasoning", summary: "Thinking it over.", streamSummary: true },
          { type: "message", text: TEXT },
        ],
      },
    ]);
    const res = await send("POST", "/v1/responses", { model: "eddy", input: "hi", stream: true });
    const events = sseEvents(await res.text());
    for (const event of events) expect(validateStreamingEvent(event)).toBeUndefined();
    const types = events.map((e) => e.type);
    expect(types.filter((t) => t.startsWith("response.reasoning_summary"))).toEqual([
      "response.reasoning_summary_part.added",
      ...Array(5).fill("response.reasoning_summary_text.delta"),
      "response.reasoning_summary_text.done",
      "response.reasoning_summary_part.done",
    ]);
    const deltas = events.filter((e) => e.type === "response.reasoning_summary_text.delta");
    expect(deltas.map((e) => e.delta).join("")).toBe("Thinking it over.");
    // The reasoning item is done before the message begins.
    const reasoningDone = events.findIndex(
      (e) => e.type === "response.output_item.done" && (e.item as { type: string }).type === "reasoning",
    );
    expect(reasoningDone).toBeGreaterThan(-1);
    expect(reasoningDone).toBeLessThan(types.indexOf("response.output_text.delta"));
    const final = events.at(-1) as unknown as {
      response: { output: Array<{ type: string; summary?: Array<{ text: string }> }> };
    };
    expect(final.response.output.map((i) => i.type)).toEqual(["reasoning", "message"]);
    expect(final.response.output[0]?.summary?.[0]?.text).toBe("Thinking it over.");
  });

  it("a message the upstream cut short ends incomplete, with what was streamed, before the response fails", async () => {
    // Cut after three pieces (no terminal event): the request fails (no retry of a visible stream).
    const { send } = setup([{ items: [{ type: "message", text: TEXT }], cutAfter: 6 }]);
    const res = await send("POST", "/v1/responses", { model: "eddy", input: "hi", stream: true });
    const events = sseEvents(await res.text());
    for (const event of events) expect(validateStreamingEvent(event)).toBeUndefined();
    const done = events.find((e) => e.type === "response.output_item.done") as
      | { item: { status: string; content: Array<{ text: string }> } }
      | undefined;
    expect(done?.item.status).toBe("incomplete");
    expect(done?.item.content[0]?.text).toBe("hello there,");
    const final = events.at(-1) as { type: string; response: { output: Array<{ status: string }> } };
    expect(final.type).toBe("response.failed");
    expect(final.response.output.map((i) => i.status)).toEqual(["incomplete"]);
  });
});

describe("the Open Responses face streams a function call's arguments as they come", () => {
  const ARGS = '{"note":"stream me in pieces"}'; // the scripted upstream sends it in 6-character pieces

  it("the call is announced and each piece goes out before the upstream call has ended", async () => {
    // The upstream stops for a minute before its function_call_arguments.done (event 7: created,
    // item added, then the five pieces): the client has the call and every piece before that.
    const { send, probe } = setup([
      { items: [{ type: "function_call", name: "leak", arguments: ARGS }], pauses: { 7: 60_000 } },
    ]);
    const { events, stop } = await streamUntil(
      send,
      { model: "eddy", input: "hi" },
      (e) => deltasOf(e, "response.function_call_arguments.delta") === ARGS,
    );
    for (const event of events) expect(validateStreamingEvent(event)).toBeUndefined();
    const added = events.find((e) => e.type === "response.output_item.added") as
      | { item: { type: string; name: string; arguments: string; status: string } }
      | undefined;
    expect(added?.item).toMatchObject({
      type: "function_call",
      name: "leak",
      arguments: "",
      status: "in_progress",
    });
    expect(events.some((e) => e.type === "response.function_call_arguments.done")).toBe(false);
    await stop();
    await expect.poll(() => probe.disposed).toBe(1);
  });

  it("a server tool's call streams in the spec's order, then its output, then the answer", async () => {
    const { send } = setup([
      { items: [{ type: "function_call", name: "leak", arguments: ARGS }] },
      { items: [{ type: "message", text: "done" }] },
    ]);
    const res = await send("POST", "/v1/responses", { model: "eddy", input: "go", stream: true });
    const events = sseEvents(await res.text());
    for (const event of events) expect(validateStreamingEvent(event)).toBeUndefined();
    const sequence = events.map((e) => e.sequence_number);
    expect(sequence).toEqual(sequence.map((_, i) => i));
    const ofCall = events.filter((e) => e.output_index === 0);
    expect(ofCall.map((e) => e.type)).toEqual([
      "response.output_item.added",
      ...Array(5).fill("response.function_call_arguments.delta"),
      "response.function_call_arguments.done",
      "response.output_item.done",
    ]);
    expect(ofCall.filter((e) => e.type.endsWith(".delta")).map((e) => e.delta)).toEqual(
      ARGS.match(/.{1,6}/gsu),
    );
    expect(ofCall.at(-2)?.arguments).toBe(ARGS);
    const final = events.at(-1) as {
      type: string;
      response: { output: Array<{ type: string; status: string; arguments?: string }> };
    };
    expect(final.type).toBe("response.completed");
    expect(final.response.output.map((i) => [i.type, i.status])).toEqual([
      ["function_call", "completed"],
      ["function_call_output", "completed"],
      ["message", "completed"],
    ]);
    expect(final.response.output[0]?.arguments).toBe(ARGS);
  });

  it("upstream call events with wrong types, unknown places or hostile names stay well-formed", async () => {
    const hostileName = 'x\n\nevent: response.completed\ndata: {"type":"x"}\u001b[2J\u0000';
    const { send } = setup([
      {
        items: [{ type: "function_call", name: "leak", arguments: ARGS }],
        reorder: (events) => {
          const extra = [
            // A piece for a place nothing was announced at, a piece that is not text, places that
            // are not indexes, and a call without a call_id: none of them streams anything.
            { type: "response.function_call_arguments.delta", item_id: "fc_x", output_index: 7, delta: "zz" },
            { type: "response.function_call_arguments.delta", item_id: "fc_x", output_index: 0, delta: 42 },
            {
              type: "response.function_call_arguments.delta",
              item_id: "fc_x",
              output_index: "0",
              delta: "s",
            },
            {
              type: "response.output_item.added",
              output_index: -1e12,
              item: {
                type: "function_call",
                id: "fc_h",
                call_id: "call_h",
                name: hostileName,
                arguments: "",
              },
            },
            {
              type: "response.function_call_arguments.delta",
              item_id: "fc_h",
              output_index: -1e12,
              delta: "\r\n\r\n",
            },
            {
              type: "response.output_item.added",
              output_index: 3,
              item: { type: "function_call", id: "fc_n", name: "leak", arguments: "" },
            },
            { type: "response.function_call_arguments.delta", item_id: "fc_n", output_index: 3, delta: "{}" },
          ];
          return [...events.slice(0, 3), ...extra, ...events.slice(3)];
        },
      },
      { items: [{ type: "message", text: "done" }] },
    ]);
    const res = await send("POST", "/v1/responses", { model: "eddy", input: "go", stream: true });
    const events = sseEvents(await res.text());
    for (const event of events) expect(validateStreamingEvent(event)).toBeUndefined();
    const sequence = events.map((e) => e.sequence_number);
    expect(sequence).toEqual(sequence.map((_, i) => i));
    expect(events.filter((e) => e.type === "response.completed")).toHaveLength(1);
    // The hostile call never finished upstream: it ends incomplete with its one piece, its name
    // inside the JSON of its events.
    const hostile = events.filter((e) => e.item_id === "fc_h" || (e.item as { id?: string })?.id === "fc_h");
    expect(hostile.map((e) => e.type)).toEqual([
      "response.output_item.added",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.done",
      "response.output_item.done",
    ]);
    expect(hostile[0]?.item).toMatchObject({ name: hostileName });
    expect(hostile.at(-1)?.item).toMatchObject({ status: "incomplete", arguments: "\r\n\r\n" });
    expect(events.some((e) => e.item_id === "fc_n" || e.item_id === "fc_x")).toBe(false);
    const real = events.filter(
      (e) => e.type === "response.function_call_arguments.delta" && e.item_id !== "fc_h",
    );
    expect(real.map((e) => e.delta).join("")).toBe(ARGS);
  });
});

describe("the Open Responses face records each run as a tape", () => {
  it("the tape is named after the response, holds every frame without secrets, and replays", async () => {
    const { send, dir, tools } = setup([call("leak"), text("done")]);
    const res = await send("POST", "/v1/responses", {
      model: "eddy",
      input: "go",
      metadata: { path: "../../etc/passwd" },
    });
    const body = (await res.json()) as { id: string; status: string };
    expect(body.status).toBe("completed");
    const names = readdirSync(join(dir, "responses"));
    expect(names).toHaveLength(1);
    // Named by the server (the response id, then 16 random hex digits), never by the request.
    expect(names[0]).toMatch(new RegExp(`^${body.id}_[0-9a-f]{16}\\.tape$`));
    const path = join(dir, "responses", names[0] as string);
    expect(readFileSync(path, "utf8")).not.toContain(SECRET);
    const tape = readTape(path);
    expect(tape.frames.at(-1)).toMatchObject({ type: "run_ended", reason: "completed" });
    expect(tape.frames.filter((f) => f.type === "tool_ended")).toHaveLength(1);
    const outcome = await replayTape(tape, { registry: createToolRegistry(tools), workspace: dir });
    expect(outcome.verdict).toEqual({ match: true, frames: tape.frames.length });
  });

  it("a max_output_tokens or max_tool_calls above the server's runs under the server's, and the response says what the run was allowed", async () => {
    const { send, dir } = setup([text("one"), text("two"), text("three")], undefined, {
      request: { max_output_tokens: 4096 },
    });
    // Above the server's (--max-output-tokens 4096, the default 32 tool calls): lowered, and said.
    const greedy = await send("POST", "/v1/responses", {
      model: "eddy",
      input: "hi",
      max_output_tokens: 2 ** 53,
      max_tool_calls: 1_000_000,
    });
    expect(greedy.status).toBe(200);
    const resource = (await greedy.json()) as {
      id: string;
      max_output_tokens: number;
      max_tool_calls: number;
    };
    expect([resource.max_output_tokens, resource.max_tool_calls]).toEqual([4096, 32]);
    const stored = (await (await send("GET", `/v1/responses/${resource.id}`)).json()) as typeof resource;
    expect([stored.max_output_tokens, stored.max_tool_calls]).toEqual([4096, 32]);
    const tapeOf = (id: string) => {
      const name = readdirSync(join(dir, "responses")).find((n) => n.startsWith(`${id}_`)) as string;
      return readTape(join(dir, "responses", name));
    };
    const sent = tapeOf(resource.id).frames.find((f) => f.type === "request_started") as
      | { body: { max_output_tokens?: number; max_tool_calls?: number } }
      | undefined;
    expect(sent?.body.max_output_tokens).toBe(4096);
    // Streamed: every snapshot of the response, from response.created on, carries the same.
    const streamed = await send("POST", "/v1/responses", {
      model: "eddy",
      input: "hi",
      stream: true,
      max_output_tokens: 100_000,
    });
    const snapshots = (await streamed.text())
      .split("\n")
      .filter((l) => l.startsWith("data: {"))
      .map((l) => JSON.parse(l.slice(6)) as { response?: { max_output_tokens: number | null } })
      .flatMap((e) => (e.response === undefined ? [] : [e.response.max_output_tokens]));
    expect(snapshots.length).toBeGreaterThanOrEqual(2);
    expect(new Set(snapshots)).toEqual(new Set([4096]));
    // At or below the server's: run and reported as asked.
    const modest = await send("POST", "/v1/responses", {
      model: "eddy",
      input: "hi",
      max_output_tokens: 100,
      max_tool_calls: 3,
    });
    const own = (await modest.json()) as typeof resource;
    expect([own.max_output_tokens, own.max_tool_calls]).toEqual([100, 3]);
    expect(tapeOf(own.id).header.spec).toMatchObject({
      max_tool_calls: 3,
      request: { max_output_tokens: 100 },
    });
  });

  it("two responses, two tapes; a cancelled run's tape ends with its run_ended too", async () => {
    const { send, dir, probe } = setup([text("one"), call("wait"), text("never")]);
    expect((await send("POST", "/v1/responses", { model: "eddy", input: "a" })).status).toBe(200);
    const { stop } = await streamUntil(send, { model: "eddy", input: "b" }, callDone("wait"));
    await stop();
    await expect.poll(() => probe.disposed).toBe(2);
    const tapes = readdirSync(join(dir, "responses")).map((n) => readTape(join(dir, "responses", n)));
    expect(tapes.map((t) => t.frames.at(-1)?.type)).toEqual(["run_ended", "run_ended"]);
    expect(tapes.map((t) => (t.frames.at(-1) as { reason: string }).reason).sort()).toEqual([
      "cancelled",
      "completed",
    ]);
  });

  it("a tape that stops being written mid-run (a full disk) stops the run; what was written stays", async () => {
    const { send, dir, probe } = setup([call("leak"), text("never")], { failAfter: 2 });
    const res = await send("POST", "/v1/responses", { model: "eddy", input: "go" });
    const body = (await res.json()) as { status: string; error: { code: string; message: string } | null };
    expect(body.status).toBe("failed");
    expect(body.error).toMatchObject({
      code: "tape_failed",
      message: "eddy serve could not record this run's tape: ENOSPC",
    });
    expect(probe.disposed).toBe(1);
    const [name] = readdirSync(join(dir, "responses"));
    const tape = readTape(join(dir, "responses", name as string));
    expect(tape.frames.map((f) => f.type)).toEqual(["run_started", "request_started"]);
  });

  it("a run that cannot be recorded does not run: the response fails naming the problem", async () => {
    const { send, dir, probe } = setup([call("leak"), text("never")]);
    writeFileSync(join(dir, "responses"), "not a folder");
    const res = await send("POST", "/v1/responses", { model: "eddy", input: "go" });
    const body = (await res.json()) as { status: string; error: { code: string; message: string } | null };
    expect(body.status).toBe("failed");
    expect(body.error?.code).toBe("tape_failed");
    // The code of the system error, not the server's paths.
    expect(body.error?.message).toMatch(/^eddy serve could not record this run's tape: E[A-Z]+$/);
    expect(body.error?.message).not.toContain(dir);
    expect(body.error?.message).not.toMatch(/\n\s+at /); // no stack
    expect(probe.disposed).toBe(1);
    // Streamed, the same: a failed terminal event, no tool ran.
    const streamed = sseEvents(
      await (await send("POST", "/v1/responses", { model: "eddy", input: "go", stream: true })).text(),
    );
    for (const event of streamed) expect(validateStreamingEvent(event)).toBeUndefined();
    expect(streamed.at(-1)?.type).toBe("response.failed");
    expect(streamed.some((e) => e.type === "response.output_item.added")).toBe(false);
  });

  it.each([
    ["a symlink to a file", (at: string, dir: string) => symlinkSync(join(dir, "elsewhere"), at)],
    ["a dangling symlink", (at: string) => symlinkSync("/nonexistent/eddy-tapes", at)],
    ["a FIFO", (at: string) => execFileSync("mkfifo", [at])],
  ])("the tapes' folder is %s: the response fails at once, nothing runs", async (_what, make) => {
    const { send, dir, probe } = setup([call("leak"), text("never")]);
    writeFileSync(join(dir, "elsewhere"), "a file");
    make(join(dir, "responses"), dir);
    const res = await send("POST", "/v1/responses", { model: "eddy", input: "go" });
    const body = (await res.json()) as { status: string; error: { code: string; message: string } | null };
    expect(body.status).toBe("failed");
    expect(body.error?.code).toBe("tape_failed");
    expect(body.error?.message).toMatch(/^eddy serve could not record this run's tape: E[A-Z]+$/);
    expect(probe.disposed).toBe(1);
    expect(readFileSync(join(dir, "elsewhere"), "utf8")).toBe("a file");
  });
});

describe("the Open Responses face bounds a response's output tokens as a whole", () => {
  const spent = (output: number, reasoning = 0) => ({
    input_tokens: 10,
    output_tokens: output,
    total_tokens: 10 + output,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens_details: { reasoning_tokens: reasoning },
  });
  /** An upstream response that reports no usage (`usage: null` in its resource). */
  const noUsage = (script: Script) =>
    ({
      ...script,
      reorder: (events) =>
        events.map((e) => (isResource(e.response) ? { ...e, response: { ...e.response, usage: null } } : e)),
    }) as Script;
  const isResource = (value: unknown): value is Record<string, unknown> =>
    typeof value === "object" && value !== null;
  const asked = (provider: { requests: Array<{ max_output_tokens?: unknown }> }) =>
    provider.requests.map((r) => r.max_output_tokens);
  interface Resource {
    id: string;
    status: string;
    incomplete_details: { reason: string } | null;
    usage: { output_tokens: number; output_tokens_details: { reasoning_tokens: number } };
    output: Array<{ type: string }>;
  }
  const tapeOf = (dir: string, id: string) => {
    const name = readdirSync(join(dir, "responses")).find((n) => n.startsWith(`${id}_`)) as string;
    return readTape(join(dir, "responses", name));
  };

  it("a request after a tool may generate only what the earlier ones left (reasoning counted); usage is the sum; the tape replays", async () => {
    const { send, provider, dir, tools } = setup([
      { ...call("leak"), usage: spent(60, 40) },
      { ...text("done"), usage: spent(30) },
    ]);
    const res = await send("POST", "/v1/responses", { model: "eddy", input: "go", max_output_tokens: 100 });
    const body = (await res.json()) as Resource;
    // Before: [100, 100] — each request had the whole bound, so the response could generate 200.
    expect(asked(provider)).toEqual([100, 40]);
    expect(body.status).toBe("completed");
    expect(body.usage.output_tokens).toBe(90);
    expect(body.usage.output_tokens_details.reasoning_tokens).toBe(40);
    const tape = tapeOf(dir, body.id);
    expect(tape.frames.filter((f) => f.type === "turn_prepared")).toMatchObject([
      { turn: 1, max_output_tokens: 40 },
    ]);
    const outcome = await replayTape(tape, { registry: createToolRegistry(tools), workspace: dir });
    expect(outcome.verdict).toEqual({ match: true, frames: tape.frames.length });
  });

  it.each([
    ["nothing", 100],
    ["less than a request may ask for (16)", 85],
    ["less than nothing (an upstream that went over)", 150],
  ])(
    "with %s left, no further request is sent: incomplete, max_output_tokens, usage the sum",
    async (_what, used) => {
      const { send, provider, dir, tools } = setup([{ ...call("leak"), usage: spent(used) }, text("never")]);
      const res = await send("POST", "/v1/responses", { model: "eddy", input: "go", max_output_tokens: 100 });
      const body = (await res.json()) as Resource;
      expect(asked(provider)).toEqual([100]);
      expect(body.status).toBe("incomplete");
      expect(body.incomplete_details).toEqual({ reason: "max_output_tokens" });
      expect(body.usage.output_tokens).toBe(used);
      // The call ran (its output is in the response); the answer it would have led to was not asked for.
      expect(body.output.map((i) => i.type)).toEqual(["function_call", "function_call_output"]);
      const tape = tapeOf(dir, body.id);
      expect(tape.frames.at(-1)).toMatchObject({
        type: "run_ended",
        reason: "incomplete",
        error: { code: "max_output_tokens" },
      });
      const outcome = await replayTape(tape, { registry: createToolRegistry(tools), workspace: dir });
      expect(outcome.verdict).toEqual({ match: true, frames: tape.frames.length });
    },
  );

  it("streamed, the budget's end is a valid response.incomplete naming max_output_tokens", async () => {
    const { send } = setup([{ ...call("leak"), usage: spent(95) }, text("never")]);
    const res = await send("POST", "/v1/responses", {
      model: "eddy",
      input: "go",
      max_output_tokens: 100,
      stream: true,
    });
    const events = sseEvents(await res.text());
    for (const event of events) expect(validateStreamingEvent(event)).toBeUndefined();
    const final = events.at(-1) as { type: string; response: Resource };
    expect(final.type).toBe("response.incomplete");
    expect(final.response.incomplete_details).toEqual({ reason: "max_output_tokens" });
  });

  it('the upstream\'s own stop for max_output_tokens is named as such (it said "incomplete")', async () => {
    const { send } = setup([{ ...text("cut"), status: "incomplete", usage: spent(100) }]);
    const res = await send("POST", "/v1/responses", { model: "eddy", input: "go", max_output_tokens: 100 });
    const body = (await res.json()) as Resource;
    expect(body.status).toBe("incomplete");
    expect(body.incomplete_details).toEqual({ reason: "max_output_tokens" });
  });

  it("an upstream that reports no usage keeps the bound per request", async () => {
    const { send, provider } = setup([noUsage(call("leak")), noUsage(text("done"))]);
    const res = await send("POST", "/v1/responses", { model: "eddy", input: "go", max_output_tokens: 100 });
    const body = (await res.json()) as Resource;
    expect(asked(provider)).toEqual([100, 100]);
    expect(body.status).toBe("completed");
  });

  it("the bound is the one the response was allowed (the server's when lower); without one, the server's bounds each request", async () => {
    const scripts = [
      { ...call("leak"), usage: spent(1000) },
      { ...text("done"), usage: spent(30) },
    ];
    const lowered = setup(scripts, undefined, { request: { max_output_tokens: 4096 } });
    await lowered.send("POST", "/v1/responses", { model: "eddy", input: "go", max_output_tokens: 100_000 });
    expect(asked(lowered.provider)).toEqual([4096, 3096]);
    const unbounded = setup(scripts, undefined, { request: { max_output_tokens: 4096 } });
    await unbounded.send("POST", "/v1/responses", { model: "eddy", input: "go" });
    expect(asked(unbounded.provider)).toEqual([4096, 4096]);
  });
});
