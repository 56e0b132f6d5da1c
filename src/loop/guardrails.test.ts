import { describe, expect, it } from "vitest";
import { composedRun, replayComposed } from "../../test/support/compose.js";
import type { Script } from "../../test/support/scripted.js";
import type { Guardrail } from "./guardrails.js";

const answer: Script[] = [{ items: [{ type: "message", text: "the password is hunter2" }] }];
const noPasswords: Guardrail = {
  name: "no_passwords",
  check: (text) => (/hunter2/.test(text) ? { tripped: true, reason: "a password" } : { tripped: false }),
};

describe("guardrails", () => {
  it("a tripped input guardrail ends the run with reason guardrail before any request", async () => {
    const run = await composedRun(answer, { input: "my password is hunter2" }, [], {
      guardrails: { input: [noPasswords] },
    });
    expect(run.result.reason).toBe("guardrail");
    expect(run.result.error?.message).toBe("the input guardrail no_passwords tripped: a password");
    expect(run.requests).toHaveLength(0);
    expect((await replayComposed(run.tape, [])).verdict.match).toBe(true);
  });

  it("an output guardrail checks the final answer; one that passes leaves the run completed", async () => {
    const run = await composedRun(answer, {}, [], { guardrails: { output: [noPasswords] } });
    expect(run.result.reason).toBe("guardrail");
    expect(run.frames.filter((f) => f.type === "guardrail_checked")).toMatchObject([
      { stage: "output", name: "no_passwords", tripped: true, reason: "a password" },
    ]);
    expect((await replayComposed(run.tape, [])).verdict.match).toBe(true);
    const ok = await composedRun([{ items: [{ type: "message", text: "fine" }] }], {}, [], {
      guardrails: { input: [noPasswords], output: [noPasswords] },
    });
    expect(ok.result.reason).toBe("completed");
    expect(ok.frames.filter((f) => f.type === "guardrail_checked")).toHaveLength(2);
  });
});
