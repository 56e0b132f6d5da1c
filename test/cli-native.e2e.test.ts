/**
 * End-to-end (the built CLI) for issue 17: native apply_patch / shell items against a server that
 * streams responses built from the OpenAI captures (with --native-tools, record → replay),
 * attachments to the demo model, request options checked against the spec, the config-file keys.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseFrames } from "../src/frames/jsonl.js";
import type { JsonObject } from "../src/protocol/types.js";
import { validateCreateResponseBody } from "../src/protocol/validate.js";
import { captureResponse, editItem } from "./support/capture-provider.js";
import { toSse } from "./support/captures.js";
import { cleanEnv, runCli } from "./support/cli.js";
import { type RawServer, startRawServer } from "./support/raw-server.js";

let server: RawServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const workspace = () => mkdtempSync(join(tmpdir(), "eddy-cli17-"));
const CREATE_ID = "apc_0372d86dfc1762fe00692741f3f3dc8190879cba489ff2fc8b";
const SHELL_ID = "sh_0434d6d64b12b08900692f639c9f0481959c30e03ca0bb2ef8";

async function serve(responses: string[][]): Promise<string> {
  server = await startRawServer((i) => ({
    body: [toSse(responses[Math.min(i, responses.length - 1)] ?? [])],
  }));
  return server.url;
}

const bodies = () => (server?.requests ?? []).map((r) => JSON.parse(r.body) as JsonObject);
/** The first input item of request `index`. */
const firstInput = (index: number) => ((bodies()[index]?.input ?? []) as JsonObject[])[0];

describe("native tool items from the command line", () => {
  it("apply_patch_call creates then updates a file with --allow-write, and the tape replays", async () => {
    const cwd = workspace();
    const update = captureResponse("openai/openai-apply-patch-tool.1", 0, (e) =>
      editItem(e, CREATE_ID, (item) => {
        item.call_id = "call_update_1";
        item.operation = {
          type: "update_file",
          path: "shopping-checklist.md",
          diff: "@@\n-- [ ] Milk\n+- [ ] Oat milk\n",
        };
      }),
    );
    const url = await serve([
      captureResponse("openai/openai-apply-patch-tool.1"),
      update,
      captureResponse("openai/openai-shell-tool.1", 1),
    ]);
    const tape = join(cwd, "run.tape");
    const args = ["run", "--base-url", url, "--model", "gpt-5.1", "--native-tools", "--allow-write"];
    const r = await runCli([...args, "--record", tape, "make a checklist"], { cwd, env: cleanEnv() });
    expect(r.stderr).toContain("apply_patch");
    expect(r.code).toBe(0);
    expect(readFileSync(join(cwd, "shopping-checklist.md"), "utf8")).toContain("- [ ] Oat milk\n");
    const [, second] = bodies();
    expect(second?.input).toEqual([
      expect.objectContaining({
        type: "apply_patch_call_output",
        call_id: "call_kA46f91ZwocQyMCKyyZqRyC5",
        status: "completed",
      }),
    ]);
    expect(firstInput(2)).toMatchObject({
      call_id: "call_update_1",
      status: "completed",
    });
    const replay = await runCli(["replay", tape], { cwd: workspace() });
    expect(replay.stdout).toMatch(/^replay matches/);
    expect(replay.code).toBe(0);
  });

  it("without --allow-write the call is refused (failed, with the flag that enables it)", async () => {
    const cwd = workspace();
    const url = await serve([
      captureResponse("openai/openai-apply-patch-tool.1"),
      captureResponse("openai/openai-shell-tool.1", 1),
    ]);
    const r = await runCli(["run", "--base-url", url, "--model", "m", "--native-tools", "go"], { cwd });
    expect(r.code).toBe(0);
    const output = firstInput(1);
    expect(output).toMatchObject({ type: "apply_patch_call_output", status: "failed" });
    expect(String(output?.output)).toContain("--allow-write");
    expect(() => readFileSync(join(cwd, "shopping-checklist.md"))).toThrow();
  });

  it("a local shell_call with two commands runs with --allow-shell, is answered with shell_call_output, and replays", async () => {
    const cwd = workspace();
    const shell = captureResponse("openai/openai-shell-tool.1", 0, (e) =>
      editItem(e, SHELL_ID, (item) => {
        (item.action as JsonObject).commands = ["echo first", "echo second"];
      }),
    );
    const url = await serve([shell, captureResponse("openai/openai-shell-tool.1", 1)]);
    const tape = join(cwd, "shell.tape");
    const r = await runCli(
      ["run", "--base-url", url, "--model", "m", "--native-tools", "--allow-shell", "--record", tape, "go"],
      { cwd },
    );
    expect(r.code).toBe(0);
    expect(firstInput(1)).toEqual({
      type: "shell_call_output",
      call_id: "call_pbxjNs1tMJUahLZKAS9qLtvw",
      output: [
        { stdout: "first\n", stderr: "", outcome: { type: "exit", exit_code: 0 } },
        { stdout: "second\n", stderr: "", outcome: { type: "exit", exit_code: 0 } },
      ],
      max_output_length: 8912,
    });
    const replay = await runCli(["replay", tape], { cwd: workspace() });
    expect(replay.code).toBe(0);
  });
});

describe("attachments and request options", () => {
  it("--image sends a schema-valid input_image part and the demo model answers with its size and type", async () => {
    const cwd = workspace();
    const png = Buffer.from(
      "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==",
      "base64",
    );
    writeFileSync(join(cwd, "cat.png"), png);
    const r = await runCli(["run", "--json", "--image", "cat.png", "What is this?"], { cwd });
    expect(r.code).toBe(0);
    const frames = parseFrames(r.stdout);
    const request = frames.find((f) => f.type === "request_started");
    const body = (request as { body: JsonObject }).body;
    expect(validateCreateResponseBody(body)).toBeUndefined();
    expect(body.input).toEqual([
      {
        type: "message",
        role: "user",
        content: [
          { type: "input_text", text: "What is this?" },
          { type: "input_image", image_url: `data:image/png;base64,${png.toString("base64")}` },
        ],
      },
    ]);
    const answer = frames.find((f) => f.type === "run_ended") as { output_text: string };
    expect(answer.output_text).toContain("image/png, 70 bytes, 1×1 pixels");
  });

  it("--file attaches a document; an --image that is not an image is a usage error", async () => {
    const cwd = workspace();
    writeFileSync(join(cwd, "notes.md"), "# Notes\n");
    const ok = await runCli(["run", "--file", "notes.md", "Summarize"], { cwd });
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain("`notes.md`: text/markdown, 8 bytes");
    const notImage = await runCli(["run", "--image", "notes.md", "?"], { cwd });
    expect(notImage.code).toBe(2);
    expect(notImage.stderr).toContain("--image notes.md: the content is text/markdown, not an image");
  });

  it("--reasoning-effort high is sent as reasoning.effort; a bad value exits 2 naming the allowed values", async () => {
    const cwd = workspace();
    const r = await runCli(["run", "--json", "--reasoning-effort", "high", "--service-tier", "flex", "hi"], {
      cwd,
    });
    expect(r.code).toBe(0);
    const body = (parseFrames(r.stdout).find((f) => f.type === "request_started") as { body: JsonObject })
      .body;
    expect(body.reasoning).toEqual({ effort: "high" });
    expect(body.service_tier).toBe("flex");
    const bad = await runCli(["run", "--reasoning-effort", "extreme", "hi"], { cwd });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(
      '--reasoning-effort must be one of none, low, medium, high, xhigh (got "extreme")',
    );
    expect(bad.stdout).toBe("");
  });

  it("config-file keys; flags win; a bad key value exits 2; eddy config shows the request", async () => {
    const cwd = workspace();
    writeFileSync(
      join(cwd, "eddy.config.json"),
      JSON.stringify({
        verbosity: "low",
        max_output_tokens: 400,
        metadata: { team: "a" },
        tools: ["web_search"],
      }),
    );
    const r = await runCli(["run", "--json", "--verbosity", "high", "--metadata", "run=1", "hi"], { cwd });
    const body = (parseFrames(r.stdout).find((f) => f.type === "request_started") as { body: JsonObject })
      .body;
    expect(body.text).toEqual({ verbosity: "high" });
    expect(body.max_output_tokens).toBe(400);
    expect(body.metadata).toEqual({ team: "a", run: "1" });
    expect((body.tools as JsonObject[]).at(-1)).toEqual({ type: "web_search" });
    writeFileSync(join(cwd, "eddy.config.json"), JSON.stringify({ service_tier: "turbo" }));
    const bad = await runCli(["run", "hi"], { cwd });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("service_tier must be one of auto, default, flex, priority");
    const config = await runCli(["config", "--reasoning-effort", "low"], { cwd: workspace() });
    expect(config.stdout).toMatch(/request +\{"reasoning":\{"effort":"low"\}\} +\(flag\)/);
  });
});
