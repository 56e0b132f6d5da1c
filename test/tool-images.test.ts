/**
 * `read_file` on an image (issue 17, part 3): where the provider takes images in tool output (the
 * `toolOutputImages` capability) the image goes back as an `input_image` part of the
 * `function_call_output`; elsewhere the output is a note. Replay sends the same parts.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Frame } from "../src/frames/frame.js";

import { runAgent } from "../src/loop/run.js";
import type { JsonObject } from "../src/protocol/types.js";
import { createTapeHeader } from "../src/replay/header.js";
import { createTapeRecorder, type TapeRecorder } from "../src/replay/recorder.js";
import { replayTape } from "../src/replay/replay.js";
import { readTape } from "../src/replay/tape.js";
import { createBuiltinTools } from "../src/tools/builtin/index.js";
import { createToolRegistry } from "../src/tools/registry.js";
import { createScriptedProvider } from "./support/scripted.js";

/** A 1×1 PNG. */
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==",
  "base64",
);

async function readImage(toolOutputImages: boolean) {
  const dir = mkdtempSync(join(tmpdir(), "eddy-img-"));
  writeFileSync(join(dir, "dot.png"), PNG);
  const provider = createScriptedProvider(
    [
      { items: [{ type: "function_call", name: "read_file", arguments: '{"path":"dot.png"}' }] },
      { items: [{ type: "message", text: "a red dot" }] },
    ],
    { capabilities: { toolOutputImages } },
  );
  const tape = join(dir, "run.tape");
  let recorder: TapeRecorder | undefined;
  const handle = runAgent(
    { model: "m", input: "what is dot.png?", run_id: "run_img" },
    {
      provider,
      tools: createToolRegistry(createBuiltinTools().tools),
      workspace: dir,
      onFrame: (f) => recorder?.observer(f),
    },
  );
  recorder = createTapeRecorder(tape, createTapeHeader(handle.spec, { provider }), []);
  const frames: Frame[] = [];
  for await (const f of handle) frames.push(f);
  recorder.close();
  const input = (provider.requests[1]?.input ?? []) as JsonObject[];
  return { dir, tape, frames, output: input[0] as JsonObject };
}

describe("read_file on an image", () => {
  it("is shown to the model as an input_image part where the provider takes images in tool output", async () => {
    const { output, tape, frames, dir } = await readImage(true);
    const dataUrl = `data:image/png;base64,${PNG.toString("base64")}`;
    expect(output.type).toBe("function_call_output");
    const parts = output.output as JsonObject[];
    expect(parts[1]).toEqual({ type: "input_image", image_url: dataUrl });
    expect(JSON.parse(String(parts[0]?.text))).toMatchObject({
      ok: true,
      artifacts: { path: "dot.png", mime_type: "image/png", bytes: PNG.length },
    });
    expect(frames.find((f) => f.type === "tool_ended")).toMatchObject({ image_url: dataUrl });
    const replayed = await replayTape(readTape(tape), {
      registry: createToolRegistry(createBuiltinTools().tools),
      workspace: dir,
    });
    expect(replayed.verdict).toEqual({ match: true, frames: frames.length });
  });

  it("is a note elsewhere", async () => {
    const { output } = await readImage(false);
    expect(typeof output.output).toBe("string");
    expect(String(output.output)).toContain("dot.png is an image (image/png, 70 bytes)");
    expect(String(output.output)).toContain("cannot take images in tool output");
  });
});
