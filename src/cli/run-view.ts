/**
 * What `eddy run` shows while it runs: frames (the human view or JSONL) and the run's own notices
 * (MCP servers starting, failing, changing their tools), on one path that can be held: while an
 * approval prompt is open, frames and notices wait and then come out in order, so streamed text
 * never lands inside the prompt.
 *
 * The view fails on its own (docs/pitfalls.md #95): a frame it cannot render (a bug, a hosted item
 * of a shape nobody foresaw, a stdout that throws) turns it off, says so in one line on stderr, and
 * the run goes on — its tape, `--otel` and exit code untouched. Thrown out of the run's frame
 * observer, the same exception stopped the tape too and cancelled the run. `observeApart` gives the
 * CLI's other observers of a run (tracing, saving generated images) the same footing.
 */
import { assertNever, describeError } from "../errors.js";
import type { Frame } from "../frames/frame.js";
import type { McpEvent } from "../tools/mcp/index.js";
import { safeJson } from "../util/control-chars.js";
import { failureLine, type HumanRenderer } from "./render-human.js";
import { clip, type Output, type Styles, terminalSafe } from "./terminal.js";

/** Where a view that failed says so, and writes its notices from then on. */
export interface ViewFallback {
  /** What the view is, as the line saying it stopped names it ("the terminal view"). */
  what: string;
  /** stderr */
  stderr: Output;
  styles: Styles;
  /** Stops what the failed view left going (the human view's spinner). */
  abandon?: () => void;
}

/** The run's output, holdable; a view that throws stops alone (see the module comment). */
export class RunView {
  private held: (() => void)[] | undefined;
  /** The view threw: frames are not rendered (until `renderAgain`), notices go to stderr as they are. */
  private failed = false;

  /**
   * @param frames renders one frame
   * @param notice writes one line of the run's own (the human renderer's `message`, or stderr)
   * @param fallback where a failure is said; without one, a failure is thrown as it was
   */
  constructor(
    private readonly frames: (frame: Frame) => void,
    private readonly notice: (line: string) => void,
    private readonly fallback?: ViewFallback,
  ) {}

  /** A view rendering with `renderer`, its notices between the renderer's lines; a failure said on `stderr`. */
  static human(renderer: HumanRenderer, stderr: Output, styles: Styles): RunView {
    return new RunView(
      (frame) => renderer.onFrame(frame),
      (line) => renderer.message(line),
      { what: "the terminal view", stderr, styles, abandon: () => renderer.abandon() },
    );
  }

  /**
   * A view writing frames as JSONL on `stdout` (one write per frame, nothing else), notices on
   * `stderr`; a run that ends with an error also says why on `stderr`, in one line.
   */
  static json(stdout: Output, stderr: Output, styles: Styles): RunView {
    return new RunView(
      (frame) => {
        stdout.write(`${safeJson(frame)}\n`);
        if (frame.type === "run_ended" && frame.error !== undefined)
          stderr.write(`${failureLine(frame, styles)}\n`);
      },
      (line) => stderr.write(`${line}\n`),
      { what: "the JSON output", stderr, styles },
    );
  }

  readonly render = (frame: Frame): void =>
    this.show(() => {
      if (this.failed) return;
      if (this.fallback === undefined) {
        this.frames(frame);
        return;
      }
      try {
        this.frames(frame);
      } catch (err) {
        this.fail(frame, err, this.fallback);
      }
    });

  /** Shows a notice line (held like frames). */
  say(line: string): void {
    this.show(() => {
      if (this.failed && this.fallback !== undefined) writeLine(this.fallback.stderr, line);
      else this.notice(line);
    });
  }

  /** Renders frames again after a failure (`eddy chat`: each turn is a run of its own). */
  renderAgain(): void {
    this.failed = false;
  }

  private fail(frame: Frame, err: unknown, fallback: ViewFallback): void {
    this.failed = true;
    try {
      fallback.abandon?.();
    } catch {
      // What the view left going stays as it is; the line below still says why.
    }
    writeLine(fallback.stderr, stoppedLine(fallback.what, frame, err, fallback.styles));
  }

  /** Holds everything until `resume`. */
  pause(): void {
    this.held ??= [];
  }

  /** Shows what was held, in order, and stops holding. */
  resume(): void {
    const held = this.held ?? [];
    this.held = undefined;
    for (const show of held) show();
  }

  private show(action: () => void): void {
    if (this.held !== undefined) this.held.push(action);
    else action();
  }
}

/**
 * `observe`, failing on its own: its first exception turns it off for the rest of the run and is
 * said once on `stderr` (one line, `stoppedLine`); it never reaches the run's frame observer, where
 * it stopped the tape and cancelled the run (docs/pitfalls.md #95).
 */
export function observeApart(
  what: string,
  observe: (frame: Frame) => void,
  stderr: Output,
  styles: Styles,
): (frame: Frame) => void {
  let failed = false;
  return (frame) => {
    if (failed) return;
    try {
      observe(frame);
    } catch (err) {
      failed = true;
      writeLine(stderr, stoppedLine(what, frame, err, styles));
    }
  };
}

/** The one line saying that `what` stopped at `frame` because of `err`, and that the run goes on. */
export function stoppedLine(what: string, frame: Frame, err: unknown, styles: Styles): string {
  // An exception's message may carry what the provider sent: shown, never obeyed; never a stack.
  const shown = clip(terminalSafe(clip(reasonOf(err), 800), { oneLine: true }), 200);
  return styles.yellow(
    `eddy: ${what} stopped at a ${terminalSafe(clip(frame.type, 40), { oneLine: true })} frame (${shown}); the run goes on without it: what it records and its exit code are unaffected`,
  );
}

/** What was thrown, in a few words; a value no string can be made of (`{"toString": 1}`) too. */
function reasonOf(err: unknown): string {
  try {
    const why: unknown = describeError(err);
    if (typeof why === "string" && why !== "") return why;
  } catch {
    // Said as below.
  }
  return "an exception";
}

/** Writes one line on `out`; a stream that throws too is left alone (nothing is left to tell). */
function writeLine(out: Output, line: string): void {
  try {
    out.write(`${line}\n`);
  } catch {
    // stderr itself failed.
  }
}

/** One line about an MCP server for the user: progress dimmed, failures as errors, warnings in yellow. */
export function mcpEventLine(event: McpEvent, styles: Styles): string {
  // An MCP server's names and errors are its own words: shown, never obeyed by the terminal.
  const message = terminalSafe(event.message, { oneLine: true });
  switch (event.type) {
    case "server_ready":
    case "tools_changed":
      return styles.dim(`⚙ ${message}`);
    case "server_failed":
    case "server_exited":
      return `${styles.red("eddy:")} ${message}`;
    case "warning":
      return styles.yellow(`⚠ ${message}`);
    default:
      return assertNever(event, "MCP event");
  }
}
