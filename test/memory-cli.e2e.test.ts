/**
 * End-to-end, through the built CLI: threads that remember across runs (the demo model answers
 * from what the compiled context carries), concurrent runs on one thread, the tool-history
 * settings from flags and the config file, and a context overflow — each run replayed with
 * `eddy replay`, which must match.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseThreadLog } from "../src/context/threads.js";
import type { Frame } from "../src/frames/frame.js";
import { parseFrames } from "../src/frames/jsonl.js";
import { createMockServer, type MockServer, type Scenario } from "../src/mock/index.js";
import type { JsonObject } from "../src/protocol/types.js";
import { runCli } from "./support/cli.js";
import { ofType } from "./support/frames.js";

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

function workspace(files: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), "eddy-memory-cli-"));
  for (const [name, text] of Object.entries({ "a.txt": "alpha\n", "b.txt": "beta\n", ...files }))
    writeFileSync(join(dir, name), text);
  return dir;
}

async function mock(scenario: Scenario): Promise<MockServer> {
  const server = await createMockServer({ scenario });
  closers.push(() => server.close());
  return server;
}

const read = (path: string) => ({
  items: [{ type: "function_call" as const, name: "read_file", arguments: { path } }],
});
const say = (text: string) => ({ items: [{ type: "message" as const, text }] });
const inputOf = (server: MockServer, i: number) =>
  ((server.requests[i]?.body as JsonObject | undefined)?.input ?? []) as JsonObject[];

/** `eddy run --json --record TAPE …`: the frames, and `eddy replay TAPE` must match. */
async function runAndReplay(cwd: string, args: string[]): Promise<Frame[]> {
  const tape = join(cwd, `run-${Math.random().toString(36).slice(2)}.tape`);
  const r = await runCli(["run", "--json", "--record", tape, ...args], { cwd });
  expect(r.code, r.stderr).toBe(0);
  const replay = await runCli(["replay", tape], { cwd });
  expect(replay.stdout + replay.stderr).toMatch(/replay matches/);
  expect(replay.code).toBe(0);
  return parseFrames(r.stdout);
}

const answer = (frames: Frame[]) => {
  const last = frames.at(-1);
  return last?.type === "run_ended" ? last.output_text : undefined;
};

describe("eddy run --thread NAME", () => {
  it("three runs on the demo model: the third remembers the first two through bundles, and each replays", async () => {
    const cwd = workspace();
    const first = await runAndReplay(cwd, ["--thread", "me", "My name is Ada."]);
    expect(answer(first)).toBe("Noted: your name is Ada.");
    const second = await runAndReplay(cwd, ["--thread", "me", "My favourite colour is teal."]);
    expect(answer(second)).toBe("Noted: your favourite colour is teal.");
    const third = await runAndReplay(cwd, [
      "--thread",
      "me",
      "What is my name? And what is my favourite colour?",
    ]);
    expect(answer(third)).toBe("Your name is Ada. Your favourite colour is teal.");

    // context_compiled right after run_started, naming a stored bundle; no previous_response_id.
    expect(third.slice(0, 2).map((f) => f.type)).toEqual(["run_started", "context_compiled"]);
    const compiled = ofType(third, "context_compiled")[0];
    expect(compiled).toMatchObject({ thread: "me", runs: 2, strategy: "recent_messages_v1", item_count: 4 });
    const bundle = JSON.parse(
      readFileSync(join(cwd, ".eddy", "bundles", `${compiled?.bundle_id}.json`), "utf8"),
    );
    expect(bundle.source.map((s: { reason: string }) => s.reason)).toEqual(["completed", "completed"]);
    for (const started of ofType(third, "request_started"))
      expect(started.body.previous_response_id).toBeUndefined();

    // The human view says where the context came from.
    const human = await runCli(["run", "--thread", "me", "What is my name?"], { cwd });
    expect(human.stdout).toBe("Your name is Ada.\n");
    expect(human.stderr).toMatch(/↺ context: 3 earlier runs of thread me \(6 items, ~\d+ tokens\)/);

    // Without the thread the demo model has nothing to remember.
    const alone = await runCli(["run", "What is my name?"], { cwd });
    expect(alone.stdout).toContain("You haven’t told me your name");

    const log = parseThreadLog("me", readFileSync(join(cwd, ".eddy", "threads", "me.jsonl"), "utf8"));
    expect(log.runs.map((r) => r.outcome?.output_text)).toEqual([
      "Noted: your name is Ada.",
      "Noted: your favourite colour is teal.",
      "Your name is Ada. Your favourite colour is teal.",
      "Your name is Ada.",
    ]);
    expect(log.runs.slice(0, 3).every((r) => r.outcome?.tape?.endsWith(".tape"))).toBe(true);
    const shown = await runCli(["threads", "show", "me"], { cwd });
    expect(shown.stdout).toContain("thread me: 4 runs");
  });

  it("three concurrent runs on one thread keep its log whole: three prompts, three outcomes", async () => {
    const cwd = workspace();
    const results = await Promise.all(
      ["Ada", "Grace", "Alan"].map((name) =>
        runCli(["run", "--thread", "busy", `My name is ${name}.`], { cwd }),
      ),
    );
    for (const r of results) expect(r.code, r.stderr).toBe(0);
    const text = readFileSync(join(cwd, ".eddy", "threads", "busy.jsonl"), "utf8");
    const lines = text.trimEnd().split("\n");
    expect(lines).toHaveLength(6);
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
    const log = parseThreadLog("busy", text);
    expect(log.skipped).toBe(0);
    expect(log.runs).toHaveLength(3);
    expect(log.runs.map((r) => r.outcome?.reason)).toEqual(["completed", "completed", "completed"]);
    expect(log.runs.map((r) => r.prompt.prompt).sort()).toEqual(
      ["My name is Ada.", "My name is Alan.", "My name is Grace."].sort(),
    );
    const listed = await runCli(["threads", "--json"], { cwd });
    expect(JSON.parse(listed.stdout)).toMatchObject([{ name: "busy", runs: 3 }]);
  });

  it("a run deferred on a thread and decided with eddy resume: the thread's log takes its new outcome, and the next run continues from it", async () => {
    const cwd = workspace();
    const server = await mock({
      turns: [
        {
          items: [
            {
              type: "function_call",
              name: "write_file",
              arguments: { path: "w.txt", content: "hi" },
              call_id: "cw",
            },
          ],
        },
        say("Wrote w.txt."),
        { ...say("You had me write w.txt."), expect: { inputContains: "Wrote w.txt." } },
      ],
    });
    const base = ["--base-url", server.url, "--model", "m", "--allow-write"];
    const deferred = await runCli(
      ["run", ...base, "--approve", "defer", "--thread", "d1", "--record", "d.tape", "write it"],
      { cwd },
    );
    expect(deferred.code, deferred.stderr).toBe(4);
    const resumed = await runCli(["resume", ...base, "--decide", "cw=allow", "d.tape"], { cwd });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(readFileSync(join(cwd, "w.txt"), "utf8")).toBe("hi");
    const log = parseThreadLog("d1", readFileSync(join(cwd, ".eddy", "threads", "d1.jsonl"), "utf8"));
    expect(log.runs.map((r) => [r.outcome?.reason, r.outcome?.output_text, r.outcome?.tape])).toEqual([
      ["completed", "Wrote w.txt.", "d.tape"],
    ]);
    // The next run on the thread sees the call's output and the answer (the mock checks the input).
    const next = await runCli(["run", ...base, "--thread", "d1", "what did you do?"], { cwd });
    expect(next.code, next.stderr).toBe(0);
    expect(next.stdout).toContain("You had me write w.txt.");
    expect(JSON.stringify(inputOf(server, 2))).not.toContain("missing_output");
  });

  it("refuses a bad thread name, and --thread with --context, before anything runs (exit 2)", async () => {
    const cwd = workspace();
    const bad = await runCli(["run", "--thread", "../etc", "hi"], { cwd });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/thread name "\.\.\/etc" is not allowed/);
    const both = await runCli(["run", "--thread", "t", "--context", "x.tape", "hi"], { cwd });
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/--thread and --context cannot be combined/);
  });
});

describe("tool-history settings from the CLI and the config file", () => {
  const twoReads: Scenario = { turns: [read("a.txt"), read("b.txt"), say("done")] };

  it("config history.strategy text-embed takes effect; --history-strategy native overrides it", async () => {
    const cwd = workspace();
    writeFileSync(join(cwd, "eddy.config.json"), JSON.stringify({ history: { strategy: "text-embed" } }));
    const embedded = await mock(twoReads);
    await runAndReplay(cwd, ["--base-url", embedded.url, "--model", "m", "--stateless", "Read a.txt"]);
    const sent = inputOf(embedded, 2);
    expect(sent.some((i) => i.type === "function_call" || i.type === "function_call_output")).toBe(false);
    expect(JSON.stringify(sent)).toContain("beta");

    const native = await mock(twoReads);
    await runAndReplay(cwd, [
      "--base-url",
      native.url,
      "--model",
      "m",
      "--stateless",
      "--history-strategy",
      "native",
      "Read a.txt",
    ]);
    expect(inputOf(native, 2).filter((i) => i.type === "function_call")).toHaveLength(2);

    const shown = await runCli(["config"], { cwd });
    expect(shown.stdout).toMatch(/history_strategy\s+text-embed\s+\(config: /);
  });

  it("--truncation-threshold and --recent-calls-to-keep fold older calls (a context_compacted frame)", async () => {
    const cwd = workspace();
    const server = await mock(twoReads);
    const frames = await runAndReplay(cwd, [
      "--base-url",
      server.url,
      "--model",
      "m",
      "--stateless",
      "--truncation-threshold",
      "30",
      "--recent-calls-to-keep",
      "1",
      "Read a.txt",
    ]);
    expect(ofType(frames, "context_compacted")[0]).toMatchObject({ trigger: "threshold", calls_removed: 1 });
    expect(inputOf(server, 2).filter((i) => i.type === "function_call")).toHaveLength(1);
  });

  it("--summarization-model asks that model for the summary; the replay does not ask again", async () => {
    const cwd = workspace();
    const server = await mock({
      turns: [
        read("a.txt"),
        read("b.txt"),
        { expect: { body: { model: "summ-1" } }, ...say("SUMMARY: a.txt holds alpha.") },
        say("done"),
      ],
    });
    const frames = await runAndReplay(cwd, [
      "--base-url",
      server.url,
      "--model",
      "m",
      "--stateless",
      "--truncation-threshold",
      "30",
      "--recent-calls-to-keep",
      "1",
      "--summarization-model",
      "summ-1",
      "Read a.txt",
    ]);
    expect(ofType(frames, "context_compacted")[0]).toMatchObject({
      method: "model_summary",
      model: "summ-1",
    });
    expect(JSON.stringify(inputOf(server, 3))).toContain("SUMMARY: a.txt holds alpha.");
    // The replay ran offline: the server saw the recorded run's four requests and nothing more.
    expect(server.requests).toHaveLength(4);
  });

  it("refuses a bad --history-strategy (exit 2)", async () => {
    const r = await runCli(["run", "--history-strategy", "prose", "hi"], { cwd: workspace() });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--history-strategy must be auto or native or text-embed \(got "prose"\)/);
  });
});

describe("context overflow through the CLI", () => {
  it("a scenario with a small context window ends in a completed run after compaction; the replay matches", async () => {
    const cwd = workspace({ "a.txt": `${"alpha ".repeat(200)}\n`, "b.txt": `${"beta ".repeat(120)}\n` });
    const server = await mock({ contextWindow: 400, turns: [read("a.txt"), read("b.txt"), say("done")] });
    const frames = await runAndReplay(cwd, ["--base-url", server.url, "--model", "m", "Read a.txt"]);
    expect(ofType(frames, "context_compacted")[0]).toMatchObject({ trigger: "overflow", calls_removed: 1 });
    expect(frames.at(-1)).toMatchObject({ type: "run_ended", reason: "completed", output_text: "done" });

    const again = await mock({ contextWindow: 400, turns: [read("a.txt"), read("b.txt"), say("done")] });
    const human = await runCli(["run", "--base-url", again.url, "--model", "m", "Read a.txt"], { cwd });
    expect(human.code).toBe(0);
    expect(human.stderr).toMatch(
      /⇣ compacted the conversation \(overflow, extractive_summary\): \d+ → \d+ tokens, 2 items removed/,
    );
  });
});
