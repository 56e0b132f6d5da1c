import { describe, expect, it } from "vitest";
import { composedRun, replayComposed } from "../../test/support/compose.js";
import type { Script } from "../../test/support/scripted.js";
import type { JsonObject } from "../protocol/types.js";
import { defineTool } from "../tools/tool.js";
import { agentTool, MAX_AGENT_DEPTH, MAX_AGENT_RUNS } from "./agent-tool.js";

const reviewer = agentTool({
  name: "reviewer",
  description: "Reviews a change",
  spec: { instructions: "You are the reviewer. Be terse.", model: "review-model", max_turns: 2 },
});

const scripts: Script[] = [
  {
    items: [{ type: "function_call", name: "reviewer", arguments: '{"input":"review x=1"}', call_id: "c1" }],
  },
  { items: [{ type: "message", text: "LGTM from the reviewer" }] },
  { items: [{ type: "message", text: "the reviewer approved" }] },
];

function callOutput(request: JsonObject | undefined): string {
  const input = (request?.input ?? []) as JsonObject[];
  return String(input.find((i) => i.type === "function_call_output" && i.call_id === "c1")?.output);
}

describe("agentTool", () => {
  it("an agent offered itself nests at most MAX_AGENT_DEPTH deep: the call below is refused, not run", async () => {
    const deep = agentTool({
      name: "deep",
      description: "Goes deeper",
      spec: { instructions: "Go on.", tools: ["deep"] },
    });
    const call = (id: string): Script => ({
      items: [{ type: "function_call", name: "deep", arguments: '{"input":"deeper"}', call_id: id }],
    });
    const answer = (text: string): Script => ({ items: [{ type: "message", text }] });
    // The top run and each sub-run down to MAX_AGENT_DEPTH call `deep`; the deepest one's call is
    // refused, and each answers in turn on the way back up.
    const depths = Array.from({ length: MAX_AGENT_DEPTH + 1 }, (_, d) => d);
    const run = await composedRun(
      [...depths.map((d) => call(`c${d}`)), ...depths.reverse().map((d) => answer(`answer at ${d}`))],
      {},
      [deep],
    );
    expect(run.result.reason).toBe("completed");
    expect(run.result.outputText).toBe("answer at 0");
    const refused = run.requests[MAX_AGENT_DEPTH + 1]?.input as JsonObject[];
    const output = refused.find(
      (i) => i.type === "function_call_output" && i.call_id === `c${MAX_AGENT_DEPTH}`,
    );
    expect(JSON.parse(String(output?.output))).toMatchObject({
      ok: false,
      error: { code: "agent_depth_exceeded" },
    });
    const replay = await replayComposed(run.tape, [deep]);
    expect(replay.verdict).toMatchObject({ match: true });
  });

  it("a run's whole tree starts at most MAX_AGENT_RUNS agent calls: the one after is refused, not run", async () => {
    const helper = agentTool({ name: "helper", description: "Helps", spec: { instructions: "Help." } });
    const calls = Array.from({ length: MAX_AGENT_RUNS + 1 }, (_, i) => ({
      type: "function_call" as const,
      name: "helper",
      arguments: JSON.stringify({ input: `task ${i}` }),
      call_id: `h${i}`,
    }));
    const subAnswers = Array.from(
      { length: MAX_AGENT_RUNS },
      (): Script => ({ items: [{ type: "message", text: "helped" }] }),
    );
    const run = await composedRun(
      [{ items: calls }, ...subAnswers, { items: [{ type: "message", text: "all done" }] }],
      { max_tool_calls: MAX_AGENT_RUNS + 10 },
      [helper],
    );
    expect(run.result.outputText).toBe("all done");
    expect(run.requests).toHaveLength(MAX_AGENT_RUNS + 2);
    const outputs = ((run.requests.at(-1)?.input ?? []) as JsonObject[])
      .filter((i) => i.type === "function_call_output")
      .map((i) => JSON.parse(String(i.output)) as { ok: boolean; error?: { code: string } });
    expect(outputs.filter((o) => o.ok)).toHaveLength(MAX_AGENT_RUNS);
    expect(outputs.filter((o) => !o.ok)).toMatchObject([{ error: { code: "agent_budget_spent" } }]);
  });

  it("runs a sub-agent on its own spec; its answer reaches the parent's follow-up; the tape replays", async () => {
    const run = await composedRun(scripts, { instructions: "You are the parent." }, [reviewer]);
    expect(run.result.reason).toBe("completed");
    expect(run.requests).toHaveLength(3);
    const sub = run.requests[1] ?? {};
    expect(sub.instructions).toBe("You are the reviewer. Be terse.");
    expect(sub.model).toBe("review-model");
    expect(sub.tools).toBeUndefined();
    expect(JSON.stringify(sub.input)).toContain("review x=1");
    expect(callOutput(run.requests[2])).toContain("LGTM from the reviewer");
    expect(run.result.outputText).toBe("the reviewer approved");

    const ended = run.frames.find((f) => f.type === "tool_ended");
    expect(ended?.type === "tool_ended" && ended.ok).toBe(true);
    const subrun = ended?.type === "tool_ended" ? ended.subrun : undefined;
    expect(subrun?.agent).toBe("reviewer");
    expect(subrun?.frames[0]).toMatchObject({
      type: "run_started",
      instructions: "You are the reviewer. Be terse.",
    });
    expect(subrun?.frames.at(-1)).toMatchObject({ type: "run_ended", output_text: "LGTM from the reviewer" });

    // The replay has no provider answer for the sub-agent: it gets the recorded one from the tape.
    const replay = await replayComposed(run.tape, [reviewer]);
    expect(replay.verdict).toMatchObject({ match: true });
    expect(replay.result.outputText).toBe("the reviewer approved");
  });

  it("a sub-run that does not complete answers ok:false naming its end reason", async () => {
    const looping: Script[] = [
      scripts[0] as Script,
      { items: [{ type: "function_call", name: "lookup", arguments: "{}", call_id: "s1" }] },
      { items: [{ type: "message", text: "gave up" }] },
    ];
    const limited = agentTool({
      name: "reviewer",
      description: "Reviews a change",
      spec: { instructions: "Review.", max_turns: 1 },
    });
    const run = await composedRun(looping, {}, [limited]);
    expect(run.requests).toHaveLength(3);
    expect(callOutput(run.requests[2])).toContain("the agent reviewer ended max_turns");
    const replay = await replayComposed(run.tape, [limited]);
    expect(replay.verdict).toMatchObject({ match: true });
  });

  it("the parent's hooks decide on the sub-agent's calls too", async () => {
    const ran: string[] = [];
    const lookup = defineTool({
      name: "lookup",
      description: "Looks a secret up",
      parameters: { type: "object", properties: {} },
      execute: () => {
        ran.push("lookup");
        return "TOPSECRET";
      },
    });
    const withTools = agentTool({
      name: "reviewer",
      description: "Reviews a change",
      spec: { instructions: "Review.", tools: ["lookup"] },
    });
    const nested: Script[] = [
      scripts[0] as Script,
      { items: [{ type: "function_call", name: "lookup", arguments: "{}", call_id: "s1" }] },
      { items: [{ type: "message", text: "could not look it up" }] },
      { items: [{ type: "message", text: "done" }] },
    ];
    const run = await composedRun(nested, { tools: ["reviewer"] }, [withTools, lookup], {
      hooks: {
        beforeToolCall: (call) =>
          call.name === "lookup" ? { action: "deny", reason: "blocked by policy" } : { action: "allow" },
      },
    });
    expect(ran).toEqual([]);
    expect(JSON.stringify(run.requests)).not.toContain("TOPSECRET");
    expect(JSON.stringify(run.requests[2]?.input)).toContain("blocked by policy");
    expect(callOutput(run.requests[3])).toContain("could not look it up");
  });
});
