/**
 * Steering a running run over HTTP (`POST /v1/runs/ID/steer`, `/v1/threads/NAME/steer`) and
 * resuming an interrupted one (`POST /v1/runs/ID/resume`), in-process through the handler; and the
 * watcher cap holding with thousands of watchers.
 */

import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createScriptedProvider, type Script } from "../../test/support/scripted.js";
import type { Frame } from "../frames/frame.js";
import { createPolicy } from "../loop/policy.js";
import { createToolRegistry } from "../tools/registry.js";
import { defineTool } from "../tools/tool.js";
import { createServeHandler, type ServeHandlerOptions } from "./handler.js";
import { createRunService, type RunService } from "./runs.js";
import { jsonRequest } from "./test-support/request.js";

const text = (t: string): Script => ({ items: [{ type: "message", text: t }] });
const gateCall = (id: string): Script => ({
  items: [{ type: "function_call", name: "gate", arguments: "{}", call_id: id }],
});

/** A tool that waits until the test opens it, counting its runs. */
function gate() {
  let open: () => void = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  const state = { runs: 0, open: () => open() };
  const tool = defineTool({
    name: "gate",
    description: "Waits",
    parameters: { type: "object", properties: {} },
    execute: async () => {
      state.runs++;
      await opened;
      return "opened";
    },
  });
  return { tool, state };
}

function setup(scripts: Script[], o: { dataDir?: string; handler?: ServeHandlerOptions } = {}) {
  const dataDir = o.dataDir ?? mkdtempSync(join(tmpdir(), "eddy-serve-steer-"));
  const provider = createScriptedProvider(scripts);
  const g = gate();
  const service = createRunService({
    provider,
    spec: { model: "m" },
    policy: createPolicy(),
    tools: () => createToolRegistry([g.tool]),
    workspace: dataDir,
    dataDir,
    secrets: ["sk-very-secret"],
  });
  const handler = createServeHandler(service, o.handler);
  const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    handler(jsonRequest(method, path, body, headers));
  return { service, call, dataDir, provider, gate: g.state };
}

async function start(
  call: ReturnType<typeof setup>["call"],
  path = "/v1/runs",
  body: unknown = { input: "hi" },
) {
  const res = await call("POST", path, body);
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

/** Resolves once the run's log holds a frame of `type`. */
async function seen(service: RunService, id: string, type: string): Promise<void> {
  const run = service.get(id);
  if (run === undefined) throw new Error(`no run ${id}`);
  while (!run.log.frames.some((f) => f.type === type)) await run.log.changed();
}

function eventIds(body: string): number[] {
  return [...body.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
}

function frames(body: string): Frame[] {
  return [...body.matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1] as string) as Frame);
}

describe("POST /v1/runs/ID/steer", () => {
  it("the message reaches the model at the next turn boundary, recorded as a steered frame", async () => {
    const { call, service, provider, gate } = setup([gateCall("c1"), text("steered answer")]);
    const id = await start(call);
    await seen(service, id, "tool_started");
    const res = await call("POST", `/v1/runs/${id}/steer`, { message: "answer in French" });
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ id, status: "running" });
    gate.open();
    await service.get(id)?.done;
    expect(service.get(id)?.status).toBe("completed");
    expect(provider.requests).toHaveLength(2);
    expect(JSON.stringify(provider.requests[1])).toContain("answer in French");
    expect(JSON.stringify(provider.requests[0])).not.toContain("answer in French");
    const body = await (await call("GET", `/v1/runs/${id}/events`)).text();
    const steered = frames(body).find((f) => f.type === "steered");
    expect(steered).toMatchObject({ type: "steered", turn: 1, message: "answer in French" });
    // The tape records it too, so a replay reproduces it.
    expect(readFileSync(join(service.runtime.dataDir, "runs", `${id}.tape`), "utf8")).toContain(
      '"type":"steered"',
    );
  });

  it("a message the run ends before sending is shown as undelivered_steering, not dropped without a word", async () => {
    const { call, service, provider } = setup([gateCall("c1"), text("never asked")]);
    const id = await start(call);
    await seen(service, id, "tool_started");
    expect((await call("POST", `/v1/runs/${id}/steer`, { message: "answer in French" })).status).toBe(202);
    expect((await call("POST", `/v1/runs/${id}/steer`, { message: "and be brief" })).status).toBe(202);
    expect((await call("POST", `/v1/runs/${id}/cancel`)).status).toBe(200);
    await service.get(id)?.done;
    const view = (await (await call("GET", `/v1/runs/${id}`)).json()) as Record<string, unknown>;
    expect(view.status).toBe("cancelled");
    expect(view.undelivered_steering).toEqual(["answer in French", "and be brief"]);
    expect(JSON.stringify(provider.requests)).not.toContain("answer in French");
  });

  it("a run that sent its steering shows no undelivered_steering", async () => {
    const { call, service, gate } = setup([gateCall("c1"), text("steered answer")]);
    const id = await start(call);
    await seen(service, id, "tool_started");
    await call("POST", `/v1/runs/${id}/steer`, { message: "answer in French" });
    gate.open();
    await service.get(id)?.done;
    const view = (await (await call("GET", `/v1/runs/${id}`)).json()) as Record<string, unknown>;
    expect(view.status).toBe("completed");
    expect(view).not.toHaveProperty("undelivered_steering");
  });

  it("a thread's running turn is steered by the thread's name; an idle thread is 409", async () => {
    const { call, service, provider, gate } = setup([gateCall("c1"), text("ok")]);
    const id = await start(call, "/v1/threads/t1/messages", { input: "hi" });
    await seen(service, id, "tool_started");
    expect((await call("POST", "/v1/threads/t1/steer", { message: "be brief" })).status).toBe(202);
    gate.open();
    await service.get(id)?.done;
    expect(JSON.stringify(provider.requests[1])).toContain("be brief");
    expect((await call("POST", "/v1/threads/t1/steer", { message: "again" })).status).toBe(409);
  });

  it.each([
    ["a finished run", "finished", { message: "x" }, 409],
    ["an unknown run", "/v1/runs/run_nope/steer", { message: "x" }, 404],
    ["a path trick in the id", "/v1/runs/..%2F..%2Fetc/steer", { message: "x" }, 404],
    ["a wrong type", "running", { message: 42 }, 400],
    ["a blank message", "running", { message: "   " }, 400],
    ["an unknown field", "running", { message: "x", allow_shell: true }, 400],
    ["no body", "running", "", 400],
    ["an oversized body", "running", { message: "x".repeat(4096) }, 413],
    ["a bad thread name", "/v1/threads/..%2Fx/steer", { message: "x" }, 400],
  ])("%s is refused with a clear error", async (_name, target, body, status) => {
    const { call, service, gate } = setup([gateCall("c1"), text("ok"), text("ok")], {
      handler: { maxBodyBytes: 1024 },
    });
    let path = target;
    if (target === "finished" || target === "running") {
      const id = await start(call);
      if (target === "finished") {
        gate.open();
        await service.get(id)?.done;
      } else await seen(service, id, "tool_started");
      path = `/v1/runs/${id}/steer`;
    }
    const res = await call("POST", path, body);
    expect(res.status).toBe(status);
    const answer = await res.text();
    expect(answer).not.toContain("sk-very-secret");
    expect((JSON.parse(answer) as { error: { message: string } }).error.message).not.toBe("");
    gate.open();
  });
});

describe("POST /v1/runs/ID/resume", () => {
  it("an interrupted run continues from its tape under the server's policy: the call that had started is not run again; its events keep their ids", async () => {
    const first = setup([gateCall("c1"), text("never sent")]);
    const id = await start(first.call);
    first.gate.open();
    await first.service.get(id)?.done;
    expect(first.gate.runs).toBe(1);
    // The server died while the call ran: its tape stops after tool_started.
    const tapePath = join(first.dataDir, "runs", `${id}.tape`);
    const lines = readFileSync(tapePath, "utf8").trimEnd().split("\n");
    const cut = lines.findIndex((l) => l.includes('"type":"tool_started"'));
    writeFileSync(tapePath, `${lines.slice(0, cut + 1).join("\n")}\n`);

    // The call started before its response had ended: the turn is requested again, and the same
    // call made again is answered as interrupted, not run (batch/resume.ts).
    const again = setup([gateCall("c1"), text("resumed answer")], { dataDir: first.dataDir });
    expect(again.service.get(id)?.status).toBe("interrupted");
    const before = await (await again.call("GET", `/v1/runs/${id}/events`)).text();
    const last = eventIds(before).at(-1) as number;
    expect(last).toBe(cut - 1);
    const res = await again.call("POST", `/v1/runs/${id}/resume`);
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ id, status: "running" });
    const rest = await (
      await again.call("GET", `/v1/runs/${id}/events`, undefined, { "last-event-id": String(last) })
    ).text();
    const ids = eventIds(rest);
    expect(ids).toEqual(ids.map((_, i) => last + 1 + i));
    const after = frames(rest);
    const ended = after.find((f) => f.type === "tool_ended");
    expect(ended).toMatchObject({ call_id: "c1", ok: false });
    expect(JSON.stringify(ended)).toMatch(/interrupted/);
    expect(after.at(-1)).toMatchObject({
      type: "run_ended",
      reason: "completed",
      output_text: "resumed answer",
    });
    expect(again.gate.runs).toBe(0); // at most once: the interrupted call is not run again
    expect(again.service.get(id)?.status).toBe("completed");
    // Resuming it again is a conflict: it is no longer interrupted.
    expect((await again.call("POST", `/v1/runs/${id}/resume`)).status).toBe(409);
  });

  it("a tape that no longer reads: 500 naming no path, the reason in the server's log; the run stays interrupted", async () => {
    const first = setup([gateCall("c1"), text("never sent")]);
    const id = await start(first.call);
    first.gate.open();
    await first.service.get(id)?.done;
    const tapePath = join(first.dataDir, "runs", `${id}.tape`);
    const lines = readFileSync(tapePath, "utf8").trimEnd().split("\n");
    const cut = lines.findIndex((l) => l.includes('"type":"tool_started"'));
    lines[2] = "{ damaged";
    writeFileSync(tapePath, `${lines.slice(0, cut + 1).join("\n")}\n`);
    const errors: unknown[] = [];
    const again = setup([text("never")], {
      dataDir: first.dataDir,
      handler: { onError: (e) => errors.push(e) },
    });
    expect(again.service.get(id)?.status).toBe("interrupted");
    const res = await again.call("POST", `/v1/runs/${id}/resume`);
    expect(res.status).toBe(500);
    expect(await res.text()).not.toContain(first.dataDir);
    expect(String(errors[0])).toMatch(new RegExp(`run ${id} cannot be resumed: .*line 3`));
    expect(again.service.get(id)?.status).toBe("interrupted");
  });

  it.each([
    ["a completed run", "completed", 409],
    ["a running run", "running", 409],
    ["an unknown run", "/v1/runs/run_nope/resume", 404],
    ["a path trick in the id", "/v1/runs/%2E%2E/resume", 404],
    ["a NUL in the id", "/v1/runs/run_a%00b/resume", 404],
  ])("resuming %s is refused", async (_name, target, status) => {
    const { call, service, gate } = setup([gateCall("c1"), text("ok")]);
    let path = target;
    if (target === "completed" || target === "running") {
      const id = await start(call);
      if (target === "completed") {
        gate.open();
        await service.get(id)?.done;
      } else await seen(service, id, "tool_started");
      path = `/v1/runs/${id}/resume`;
    }
    const res = await call("POST", path);
    expect(res.status).toBe(status);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/\S/);
    gate.open();
  });
});

describe("thousands of watchers", () => {
  it("beyond maxWatchers each gets 429; memory stays bounded (each watcher holds a cursor, not a copy)", async () => {
    const { call, service, gate } = setup([gateCall("c1"), text("ok")], { handler: { maxWatchers: 1000 } });
    const id = await start(call);
    await seen(service, id, "tool_started");
    global.gc?.();
    const heapBefore = process.memoryUsage().heapUsed;
    const answers = await Promise.all(
      Array.from({ length: 3000 }, () => call("GET", `/v1/runs/${id}/events`)),
    );
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1000);
    expect(statuses.filter((s) => s === 429)).toHaveLength(2000);
    // Every open stream reads the one shared log: 1000 of them cost far less than 1000 copies of it.
    const readers = answers.filter((r) => r.status === 200).map((r) => r.body?.getReader());
    await Promise.all(readers.map((r) => r?.read()));
    const grown = process.memoryUsage().heapUsed - heapBefore;
    expect(grown).toBeLessThan(200 * 1024 * 1024);
    gate.open();
    await service.get(id)?.done;
    for (const r of readers) await r?.cancel();
    expect((await call("GET", `/v1/runs/${id}/events`)).status).toBe(200);
  });
});
