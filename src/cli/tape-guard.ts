/**
 * A CLI run's tape writes, from its `onFrame`: the first write that fails (a full disk) stops the
 * writing and the run, and the command then says so and exits 1 — the tape keeps every frame
 * written before (docs/pitfalls.md #69). Without it the failure stopped the whole observer, the
 * rendering with it: the run ended silently with the exit code of a Ctrl-C.
 */
import { describeError } from "../errors.js";
import type { RunEndReason } from "../frames/frame.js";
import { exitCodeFor, RUN_FAILED } from "./exit-codes.js";
import type { Styles } from "./terminal.js";

export class TapeGuard {
  /** Why the tape stopped being written, once it did. */
  problem: string | undefined;

  /** `stop` cancels the run with the problem as its reason. */
  constructor(private readonly stop: (reason: string) => void) {}

  /** Runs one tape write, unless one already failed. */
  write(write: () => void): void {
    if (this.problem !== undefined) return;
    try {
      write();
    } catch (err) {
      this.problem = describeError(err);
      this.stop(this.problem);
    }
  }

  /** The command's exit code: the run's, or 1 with the problem said on `say` when the tape failed. */
  exitCode(reason: RunEndReason, say: (line: string) => void, styles: Styles): number {
    if (this.problem === undefined) return exitCodeFor(reason);
    say(
      `${styles.red("eddy:")} ${this.problem}; the run was stopped (the tape keeps what was written before)`,
    );
    return RUN_FAILED;
  }
}
