/**
 * Every real capture, assembled: each response in it (a capture may hold several) becomes items,
 * text, function calls (name, call_id, arguments) and a terminal status. The result is compared
 * with a checked-in golden file under test/golden/assembled/, at several chunkings of the SSE bytes
 * (every chunking must give the same assembly). Goldens are rewritten only with UPDATE_GOLDENS=1.
 * Native call items (apply_patch_call, shell_call, …) are promoted for the OpenAI and Azure
 * captures, as the `nativeTools` capability of those profiles has it, and for no other provider
 * (xAI's custom_tool_calls are its own hosted tools).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { ProviderEventFrame } from "../src/frames/frame.js";
import { createFrameDecoder } from "../src/frames/frame-decoder.js";
import { createAssembly, finishAssembly, step } from "../src/provider/assembler/index.js";
import { captureLines, listCaptures, splitResponses, toSse } from "./support/captures.js";
import { fixedChunks, randomChunks, utf8, WHOLE } from "./support/chunking.js";

const GOLDEN_DIR = join(dirname(fileURLToPath(import.meta.url)), "golden", "assembled");
const UPDATE = process.env.UPDATE_GOLDENS === "1";
const CHUNKINGS = [WHOLE, randomChunks(7, 512), fixedChunks(7), fixedChunks(1)];

/** The assembly of one response, reduced to what a golden should pin down. */
function summarize(lines: string[], chunk: (b: Uint8Array) => Uint8Array[], nativeCalls: boolean) {
  const state = createAssembly({ nativeCalls });
  const decoder = createFrameDecoder({
    turn: 0,
    validate: false,
    onFrame: (f) => {
      if (f.type === "provider_event" && (f as ProviderEventFrame).status === "event") step(state, f.data);
    },
  });
  for (const c of chunk(utf8(toSse(lines)))) decoder.feed(c);
  decoder.end();
  const r = finishAssembly(state);
  return {
    id: r.id,
    status: r.status,
    terminal: r.terminal,
    incomplete_reason: r.incompleteReason,
    error: r.error,
    output_text: r.outputText,
    calls: r.calls.map((c) => ({
      output_index: c.outputIndex,
      item_id: c.itemId,
      call_id: c.callId,
      name: c.name,
      arguments: c.arguments,
      ...(c.itemType === "function_call" ? {} : { item_type: c.itemType }),
    })),
    items: r.items.map((i) => ({ type: i.type, id: i.id ?? null, status: i.status ?? null })),
    usage: r.usage,
  };
}

describe("real captures assemble to their golden responses", () => {
  for (const name of listCaptures()) {
    it(name, () => {
      const responses = splitResponses(captureLines(name));
      const native = name.startsWith("openai/") || name.startsWith("azure/");
      const results = CHUNKINGS.map((c) => responses.map((lines) => summarize(lines, c.split, native)));
      for (const r of results.slice(1)) expect(r).toEqual(results[0]);
      const actual = results[0];
      const path = join(GOLDEN_DIR, `${name}.json`);
      if (UPDATE || !existsSync(path)) {
        if (!UPDATE)
          throw new Error(
            `no golden for ${name}: run UPDATE_GOLDENS=1 npx vitest run test/captures-assembly.test.ts`,
          );
        mkdirSync(dirname(path), { recursive: true });
        writeFileSync(path, `${JSON.stringify(actual, null, 2)}\n`);
      }
      expect(actual).toEqual(JSON.parse(readFileSync(path, "utf8")));
    });
  }

  it("pins the facts that matter in the key captures", () => {
    const golden = (name: string) => JSON.parse(readFileSync(join(GOLDEN_DIR, `${name}.json`), "utf8"));
    // Four-turn stateless tool loop with encrypted reasoning: three calls, then a final answer.
    const loop = golden("openai/openai-reasoning-encrypted-content.1");
    expect(loop).toHaveLength(4);
    expect(loop.slice(0, 3).map((r: { calls: unknown[] }) => r.calls.length)).toEqual([1, 1, 1]);
    expect(loop[3].calls).toEqual([]);
    expect(loop[3].output_text.length).toBeGreaterThan(0);
    // Copilot rotates every id: one message, assembled by output_index.
    const copilot = golden("openai/github-copilot-id-rotation.1")[0];
    expect(copilot.output_text).toMatch(/^There are \*\*3\*\* letter/);
    // insufficient_quota arrives as an error event followed by response.failed.
    const error = golden("openai/openai-error.1")[0];
    expect(error.terminal).toBe("failed");
    expect(error.error.code).toBe("insufficient_quota");
    // LM Studio tool call.
    const lm = golden("open-responses/lmstudio-tool-call.1")[0];
    expect(lm.calls).toHaveLength(1);
    expect(() => JSON.parse(lm.calls[0].arguments)).not.toThrow();
  });
});
