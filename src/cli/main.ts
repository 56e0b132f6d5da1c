/**
 * The `eddy` command line (commander). `main(argv)` returns the exit code; errors are one line on
 * stderr saying what happened and what to do — a stack trace only with `--debug`. Usage errors
 * (unknown flags, missing or non-numeric values, a flag where a value belongs — flag-values.ts —,
 * unreadable files, a missing workspace, a tape of a newer format) exit 2 before any request is sent (docs/architecture.md, "The CLI contract").
 */
import { isatty } from "node:tty";
import { Command, CommanderError, InvalidArgumentError, Option } from "commander";
import { BATCH_DEFAULTS } from "../batch/defaults.js";
import { EddyError } from "../errors.js";
import { HISTORY_DEFAULTS, HISTORY_STRATEGIES } from "../history/defaults.js";
import { LOOP_DEFAULTS } from "../loop/defaults.js";
import type { ToolsOnFollowUp } from "../loop/options.js";
import { APPROVE_MODES } from "../loop/policy.js";
import { API_NAMES, type ApiName, STREAM_TRANSPORTS, type StreamTransport } from "../provider/api-names.js";
import { MAX_TIMEOUT_MS, PROVIDER_DEFAULTS } from "../provider/defaults.js";
import { PROBE_DEFAULTS } from "../provider/probe/types.js";
import { KNOWN_PROFILES } from "../provider/profiles.js";
import { EDDY_VERSION } from "../version.js";
import type { BatchFlags } from "./batch-command.js";
import type { RunFlags, ToolsOnFollowUpFlag } from "./config.js";
import type { OnLimit } from "./config-compose.js";
import type { ApproveMode } from "./config-tools.js";
import type { DoctorFlags } from "./doctor-command.js";
import { RUN_FAILED, SUCCESS, USAGE_ERROR } from "./exit-codes.js";
import { refuseFlagsAsValues } from "./flag-values.js";
import type { MockFlags } from "./mock-command.js";
import type { ReplayFlags } from "./replay-command.js";
import { addRequestOptions } from "./request-flags.js";
import type { ResumeFlags } from "./resume-command.js";
import type { CliIo } from "./run-command.js";
import type { ServeFlags } from "./serve-command.js";
import { readTerminalLine, stylesFor, terminalSafe } from "./terminal.js";
import type { ThreadsFlags } from "./threads-command.js";
import type { ViewFlags } from "./view-command.js";
import type { WorkerFlags } from "./worker-command.js";

// Commands are imported when run, so `--help` and `--version` do not load the whole runtime (only
// the defaults and the profile table, which the help text is built from).

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

Exit codes: 0 completed, 1 failed, 2 bad usage, 3 stopped by a limit, 4 awaiting approval (--approve defer), 130 cancelled.`;

/** The `--tools-on-follow-up` value of each `toolsOnFollowUp` setting (for the default in the help). */
const FOLLOW_UP_FLAG: Record<ToolsOnFollowUp, ToolsOnFollowUpFlag> = {
  every_request: "every",
  first_request: "first",
};

function integer(flag: string, min: number, max = Number.MAX_SAFE_INTEGER): (value: string) => number {
  return (value) => {
    if (!/^\d+$/.test(value.trim()) || Number(value) < min || Number(value) > max) {
      const range = max === Number.MAX_SAFE_INTEGER ? `≥ ${min}` : `from ${min} to ${max}`;
      throw new InvalidArgumentError(`${flag} must be an integer ${range} (got ${JSON.stringify(value)})`);
    }
    return Number(value);
  };
}

function oneOf<T extends string>(flag: string, allowed: readonly T[]): (value: string) => T {
  return (value) => {
    if (!(allowed as readonly string[]).includes(value)) {
      throw new InvalidArgumentError(
        `${flag} must be ${allowed.join(" or ")} (got ${JSON.stringify(value)})`,
      );
    }
    return value as T;
  };
}

function numberOption(flags: string, description: string, parse: (value: string) => number): Option {
  return new Option(flags, description).argParser(parse);
}

/** Where a run's requests go: shared by `eddy run` and `eddy config`. */
function addTargetOptions(command: Command): Command {
  return command
    .option("--base-url <url>", "Open Responses base URL (env OPENRESPONSES_BASE_URL, then OPENAI_BASE_URL)")
    .addOption(
      new Option(
        "--api <api>",
        "the API the endpoint speaks: responses (POST /responses) or chat-completions (POST /chat/completions) (default: the profile's, else responses)",
      ).argParser(oneOf<ApiName>("--api", API_NAMES)),
    )
    .addOption(
      new Option(
        "--transport <transport>",
        "how responses stream back: sse (one HTTP request per turn) or websocket (one connection for the whole run; Open Responses only) (default sse)",
      ).argParser(oneOf<StreamTransport>("--transport", STREAM_TRANSPORTS)),
    )
    .option("--api-key <key>", "API key (env OPENRESPONSES_API_KEY, then the profile's key variable)")
    .option("--model <name>", "model, or profile/model (env EDDY_MODEL)")
    .option(
      "--provider <name>",
      `provider profile: ${Object.keys(KNOWN_PROFILES).join(", ")}, or one from the config file`,
    )
    .option(
      "--config <file>",
      "read this config file alone (default: ~/.config/eddy/config.json with ./eddy.config.json layered over it)",
    )
    .option("--workspace <dir>", "root for the file tools (default: the current directory)");
}

/** How a run behaves: limits, timeouts, tools. Shared by `eddy run` and `eddy config`; defaults from the constants. */
function addPolicyOptions(command: Command): Command {
  command
    .option("--instructions <text>", "system instructions, sent on every request")
    .option("--stateless", "resend the whole history each turn (store:false) instead of previous_response_id")
    .addOption(
      new Option(
        "--tools-on-follow-up <when>",
        `send the tool list on the first request only, or on every request (default ${FOLLOW_UP_FLAG[LOOP_DEFAULTS.toolsOnFollowUp]})`,
      ).argParser(oneOf<ToolsOnFollowUpFlag>("--tools-on-follow-up", ["first", "every"])),
    );
  addLimitOptions(command);
  command.option("--no-validate", "do not validate provider events against the Open Responses schema");
  addToolPolicyOptions(command);
  return addHistoryOptions(command);
}

/** The run's limits and the provider's timeouts; defaults from `LOOP_DEFAULTS` and `PROVIDER_DEFAULTS`. */
function addLimitOptions(command: Command): void {
  const P = PROVIDER_DEFAULTS;
  command
    .addOption(
      numberOption(
        "--max-tool-calls <n>",
        `tool calls allowed in the run (default ${LOOP_DEFAULTS.maxToolCalls})`,
        integer("--max-tool-calls", 1),
      ),
    )
    .addOption(
      numberOption(
        "--max-turns <n>",
        `model requests allowed in the run, retries not counted (default ${LOOP_DEFAULTS.maxTurns})`,
        integer("--max-turns", 1),
      ),
    )
    .addOption(
      new Option(
        "--on-limit <what>",
        "at --max-turns or --max-tool-calls: stop (the default), or answer — one last request with no tools so you get an answer (the exit code stays 3)",
      ).argParser(oneOf<OnLimit>("--on-limit", ["stop", "answer"])),
    )
    .addOption(
      numberOption(
        "--max-retries <n>",
        `retries of a failed request (default ${P.maxRetries})`,
        integer("--max-retries", 0),
      ),
    )
    .addOption(
      numberOption(
        "--connect-timeout <ms>",
        `wait for the response headers (default ${P.connectTimeoutMs})`,
        integer("--connect-timeout", 1, MAX_TIMEOUT_MS),
      ),
    )
    .addOption(
      numberOption(
        "--first-byte-timeout <ms>",
        `wait for the first byte of a response (default ${P.firstByteTimeoutMs})`,
        integer("--first-byte-timeout", 1, MAX_TIMEOUT_MS),
      ),
    )
    .addOption(
      numberOption(
        "--idle-timeout <ms>",
        `longest silence while streaming; paused while a tool runs (default ${P.idleTimeoutMs})`,
        integer("--idle-timeout", 1, MAX_TIMEOUT_MS),
      ),
    );
}

/** Which tools are enabled, how they run and who approves their calls. */
function addToolPolicyOptions(command: Command): void {
  command
    .option("--allow-write", "enable write_file and apply_patch")
    .option("--allow-shell", "enable the shell tool (not confined to the workspace unless --sandbox)")
    .option(
      "--sandbox",
      "run shell commands under bubblewrap: read-only system, writable workspace, no network",
    )
    .option(
      "--mcp <NAME=COMMAND…>",
      "add an MCP server: NAME=COMMAND ARGS… (stdio) or NAME=URL (Streamable HTTP); its tools are NAME__TOOL (repeatable)",
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option("--parallel-tool-calls", "let the model make several calls per response and run them at once")
    .addOption(
      numberOption(
        "--tool-concurrency <n>",
        `calls run at once with --parallel-tool-calls (default ${LOOP_DEFAULTS.toolConcurrency})`,
        integer("--tool-concurrency", 1),
      ),
    )
    .addOption(
      new Option(
        "--approve <mode>",
        "ask before calls that write, run commands or use MCP tools (whatever their server says): ask (on a terminal, the default there), auto (run them; the default when piped), deny, or defer (end the run awaiting approval, exit 4; decide later with eddy resume --decide)",
      ).argParser(oneOf<ApproveMode>("--approve", APPROVE_MODES)),
    );
}

/** How tool history is sent (config file `history`); defaults from `HISTORY_DEFAULTS`. */
function addHistoryOptions(command: Command): Command {
  const H = HISTORY_DEFAULTS;
  return command
    .addOption(
      new Option(
        "--history-strategy <name>",
        `tool history as native items, or text-embed (results as text, calls left out); auto follows the provider (default ${H.strategy})`,
      ).argParser(oneOf("--history-strategy", HISTORY_STRATEGIES)),
    )
    .addOption(
      numberOption(
        "--truncation-threshold <tokens>",
        `history size past which older tool calls are folded into a summary (default ${H.truncationThreshold})`,
        integer("--truncation-threshold", 1),
      ),
    )
    .addOption(
      numberOption(
        "--recent-calls-to-keep <n>",
        `tool calls kept verbatim when older ones are folded (default ${H.recentCallsToKeep})`,
        integer("--recent-calls-to-keep", 0),
      ),
    )
    .option(
      "--summarization-model <model>",
      "model that writes the summaries, on the same provider (default: an extractive summary, no model call)",
    );
}

/** What each command action reports back to `main`. */
interface CliState {
  exitCode: number;
  debug: boolean;
  /** The command the arguments name (`eddy run …`, `eddy help run`), if any: see `runOptionsFor`. */
  command: string | undefined;
}

/**
 * The command an argument list names: its first argument that is not an option (the program's own
 * options, `-V` and `-h`, take no value), or the one after `help`.
 */
function commandNamed(argv: readonly string[]): string | undefined {
  const words = argv.filter((a) => !a.startsWith("-"));
  return words[0] === "help" ? words[1] : words[0];
}

/**
 * `command` with every option of `eddy run`, when it is the command being run or asked about. The
 * others are defined with their name, arguments and description only (what the program's help and
 * its suggestions read): about 70 options each, built for nothing, were a third of `eddy --help`'s
 * own time (docs/architecture.md).
 */
function runOptionsFor(command: Command, state: CliState): Command {
  return state.command === command.name() ? addRunOptions(command) : command;
}

/** Every option of `eddy run`: the commands that start runs (batch, worker, resume) take them all (flag-scope.ts). */
function addRunOptions(command: Command): Command {
  return addRequestOptions(addPolicyOptions(addTargetOptions(command)))
    .option(
      "--context <tape>",
      "continue from earlier runs: their prompts, answers and a summary of their tool calls become context (repeatable)",
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option(
      "--thread <name>",
      "continue the named thread: earlier runs' prompts and answers become context, and this run is added to it (.eddy/threads/NAME.jsonl)",
    )
    .option(
      "--schema <file>",
      "JSON Schema file: the final answer must be JSON matching it (structured output)",
    )
    .option(
      "--no-agents-md",
      "do not add AGENTS.md files (the workspace's and its parents' up to the repository root) to the instructions",
    )
    .option("--json", "write frames as JSONL to stdout, nothing else")
    .option("--record <file>", "write the run's tape (replay it with eddy replay)")
    .option(
      "--otel",
      "export OpenTelemetry GenAI spans over OTLP/HTTP (OTEL_EXPORTER_OTLP_ENDPOINT, default http://localhost:4318; on by itself when that variable is set)",
    )
    .option("--debug", "show stack traces for internal errors");
}

/** `--rerun-interrupted`, for the commands that resume runs (resume, batch, worker). */
function addRerunOption(command: Command): Command {
  return command.option(
    "--rerun-interrupted",
    "run again the calls a crash interrupted (default: they are answered as interrupted, not run twice; the read-only built-ins always run again)",
  );
}

function defineRun(program: Command, io: CliIo, state: CliState): void {
  const run = program
    .command("run")
    .description("run the agent on a prompt (from the argument or stdin)")
    .argument("[prompt]", "the task; read from stdin when omitted");
  runOptionsFor(run, state)
    .addHelpText("after", RUN_EXAMPLES)
    .action(async (prompt: string | undefined, flags: RunFlags) => {
      state.debug = flags.debug === true;
      const { runCommand } = await import("./run-command.js");
      state.exitCode = await runCommand(prompt, flags, io);
    });
}

function defineChat(program: Command, io: CliIo, state: CliState): void {
  const chat = program
    .command("chat")
    .description(
      "an interactive session: each message is a run on the session's thread (new unless --thread NAME); /help inside",
    );
  runOptionsFor(chat, state)
    .addHelpText(
      "after",
      "\nEvery turn is recorded as a tape (.eddy/tapes/THREAD/RUN_ID.tape). Ctrl-C cancels the running turn;\nCtrl-C twice or Ctrl-D at the prompt leaves. A message typed while a turn runs is sent when it ends\n(a cancelled turn too; Ctrl-C again before the prompt is back drops it).",
    )
    .action(async (flags: RunFlags) => {
      state.debug = flags.debug === true;
      const { assertFlagsApply, NOT_APPLICABLE } = await import("./flag-scope.js");
      assertFlagsApply(chat, "chat", NOT_APPLICABLE.chat);
      const { chatCommand } = await import("./chat-command.js");
      state.exitCode = await chatCommand(flags, io);
    });
}

function defineUndo(program: Command, io: CliIo, state: CliState): void {
  program
    .command("undo")
    .description(
      "restore the files a recorded run's write_file/apply_patch calls changed (refused if one changed since)",
    )
    .argument("<tape>", "the run's tape (eddy run --record, or a chat turn's under .eddy/tapes)")
    .option("--workspace <dir>", "the workspace the run wrote in (default: the current directory)")
    .action(async (tape: string, flags: { workspace?: string }) => {
      const { undoCommand } = await import("./undo-command.js");
      state.exitCode = await undoCommand(tape, flags, io);
    });
}

function defineReplay(program: Command, io: CliIo, state: CliState): void {
  program
    .command("replay")
    .description("re-run a recorded tape offline and check it reproduces the same frames")
    .argument("<tape>", "the tape file (written by eddy run --record)")
    .option("--json", "write the replayed frames as JSONL to stdout")
    .option("--live-tools", "run the tools for real instead of using their recorded outputs")
    .option("--workspace <dir>", "workspace for --live-tools (default: the current directory)")
    .option(
      "--allow-write",
      "with --live-tools: let the tape's write_file and apply_patch calls run (a tape grants nothing)",
    )
    .option("--allow-shell", "with --live-tools: let the tape's shell calls run (a tape grants nothing)")
    .option(
      "--sandbox",
      "with --live-tools: run the shell in the bubblewrap sandbox (as a tape recorded with it does)",
    )
    .addHelpText(
      "after",
      "\nExit codes: 0 the frames match, 1 they diverge (the first divergence is shown), 2 bad tape or a permission not given.",
    )
    .action(async (tape: string, flags: ReplayFlags) => {
      const { replayCommand } = await import("./replay-command.js");
      state.exitCode = await replayCommand(tape, flags, io);
    });
}

function defineMock(program: Command, io: CliIo, state: CliState): void {
  program
    .command("mock")
    .description("serve the mock Open Responses server on 127.0.0.1 (the demo model, or a scenario)")
    .addOption(numberOption("--port <n>", "port (default: any free port)", integer("--port", 0, 65535)))
    .option("--scenario <file>", "JSON or YAML scenario scripting the answers")
    .option("--api-key <key>", "require this bearer token")
    .option(
      "--strict",
      "refuse the short forms real clients send (e.g. a message without type) with a 400 naming each, instead of applying the spec's defaults",
    )
    .action(async (flags: MockFlags) => {
      const { mockCommand } = await import("./mock-command.js");
      state.exitCode = await mockCommand(flags, io);
    });
}

function defineThreads(program: Command, io: CliIo, state: CliState): void {
  const threads = program
    .command("threads")
    .description("list the threads of the workspace (conversations that span runs: eddy run --thread NAME)")
    .option("--json", "print JSON")
    .option("--workspace <dir>", "workspace whose .eddy/threads to read (default: the current directory)")
    .action(async (flags: ThreadsFlags) => {
      const { threadsCommand } = await import("./threads-command.js");
      state.exitCode = await threadsCommand(undefined, flags, io);
    });
  threads
    .command("show")
    .description("print one thread: each run's prompt, outcome, answer, usage and tape")
    .argument("<name>", "the thread")
    .option("--json", "print the thread's records as JSON")
    .option("--workspace <dir>", "workspace whose .eddy/threads to read (default: the current directory)")
    .action(async (name: string, flags: ThreadsFlags) => {
      const { threadsCommand } = await import("./threads-command.js");
      state.exitCode = await threadsCommand(name, { ...threads.opts<ThreadsFlags>(), ...flags }, io);
    });
}

function defineBatch(program: Command, io: CliIo, state: CliState): void {
  const batch = program
    .command("batch")
    .description(
      "run every task of a JSONL file (one run each): results.jsonl, tapes and summary.json in DIR",
    )
    .argument(
      "<tasks>",
      'JSONL file, one task a line: {"id", "prompt" | "input", "model"?, "instructions"?, "schema"?, "metadata"?}',
    )
    .requiredOption(
      "--out <dir>",
      "folder for results.jsonl, tapes/ and summary.json (running again skips finished tasks)",
    );
  addRerunOption(runOptionsFor(batch, state))
    .addOption(
      numberOption(
        "--concurrency <n>",
        `runs at once in this process (default ${BATCH_DEFAULTS.concurrency})`,
        integer("--concurrency", 1, 10_000),
      ),
    )
    .addOption(numberOption("--rpm <n>", "requests per minute over the whole batch", integer("--rpm", 1)))
    .addOption(numberOption("--tpm <n>", "tokens per minute over the whole batch", integer("--tpm", 1)))
    .option(
      "--workspace-per-task",
      `give each task its own copy of the workspace (kept when the task fails, at most ${BATCH_DEFAULTS.maxKeptWorkspaces})`,
    )
    .option("--retry-failed", "run the tasks that failed last time again")
    .option(
      "--queue <redis-url>",
      "put the tasks on a BullMQ queue (redis://HOST:PORT) for eddy worker to run",
    )
    .action(async (tasks: string, flags: BatchFlags) => {
      state.debug = flags.debug === true;
      const { assertFlagsApply, NOT_APPLICABLE, NOT_WITH_QUEUE } = await import("./flag-scope.js");
      assertFlagsApply(batch, "batch", NOT_APPLICABLE.batch);
      if (flags.queue !== undefined) assertFlagsApply(batch, "batch --queue", NOT_WITH_QUEUE);
      const { batchCommand } = await import("./batch-command.js");
      state.exitCode = await batchCommand(tasks, flags, io);
    });
}

function defineWorker(program: Command, io: CliIo, state: CliState): void {
  const worker = program
    .command("worker")
    .description("run the tasks eddy batch --queue puts on a queue, with this machine's provider and tools")
    .requiredOption("--queue <redis-url>", "the queue's Redis (redis://HOST:PORT)");
  addRerunOption(runOptionsFor(worker, state))
    .addOption(
      numberOption(
        "--concurrency <n>",
        `runs at once in this worker (default ${BATCH_DEFAULTS.workerConcurrency})`,
        integer("--concurrency", 1, 10_000),
      ),
    )
    .addOption(
      numberOption(
        "--stall-timeout <ms>",
        `a worker that stops answering loses its tasks to another after this long (default ${BATCH_DEFAULTS.stallTimeoutMs})`,
        integer("--stall-timeout", 500),
      ),
    )
    .action(async (flags: WorkerFlags) => {
      state.debug = flags.debug === true;
      const { assertFlagsApply, NOT_APPLICABLE } = await import("./flag-scope.js");
      assertFlagsApply(worker, "worker", NOT_APPLICABLE.worker);
      const { workerCommand } = await import("./worker-command.js");
      state.exitCode = await workerCommand(flags, io);
    });
}

function defineResume(program: Command, io: CliIo, state: CliState): void {
  const resume = program
    .command("resume")
    .description("continue a run whose process died from its tape: recorded tool calls are not run again")
    .argument("<tape>", "the tape (eddy run --record, or DIR/tapes/ID.tape of a batch)");
  addRerunOption(runOptionsFor(resume, state))
    .option(
      "--decide <call=decision>",
      "answer a deferred approval: CALL_ID=allow|deny, or all=allow|deny (repeatable)",
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .addHelpText(
      "after",
      "\nPermissions come from this invocation, never from the tape: a tape whose tools need --allow-write,\n--allow-shell or an MCP server is refused (exit 2) unless you grant them. A call that had started\nwhen the process died is answered as interrupted, not run again (unless --rerun-interrupted; the\nread-only built-ins always run again).\n\nBudgets come from this invocation too: --max-turns, --max-tool-calls, --tool-concurrency and\n--max-output-tokens (else the config file, else the defaults) are ceilings on the tape's; what a tape\nasks above them is lowered, and said on stderr.\n\nExit codes as eddy run: 0 completed, 1 failed, 2 bad usage or tape, 3 limit, 4 awaiting approval, 130 cancelled.",
    )
    .action(async (tape: string, flags: ResumeFlags) => {
      state.debug = flags.debug === true;
      const { assertFlagsApply, NOT_APPLICABLE } = await import("./flag-scope.js");
      assertFlagsApply(resume, "resume", NOT_APPLICABLE.resume);
      const { resumeCommand } = await import("./resume-command.js");
      state.exitCode = await resumeCommand(tape, flags, io);
    });
}

function defineServe(program: Command, io: CliIo, state: CliState): void {
  const serve = program
    .command("serve")
    .description(
      "serve the runtime over HTTP: start, watch, cancel and decide runs (/v1/runs), threads, /openapi.json",
    );
  runOptionsFor(serve, state)
    .option("--host <host>", "address to listen on (default 127.0.0.1; another needs --token)")
    .addOption(
      numberOption(
        "--port <n>",
        "port to listen on (default: a free one, printed)",
        integer("--port", 0, 65_535),
      ),
    )
    .option("--token <token>", "require Authorization: Bearer TOKEN on every request (or EDDY_SERVE_TOKEN)")
    .option("--data-dir <dir>", "where run tapes are kept (default WORKSPACE/.eddy/serve)")
    .addOption(
      numberOption(
        "--max-runs <n>",
        "runs at once; more get 429 (default 4)",
        integer("--max-runs", 1, 10_000),
      ),
    )
    .addOption(
      numberOption(
        "--run-timeout <ms>",
        "longest a run goes on before the server cancels it (default 3600000: an hour)",
        integer("--run-timeout", 1000, 2_147_483_647),
      ),
    )
    .option("--cors-origin <origin>", "allow this browser origin (CORS; default: none)")
    .addHelpText(
      "after",
      "\nRuns use this invocation's provider, tools and permissions (the eddy run flags and config); a request\nnever widens them (403). --approve ask means: ask the client (runs end awaiting_approval; POST\n/v1/runs/ID/decisions answers). Ctrl-C/SIGTERM cancels running runs and records their tapes.",
    )
    .action(async (flags: ServeFlags) => {
      state.debug = flags.debug === true;
      const { assertFlagsApply, NOT_APPLICABLE } = await import("./flag-scope.js");
      assertFlagsApply(serve, "serve", NOT_APPLICABLE.serve);
      const { serveCommand } = await import("./serve-command.js");
      state.exitCode = await serveCommand(flags, io);
    });
}

function defineView(program: Command, io: CliIo, state: CliState): void {
  program
    .command("view")
    .description(
      "write one self-contained HTML page of recorded runs or of a batch folder, and open it; or follow a run of eddy serve live (--live URL)",
    )
    .argument("[paths...]", "tapes (eddy run --record), or one batch folder (eddy batch --out)")
    .option("--out <file>", "write the page here (default: a temporary file, opened in the browser)")
    .option("--no-open", "do not open the browser")
    .option(
      "--live <url>",
      "follow a run of eddy serve as its frames arrive (its URL …/v1/runs/ID or …/v1/runs/ID/events): the page is served on 127.0.0.1 until Ctrl-C",
    )
    .option(
      "--token <token>",
      "eddy serve's bearer token for --live (or EDDY_SERVE_TOKEN); never put in the page",
    )
    .addHelpText(
      "after",
      "\nExamples:\n  $ eddy view run.tape               # opens the page when there is a display\n  $ eddy view a.tape b.tape --out runs.html\n  $ eddy view batch-out/             # the task table of an eddy batch --out folder\n  $ eddy view --live http://127.0.0.1:7341/v1/runs/run_abc   # follow a served run (token: EDDY_SERVE_TOKEN)",
    )
    .action(async (paths: string[], flags: ViewFlags) => {
      const { viewCommand } = await import("./view-command.js");
      state.exitCode = await viewCommand(paths, flags, io);
    });
}

const DOCTOR_HELP = `
Probes (each ok, failed, unsupported or skipped, with a hint when not ok):
  auth, model, streaming     the smallest request a run makes, streamed and validated
  previous_response_id       a stored response continued by a follow-up (store + previous_response_id)
  function_call_input        function_call / function_call_output items in a stateless request's input
  tool_call                  a forced function call, its output sent back, an answer after it
  encrypted_reasoning        include reasoning.encrypted_content with store:false (skipped if the model does not reason)
  websocket, compaction      WebSocket mode; POST /responses/compact
  chat_completions           POST /chat/completions, streaming

The report is cached ($XDG_CACHE_HOME/eddy/doctor.json, else ~/.cache/eddy/doctor.json) per provider,
base URL, model and API; runs whose settings are left on auto (--history-strategy auto, the
continuation mode) follow it.

Exit codes: 0 auth and streaming pass, 1 they do not, 2 bad usage, 130 cancelled.`;

function defineDoctor(program: Command, io: CliIo, state: CliState): void {
  const doctor = program
    .command("doctor")
    .description(
      "probe the provider a run would use: what works, what does not, and what to do (cached for auto settings)",
    );
  addTargetOptions(doctor)
    .addOption(
      numberOption(
        "--probe-timeout <ms>",
        `longest one probe may take (default ${PROBE_DEFAULTS.timeoutMs})`,
        integer("--probe-timeout", 1),
      ),
    )
    .option("--json", "print the report as one JSON object, nothing else")
    .option("--debug", "show stack traces for internal errors")
    .addHelpText("after", DOCTOR_HELP)
    .action(async (flags: DoctorFlags) => {
      state.debug = flags.debug === true;
      const { doctorCommand } = await import("./doctor-command.js");
      state.exitCode = await doctorCommand(flags, io);
    });
}

function defineConfig(program: Command, io: CliIo, state: CliState): void {
  const config = program
    .command("config")
    .description("show the effective configuration and where each value comes from (keys redacted)");
  addRequestOptions(addPolicyOptions(addTargetOptions(config)))
    .option("--no-agents-md", "show the settings without AGENTS.md instruction files")
    .option(
      "--trust",
      "trust the workspace's eddy.config.json as it is now: its commands, permissions and endpoints apply until it changes",
    )
    .action(async (flags: RunFlags & { trust?: boolean }) => {
      const { configCommand, trustCommand } = await import("./config-command.js");
      state.exitCode = flags.trust === true ? trustCommand(flags, io) : configCommand(flags, io);
    });
}

/** Runs the CLI. Returns the process exit code. */
export async function main(argv: string[], io: CliIo = processIo()): Promise<number> {
  const state: CliState = {
    exitCode: SUCCESS,
    debug: argv.includes("--debug") || io.env.EDDY_DEBUG === "1",
    command: commandNamed(argv),
  };
  const program = new Command("eddy")
    .description(
      "An agent runtime for any Open Responses provider: tool-calling runs, recorded tapes, an offline mock server.",
    )
    .version(EDDY_VERSION, "-V, --version")
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: () => {} })
    .showSuggestionAfterError(true);
  defineRun(program, io, state);
  defineChat(program, io, state);
  defineUndo(program, io, state);
  defineReplay(program, io, state);
  defineMock(program, io, state);
  defineThreads(program, io, state);
  defineBatch(program, io, state);
  defineWorker(program, io, state);
  defineResume(program, io, state);
  defineServe(program, io, state);
  defineView(program, io, state);
  defineConfig(program, io, state);
  defineDoctor(program, io, state);
  program.hook("preAction", (_program, command) => refuseEmptyPaths(command));
  try {
    if (argv.length === 0) {
      program.outputHelp();
      return SUCCESS;
    }
    refuseFlagsAsValues(program, argv);
    await program.parseAsync(argv, { from: "user" });
    return state.exitCode;
  } catch (err) {
    return reportError(err, io, state.debug, state.command);
  }
}

/** An option or argument whose value names a file, a folder, a tape or a URL. */
const NAMES_A_PLACE = /<(?:file|dir|tape|url|path\|url)>|^(?:tape|tasks|paths)$/;

/**
 * Throws a usage error for an empty file, folder, tape or URL (`--record ""`, `eddy view ""`, a
 * variable that expanded to nothing): it named nothing, yet went on as "cannot write the tape :
 * ENOENT", as the current folder (`--image ""` "is a directory", `eddy view ""` read every tape
 * in it) or as a base URL that is set.
 */
function refuseEmptyPaths(command: Command): void {
  const given: [string, unknown, string][] = command.options
    .filter((option) => NAMES_A_PLACE.test(option.flags))
    .map((option) => [
      option.long ?? option.flags,
      command.getOptionValue(option.attributeName()),
      option.flags,
    ]);
  command.registeredArguments.forEach((argument, i) => {
    if (NAMES_A_PLACE.test(argument.name()))
      given.push([`<${argument.name()}>`, command.processedArgs[i], argument.name()]);
  });
  for (const [name, value, flags] of given) {
    if (value !== "" && !(Array.isArray(value) && value.includes(""))) continue;
    const what = flags.includes("path|url")
      ? "a path or a URL"
      : flags.includes("<url>")
        ? "a URL"
        : "a path";
    throw new EddyError("invalid_argument", `${name} is empty: give ${what}`, { fault: "user" });
  }
}

/** How to see an internal error's stack trace: `--debug` where the command has it, else the variable. */
function debugHint(command: string | undefined): string {
  return command === "run" || command === "doctor" ? "run with --debug" : "set EDDY_DEBUG=1";
}

function reportError(err: unknown, io: CliIo, debug: boolean, command?: string): number {
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
  // A message may quote what a file or a server said: nothing in it reaches the terminal as a
  // control sequence (docs/pitfalls.md #66).
  if (EddyError.isInstance(err) && err.fault === "user") {
    io.stderr.write(`${styles.red("eddy:")} ${terminalSafe(err.message)}\n`);
    if (debug && err.stack) io.stderr.write(`${err.stack}\n`);
    return USAGE_ERROR;
  }
  const message = terminalSafe(err instanceof Error ? (err.message.split("\n")[0] ?? "") : String(err));
  // The other side failed (a provider, eddy serve answering 5xx): said as it is, not as eddy's own fault.
  if (EddyError.isInstance(err) && (err.fault === "provider" || err.fault === "model")) {
    io.stderr.write(`${styles.red("eddy:")} ${message}\n`);
    if (debug && err.stack) io.stderr.write(`${err.stack}\n`);
    return RUN_FAILED;
  }
  io.stderr.write(
    `${styles.red("eddy: internal error:")} ${message}${debug ? "" : ` (${debugHint(command)} for details)`}\n`,
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
      // The terminal closed (SIGHUP follows): what is left to say has nowhere to go, and the
      // command still ends its run and records it.
      if (err.code === "EIO" || err.code === "ERR_STREAM_DESTROYED") return;
      throw err;
    });
  }
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    // A getter: opening process.stdin (a TTY or pipe stream) is work that most commands never need.
    get stdin() {
      return process.stdin;
    },
    // Asked of the file descriptor, for the same reason.
    get stdinIsTTY() {
      return isatty(0);
    },
    readStdin: async (maxBytes) => {
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of process.stdin) {
        size += (chunk as Buffer).length;
        if (size > maxBytes) {
          process.stdin.destroy();
          return undefined;
        }
        chunks.push(chunk as Buffer);
      }
      return Buffer.concat(chunks).toString("utf8");
    },
    env: process.env,
    cwd: process.cwd(),
    terminal: { readLine: (signal) => readTerminalLine(process.stdin, signal) },
    onSignal: (handler) => {
      // SIGHUP (the terminal closed) ends a command as SIGTERM does: its run cancelled and recorded.
      const listeners = (["SIGINT", "SIGTERM", "SIGHUP"] as const).map((name) => {
        const listener = () => handler(name);
        process.on(name, listener);
        return [name, listener] as const;
      });
      return () => {
        for (const [name, listener] of listeners) process.off(name, listener);
      };
    },
  };
}
