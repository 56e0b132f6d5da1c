/**
 * What a provider says reaches a terminal as text, never as commands (docs/pitfalls.md #63): a
 * model that calls a tool named with escape sequences (OSC 0 window title, CSI 2J clear screen,
 * OSC 52 clipboard write, an 8-bit CSI) and answers with the same. `eddy run` piped: stderr (the
 * "→" and "✗ Unknown tool" lines, the summary) holds no control character at all, and stdout, the
 * answer, is passed on byte for byte. On a pseudo-terminal nothing of the sequences is shown.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createMockServer, type MockServer, type Scenario } from "../src/mock/index.js";
import type { JsonObject } from "../src/protocol/types.js";
import { cleanEnv, runCli } from "./support/cli.js";
import { HAS_SCRIPT, runOnPty } from "./support/pty.js";

const ESC = "\u001b";
const HOSTILE = `x${ESC}]0;pwned\u0007${ESC}[2J${ESC}]52;c;Y3VybCBldmlsLnNoIHwgc2g=\u0007\u009b3J`;
// biome-ignore lint/suspicious/noControlCharactersInRegex: what must never reach a terminal
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

let server: MockServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** The events of a response with one function call (spec order). */
function callEvents(name: string, args: string): JsonObject[] {
  const item = {
    type: "function_call",
    id: "fc_1",
    call_id: "c1",
    name,
    arguments: args,
    status: "completed",
  };
  const response = (status: string, output: JsonObject[]) => ({
    id: "resp_1",
    object: "response",
    status,
    model: "m",
    output,
    usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 },
  });
  return [
    { type: "response.created", response: response("in_progress", []) },
    { type: "response.output_item.added", output_index: 0, item: { ...item, status: "in_progress" } },
    { type: "response.output_item.done", output_index: 0, item },
    { type: "response.completed", response: response("completed", [item]) },
  ];
}

async function hostileModel(): Promise<string> {
  const scenario: Scenario = {
    turns: [
      // The mock's scenarios keep tool names well-formed: a hostile one comes as raw events.
      { rawEvents: callEvents(`read${HOSTILE}`, JSON.stringify({ path: HOSTILE })) },
      { items: [{ type: "message", text: `The answer ${HOSTILE} ends here.` }] },
    ],
  };
  server = await createMockServer({ scenario });
  return server.url;
}

describe("escape sequences from the provider", () => {
  it("piped: stderr is stripped of every control sequence, the answer on stdout is byte-exact", async () => {
    const url = await hostileModel();
    const cwd = mkdtempSync(join(tmpdir(), "eddy-escapes-"));
    const r = await runCli(["run", "--base-url", url, "--model", "m", "go"], { cwd });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("→ readx");
    expect(r.stderr).toContain("✗ readx");
    expect(r.stderr).toContain("Unknown tool");
    expect(r.stderr).not.toMatch(CONTROL);
    expect(r.stdout).toBe(`The answer ${HOSTILE} ends here.\n`);
  });

  it.skipIf(!HAS_SCRIPT)("on a terminal: none of the sequences is shown, the answer's text is", async () => {
    const url = await hostileModel();
    const cwd = mkdtempSync(join(tmpdir(), "eddy-escapes-"));
    const run = runOnPty(["run", "--base-url", url, "--model", "m", "go"], {
      cwd,
      env: cleanEnv({ NO_COLOR: "1", TERM: "xterm" }),
    });
    expect(await run.exited).toBe(0);
    expect(run.output).toContain("The answer x ends here.");
    // (The arguments are JSON: their `\\u001b` is six characters of text, not an escape.)
    for (const sequence of [`${ESC}]0;`, `${ESC}[2J`, `${ESC}]52;`, "\u009b", "\u0007"])
      expect(run.output).not.toContain(sequence);
  });
});
