import { tmpdir } from "node:os";
import { describe, expect, it } from "vitest";
import { assertFrameInvariants } from "../../test/support/frames.js";
import { createScriptedProvider } from "../../test/support/scripted.js";
import type { Frame } from "../frames/frame.js";
import type { JsonObject } from "../protocol/types.js";
import { LOOP_DEFAULTS } from "./defaults.js";
import { runAgent } from "./run.js";
import type { RunSpecInput } from "./run-spec.js";

const cut = {
  items: [{ type: "message" as const, text: "The answer is forty" }],
  status: "incomplete" as const,
};
const rest = { items: [{ type: "message" as const, text: "-two." }] };

async function run(spec: Partial<RunSpecInput>, scripts = [cut, rest]) {
  const provider = createScriptedProvider(scripts);
  const handle = runAgent({ model: "m", input: "what?", ...spec }, { provider, workspace: tmpdir() });
  const frames: Frame[] = [];
  for await (const f of handle) frames.push(f);
  assertFrameInvariants(frames);
  return { result: await handle.result, requests: provider.requests };
}

describe("continue_incomplete (a final answer cut off by max_output_tokens)", () => {
  it("continues once and returns both parts together", async () => {
    const { result, requests } = await run({ continue_incomplete: true });
    expect(result.reason).toBe("completed");
    expect(result.outputText).toBe("The answer is forty-two.");
    expect(requests).toHaveLength(2);
    expect(requests[1]?.previous_response_id).toBe("resp_1");
    expect(requests[1]?.input).toEqual([
      {
        type: "message",
        role: "user",
        content: [{ type: "input_text", text: LOOP_DEFAULTS.continuePrompt }],
      },
    ]);
  });

  it("continues only once", async () => {
    const { result, requests } = await run({ continue_incomplete: true }, [cut, cut, rest]);
    expect(requests).toHaveLength(2);
    expect(result.reason).toBe("incomplete");
    expect(result.outputText).toBe("The answer is fortyThe answer is forty");
  });

  it("stateless: the cut answer and the request to continue are in the history", async () => {
    const { requests } = await run({ continue_incomplete: true, mode: "stateless" });
    const input = requests[1]?.input as JsonObject[];
    expect(input.map((i) => [i.type, i.role])).toEqual([
      ["message", "user"],
      ["message", "assistant"],
      ["message", "user"],
    ]);
  });

  it("off (the default): the run ends incomplete, saying the output token budget ran out", async () => {
    const { result, requests } = await run({});
    expect(requests).toHaveLength(1);
    expect(result.reason).toBe("incomplete");
    expect(result.error?.code).toBe("max_output_tokens");
  });

  it("an incomplete response for another reason is not continued", async () => {
    const filtered = { ...cut, incompleteReason: "content_filter" };
    const { result, requests } = await run({ continue_incomplete: true }, [filtered, rest]);
    expect(requests).toHaveLength(1);
    expect(result.reason).toBe("incomplete");
  });
});
