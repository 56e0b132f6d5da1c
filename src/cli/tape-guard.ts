/**
 * A CLI run's tape writes (`TapeWriteGuard`): the first that fails (a full disk) cancels the run,
 * which still renders, and the command then says why and exits 1 — the tape keeps every line
 * written before (docs/pitfalls.md #69). Without it the failure stopped the whole observer, the
 * rendering with it: the run ended silently with the exit code of a Ctrl-C.
 */
import type { RunEndReason } from "../frames/frame.js";
import { TapeWriteGuard } from "../replay/recorder.js";
import { exitCodeFor, RUN_FAILED } from "./exit-codes.js";
import type { Styles } from "./terminal.js";

export class TapeGuard extends TapeWriteGuard {
  /** `cancel` cancels the run with the reason it is given. */
  constructor(
    private readonly path: string,
    cancel: (reason: string) => void,
  ) {
    super((problem) => cancel(`cannot write the tape ${path}: ${problem}`));
  }

  /** The command's exit code: the run's, or 1 with the problem said on `say` when the tape failed. */
  exitCode(reason: RunEndReason, say: (line: string) => void, styles: Styles): number {
    if (this.problem === undefined) return exitCodeFor(reason);
    say(
      `${styles.red("eddy:")} cannot write the tape ${this.path}: ${this.problem}; the run was stopped (the tape keeps what was written before)`,
    );
    return RUN_FAILED;
  }
}
