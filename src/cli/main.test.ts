import { mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { HISTORY_DEFAULTS } from "../history/options.js";
import { LOOP_DEFAULTS } from "../loop/defaults.js";
import { PROVIDER_DEFAULTS } from "../provider/defaults.js";
import { KNOWN_PROFILES } from "../provider/profiles.js";
import { main } from "./main.js";
import type { CliIo } from "./run-command.js";

/** Runs `eddy ARGS` in-process and returns what it wrote. */
async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = {
    stdout: { write: (s: string) => out.push(s) },
    stderr: { write: (s: string) => err.push(s) },
    readStdin: async () => "",
    stdinIsTTY: true,
    env: {},
    cwd: process.cwd(),
    onSignal: () => () => {},
  };
  const code = await main(args, io);
  return { code, stdout: out.join(""), stderr: err.join("") };
}

/** Each option's description in `--help`, wrapped lines joined. */
function optionHelp(help: string): Map<string, string> {
  const options = new Map<string, string>();
  let current: string | undefined;
  for (const line of help.split("\n")) {
    const start = /^ {2}(--[a-z-]+)(?: <[a-z]+>)?\s+(.*)$/.exec(line);
    if (start !== null) {
      current = start[1] as string;
      options.set(current, start[2] as string);
    } else if (current !== undefined && /^ {10,}\S/.test(line)) {
      options.set(current, `${options.get(current)} ${line.trim()}`);
    } else current = undefined;
  }
  return options;
}

describe("eddy run --help", () => {
  const followUp = { every_request: "every", first_request: "first" }[LOOP_DEFAULTS.toolsOnFollowUp];
  const defaults: [string, string][] = [
    ["--max-tool-calls", String(LOOP_DEFAULTS.maxToolCalls)],
    ["--max-turns", String(LOOP_DEFAULTS.maxTurns)],
    ["--max-retries", String(PROVIDER_DEFAULTS.maxRetries)],
    ["--connect-timeout", String(PROVIDER_DEFAULTS.connectTimeoutMs)],
    ["--first-byte-timeout", String(PROVIDER_DEFAULTS.firstByteTimeoutMs)],
    ["--idle-timeout", String(PROVIDER_DEFAULTS.idleTimeoutMs)],
    ["--tool-concurrency", String(LOOP_DEFAULTS.toolConcurrency)],
    ["--tools-on-follow-up", followUp],
    ["--truncation-threshold", String(HISTORY_DEFAULTS.truncationThreshold)],
    ["--recent-calls-to-keep", String(HISTORY_DEFAULTS.recentCallsToKeep)],
  ];

  it.each(defaults)("%s states the default the code uses (%s)", async (flag, value) => {
    const options = optionHelp((await cli(["run", "--help"])).stdout);
    expect(options.get(flag)).toMatch(new RegExp(`\\(default ${value}\\)$`));
  });

  it("states no default that is not one of the constants", async () => {
    const options = optionHelp((await cli(["run", "--help"])).stdout);
    const stated = [...options].filter(([, text]) => /\(default \d/.test(text)).map(([flag]) => flag);
    expect(stated.sort()).toEqual(
      defaults
        .map(([flag]) => flag)
        .filter((f) => f !== "--tools-on-follow-up")
        .sort(),
    );
  });

  it("lists every known provider profile", async () => {
    const provider = optionHelp((await cli(["run", "--help"])).stdout).get("--provider") ?? "";
    for (const name of Object.keys(KNOWN_PROFILES)) expect(provider).toContain(name);
  });

  it("eddy config takes the same settings as eddy run", async () => {
    const run = optionHelp((await cli(["run", "--help"])).stdout);
    const config = optionHelp((await cli(["config", "--help"])).stdout);
    const runOnly = ["--context", "--thread", "--schema", "--json", "--record", "--otel", "--debug"];
    // --trust is config's own (src/cli/config-trust.ts).
    const configOwn = ["--trust"];
    expect([...config.keys()].filter((k) => !configOwn.includes(k)).sort()).toEqual(
      [...run.keys()].filter((k) => !runOnly.includes(k)).sort(),
    );
  });

  it.each([
    ["batch", ["batch", "--help"]],
    ["worker", ["help", "worker"]],
    ["resume", ["resume", "--help"]],
    ["serve", ["serve", "--help"]],
    ["chat", ["help", "chat"]],
  ])("eddy %s's help lists every option of eddy run too (however it is asked)", async (_name, args) => {
    const run = optionHelp((await cli(["run", "--help"])).stdout);
    const other = optionHelp((await cli(args)).stdout);
    for (const option of run.keys()) expect(other.has(option), option).toBe(true);
  });

  it("the program's help lists every command; a run's options are checked whatever precedes them", async () => {
    const help = (await cli(["--help"])).stdout;
    for (const name of ["run", "chat", "batch", "worker", "resume", "serve", "view", "doctor", "config"])
      expect(help).toMatch(new RegExp(`^ {2}${name} `, "m"));
    const r = await cli(["batch", "--max-turns", "many", "tasks.jsonl", "--out", "o"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--max-turns must be an integer");
  });
});

describe("flag values are checked before anything runs (exit 2)", () => {
  it.each([
    [["mock", "--port", "99999"], '--port must be an integer from 0 to 65535 (got "99999")'],
    [
      ["run", "--tools-on-follow-up", "sometimes", "x"],
      '--tools-on-follow-up must be first or every (got "sometimes")',
    ],
    [
      ["run", "--connect-timeout", "0", "x"],
      '--connect-timeout must be an integer from 1 to 2147483647 (got "0")',
    ],
    ...["--connect-timeout", "--first-byte-timeout", "--idle-timeout"].map((flag): [string[], string] => [
      ["run", flag, "3000000000", "x"],
      `${flag} must be an integer from 1 to 2147483647 (got "3000000000")`,
    ]),
    // eddy serve's run deadline: not a number, a fraction, negative, under a second, past a timer's range.
    ...["an hour", "1.5e6", "-60000", "999", "3000000000", "60000\u001b[2J"].map(
      (value): [string[], string] => [
        ["serve", "--run-timeout", value],
        `--run-timeout must be an integer from 1000 to 2147483647 (got ${JSON.stringify(value)})`,
      ],
    ),
  ])("eddy %j", async (args, message) => {
    const r = await cli(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`eddy: ${message} (see eddy --help)\n`);
  });
});

describe("an empty path or URL is refused before anything runs (found by a probe)", () => {
  it.each([
    [["run", "--record", "", "hi"], "--record is empty: give a path"],
    [["run", "--image", "a.png", "--image", "", "hi"], "--image is empty: give a path or a URL"],
    [["run", "--base-url", "", "hi"], "--base-url is empty: give a URL"],
    [["run", "--workspace", "", "hi"], "--workspace is empty: give a path"],
    [["view", "--no-open", "a.tape", ""], "<paths> is empty: give a path"],
    [["replay", ""], "<tape> is empty: give a path"],
  ])("eddy %j", async (args, message) => {
    const r = await cli(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`eddy: ${message}\n`);
  });
});

describe("eddy serve's token is one a client can send (found by a probe: the server started, every request a 401)", () => {
  it.each([
    [
      ["serve", "--token", "token-with\nnewline"],
      "--token holds a space, a control or a non-ASCII character",
    ],
    [
      ["serve", "--token", "token-with-ellipsis…"],
      "--token holds a space, a control or a non-ASCII character",
    ],
    [["serve", "--token", " spaced-token "], "--token holds a space, a control or a non-ASCII character"],
    [["serve", "--token", "short"], "--token: use at least 8 characters"],
  ])("eddy %j", async (args, message) => {
    const r = await cli(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`eddy: ${message}`);
  });
});

describe("an internal error", () => {
  /** `eddy config` whose output breaks: an error no check made. */
  async function broken(env: Record<string, string>) {
    const err: string[] = [];
    const io: CliIo = {
      stdout: {
        write: () => {
          throw new Error("the output broke");
        },
      },
      stderr: { write: (s: string) => err.push(s) },
      readStdin: async () => "",
      stdinIsTTY: true,
      env,
      cwd: process.cwd(),
      onSignal: () => () => {},
    };
    return { code: await main(["config"], io), stderr: err.join("") };
  }

  it("names a way to see its stack trace that the command has; EDDY_DEBUG=1 shows it", async () => {
    const plain = await broken({});
    expect(plain.code).toBe(1);
    expect(plain.stderr).toBe("eddy: internal error: the output broke (set EDDY_DEBUG=1 for details)\n");
    const debug = await broken({ EDDY_DEBUG: "1" });
    expect(debug.stderr).toMatch(/^eddy: internal error: the output broke\nError: the output broke\n\s+at /);
  });
});

describe("eddy run --record over a --context tape", () => {
  it("is refused before anything runs, by any name or link, and the context tape is left as it was", async () => {
    const dir = mkdtempSync(join(tmpdir(), "eddy-record-context-"));
    const tape = join(dir, "ctx.tape");
    writeFileSync(tape, "the earlier run's record\n");
    symlinkSync(tape, join(dir, "link.tape"));
    for (const record of [tape, join(dir, "link.tape"), join(dir, ".", "ctx.tape")]) {
      const { code, stdout, stderr } = await cli(["run", "--record", record, "--context", tape, "hi"]);
      expect([code, stdout]).toEqual([2, ""]);
      expect(stderr).toBe(
        `eddy: --record ${record} is the --context tape ${tape}: recording there would replace that run's record; give another --record\n`,
      );
      expect(readFileSync(tape, "utf8")).toBe("the earlier run's record\n");
    }
  });
});
