/**
 * Terminal helpers: ANSI styles only on a TTY and only when NO_COLOR is unset
 * (https://no-color.org), and a spinner that exists only on an interactive stderr.
 */

export interface Output {
  write(text: string): unknown;
  isTTY?: boolean;
}

export interface Styles {
  dim(text: string): string;
  bold(text: string): string;
  red(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
  cyan(text: string): string;
}

const plain = (text: string) => text;
const ansi = (open: number, close: number) => (text: string) => `\x1b[${open}m${text}\x1b[${close}m`;

/** Styles for `stream`: real ANSI codes on a TTY without NO_COLOR, identity functions otherwise. */
export function stylesFor(stream: Output, env: Readonly<Record<string, string | undefined>>): Styles {
  const color =
    stream.isTTY === true && (env.NO_COLOR === undefined || env.NO_COLOR === "") && env.TERM !== "dumb";
  if (!color) return { dim: plain, bold: plain, red: plain, green: plain, yellow: plain, cyan: plain };
  return {
    dim: ansi(2, 22),
    bold: ansi(1, 22),
    red: ansi(31, 39),
    green: ansi(32, 39),
    yellow: ansi(33, 39),
    cyan: ansi(36, 39),
  };
}

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/** A one-line spinner on an interactive stream: `start` shows it, `stop` clears the line. */
export class Spinner {
  private timer: ReturnType<typeof setInterval> | undefined;
  private frame = 0;
  private label = "";

  constructor(private readonly out: Output) {}

  get active(): boolean {
    return this.timer !== undefined;
  }

  start(label: string): void {
    this.stop();
    this.label = label;
    this.render();
    this.timer = setInterval(() => this.render(), 80);
    this.timer.unref?.();
  }

  stop(): void {
    if (this.timer === undefined) return;
    clearInterval(this.timer);
    this.timer = undefined;
    this.out.write("\r\x1b[2K");
  }

  private render(): void {
    this.out.write(`\r\x1b[2K${FRAMES[this.frame++ % FRAMES.length]} ${this.label}`);
  }
}

/** `text` cut to `max` characters (on a code point boundary) with an ellipsis. */
export function clip(text: string, max: number): string {
  const chars = [...text.replace(/\s+/g, " ")];
  return chars.length <= max ? chars.join("") : `${chars.slice(0, max - 1).join("")}…`;
}

/**
 * An integer with thousands separators, as `toLocaleString("en-US")` writes it ("1,122"), without
 * its cost: the first `toLocaleString` of a process loads ICU's number formats (~10 ms).
 */
export function formatCount(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/** "1.2 s", "340 ms". */
export function formatDuration(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

/**
 * Reads one line from `input` (a terminal in cooked mode: the terminal echoes what is typed and
 * turns Ctrl-C into SIGINT). `null` at the end of input or once `signal` aborts. The reader is
 * closed afterwards, so stdin does not keep the process alive.
 */
export async function readTerminalLine(
  input: NodeJS.ReadableStream,
  signal: AbortSignal,
): Promise<string | null> {
  if (signal.aborted) return null;
  const { createInterface } = await import("node:readline");
  return new Promise((resolve) => {
    const reader = createInterface({ input, terminal: false });
    let done = false;
    const finish = (line: string | null) => {
      if (done) return;
      done = true;
      signal.removeEventListener("abort", onAbort);
      reader.close();
      resolve(line);
    };
    const onAbort = () => finish(null);
    signal.addEventListener("abort", onAbort, { once: true });
    reader.once("line", (line) => finish(line));
    reader.once("close", () => finish(null));
  });
}
