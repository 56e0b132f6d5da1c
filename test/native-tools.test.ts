/**
 * Native tool items run locally (issue 17, part 1), against streams built from the real OpenAI
 * captures: `apply_patch_call` (openai-apply-patch-tool.1, its operation rewritten for an update
 * and a delete), a local `shell_call` (openai-shell-tool.1, with two commands), `local_shell_call`
 * (openai-local-shell-tool.1), `custom_tool_call` (openai-custom-tool.1). Each call goes through
 * the same gates as a function call and is answered with its own output item, in chained and
 * stateless mode; the recorded run replays.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Frame } from "../src/frames/frame.js";
import type { ApprovalRequest } from "../src/loop/approvals.js";
import type { RunDeps } from "../src/loop/options.js";
import { createPolicy } from "../src/loop/policy.js";
import { runAgent } from "../src/loop/run.js";
import type { RunSpecInput } from "../src/loop/run-spec.js";
import type { JsonObject } from "../src/protocol/types.js";
import { createTapeHeader } from "../src/replay/header.js";
import { createTapeRecorder, type TapeRecorder } from "../src/replay/recorder.js";
import { replayTape } from "../src/replay/replay.js";
import { readTape } from "../src/replay/tape.js";
import { createBuiltinTools } from "../src/tools/builtin/index.js";
import { createToolRegistry } from "../src/tools/registry.js";
import { defineTool } from "../src/tools/tool.js";
import {
  type CaptureResponse,
  captureResponse,
  createCaptureProvider,
  editItem,
} from "./support/capture-provider.js";
import { assertFrameInvariants } from "./support/frames.js";

const CREATE_ID = "apc_0372d86dfc1762fe00692741f3f3dc8190879cba489ff2fc8b";
const CREATE_CALL = "call_kA46f91ZwocQyMCKyyZqRyC5";
const SHELL_ID = "sh_0434d6d64b12b08900692f639c9f0481959c30e03ca0bb2ef8";
const SHELL_CALL = "call_pbxjNs1tMJUahLZKAS9qLtvw";

/** The captured create_file call, as recorded. */
const createFile = () => captureResponse("openai/openai-apply-patch-tool.1");

/** The same capture with another call id and an `update_file` operation (a V4A diff). */
const updateFile = () =>
  captureResponse("openai/openai-apply-patch-tool.1", 0, (e) => {
    if (typeof e.response === "object" && e.response !== null) (e.response as JsonObject).id = "resp_update";
    editItem(e, CREATE_ID, (item) => {
      item.call_id = "call_update_1";
      item.operation = {
        type: "update_file",
        path: "shopping-checklist.md",
        diff: "@@\n - [ ] Bread\n-- [ ] Eggs\n+- [ ] Free-range eggs\n",
      };
    });
  });

/** A final answer (the second response of openai-shell-tool.1). */
const answer = () => captureResponse("openai/openai-shell-tool.1", 1);

/** The captured shell_call with two commands instead of its one. */
const shellCall = (commands: string[]) =>
  captureResponse("openai/openai-shell-tool.1", 0, (e) =>
    editItem(e, SHELL_ID, (item) => {
      (item.action as JsonObject).commands = commands;
    }),
  );

function workspace(): string {
  return mkdtempSync(join(tmpdir(), "eddy-native-"));
}

interface Ran {
  frames: Frame[];
  requests: JsonObject[];
  reason: string;
  tape: string;
}

async function run(
  responses: CaptureResponse[],
  dir: string,
  tools: { allowWrite?: boolean; allowShell?: boolean },
  options: Partial<RunSpecInput> & Pick<RunDeps, "onApproval"> = {},
): Promise<Ran> {
  const provider = createCaptureProvider(responses, { nativeTools: true });
  const { tools: defs, disabled } = createBuiltinTools(tools);
  const { onApproval, ...spec } = options;
  const tape = join(dir, "..", `${dir.split("/").pop()}.tape`);
  let recorder: TapeRecorder | undefined;
  const handle = runAgent(
    { model: "gpt-5.1", input: "Make me a shopping checklist", run_id: "run_native", ...spec },
    {
      provider,
      tools: createToolRegistry(defs, { disabled }),
      workspace: dir,
      ...(onApproval === undefined ? {} : { onApproval }),
      onFrame: (f) => recorder?.observer(f),
    },
  );
  recorder = createTapeRecorder(
    tape,
    createTapeHeader(handle.spec, {
      provider,
      policy: createPolicy({ allowWrite: tools.allowWrite === true, allowShell: tools.allowShell === true }),
    }),
    [],
  );
  const frames: Frame[] = [];
  for await (const f of handle) frames.push(f);
  recorder.close();
  assertFrameInvariants(frames);
  return { frames, requests: provider.requests, reason: (await handle.result).reason, tape };
}

async function replays(ran: Ran, dir: string, tools: { allowWrite?: boolean; allowShell?: boolean }) {
  const { tools: defs, disabled } = createBuiltinTools(tools);
  const outcome = await replayTape(readTape(ran.tape), {
    registry: createToolRegistry(defs, { disabled }),
    workspace: dir,
  });
  expect(outcome.verdict, JSON.stringify(outcome.verdict).slice(0, 1500)).toEqual({
    match: true,
    frames: ran.frames.length,
  });
}

const inputOf = (body: JsonObject) => body.input as JsonObject[];
const toolsOf = (body: JsonObject | undefined) => (body?.tools ?? []) as JsonObject[];

describe("apply_patch_call", () => {
  it("creates, then updates a file with --allow-write; each answer carries the call's call_id", async () => {
    const dir = workspace();
    const ran = await run([createFile(), updateFile(), answer()], dir, { allowWrite: true });
    expect(ran.reason).toBe("completed");
    expect(readFileSync(join(dir, "shopping-checklist.md"), "utf8")).toBe(
      "## Shopping Checklist\n\n- [ ] Milk\n- [ ] Bread\n- [ ] Free-range eggs\n- [ ] Fresh fruit\n- [ ] Coffee\n",
    );
    // The native type is offered instead of the function imitation.
    const tools = toolsOf(ran.requests[0]);
    expect(tools).toContainEqual({ type: "apply_patch" });
    expect(tools.some((t) => t.name === "apply_patch")).toBe(false);
    const calls = ran.frames.filter((f) => f.type === "tool_call");
    expect(calls.map((f) => [f.name, f.item_type, f.call_id])).toEqual([
      ["apply_patch", "apply_patch_call", CREATE_CALL],
      ["apply_patch", "apply_patch_call", "call_update_1"],
    ]);
    const [first, second] = [inputOf(ran.requests[1] as JsonObject), inputOf(ran.requests[2] as JsonObject)];
    expect(first).toHaveLength(1);
    expect(first[0]).toMatchObject({
      type: "apply_patch_call_output",
      call_id: CREATE_CALL,
      status: "completed",
    });
    expect(String(first[0]?.output)).toContain("A shopping-checklist.md");
    expect(second[0]).toMatchObject({
      type: "apply_patch_call_output",
      call_id: "call_update_1",
      status: "completed",
    });
    expect(ran.requests[1]?.previous_response_id).toBe(
      "resp_0372d86dfc1762fe00692741f339a08190bce9b78ee2079295",
    );
    await replays(ran, workspace(), { allowWrite: true });
  });

  it("is refused without --allow-write: failed, with the reason, and nothing is written", async () => {
    const dir = workspace();
    const ran = await run([createFile(), answer()], dir, {});
    const output = inputOf(ran.requests[1] as JsonObject)[0];
    expect(output).toMatchObject({ type: "apply_patch_call_output", call_id: CREATE_CALL, status: "failed" });
    expect(String(output?.output)).toContain("run with --allow-write to enable it");
    expect(() => readFileSync(join(dir, "shopping-checklist.md"))).toThrow();
    // Not offered (write is off), yet answered, never dropped.
    expect(toolsOf(ran.requests[0]).some((t) => t.type === "apply_patch")).toBe(false);
    await replays(ran, workspace(), {});
  });

  it("deletes a file (openai-apply-patch-tool-delete.1) and stays inside the workspace", async () => {
    const dir = workspace();
    writeFileSync(join(dir, "obsolete.txt"), "old\n");
    const ran = await run([captureResponse("openai/openai-apply-patch-tool-delete.1"), answer()], dir, {
      allowWrite: true,
    });
    expect(() => readFileSync(join(dir, "obsolete.txt"))).toThrow();
    expect(inputOf(ran.requests[1] as JsonObject)[0]).toMatchObject({
      type: "apply_patch_call_output",
      call_id: "call_delete_1",
      status: "completed",
    });
    const outside = captureResponse("openai/openai-apply-patch-tool.1", 0, (e) =>
      editItem(e, CREATE_ID, (item) => {
        (item.operation as JsonObject).path = "../escape.md";
      }),
    );
    const escaped = await run([outside, answer()], dir, { allowWrite: true });
    const refused = inputOf(escaped.requests[1] as JsonObject)[0];
    expect(refused?.status).toBe("failed");
    expect(String(refused?.output)).toContain("path_outside_workspace");
  });

  it("stateless: the history resends the call item and its output, paired", async () => {
    const dir = workspace();
    const ran = await run([createFile(), answer()], dir, { allowWrite: true }, { mode: "stateless" });
    const input = inputOf(ran.requests[1] as JsonObject);
    expect(input.map((i) => i.type)).toEqual(["message", "apply_patch_call", "apply_patch_call_output"]);
    expect(input[2]?.call_id).toBe(input[1]?.call_id);
    expect(ran.frames.some((f) => f.type === "history_repaired")).toBe(false);
  });

  it("asks for approval like the apply_patch function tool, and a denial fails the call", async () => {
    const dir = workspace();
    const asked: string[] = [];
    const ran = await run(
      [createFile(), answer()],
      dir,
      { allowWrite: true },
      {
        onApproval: (request) => {
          asked.push(`${request.name}:${request.itemType}`);
          return "deny";
        },
      },
    );
    expect(asked).toEqual(["apply_patch:apply_patch_call"]);
    expect(inputOf(ran.requests[1] as JsonObject)[0]).toMatchObject({ status: "failed" });
    expect(() => readFileSync(join(dir, "shopping-checklist.md"))).toThrow();
  });
});

describe("shell_call (local)", () => {
  it("runs two commands with --allow-shell and answers with one shell_call_output chunk each", async () => {
    const dir = workspace();
    const ran = await run([shellCall(["printf one", "echo two >&2; exit 3"]), answer()], dir, {
      allowShell: true,
    });
    expect(toolsOf(ran.requests[0]).at(-1)).toEqual({
      type: "shell",
      environment: { type: "local" },
    });
    const output = inputOf(ran.requests[1] as JsonObject)[0];
    expect(output).toEqual({
      type: "shell_call_output",
      call_id: SHELL_CALL,
      output: [
        { stdout: "one", stderr: "", outcome: { type: "exit", exit_code: 0 } },
        { stdout: "", stderr: "two\n", outcome: { type: "exit", exit_code: 3 } },
      ],
      max_output_length: 8912,
    });
    const ended = ran.frames.find((f) => f.type === "tool_ended");
    expect(ended).toMatchObject({ name: "shell", ok: false });
    await replays(ran, workspace(), { allowShell: true });
  });

  it("is refused without --allow-shell, with the reason in stderr", async () => {
    const ran = await run([shellCall(["touch made-it"]), answer()], workspace(), {});
    const output = inputOf(ran.requests[1] as JsonObject)[0] as JsonObject;
    const [chunk] = output.output as JsonObject[];
    expect(chunk?.stderr).toContain("run with --allow-shell to enable it");
    expect(chunk?.outcome).toEqual({ type: "exit", exit_code: 126 });
  });

  it("a hosted shell (container environment) is the provider's: not run, not answered", async () => {
    const ran = await run([captureResponse("openai/openai-shell-container.1")], workspace(), {
      allowShell: true,
    });
    expect(ran.frames.some((f) => f.type === "tool_call")).toBe(false);
    expect(ran.requests).toHaveLength(1);
    expect(ran.reason).toBe("completed");
  });
});

describe("local_shell_call and custom_tool_call", () => {
  it("local_shell_call runs its argv through shell and is answered with local_shell_call_output", async () => {
    const dir = workspace();
    writeFileSync(join(dir, "marker.txt"), "");
    const local = captureResponse("openai/openai-local-shell-tool.1", 0, (e) =>
      editItem(e, "lsh_68da7fd99b3c8194bd624b18c0c0851b0faf5df54b42d9a6", (item) => {
        (item.action as JsonObject).command = ["ls", "-a", "."];
      }),
    );
    const ran = await run([local, answer()], dir, { allowShell: true }, { native_shell: "local_shell" });
    expect(toolsOf(ran.requests[0])).toContainEqual({ type: "local_shell" });
    const output = inputOf(ran.requests[1] as JsonObject)[0] as JsonObject;
    expect(output).toMatchObject({
      type: "local_shell_call_output",
      call_id: "call_h3nm8hUG0KO9tVNuRACkL1ri",
    });
    expect(JSON.parse(String(output.output))).toMatchObject({ tool: "shell", ok: true });
    expect(String(output.output)).toContain("marker.txt");
  });

  it("custom_tool_call: the free-form input reaches a free-form tool, offered as {type:custom}", async () => {
    const seen: string[] = [];
    const writeSql = defineTool<{ input: string }>({
      name: "write_sql",
      description: "Run one SQL query",
      parameters: { type: "object", properties: { input: { type: "string" } }, required: ["input"] },
      freeform: { syntax: "lark", definition: 'start: "SELECT" /.+/' },
      execute: ({ input }) => {
        seen.push(input);
        return "3 rows";
      },
    });
    const provider = createCaptureProvider([captureResponse("openai/openai-custom-tool.1"), answer()], {
      nativeTools: true,
    });
    const handle = runAgent(
      { model: "gpt-5", input: "users over 25?" },
      { provider, tools: [writeSql], workspace: workspace() },
    );
    for await (const _ of handle);
    expect(seen).toEqual(["SELECT * FROM users WHERE age > 25"]);
    expect(toolsOf(provider.requests[0])[0]).toEqual({
      type: "custom",
      name: "write_sql",
      description: "Run one SQL query",
      format: { type: "grammar", syntax: "lark", definition: 'start: "SELECT" /.+/' },
    });
    const output = inputOf(provider.requests[1] as JsonObject)[0] as JsonObject;
    expect(output).toMatchObject({ type: "custom_tool_call_output", call_id: "call_custom_sql_001" });
    expect(JSON.parse(String(output.output))).toMatchObject({ ok: true, stdout: "3 rows" });
  });

  it("without the capability the items stay provider items (xAI runs its own custom_tool_calls)", async () => {
    const provider = createCaptureProvider([captureResponse("openai/openai-custom-tool.1")], {});
    const handle = runAgent({ model: "m", input: "q" }, { provider, workspace: workspace() });
    const frames: Frame[] = [];
    for await (const f of handle) frames.push(f);
    expect(frames.some((f) => f.type === "tool_call")).toBe(false);
    expect(provider.requests).toHaveLength(1);
  });
});

describe("mcp_approval_request (remote MCP through the provider)", () => {
  const REQUEST_ID = "mcpr_04a97b4fce127879006949a8672ac081959f95aa8ceedb7cd9";
  const zip = { type: "mcp", server_label: "zip1", server_url: "https://zip1.io/mcp" } as const;

  async function approve(decision: "allow" | "deny" | undefined) {
    const provider = createCaptureProvider(
      [
        captureResponse("openai/openai-mcp-tool-approval.3"),
        captureResponse("openai/openai-mcp-tool-approval.4"),
      ],
      { nativeTools: true },
    );
    const asked: string[] = [];
    const handle = runAgent(
      { model: "gpt-5", input: "Shorten https://ai-sdk.dev/", hosted_tools: [zip] },
      {
        provider,
        workspace: workspace(),
        // The hosted tool is this program's own: its policy declares it (a spec alone grants nothing).
        policy: createPolicy({ hostedTools: [zip] }),
        ...(decision === undefined
          ? {}
          : {
              onApproval: (request: ApprovalRequest) => {
                asked.push(`${request.itemType} ${request.name} ${request.arguments.slice(0, 10)}`);
                return decision;
              },
            }),
      },
    );
    const frames: Frame[] = [];
    for await (const f of handle) frames.push(f);
    assertFrameInvariants(frames);
    return { provider, asked, frames, result: await handle.result };
  }

  it("goes through the approval flow and is answered with mcp_approval_response on the next turn", async () => {
    const { provider, asked, result, frames } = await approve("allow");
    expect(asked).toEqual(['mcp_approval_request zip1__create_short_url {"alias":"']);
    expect(toolsOf(provider.requests[0])).toEqual([zip]);
    expect(inputOf(provider.requests[1] as JsonObject)).toEqual([
      { type: "mcp_approval_response", approval_request_id: REQUEST_ID, approve: true },
    ]);
    expect(frames.find((f) => f.type === "run_started")).toMatchObject({ hosted_tools: ["mcp"] });
    expect(result.outputText).toContain("https://zip1.io/UDKvlw");
  });

  it("a denial is answered approve:false with the reason", async () => {
    const { provider } = await approve("deny");
    const [response] = inputOf(provider.requests[1] as JsonObject);
    expect(response).toMatchObject({
      type: "mcp_approval_response",
      approval_request_id: REQUEST_ID,
      approve: false,
    });
    expect(String(response?.reason)).toContain("denied");
  });

  it("without an approval handler the request is approved (like every local call)", async () => {
    const { provider, asked } = await approve(undefined);
    expect(asked).toEqual([]);
    expect(inputOf(provider.requests[1] as JsonObject)[0]).toMatchObject({ approve: true });
  });
});
