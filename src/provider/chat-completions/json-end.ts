/**
 * Whether a tool call's streamed arguments are whole JSON yet, told incrementally: each piece is
 * scanned once (strings, escapes, nesting of `{}` and `[]`), and `JSON.parse` runs only when the
 * top-level object or array has closed — at most once per call, since text after a closed value
 * can only make it invalid. Re-parsing the whole text at every check made a response with many
 * calls (or many checks of one long call) quadratic (docs/pitfalls.md #64).
 *
 * Only an object or array counts as complete: a bare scalar (`1`, `"x"`, `true`) could still grow
 * (`12`), so a call whose arguments are one is closed when the choice finishes, never earlier.
 */

const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** Where the scan stands: nothing but whitespace yet, inside the top-level value, after it, or never whole. */
type Phase = "empty" | "value" | "closed" | "never";

/** Tracks one call's arguments as pieces arrive. */
export class JsonEnd {
  private phase: Phase = "empty";
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** The verdict of the one `JSON.parse`, once the value closed. */
  private parsed: boolean | undefined;

  /** Scans the next piece of the arguments. */
  feed(piece: string): void {
    for (let i = 0; i < piece.length; i++) {
      if (this.phase === "never") return;
      this.step(piece.charCodeAt(i));
    }
  }

  /** True when `text` (every piece fed so far, joined) is a whole JSON object or array. */
  complete(text: string): boolean {
    if (this.phase !== "closed") return false;
    if (this.parsed === undefined) {
      try {
        JSON.parse(text);
        this.parsed = true;
      } catch {
        this.parsed = false;
        this.phase = "never";
      }
    }
    return this.parsed;
  }

  private step(c: number): void {
    const space = c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
    switch (this.phase) {
      case "empty":
        if (space) return;
        if (c === OPEN_BRACE || c === OPEN_BRACKET) {
          this.phase = "value";
          this.depth = 1;
        } else this.phase = "never";
        return;
      case "closed":
        if (!space) this.phase = "never";
        return;
      default:
        this.inValue(c);
    }
  }

  private inValue(c: number): void {
    if (this.inString) {
      if (this.escaped) this.escaped = false;
      else if (c === BACKSLASH) this.escaped = true;
      else if (c === QUOTE) this.inString = false;
      return;
    }
    if (c === QUOTE) this.inString = true;
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) this.depth++;
    else if ((c === CLOSE_BRACE || c === CLOSE_BRACKET) && --this.depth === 0) this.phase = "closed";
  }
}
