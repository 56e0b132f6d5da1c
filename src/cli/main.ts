/**
 * The `eddy` command line (commander). `main(argv)` returns the exit code; errors are one line on
 * stderr saying what happened and what to do — a stack trace only with `--debug`. Usage errors
 * (unknown flags, missing or non-numeric values, unreadable files, a missing workspace, a tape of a
 * newer format) exit 2 before any request is sent (DESIGN.md §5).
 */
import { Command, CommanderError, InvalidArgumentError, Option } from "commander";
import { EddyError } from "../errors.js";
import { EDDY_VERSION } from "../version.js";
import type { RunFlags } from "./config.js";
import { RUN_FAILED, SUCCESS, USAGE_ERROR } from "./exit-codes.js";
import type { MockFlags } from "./mock-command.js";
import type { ReplayFlags } from "./replay-command.js";
import type { CliIo } from "./run-command.js";
import { stylesFor } from "./terminal.js";
import type { ViewFlags } from "./view-command.js";

// Commands are imported when run, so `--help` and `--version` do not load the whole runtime.

const RUN_EXAMPLES = `
Examples:
  $ eddy run "What is in package.json?"              # offline demo model, read-only file tools
  $ OPENAI_API_KEY=sk-… eddy run --model gpt-5-mini "Summarize README.md"
  $ eddy run --base-url http://localhost:1234/v1 --model qwen3 "List the files here"
  $ eddy run --provider openrouter --model openai/gpt-oss-20b "…"
  $ eddy run --json "…" > frames.jsonl                 # frames as JSONL, nothing else on stdout
  $ eddy run --record run.tape "…" && eddy replay run.tape
  $ echo "Explain src/index.ts" | eddy run --allow-write

Environment:
  OPENRESPONSES_BASE_URL, OPENAI_BASE_URL   base URL (else OpenAI when OPENAI_API_KEY is set, else the demo model)
  OPENRESPONSES_API_KEY, OPENAI_API_KEY     API key (OPENAI_API_KEY goes only to OpenAI / OPENAI_BASE_URL)
  EDDY_MODEL                                model
  NO_COLOR                                  no colours

Exit codes: 0 completed, 1 failed, 2 bad usage, 3 stopped by a limit, 130 cancelled.`;

function integer(flag: string, min: number): (value: string) => number {
  return (value) => {
    if (!/^\d+$/.test(value.trim()) || Number(value) < min) {
      throw new InvalidArgumentError(`${flag} must be an integer ≥ ${min} (got ${JSON.stringify(value)})`);
    }
    return Number(value);
  };
}

/** Runs the CLI. Returns the process exit code. */
export async function main(argv: string[], io: CliIo = processIo()): Promise<number> {
  let exitCode = SUCCESS;
  let debug = argv.includes("--debug");
  const program = new Command("eddy")
    .description(
      "An agent runtime for any Open Responses provider: tool-calling runs, recorded tapes, an offline mock server.",
    )
    .version(EDDY_VERSION, "-V, --version")
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: () => {} })
    .showSuggestionAfterError(true);

  program
    .command("run")
    .description("run the agent on a prompt (from the argument or stdin)")
    .argument("[prompt]", "the task; read from stdin when omitted")
    .option("--base-url <url>", "Open Responses base URL (env OPENRESPONSES_BASE_URL, then OPENAI_BASE_URL)")
    .option("--api-key <key>", "API key (env OPENRESPONSES_API_KEY, then OPENAI_API_KEY)")
    .option("--model <name>", "model, or profile/model (env EDDY_MODEL)")
    .option(
      "--provider <name>",
      "provider profile: openai, azure, openrouter, ollama, vllm, lmstudio, generic",
    )
    .option("--config <file>", "config file (default: ./eddy.config.json, then ~/.config/eddy/config.json)")
    .option("--instructions <text>", "system instructions, sent on every request")
    .option(
      "--context <tape>",
      "continue from earlier runs: their prompts, answers and a summary of their tool calls become context (repeatable)",
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option("--stateless", "resend the whole history each turn (store:false) instead of previous_response_id")
    .addOption(
      new Option("--max-tool-calls <n>", "tool calls allowed in the run (default 32)").argParser(
        integer("--max-tool-calls", 1),
      ),
    )
    .addOption(
      new Option(
        "--max-turns <n>",
        "model requests allowed in the run, retries not counted (default 20)",
      ).argParser(integer("--max-turns", 1)),
    )
    .addOption(
      new Option("--max-retries <n>", "retries of a failed request (default 2)").argParser(
        integer("--max-retries", 0),
      ),
    )
    .addOption(
      new Option(
        "--first-byte-timeout <ms>",
        "wait for the first byte of a response (default 120000)",
      ).argParser(integer("--first-byte-timeout", 1)),
    )
    .addOption(
      new Option(
        "--idle-timeout <ms>",
        "longest silence while streaming; paused while a tool runs (default 60000)",
      ).argParser(integer("--idle-timeout", 1)),
    )
    .option(
      "--schema <file>",
      "JSON Schema file: the final answer must be JSON matching it (structured output)",
    )
    .option("--no-validate", "do not validate provider events against the Open Responses schema")
    .option("--workspace <dir>", "root for the file tools (default: the current directory)")
    .option("--allow-write", "enable write_file and apply_patch")
    .option("--allow-shell", "enable the shell tool")
    .option("--json", "write frames as JSONL to stdout, nothing else")
    .option("--record <file>", "write the run's tape (replay it with eddy replay)")
    .option("--debug", "show stack traces for internal errors")
    .addHelpText("after", RUN_EXAMPLES)
    .action(async (prompt: string | undefined, flags: RunFlags) => {
      debug = flags.debug === true;
      const { runCommand } = await import("./run-command.js");
      exitCode = await runCommand(prompt, flags, io);
    });

  program
    .command("replay")
    .description("re-run a recorded tape offline and check it reproduces the same frames")
    .argument("<tape>", "the tape file (written by eddy run --record)")
    .option("--json", "write the replayed frames as JSONL to stdout")
    .option("--live-tools", "run the tools for real instead of using their recorded outputs")
    .option("--workspace <dir>", "workspace for --live-tools (default: the current directory)")
    .addHelpText(
      "after",
      "\nExit codes: 0 the frames match, 1 they diverge (the first divergence is shown), 2 bad tape.",
    )
    .action(async (tape: string, flags: ReplayFlags) => {
      const { replayCommand } = await import("./replay-command.js");
      exitCode = await replayCommand(tape, flags, io);
    });

  program
    .command("mock")
    .description("serve the mock Open Responses server on 127.0.0.1 (the demo model, or a scenario)")
    .addOption(new Option("--port <n>", "port (default: any free port)").argParser(integer("--port", 0)))
    .option("--scenario <file>", "JSON or YAML scenario scripting the answers")
    .option("--api-key <key>", "require this bearer token")
    .action(async (flags: MockFlags) => {
      const { mockCommand } = await import("./mock-command.js");
      exitCode = await mockCommand(flags, io);
    });

  program
    .command("view")
    .description("write one self-contained HTML page of recorded runs or of a batch folder, and open it")
    .argument("<paths...>", "tapes (eddy run --record), or one batch folder (eddy batch --out)")
    .option("--out <file>", "write the page here (default: a temporary file, opened in the browser)")
    .option("--no-open", "do not open the browser")
    .addHelpText(
      "after",
      "\nExamples:\n  $ eddy view run.tape               # opens the page when there is a display\n  $ eddy view a.tape b.tape --out runs.html\n  $ eddy view batch-out/             # the task table of an eddy batch --out folder",
    )
    .action(async (paths: string[], flags: ViewFlags) => {
      const { viewCommand } = await import("./view-command.js");
      exitCode = await viewCommand(paths, flags, io);
    });

  program
    .command("config")
    .description("show the effective configuration and where each value comes from (keys redacted)")
    .option("--base-url <url>")
    .option("--api-key <key>")
    .option("--model <name>")
    .option("--provider <name>")
    .option("--config <file>")
    .option("--workspace <dir>")
    .action(async (flags: RunFlags) => {
      const { configCommand } = await import("./config-command.js");
      exitCode = configCommand(flags, io);
    });

  try {
    if (argv.length === 0) {
      program.outputHelp();
      return SUCCESS;
    }
    await program.parseAsync(argv, { from: "user" });
    return exitCode;
  } catch (err) {
    return reportError(err, io, debug);
  }
}

function reportError(err: unknown, io: CliIo, debug: boolean): number {
  const styles = stylesFor(io.stderr, io.env);
  if (err instanceof CommanderError) {
    if (
      err.code === "commander.helpDisplayed" ||
      err.code === "commander.version" ||
      err.code === "commander.help"
    )
      return SUCCESS;
    const message = err.message
      .replace(/^error: /, "")
      .replace(/^option '.*?' argument '.*?' is invalid\. /, "");
    io.stderr.write(`${styles.red("eddy:")} ${message} (see eddy --help)\n`);
    return USAGE_ERROR;
  }
  if (EddyError.isInstance(err) && err.fault === "user") {
    io.stderr.write(`${styles.red("eddy:")} ${err.message}\n`);
    if (debug && err.stack) io.stderr.write(`${err.stack}\n`);
    return USAGE_ERROR;
  }
  const message = err instanceof Error ? err.message.split("\n")[0] : String(err);
  io.stderr.write(
    `${styles.red("eddy: internal error:")} ${message}${debug ? "" : " (run with --debug for details)"}\n`,
  );
  if (debug && err instanceof Error && err.stack) io.stderr.write(`${err.stack}\n`);
  return RUN_FAILED;
}

/** The real process's streams, environment and signals. */
export function processIo(): CliIo {
  // A reader that goes away (`eddy run --json | head -1`) is not an error worth a stack trace.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on("error", (err: NodeJS.ErrnoException) => {
      if (err.code === "EPIPE") process.exit(141);
      throw err;
    });
  }
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    stdinIsTTY: process.stdin.isTTY === true,
    readStdin: async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString("utf8");
    },
    env: process.env,
    cwd: process.cwd(),
    onSignal: (handler) => {
      const onInt = () => handler("SIGINT");
      const onTerm = () => handler("SIGTERM");
      process.on("SIGINT", onInt);
      process.on("SIGTERM", onTerm);
      return () => {
        process.off("SIGINT", onInt);
        process.off("SIGTERM", onTerm);
      };
    },
  };
}
