/**
 * `--approve`: which mode a run uses, and the terminal prompt of `--approve ask`. The prompt is
 * written to stderr while the frames' rendering is held (so streamed text never lands inside it),
 * shows what the call would do (approval-view.ts) and reads one answer line: y (allow this call),
 * n (deny it: the model reads that the user refused), a/always (allow this tool for the rest of
 * the run). Ctrl-C at the prompt is an ordinary SIGINT: the run is cancelled (exit 130).
 */
import type { ApprovalDecision, ApprovalHandler } from "../loop/approvals.js";
import type { Setting } from "./config.js";
import type { ApproveMode } from "./config-tools.js";
import { usageError } from "./preflight.js";
import { controlsShown, type Output, type Styles } from "./terminal.js";

/** Reads what the user types on the terminal. */
export interface TerminalInput {
  /** One line (without its newline); `null` at the end of input or once `signal` aborts. */
  readLine(signal: AbortSignal): Promise<string | null>;
}

/** Which of the standard streams are a terminal. */
export interface Ttys {
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
}

/** Throws a usage error (exit 2) for `--approve ask` where nobody can answer. */
export function assertCanAsk(approve: Setting<ApproveMode | undefined>, ttys: Ttys): void {
  if (approve.value !== "ask" || (ttys.stdin && ttys.stderr)) return;
  const where = approve.source === "flag" ? "--approve ask" : `approve: "ask" (${approve.from ?? "config"})`;
  throw usageError(
    `${where} needs a terminal to ask on (stdin and stderr are not both a TTY): use --approve auto to run every call or --approve deny to refuse the ones that need approval`,
  );
}

/**
 * The mode of this run: the configured one, else `ask` when the user is at a terminal (stdin,
 * stdout and stderr all TTYs) and some tool needs approval, else `auto` (every call runs).
 */
export function chooseApproveMode(
  approve: Setting<ApproveMode | undefined>,
  ttys: Ttys,
  someToolNeedsApproval: boolean,
): ApproveMode {
  if (approve.value !== undefined) return approve.value;
  return ttys.stdin && ttys.stdout && ttys.stderr && someToolNeedsApproval ? "ask" : "auto";
}

/** y/yes, n/no, a/always (any case, surrounding spaces ignored); undefined for anything else. */
export function parseAnswer(line: string): ApprovalDecision | undefined {
  const answer = line.trim().toLowerCase();
  if (answer === "y" || answer === "yes") return "allow";
  if (answer === "n" || answer === "no") return "deny";
  if (answer === "a" || answer === "always") return "allow_always";
  return undefined;
}

/** Options of `createApprovalPrompter`. */
export interface ApprovalPromptOptions {
  input: TerminalInput;
  /** Where the prompt is written (stderr). */
  output: Output;
  styles: Styles;
  workspace: string;
  /** Masked in what the prompt shows. */
  secrets: readonly string[];
  /** Holds the rendering of frames while the prompt is open. */
  hold: { pause(): void; resume(): void };
}

/** The `--approve ask` handler. */
export function createApprovalPrompter(options: ApprovalPromptOptions): ApprovalHandler {
  const { input, output, styles } = options;
  return async (request) => {
    options.hold.pause();
    try {
      // The view (and jsdiff) loads with the first prompt, not with every run.
      const { describeApproval } = await import("./approval-view.js");
      const view = await describeApproval(request, options);
      // The call's name and id come from the provider: shown whole, never obeyed by the terminal.
      const name = oneLine(request.name);
      const callId = oneLine(request.callId);
      output.write(`${styles.yellow("?")} ${styles.bold(name)} ${styles.dim(`(call ${callId})`)}\n`);
      for (const line of view) output.write(`  ${line}\n`);
      for (;;) {
        output.write(`${styles.bold(`Allow ${name}?`)} [y]es, [n]o, [a]lways for this run: `);
        const line = await input.readLine(request.signal);
        if (line === null) {
          output.write(request.signal.aborted ? "\n" : "\n  (no answer: denied)\n");
          return "deny";
        }
        const decision = parseAnswer(line);
        if (decision !== undefined) return decision;
        output.write(`  ${styles.yellow("answer y, n or a")}\n`);
      }
    } finally {
      options.hold.resume();
    }
  };
}

/** `text` on one line, its control characters as visible markers (docs/pitfalls.md #85). */
function oneLine(text: string): string {
  return controlsShown(text).replace(/[\n\t]/g, " ");
}
