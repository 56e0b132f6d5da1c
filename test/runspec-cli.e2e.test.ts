/**
 * End-to-end: every way of starting a run honours the local invocation's settings and policy, and
 * only those (docs/architecture.md, "One home for a run's settings"). `eddy batch --sandbox` runs
 * a task's shell call under bubblewrap; `eddy batch --mcp` offers the server's tools to each task;
 * `--approve defer` ends a run awaiting approval (exit 4) and `eddy resume --decide` continues it in
 * another process with the permissions that process grants — never those of the tape.
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import Ajv2020 from "ajv/dist/2020.js";
import { afterEach, describe, expect, it } from "vitest";
import type { ResultLine } from "../src/batch/batch-dir.js";
import { parseFrames } from "../src/frames/jsonl.js";
import { runSpecSchema } from "../src/loop/run-spec.js";
import { createMockServer, type MockServer } from "../src/mock/index.js";
import type { Scenario } from "../src/mock/scenario.js";
import { readTape } from "../src/replay/tape.js";
import { probeBubblewrap } from "../src/tools/builtin/index.js";
import { runCli } from "./support/cli.js";
import { MCP_TEST_SERVER, newMarker } from "./support/mcp.js";

const HAS_BWRAP = (await probeBubblewrap(process.env.PATH)).ok;
const validateSpec = new Ajv2020.default({ strict: false }).compile(runSpecSchema);

let mock: MockServer | undefined;
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await mock?.close();
  mock = undefined;
  for (const close of closers.splice(0)) await close();
});

async function startMock(scenario: Scenario): Promise<string> {
  mock = await createMockServer({ scenario });
  return mock.url;
}

function workspace(): string {
  return mkdtempSync(join(tmpdir(), "eddy-runspec-e2e-"));
}

const call = (name: string, args: Record<string, unknown>, call_id: string) => ({
  type: "function_call" as const,
  name,
  arguments: args,
  call_id,
});
/** A remote MCP server as a hosted tool (`--tool mcp:LABEL=URL`). */
const DOCS = "mcp:docs=https://docs.example/mcp";
const say = (text: string) => ({ items: [{ type: "message" as const, text }] });

/**
 * A proxy in front of the mock that takes the hosted MCP tools out of each request (the mock, as
 * the spec, knows only function tools) and keeps their `server_url`s in `hosted`, one per request.
 */
async function withoutHostedTools(target: string): Promise<{ url: string; hosted: string[] }> {
  const hosted: string[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
      tools?: { type: string; server_url?: string }[];
    };
    for (const tool of body.tools ?? []) if (tool.type === "mcp") hosted.push(tool.server_url ?? "");
    body.tools = body.tools?.filter((tool) => tool.type !== "mcp");
    const answer = await fetch(`${target}${(req.url ?? "").replace(/^\/v1/, "")}`, {
      method: req.method ?? "POST",
      headers: { "content-type": "application/json", authorization: req.headers.authorization ?? "" },
      body: JSON.stringify(body),
    });
    res.writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "text/plain" });
    res.end(Buffer.from(await answer.arrayBuffer()));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, hosted };
}

function results(dir: string): ResultLine[] {
  return readFileSync(join(dir, "out", "results.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as ResultLine);
}

/** `eddy batch` of one task (id `t1`) against the mock at `url`, with the given flags. */
async function batchOneTask(url: string, input: string, ...flags: string[]) {
  const cwd = workspace();
  writeFileSync(join(cwd, "tasks.jsonl"), `${JSON.stringify({ id: "t1", input })}\n`);
  const r = await runCli(
    ["batch", "tasks.jsonl", "--out", "out", "--base-url", url, "--model", "m", ...flags],
    {
      cwd,
    },
  );
  return { cwd, r };
}

describe("eddy batch applies the run flags", () => {
  it.skipIf(!HAS_BWRAP)("--allow-shell --sandbox: a task's shell call cannot touch the host", async () => {
    const outside = join(homedir(), `eddy-batch-sandbox-${process.pid}-${Date.now()}`);
    const url = await startMock({
      turns: [
        {
          items: [
            call("shell", { command: `echo inside > made.txt; touch ${outside}; echo "touch=$?"` }, "c1"),
          ],
        },
        say("done"),
      ],
    });
    const { cwd, r } = await batchOneTask(url, "go", "--allow-shell", "--sandbox");
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(outside)).toBe(false);
    expect(readFileSync(join(cwd, "made.txt"), "utf8")).toBe("inside\n");
    const tape = readTape(join(cwd, "out", "tapes", "t1.tape"));
    const ended = tape.frames.find((f) => f.type === "tool_ended");
    expect(ended?.type === "tool_ended" && ended.output).toMatch(/touch=1/);
    expect(tape.header.policy).toMatchObject({ allowShell: true, sandbox: true });
  });

  it("--mcp: each task is offered the server's tools and calls them", async () => {
    const url = await startMock({
      turns: [
        { items: [call("local__echo", { text: "from the batch" }, "c1")] },
        { expect: { functionCallOutputs: "c1" }, items: [{ type: "message", text: "echoed" }] },
      ],
    });
    const server = `local=${process.execPath} ${MCP_TEST_SERVER} --marker ${newMarker()}`;
    const { cwd, r } = await batchOneTask(url, "echo it", "--mcp", server);
    expect(r.code, r.stderr).toBe(0);
    expect(results(cwd)[0]).toMatchObject({ id: "t1", reason: "completed" });
    const body = mock?.requests[0]?.body as { tools?: { name: string }[] } | undefined;
    const tools = body?.tools ?? [];
    expect(tools.map((t) => t.name)).toContain("local__echo");
    const ended = readTape(join(cwd, "out", "tapes", "t1.tape")).frames.find((f) => f.type === "tool_ended");
    expect(ended?.type === "tool_ended" && ended.ok).toBe(true);
    expect(JSON.stringify(ended)).toContain("from the batch");
  });

  it("--approve ask is refused: nobody is there to answer (exit 2, nothing sent)", async () => {
    const url = await startMock({ turns: [say("never")] });
    const { r } = await batchOneTask(url, "x", "--allow-write", "--approve", "ask");
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--approve ask/);
    expect(mock?.requests).toHaveLength(0);
  });
});

describe("--approve defer, then eddy resume --decide in another process", () => {
  const writeScenario = (): Scenario => ({
    turns: [
      { items: [call("write_file", { path: "notes.txt", content: "hello\n" }, "call_w")] },
      { expect: { functionCallOutputs: "call_w" }, items: [{ type: "message", text: "wrote it" }] },
    ],
  });

  /** `eddy run --approve defer` of the write scenario, recorded as t.tape (`extra`: more flags). */
  async function deferred(cwd: string, url: string, ...extra: string[]) {
    const r = await runCli(
      [
        "run",
        "--json",
        "--allow-write",
        "--approve",
        "defer",
        "--record",
        "t.tape",
        "--base-url",
        url,
        "--model",
        "m",
        ...extra,
        "write notes",
      ],
      { cwd },
    );
    expect(r.code, r.stderr).toBe(4);
    const frames = parseFrames(r.stdout);
    expect(frames.find((f) => f.type === "approval_requested")).toMatchObject({ call_id: "call_w" });
    expect(frames.at(-1)).toMatchObject({
      type: "run_ended",
      reason: "awaiting_approval",
      pending_calls: ["call_w"],
    });
    expect(existsSync(join(cwd, "notes.txt"))).toBe(false);
    // The header carries the run's spec, valid against the exported JSON Schema.
    const header = readTape(join(cwd, "t.tape")).header;
    expect(validateSpec(JSON.parse(JSON.stringify(header.spec))), JSON.stringify(validateSpec.errors)).toBe(
      true,
    );
  }

  it("allow writes the file once and completes; a second resume finds nothing to do", async () => {
    const url = await startMock(writeScenario());
    const cwd = workspace();
    await deferred(cwd, url);
    const resumed = await runCli(
      ["resume", "t.tape", "--allow-write", "--decide", "call_w=allow", "--base-url", url],
      { cwd },
    );
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain("wrote it");
    expect(readFileSync(join(cwd, "notes.txt"), "utf8")).toBe("hello\n");
    const again = await runCli(["resume", "t.tape", "--allow-write", "--base-url", url], { cwd });
    expect(again.stderr).toMatch(/already ended \(completed\)/);
    expect(again.code).toBe(0);
    const replay = await runCli(["replay", "t.tape"], { cwd });
    expect(replay.stdout).toMatch(/replay matches/);
  });

  it("deny completes without writing; the model is told", async () => {
    const url = await startMock(writeScenario());
    const cwd = workspace();
    await deferred(cwd, url);
    const resumed = await runCli(
      ["resume", "t.tape", "--allow-write", "--decide", "all=deny", "--base-url", url],
      { cwd },
    );
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(existsSync(join(cwd, "notes.txt"))).toBe(false);
    expect(JSON.stringify(mock?.requests.at(-1)?.body)).toMatch(/denied/i);
  });

  it("the tape's permissions count for nothing: without --allow-write resume exits 2 naming it", async () => {
    const url = await startMock(writeScenario());
    const cwd = workspace();
    await deferred(cwd, url);
    const sent = mock?.requests.length;
    const resumed = await runCli(["resume", "t.tape", "--decide", "call_w=allow", "--base-url", url], {
      cwd,
    });
    expect(resumed.code).toBe(2);
    expect(resumed.stderr).toContain("--allow-write");
    expect(resumed.stderr.trim().split("\n")).toHaveLength(1);
    expect(existsSync(join(cwd, "notes.txt"))).toBe(false);
    expect(mock?.requests.length).toBe(sent);
  });

  it("a tape's hosted tools need this invocation's --tool, field for field: refused by name without it, resumed with it", async () => {
    const { url, hosted } = await withoutHostedTools(await startMock(writeScenario()));
    const cwd = workspace();
    await deferred(cwd, url, "--tool", DOCS);
    const sent = mock?.requests.length;
    const refused = await runCli(
      ["resume", "t.tape", "--allow-write", "--decide", "all=allow", "--base-url", url],
      {
        cwd,
      },
    );
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('the hosted tool "mcp:docs" is not one this invocation declares');
    expect(refused.stderr).toContain("run with --tool mcp:LABEL=URL");
    expect(refused.stderr).not.toContain("docs.example");
    const elsewhere = await runCli(
      ["resume", "t.tape", "--allow-write", "--tool", "mcp:docs=https://elsewhere.example/mcp"].concat([
        "--decide",
        "all=allow",
        "--base-url",
        url,
      ]),
      { cwd },
    );
    expect(elsewhere.code).toBe(2);
    expect(mock?.requests.length).toBe(sent);
    const resumed = await runCli(
      ["resume", "t.tape", "--allow-write", "--tool", DOCS, "--decide", "all=allow", "--base-url", url],
      { cwd },
    );
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(hosted).toEqual(["https://docs.example/mcp", "https://docs.example/mcp"]);
  });

  it("a tasks-file line may not add a hosted tool eddy batch was not given (that task fails, naming --tool)", async () => {
    const url = await startMock({ turns: [say("done")] });
    const cwd = workspace();
    const planted = { type: "mcp", server_label: "x", server_url: "https://evil.example/mcp" };
    writeFileSync(
      join(cwd, "tasks.jsonl"),
      `${JSON.stringify({ id: "t1", input: "hi", hosted_tools: [planted] })}\n`,
    );
    const r = await runCli(["batch", "tasks.jsonl", "--out", "out", "--base-url", url, "--model", "m"], {
      cwd,
    });
    expect(r.code).toBe(1);
    const [line] = results(cwd);
    expect(line?.error?.message).toContain('hosted tool "mcp:x"');
    expect(line?.error?.message).toContain("--tool mcp:LABEL=URL");
    expect(mock?.requests.length).toBe(0);
  });

  it("an edited tape that turns the pending call into a shell command needs --allow-shell, and runs nothing without it", async () => {
    const url = await startMock(writeScenario());
    const cwd = workspace();
    await deferred(cwd, url);
    const marker = join(homedir(), `eddy-tampered-${process.pid}-${Date.now()}`);
    const text = readFileSync(join(cwd, "t.tape"), "utf8")
      .replaceAll('\\"name\\":\\"write_file\\"', '\\"name\\":\\"shell\\"')
      .replaceAll('"name":"write_file"', '"name":"shell"')
      .replace(/"tools":\[[^\]]*\]/, '"tools":["read_file","shell"]');
    writeFileSync(join(cwd, "t.tape"), text.replaceAll("notes.txt", `touch ${marker}`));
    const resumed = await runCli(["resume", "t.tape", "--decide", "all=allow", "--base-url", url], { cwd });
    expect(resumed.code).toBe(2);
    expect(resumed.stderr).toContain("--allow-shell");
    expect(existsSync(marker)).toBe(false);
  });

  it("--decide for a call the run is not waiting for is a usage error naming the calls it waits for", async () => {
    const url = await startMock(writeScenario());
    const cwd = workspace();
    await deferred(cwd, url);
    const r = await runCli(
      ["resume", "t.tape", "--allow-write", "--decide", "call_x=allow", "--base-url", url],
      {
        cwd,
      },
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("call_w");
  });
});
