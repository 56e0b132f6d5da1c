/**
 * Terminal helpers: ANSI styles only on a TTY and only when NO_COLOR is unset
 * (https://no-color.org), a spinner that exists only on an interactive stderr, and `terminalSafe`,
 * which every string from a provider, a tool, an MCP server or a tape goes through before it is
 * written to a terminal.
 */
import { importPackage } from "../util/import-package.js";

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

/**
 * `text` with each run of whitespace as one space, cut to `max` characters (on a code point
 * boundary) with an ellipsis. Only what is shown is read: spreading the whole text into code points
 * took 7 s for a model's 50 MB argument list, the event loop blocked and Ctrl-C waiting on it.
 */
export function clip(text: string, max: number): string {
  const kept: string[] = [];
  for (let i = 0; i < text.length; ) {
    let piece: string;
    SPACES.lastIndex = i;
    if (SPACES.test(text)) {
      piece = " ";
      i = SPACES.lastIndex;
    } else {
      piece = String.fromCodePoint(text.codePointAt(i) as number);
      i += piece.length;
    }
    if (kept.length === max) return `${kept.slice(0, max - 1).join("")}…`;
    kept.push(piece);
  }
  return kept.join("");
}

const SPACES = /\s+/y;

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
  const { createInterface } = await importPackage<typeof import("node:readline")>("node:readline");
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
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;
const ESC = 0x1b;
/** A control string (OSC, DCS, …) longer than this is given up on: what follows is text again. */
const MAX_STRING = 65_536;

/**
 * The bidirectional embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069): they reorder
 * what a terminal shows after them (a file `notes\u202Egnp.sh` shows as `notes` + `hs.png`).
 */
function isBidiControl(c: number): boolean {
  return (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069);
}

/** Where the sanitizer is in a control sequence. */
type Phase =
  | "text"
  | "escape" // after ESC
  | "escape_intermediate" // ESC and intermediate bytes, before the final byte
  | "csi" // in a CSI sequence, before its final byte
  | "string" // in an OSC, DCS, SOS, PM or APC string, before its terminator
  | "string_escape"; // an ESC inside such a string (ST is ESC \\)

/**
 * Strips terminal control sequences from text that arrives in pieces (an answer streamed delta by
 * delta): a sequence split across pieces is removed whole, never half-shown. See `terminalSafe`.
 */
export class TerminalSanitizer {
  private phase: Phase = "text";
  private stringLength = 0;

  constructor(private readonly options: { oneLine?: boolean } = {}) {}

  /** The safe part of `piece`; an unfinished sequence at its end is carried into the next piece. */
  write(piece: string): string {
    if (
      this.phase === "text" &&
      !CONTROL.test(piece) &&
      !(this.options.oneLine === true && /[\n\t]/.test(piece))
    )
      return piece;
    let out = "";
    for (let i = 0; i < piece.length; i++) {
      const c = piece.charCodeAt(i);
      if (this.phase === "text") {
        out += this.text(c, piece[i] as string);
        continue;
      }
      if (!this.step(c)) i--; // the sequence ended without taking `c`: read it again as text
    }
    return out;
  }

  /** One character outside any sequence: what to show of it. */
  private text(c: number, char: string): string {
    if (c === 0x0a || c === 0x09) return this.options.oneLine === true ? " " : char;
    if (c === ESC) this.phase = "escape";
    else if (c === 0x9b) this.phase = "csi";
    else if (c === 0x9d || c === 0x90 || c === 0x98 || c === 0x9e || c === 0x9f) this.enterString();
    else if (isBidiControl(c)) return "\ufffd";
    else if (c >= 0x20 && (c < 0x7f || c > 0x9f)) return char;
    return "";
  }

  /** One character inside a sequence; false when the sequence ended before it (it is text again). */
  private step(c: number): boolean {
    switch (this.phase) {
      case "escape":
        if (c === 0x5b)
          this.phase = "csi"; // [
        // ] OSC, P DCS, X SOS, ^ PM, _ APC: a string up to its terminator.
        else if (c === 0x5d || c === 0x50 || c === 0x58 || c === 0x5e || c === 0x5f) this.enterString();
        else if (c >= 0x20 && c <= 0x2f) this.phase = "escape_intermediate";
        else return this.end(c >= 0x30 && c <= 0x7e);
        return true;
      case "escape_intermediate":
        return c >= 0x20 && c <= 0x2f ? true : this.end(c >= 0x30 && c <= 0x7e);
      case "csi":
        // Parameter (0x30–0x3F) and intermediate (0x20–0x2F) bytes, then a final byte (0x40–0x7E).
        return c >= 0x20 && c <= 0x3f ? true : this.end(c >= 0x40 && c <= 0x7e);
      case "string":
        if (c === 0x07 || c === 0x9c) return this.end(true);
        if (c === ESC) this.phase = "string_escape";
        else if (++this.stringLength > MAX_STRING) this.phase = "text";
        return true;
      case "string_escape":
        if (c === 0x5c) return this.end(true); // ESC \\ is ST
        this.phase = "escape"; // another sequence starts: the string was cut short
        return this.step(c);
      default:
        return false;
    }
  }

  /** The sequence is over; `took` says whether the character that ended it belongs to it. */
  private end(took: boolean): boolean {
    this.phase = "text";
    return took;
  }

  private enterString(): void {
    this.phase = "string";
    this.stringLength = 0;
  }
}

/** Every character `CONTROL` matches, to replace them all. */
const CONTROLS = new RegExp(CONTROL.source, "g");

/** The names `controlsShown` gives the control characters a reader knows by name. */
const CONTROL_NAMES: Readonly<Record<number, string>> = {
  0: "NUL",
  7: "BEL",
  8: "BS",
  13: "CR",
  27: "ESC",
  127: "DEL",
};

/**
 * `text` with each control character `terminalSafe` would remove — C0 but TAB and LF, DEL, C1, the
 * bidirectional controls — shown instead as a marker (`⟨ESC⟩`, `⟨CR⟩`, `⟨U+009B⟩`, `⟨U+202E⟩`),
 * and everything between them kept. For what the user approves (approval-view.ts): removing an
 * escape sequence there hid what it enclosed, and a shell command `echo safe ESC]0;touch x;BEL`
 * showed as `echo safe` while the shell ran `touch x` (docs/pitfalls.md #85).
 */
export function controlsShown(text: string): string {
  return text.replace(CONTROLS, (char) => {
    const c = char.charCodeAt(0);
    return `⟨${CONTROL_NAMES[c] ?? `U+${c.toString(16).toUpperCase().padStart(4, "0")}`}⟩`;
  });
}

/**
 * `text` with every terminal control sequence and control character removed, so that what a model,
 * a tool, an MCP server or a tape says is shown and never acted on by the terminal (docs/pitfalls.md
 * #63): CSI sequences (`ESC [` … final byte: cursor moves, `2J` clear screen, colours), OSC, DCS,
 * SOS, PM and APC strings up to their terminator (`ESC ]0;` window title, `ESC ]52;` clipboard
 * write, `ESC ]8;` hyperlinks) — also unterminated, and also in their 8-bit C1 forms (U+009B,
 * U+009D, …) —, two-byte escapes (`ESC c` resets the terminal), and every other C0/C1 control
 * (BEL, backspace, carriage return that would overwrite a line, …). The bidirectional
 * embeddings, overrides and isolates, which reorder what follows them, are shown as U+FFFD. TAB and
 * LF stay; with `oneLine`, LF and TAB become spaces. Printable text, emoji and all other Unicode are kept
 * byte for byte. (strip-ansi and `util.stripVTControlCharacters` leave OSC payloads they do not
 * recognise, lone C1 controls and BEL/backspace/CR behind, hence this scanner.)
 */
export function terminalSafe(text: string, options: { oneLine?: boolean } = {}): string {
  return new TerminalSanitizer(options).write(text);
}
