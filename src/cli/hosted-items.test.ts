import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { captureLines } from "../../test/support/captures.js";
import type { Frame } from "../frames/frame.js";
import { upgradeFrames } from "../replay/upgrade-frames.js";
import { describeHostedItem, ImageSaver } from "./hosted-items.js";
import { HumanRenderer } from "./render-human.js";
import { stylesFor } from "./terminal.js";

/** Renders a capture's events as provider_event frames and the frames derived from them; returns what went to stderr. */
function render(capture: string, workspace: string): string {
  let stderr = "";
  const images = new ImageSaver(workspace);
  const renderer = new HumanRenderer({
    stdout: { write: () => true },
    stderr: { write: (t: string) => (stderr += t) },
    styles: stylesFor({ write: () => true }, {}),
    now: () => 0,
    imagePath: (id) => images.pathOf(id),
  });
  const events = captureLines(capture).map(
    (line) =>
      ({ type: "provider_event", status: "event", turn: 0, data: JSON.parse(line) }) as unknown as Frame,
  );
  for (const frame of upgradeFrames(events)) {
    images.observe(frame);
    renderer.onFrame(frame);
  }
  return stderr;
}

describe("hosted tool items in the human view (real captures)", () => {
  const dir = mkdtempSync(join(tmpdir(), "eddy-hosted-"));

  it.each([
    ["openai/openai-web-search-tool.1", "◆ searched the web: tech news today December 5 2025"],
    [
      "openai/openai-file-search-tool.1",
      "◆ searched files: What is an embedding model according to this document?;",
    ],
    ["openai/openai-code-interpreter-tool.1", "◆ ran code (11 lines): import random, math N=10000"],
    ["openai/openai-mcp-tool.1", "◆ MCP server dmcp: "],
    ["openai/openai-mcp-tool.1", '◆ MCP dmcp__web_search_exa {"query":"2025 New York City mayoral'],
    [
      "openai/openai-shell-container.1",
      "◆ ran in the provider's container: echo 'Hello from container!' && uname -a",
    ],
  ])("%s says %s", (capture, line) => {
    expect(render(capture, dir)).toContain(line);
  });

  it("saves only with an image extension, never as a dotfile (found by a probe: conftest.py, .envrc)", () => {
    const ws = mkdtempSync(join(tmpdir(), "eddy-hosted-"));
    const images = new ImageSaver(ws);
    const done = (id: unknown, format: unknown) =>
      ({
        type: "item_done",
        turn: 0,
        output_index: 0,
        item: {
          type: "image_generation_call",
          id,
          status: "completed",
          result: "aGVsbG8=",
          output_format: format,
        },
      }) as unknown as Frame;
    images.observe(done("conftest", "py"));
    images.observe(done("", "envrc"));
    images.observe(done("pic", "JPEG"));
    expect(existsSync(join(ws, "conftest.py"))).toBe(false);
    expect(existsSync(join(ws, ".envrc"))).toBe(false);
    expect(images.pathOf("conftest")).toBe("conftest.png");
    expect(images.pathOf("pic")).toBe("pic.jpeg");
    expect(existsSync(join(ws, "image_1.png"))).toBe(true);
  });

  it("a generated image is written to the workspace and the view says where", () => {
    const out = render("openai/openai-image-generation-tool.1", dir);
    const name = "ig_0df93c0bb83a72f20068c979f589c0819e9f0fc2d1a27aa1b8.webp";
    expect(out).toContain(`◆ generated an image, saved to ${name}`);
    const bytes = readFileSync(join(dir, name));
    expect(bytes.subarray(0, 4).toString("latin1")).toBe("RIFF");
    expect(bytes.subarray(8, 12).toString("latin1")).toBe("WEBP");
  });

  it("what is at the image's name already is never followed nor overwritten", () => {
    const name = "ig_0df93c0bb83a72f20068c979f589c0819e9f0fc2d1a27aa1b8.webp";
    // A symlink a cloned repository ships under the image's name, pointing out of the workspace.
    const linked = mkdtempSync(join(tmpdir(), "eddy-hosted-link-"));
    const outside = join(mkdtempSync(join(tmpdir(), "eddy-hosted-outside-")), "planted.webp");
    symlinkSync(outside, join(linked, name));
    expect(render("openai/openai-image-generation-tool.1", linked)).toContain("not saved: EEXIST");
    expect(existsSync(outside)).toBe(false);
    // A FIFO there: refused at once (a blocking open would hang the run).
    const piped = mkdtempSync(join(tmpdir(), "eddy-hosted-fifo-"));
    spawnSync("mkfifo", [join(piped, name)]);
    expect(render("openai/openai-image-generation-tool.1", piped)).toContain("not saved: EEXIST");
    // The same item's image from an earlier run: kept, and named as where the image is.
    const again = mkdtempSync(join(tmpdir(), "eddy-hosted-again-"));
    writeFileSync(join(again, name), "earlier");
    expect(render("openai/openai-image-generation-tool.1", again)).toContain(`saved to ${name}`);
    expect(readFileSync(join(again, name), "utf8")).toBe("earlier");
  });
});

describe("hostile hosted items (found by a probe: a shell_call whose commands was a string ended the view and the tape in silence)", () => {
  const shapes: Record<string, Record<string, unknown>> = {
    web_search_call: { action: { query: "q" } },
    file_search_call: { queries: ["q"], results: [{ filename: "f" }] },
    code_interpreter_call: { code: "print(1)" },
    mcp_list_tools: { server_label: "s", tools: [] },
    mcp_call: { server_label: "s", name: "n", arguments: "{}", error: null },
    shell_call: { environment: { type: "container_auto" }, action: { commands: ["ls"] } },
  };
  // An object whose toString is not a function (valid JSON: `{"toString": 1}`) cannot be made a
  // string with String(): an mcp_call's error of that shape threw in the renderer.
  const values: unknown[] = [
    null,
    5,
    true,
    "str",
    "x".repeat(100_000),
    {},
    { a: 1 },
    [],
    [null],
    [["deep"]],
    JSON.parse('{"toString": 1, "valueOf": 2}'),
    JSON.parse('{"message": {"toString": 1}}'),
  ];

  it("every field of every hosted item, as any JSON value: one line, never an exception, never over 400 characters", () => {
    for (const [type, fields] of Object.entries(shapes)) {
      for (const field of [...Object.keys(fields), "action"]) {
        for (const value of values) {
          for (const inAction of [false, true]) {
            const item = { type, ...fields } as Record<string, unknown>;
            if (inAction) item.action = { query: value, url: value, commands: value };
            else item[field] = value;
            const label = `${type}.${inAction ? "action.*" : field} = ${JSON.stringify(value).slice(0, 20)}`;
            const line = describeHostedItem(item as never);
            expect(line === undefined || line.length <= 400, label).toBe(true);
          }
        }
      }
    }
  });

  it("a container shell_call whose commands is not a list says what ran as far as it can tell", () => {
    const item = {
      type: "shell_call",
      environment: { type: "container_auto" },
      action: { commands: "rm -rf /" },
    };
    expect(describeHostedItem(item as never)).toBe("ran in the provider's container: (no commands)");
    const long = { type: "mcp_call", server_label: "L".repeat(100_000), name: { x: 1 }, arguments: "{}" };
    expect(describeHostedItem(long as never)).toMatch(/^MCP L{59}…__\{"x":1\} \{\}$/);
  });
});
