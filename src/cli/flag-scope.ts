/**
 * Which of `eddy run`'s flags apply to the other commands that start runs, and why the others do
 * not (docs/architecture.md, "One home for a run's settings"). `eddy batch`, `eddy worker` and
 * `eddy resume` accept every `eddy run` flag: those that apply go through the same settings
 * (run-settings.ts) and are applied; those listed here are a usage error (exit 2) naming the flag
 * and the reason — never silently ignored. test/flag-scope.test.ts enumerates `eddy run`'s options
 * against this table, so a flag added later cannot be dropped unnoticed.
 */
import type { Command } from "commander";
import { usageError } from "./preflight.js";

/** A command that starts runs besides `eddy run`. */
export type RunningCommand = "batch" | "worker" | "resume" | "chat" | "serve";

const ATTACHMENTS =
  "attachments belong to a task's input: give each task input items with input_image/input_file parts";
const SPEC_FROM_TAPE =
  "a resumed run's settings come from its tape (the recorded run must be reproduced as it was): start a new run to change them";

/**
 * Spec-shaping flags: what the recorded run was; `eddy resume` reproduces it, so they cannot change.
 * (`--tool` is not one of them on resume: there it allows the hosted tools the tape's run declares,
 * as `--allow-shell` allows its `shell` — loop/policy.ts, `Policy.hostedTools`. Nor are the budget
 * flags, `--max-turns`, `--max-tool-calls`, `--tool-concurrency` and `--max-output-tokens`: there
 * they cap the tape's budgets, which a tape may not raise — batch/resume-budgets.ts.)
 */
const SPEC_FLAGS = [
  "--instructions",
  "--stateless",
  "--tools-on-follow-up",
  "--on-limit",
  "--no-agents-md",
  "--history-strategy",
  "--truncation-threshold",
  "--recent-calls-to-keep",
  "--summarization-model",
  "--parallel-tool-calls",
  "--reasoning-effort",
  "--reasoning-summary",
  "--verbosity",
  "--temperature",
  "--top-p",
  "--service-tier",
  "--prompt-cache-key",
  "--include",
  "--metadata",
  "--native-tools",
  "--continue-incomplete",
  "--schema",
] as const;

/** For each command, the `eddy run` flags that do not apply to it, with the reason. */
export const NOT_APPLICABLE: Readonly<Record<RunningCommand, Readonly<Record<string, string>>>> = {
  batch: {
    "--thread": "a batch's tasks are independent runs; continue a thread with eddy run --thread",
    "--context": "a batch's tasks start fresh; continue from earlier runs with eddy run --context",
    "--json": "eddy batch writes every result to DIR/results.jsonl (--out)",
    "--record": "eddy batch records every task's tape in DIR/tapes",
    "--image": ATTACHMENTS,
    "--file": ATTACHMENTS,
  },
  worker: {
    "--thread": "queued tasks are independent runs",
    "--context": "queued tasks start fresh",
    "--json":
      "eddy worker prints one line per finished task; the coordinator (eddy batch) writes results.jsonl",
    "--record": "the coordinator (eddy batch --queue) writes every task's tape",
    "--image": ATTACHMENTS,
    "--file": ATTACHMENTS,
    "--schema": "a batch's schema travels with its tasks: give it to eddy batch --queue",
  },
  chat: {
    "--context": "a chat continues its thread: use --thread NAME",
    "--json": "eddy chat is a terminal; each turn's frames are in its tape (.eddy/tapes/THREAD/)",
    "--record": "eddy chat records every turn's tape under .eddy/tapes/THREAD/",
    "--image": "a chat's messages are typed lines: attach files with eddy run --image/--file",
    "--file": "a chat's messages are typed lines: attach files with eddy run --image/--file",
    "--schema": "a chat's answers are for a person: use eddy run --schema for structured output",
  },
  serve: {
    "--thread": "a client names the thread: POST /v1/threads/NAME/messages",
    "--context": "each request is its own run; continue a conversation with POST /v1/threads/NAME/messages",
    "--json": "eddy serve streams every run's frames over HTTP (GET /v1/runs/ID/events)",
    "--record": "eddy serve records every run's tape in its data folder (--data-dir)",
    "--image": "attachments belong to a request's input: send input items with input_image/input_file parts",
    "--file": "attachments belong to a request's input: send input items with input_image/input_file parts",
  },
  resume: {
    ...Object.fromEntries(SPEC_FLAGS.map((flag) => [flag, SPEC_FROM_TAPE])),
    "--thread": "a resumed run continues its own tape, not a thread",
    "--context": SPEC_FROM_TAPE,
    "--image": SPEC_FROM_TAPE,
    "--file": SPEC_FROM_TAPE,
    "--transport": "the tape's requests are reproduced as recorded; the transport is the recorded one",
  },
};

const WORKERS_OWN =
  "with --queue the tasks run on eddy worker, with each worker's own provider, permissions, tools and workspace (with its AGENTS.md; they never travel through the queue): give it to eddy worker";

/**
 * Flags that apply to `eddy batch` on one machine but not with `--queue`: the provider,
 * permissions and tools are each worker's own.
 */
export const NOT_WITH_QUEUE: Readonly<Record<string, string>> = Object.fromEntries(
  [
    "--base-url",
    "--api",
    "--transport",
    "--api-key",
    "--provider",
    "--max-retries",
    "--connect-timeout",
    "--first-byte-timeout",
    "--idle-timeout",
    "--no-validate",
    "--allow-write",
    "--allow-shell",
    "--sandbox",
    "--mcp",
    "--approve",
    "--otel",
    "--no-agents-md",
  ].map((flag) => [flag, WORKERS_OWN]),
);

/**
 * Throws a usage error for the first flag given on the command line that does not apply to
 * `command` (`extra` adds situational ones, e.g. `NOT_WITH_QUEUE`).
 */
export function assertFlagsApply(
  cmd: Command,
  command: string,
  table: Readonly<Record<string, string>>,
): void {
  for (const option of cmd.options) {
    const flag = option.long;
    if (flag === undefined) continue;
    const reason = table[flag];
    if (reason === undefined) continue;
    if (cmd.getOptionValueSource(option.attributeName()) !== "cli") continue;
    throw usageError(`${flag} does not apply to eddy ${command}: ${reason}`);
  }
}
