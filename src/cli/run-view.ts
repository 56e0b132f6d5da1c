/**
 * What `eddy run` shows while it runs: frames (the human view or JSONL) and the run's own notices
 * (MCP servers starting, failing, changing their tools), on one path that can be held: while an
 * approval prompt is open, frames and notices wait and then come out in order, so streamed text
 * never lands inside the prompt.
 */
import { assertNever } from "../errors.js";
import type { Frame } from "../frames/frame.js";
import type { McpEvent } from "../tools/mcp/index.js";
import { failureLine, type HumanRenderer } from "./render-human.js";
import { type Output, type Styles, terminalSafe } from "./terminal.js";

/** The run's output, holdable. */
export class RunView {
  private held: (() => void)[] | undefined;

  /**
   * @param frames renders one frame
   * @param notice writes one line of the run's own (the human renderer's `message`, or stderr)
   */
  constructor(
    private readonly frames: (frame: Frame) => void,
    private readonly notice: (line: string) => void,
  ) {}

  /** A view rendering with `renderer`, its notices between the renderer's lines. */
  static human(renderer: HumanRenderer): RunView {
    return new RunView(
      (frame) => renderer.onFrame(frame),
      (line) => renderer.message(line),
    );
  }

  /**
   * A view writing frames as JSONL on `stdout` (one write per frame, nothing else), notices on
   * `stderr`; a run that ends with an error also says why on `stderr`, in one line.
   */
  static json(stdout: Output, stderr: Output, styles: Styles): RunView {
    return new RunView(
      (frame) => {
        stdout.write(`${JSON.stringify(frame)}\n`);
        if (frame.type === "run_ended" && frame.error !== undefined)
          stderr.write(`${failureLine(frame, styles)}\n`);
      },
      (line) => stderr.write(`${line}\n`),
    );
  }

  readonly render = (frame: Frame): void => this.show(() => this.frames(frame));

  /** Shows a notice line (held like frames). */
  say(line: string): void {
    this.show(() => this.notice(line));
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
