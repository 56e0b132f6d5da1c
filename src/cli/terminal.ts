/**
 * Terminal helpers: ANSI styles only on a TTY and only when NO_COLOR is unset
 * (https://no-color.org), a spinner that exists only on an interactive stderr, and `terminalSafe`,
 * which every string from a provider, a tool, an MCP server or a tape goes through before it is
 * written to a terminal.
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

/**
 * Any C0 control but TAB and LF, DEL, or a C1 control (U+0080–U+009F): where a string stops being
 * plain text. Strings without one (nearly all) pass through untouched.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;
const ESC = 0x1b;

/**
 * `text` with every terminal control sequence and control character removed, so that what a model,
 * a tool, an MCP server or a tape says is shown and never acted on by the terminal (docs/pitfalls.md
 * #63): CSI sequences (`ESC [` … final byte: cursor moves, `2J` clear screen, colours), OSC, DCS,
 * SOS, PM and APC strings up to their terminator (`ESC ]0;` window title, `ESC ]52;` clipboard
 * write, `ESC ]8;` hyperlinks) — also unterminated, and also in their 8-bit C1 forms (U+009B,
 * U+009D, …) —, two-byte escapes (`ESC c` resets the terminal), and every other C0/C1 control
 * (BEL, backspace, carriage return that would overwrite a line, …). TAB and LF stay; with
 * `oneLine`, LF and TAB become spaces. Printable text, emoji and all other Unicode are kept
 * byte for byte. (strip-ansi and `util.stripVTControlCharacters` leave OSC payloads they do not
 * recognise, lone C1 controls and BEL/backspace/CR behind, hence this scanner.)
 */
export function terminalSafe(text: string, options: { oneLine?: boolean } = {}): string {
  const oneLine = options.oneLine === true;
  if (!CONTROL.test(text) && !(oneLine && /[\n\t]/.test(text))) return text;
  let out = "";
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === 0x0a || c === 0x09) {
      out += oneLine ? " " : text[i];
      i++;
    } else if (c === ESC) i = skipEscape(text, i + 1);
    else if (c === 0x9b) i = skipCsi(text, i + 1);
    else if (c === 0x9d || c === 0x90 || c === 0x98 || c === 0x9e || c === 0x9f) i = skipString(text, i + 1);
    else if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) i++;
    else {
      out += text[i];
      i++;
    }
  }
  return out;
}

/** After an ESC: the index just past the sequence it starts. */
function skipEscape(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (Number.isNaN(c)) return i;
  if (c === 0x5b) return skipCsi(text, i + 1); // [
  // ] OSC, P DCS, X SOS, ^ PM, _ APC: a string up to its terminator.
  if (c === 0x5d || c === 0x50 || c === 0x58 || c === 0x5e || c === 0x5f) return skipString(text, i + 1);
  // Other escapes: intermediate bytes (0x20–0x2F), then one final byte (0x30–0x7E).
  let j = i;
  while (j < text.length && text.charCodeAt(j) >= 0x20 && text.charCodeAt(j) <= 0x2f) j++;
  const final = text.charCodeAt(j);
  return final >= 0x30 && final <= 0x7e ? j + 1 : j;
}

/** A CSI sequence's rest: parameter bytes (0x30–0x3F), intermediates (0x20–0x2F), a final byte (0x40–0x7E). */
function skipCsi(text: string, i: number): number {
  let j = i;
  while (j < text.length && text.charCodeAt(j) >= 0x30 && text.charCodeAt(j) <= 0x3f) j++;
  while (j < text.length && text.charCodeAt(j) >= 0x20 && text.charCodeAt(j) <= 0x2f) j++;
  const final = text.charCodeAt(j);
  return final >= 0x40 && final <= 0x7e ? j + 1 : j;
}

/** A control string's rest, up to BEL, ST (`ESC \\` or U+009C) or the end of the text. */
function skipString(text: string, i: number): number {
  for (let j = i; j < text.length; j++) {
    const c = text.charCodeAt(j);
    if (c === 0x07 || c === 0x9c) return j + 1;
    if (c === ESC) return text.charCodeAt(j + 1) === 0x5c ? j + 2 : j;
  }
  return text.length;
}
