/**
 * What the `--json` writers put on stdout steers no terminal it reaches (docs/pitfalls.md #112):
 * `JSON.stringify` escapes C0 controls (ESC, NUL) and lone surrogates but leaves the C1 controls
 * (U+0080–U+009F: U+009B is a one-byte CSI in some terminals), DEL and U+2028/U+2029 raw. `eddy run
 * --json`, `eddy replay --json` and `eddy threads show --json` write them as `\u009b`…, the same JSON.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createMockServer, type MockServer } from "../src/mock/index.js";
import { runMainIn } from "./support/in-process-cli.js";

/** C1 at the start and the end, NEL, NUL, ESC, a lone surrogate, the separators, DEL. */
const TEXT = "\u009bstart \u0085 nul\u0000 esc\u001b[2J lone\ud800 seps\u2028\u2029 del\u007f end\u009f";

/** Any character a terminal could act on, and any surrogate (TEXT holds no well-formed pair). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: what must not reach stdout raw
const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\ud800-\udfff]/;

let server: MockServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** TEXT's characters as `--json` writes them (the lone surrogate as JSON.stringify escapes it). */
const ESCAPES = [
  "\\u009bstart",
  "\\u0085",
  "nul\\u0000",
  "esc\\u001b",
  "seps\\u2028\\u2029",
  "del\\u007f",
  "end\\u009f",
];

/** Checks `stdout` is JSON lines holding no raw steering character and the escapes of TEXT's. */
function expectSafeJsonLines(stdout: string, escapes = [...ESCAPES, "lone\\ud800"]): unknown[] {
  expect(stdout).not.toMatch(RAW);
  for (const written of escapes) expect(stdout).toContain(written);
  return stdout
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line));
}

describe("--json output escapes what JSON.stringify leaves raw", () => {
  it("eddy run, eddy replay and eddy threads show: escaped on stdout, JSON.parse gives the text back", async () => {
    server = await createMockServer({ scenario: { turns: [{ items: [{ type: "message", text: TEXT }] }] } });
    const home = mkdtempSync(join(tmpdir(), "eddy-json-output-"));
    const base = ["--base-url", server.url, "--model", "m"];
    const run = await runMainIn(
      ["run", "--json", ...base, "--thread", "t", "--record", "r.tape", "go"],
      home,
    );
    expect(run.code, run.stderr).toBe(0);
    const frames = expectSafeJsonLines(run.stdout) as { type: string; output_text?: string }[];
    expect(frames.find((f) => f.type === "run_ended")?.output_text).toBe(TEXT);

    const replay = await runMainIn(["replay", "--json", "r.tape"], home);
    expect(replay.code, replay.stderr).toBe(0);
    const replayed = expectSafeJsonLines(replay.stdout) as { type: string; output_text?: string }[];
    expect(replayed.find((f) => f.type === "run_ended")?.output_text).toBe(TEXT);

    const show = await runMainIn(["threads", "show", "--json", "t"], home);
    expect(show.code, show.stderr).toBe(0);
    // A thread record holds well-formed text: its lone surrogate was made U+FFFD when it was written.
    const [log] = expectSafeJsonLines(show.stdout, ESCAPES) as {
      runs: { outcome: { output_text: string } }[];
    }[];
    expect(log?.runs[0]?.outcome.output_text).toBe(TEXT.replace("\ud800", "\ufffd"));
  });
});
