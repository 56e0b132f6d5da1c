/**
 * `eddy threads` lists the workspace's threads (name, runs, last update); `eddy threads show NAME`
 * prints one: each run's prompt, how it ended, its answer, usage and tape. `--json` prints the
 * same as JSON (the list, or the thread's runs with their records).
 */
import { resolve } from "node:path";
import { createThreadStore, type ThreadRun } from "../context/threads.js";
import { safeJson } from "../util/control-chars.js";
import { SUCCESS, USAGE_ERROR } from "./exit-codes.js";
import type { CliIo } from "./run-command.js";
import { stylesFor, terminalSafe } from "./terminal.js";

export interface ThreadsFlags {
  json?: boolean;
  workspace?: string;
}

/** `eddy threads` (no name) or `eddy threads show NAME`. */
export async function threadsCommand(
  name: string | undefined,
  flags: ThreadsFlags,
  io: CliIo,
): Promise<number> {
  const store = createThreadStore({ workspace: resolve(io.cwd, flags.workspace ?? ".") });
  const styles = stylesFor(io.stdout, io.env);
  if (name === undefined) {
    const threads = await store.list();
    if (flags.json === true) {
      io.stdout.write(
        `${safeJson(threads.map((t) => ({ ...t, updated: t.problem === undefined ? new Date(t.updated).toISOString() : null })))}\n`,
      );
      return SUCCESS;
    }
    if (threads.length === 0) {
      io.stdout.write(`no threads in ${store.root} (start one with eddy run --thread NAME "…")\n`);
      return SUCCESS;
    }
    const width = Math.max(6, ...threads.map((t) => t.name.length));
    io.stdout.write(styles.dim(`${"THREAD".padEnd(width)}  RUNS  LAST UPDATE\n`));
    for (const t of threads)
      io.stdout.write(
        t.problem === undefined
          ? `${t.name.padEnd(width)}  ${String(t.runs).padStart(4)}  ${new Date(t.updated).toISOString()}\n`
          : `${t.name.padEnd(width)}     ${styles.yellow(`? unreadable: ${terminalSafe(t.problem, { oneLine: true })}`)}\n`,
      );
    return SUCCESS;
  }
  const log = await store.read(name);
  if (log.runs.length === 0) {
    io.stderr.write(`eddy: no thread named ${JSON.stringify(name)} in ${store.root} (see eddy threads)\n`);
    return USAGE_ERROR;
  }
  if (flags.json === true) {
    io.stdout.write(`${safeJson(log)}\n`);
    return SUCCESS;
  }
  io.stdout.write(
    styles.bold(`thread ${log.name}: ${log.runs.length} run${log.runs.length === 1 ? "" : "s"}\n`),
  );
  for (const [i, run] of log.runs.entries()) io.stdout.write(describeRun(run, i, styles));
  if (log.skipped > 0) io.stdout.write(styles.yellow(`(${log.skipped} unreadable line(s) skipped)\n`));
  return SUCCESS;
}

/** One run of `eddy threads show`: what the log holds is data, shown and never acted on (terminalSafe). */
function describeRun(run: ThreadRun, index: number, styles: ReturnType<typeof stylesFor>): string {
  const { prompt, outcome } = run;
  const heading = `#${index + 1}  ${new Date(prompt.ts).toISOString()}  ${run.run_id}${prompt.model ? `  ${prompt.model}` : ""}  ${outcome?.reason ?? "unfinished"}`;
  const lines = ["", styles.cyan(terminalSafe(heading, { oneLine: true })), `> ${indent(prompt.prompt)}`];
  if (outcome !== undefined) {
    if (outcome.output_text !== "") lines.push(`< ${indent(outcome.output_text)}`);
    const calls = outcome.items.filter((i) => i.type === "function_call").length;
    const usage = outcome.usage;
    const facts = [
      `${calls} tool call${calls === 1 ? "" : "s"}`,
      usage ? `${usage.input_tokens} in / ${usage.output_tokens} out tokens` : undefined,
      outcome.tape ? `tape ${terminalSafe(outcome.tape, { oneLine: true })}` : undefined,
    ].filter(Boolean);
    lines.push(styles.dim(`  ${facts.join(", ")}`));
  }
  return `${lines.join("\n")}\n`;
}

function indent(text: string): string {
  return terminalSafe(text).replace(/\n/g, "\n  ");
}
