/**
 * A served run whose tape stops being written (a full disk) is cancelled, never left running
 * unrecorded; its watchers still get every frame to `run_ended` and the frames written stay on the
 * tape; the server's operator hears the error (`onTapeError`). The server's tape store fails its
 * writes after two frames.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { failingTapeStore } from "../../test/support/failing-tapes.js";
import { createScriptedProvider, type Script } from "../../test/support/scripted.js";
import { fileTapeStore } from "../batch/tape-store.js";
import { createPolicy } from "../loop/policy.js";
import { readTape } from "../replay/tape.js";
import { createToolRegistry } from "../tools/registry.js";
import { approvalNoteTool } from "../tools/test-support/note-tool.js";
import { createServeHandler } from "./handler.js";
import { createRunService } from "./runs.js";
import { jsonRequest } from "./test-support/request.js";

const call = (name: string, args: unknown) =>
  ({ items: [{ type: "function_call", name, arguments: JSON.stringify(args) }] }) as Script;
const text = (t: string) => ({ items: [{ type: "message", text: t }] }) as Script;

describe("eddy serve: a run whose tape cannot be written", () => {
  it("is cancelled naming why; its watchers get every frame to run_ended; what was written stays", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "eddy-serve-tape-"));
    const notes: string[] = [];
    const heard: { runId: string; error: unknown }[] = [];
    const service = createRunService({
      provider: createScriptedProvider([call("note", { text: "a" }), text("never")]),
      spec: { model: "m" },
      policy: createPolicy(),
      tools: () => createToolRegistry([approvalNoteTool(notes)]),
      workspace: dataDir,
      dataDir,
      tapeStore: failingTapeStore({ failAfter: 2 }),
      onTapeError: (runId, error) => heard.push({ runId, error }),
    });
    const handler = createServeHandler(service);
    {
      const started = await handler(jsonRequest("POST", "/v1/runs", { input: "hi" }));
      expect(started.status).toBe(201);
      const { id } = (await started.json()) as { id: string };
      await service.get(id)?.done;
      const run = (await (await handler(jsonRequest("GET", `/v1/runs/${id}`))).json()) as { status: string };
      expect(run.status).toBe("cancelled");
      const events = await (await handler(jsonRequest("GET", `/v1/runs/${id}/events`))).text();
      const types = [...events.matchAll(/^event: (\S+)$/gm)].map((m) => m[1]);
      expect(types[0]).toBe("run_started");
      expect(types.at(-1)).toBe("run_ended");
      // The watchers are told the code; the operator (onTapeError) gets the error itself.
      expect(events).toMatch(/could not record this run's tape: ENOSPC/);
      expect(heard).toEqual([{ runId: id, error: expect.objectContaining({ code: "ENOSPC" }) }]);
      expect(notes).toEqual([]); // the call never ran
      const tape = readTape(join(dataDir, "runs", `${id}.tape`));
      expect(tape.frames.map((f) => f.type)).toEqual(["run_started", "request_started"]);
    }
  });

  it("whose tape cannot be opened at all is cancelled before it asks or runs anything, fresh or resumed", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "eddy-serve-tape-"));
    const notes: string[] = [];
    let refuse = true;
    const provider = createScriptedProvider([call("write_note", { text: "a" }), text("done")]);
    const service = createRunService({
      provider,
      spec: { model: "m" },
      policy: createPolicy({ approve: "defer" }),
      tools: () => createToolRegistry([approvalNoteTool(notes)]),
      workspace: dataDir,
      dataDir,
      tapeStore: (dir, secrets) => {
        const store = fileTapeStore(dir, secrets);
        return {
          ...store,
          open: (id, header, replace) => {
            if (refuse) throw Object.assign(new Error("EACCES: permission denied, open"), { code: "EACCES" });
            return store.open(id, header, replace);
          },
        };
      },
    });
    const handler = createServeHandler(service);
    const refused = await handler(jsonRequest("POST", "/v1/runs", { input: "hi" }));
    expect(refused.status).toBeGreaterThanOrEqual(500);
    expect(provider.requests).toHaveLength(0);
    // A run that deferred its call, then a decision whose resume cannot open the tape.
    refuse = false;
    const started = await handler(jsonRequest("POST", "/v1/runs", { input: "hi" }));
    const { id } = (await started.json()) as { id: string };
    await service.get(id)?.done;
    expect(service.get(id)?.status).toBe("awaiting_approval");
    const before = service.get(id)?.log.count;
    refuse = true;
    const pending = service.get(id)?.ended?.pending_calls ?? [];
    expect(pending).toHaveLength(1);
    const decided = await handler(
      jsonRequest("POST", `/v1/runs/${id}/decisions`, { call_id: pending[0], decision: "allow" }),
    );
    expect(decided.status).toBeGreaterThanOrEqual(400);
    expect(notes).toEqual([]); // the approved call never ran unrecorded
    expect(provider.requests).toHaveLength(1);
    expect(service.get(id)?.status).toBe("awaiting_approval");
    expect(service.get(id)?.log.count).toBe(before);
  });
});
