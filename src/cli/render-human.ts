/**
 * The human view: the answer streams to stdout as it arrives; everything else — reasoning
 * summaries (dimmed), tool calls with a spinner and their result, retries, mode changes, the final
 * one-line summary and errors — goes to stderr. When stdout is piped it carries nothing but the
 * answer; colours and the spinner exist only on a TTY.
 *
 * It reads the frames the assembling stream derives (`reasoning_delta`, `item_done`), never raw
 * provider events. Every string from the provider, a tool or an MCP server goes through
 * `terminalSafe` before it reaches stderr, and the answer too when stdout is a terminal; piped,
 * the answer is written byte for byte (docs/pitfalls.md #66). Calls refused because the run's
 * tool-call budget is spent are counted on one line, not listed (docs/pitfalls.md #42).
 */
import type { Frame, FrameOf, RunEndedFrame } from "../frames/frame.js";
import { outputTextOf } from "../provider/assembler/index.js";
import { describeHostedItem } from "./hosted-items.js";
import {
  clip,
  formatCount,
  formatDuration,
  type Output,
  Spinner,
  type Styles,
  TerminalSanitizer,
  terminalSafe,
} from "./terminal.js";

export interface HumanRendererOptions {
  stdout: Output;
  stderr: Output;
  styles: Styles;
  /** Monotonic ms, for time to first token and total time. */
  now: () => number;
  /** Where the provider's key comes from, added to a run that ends on an HTTP 401. */
  authHint?: string;
  /** Where a generated image was saved, by item id (`ImageSaver.pathOf`). */
  imagePath?: (itemId: unknown) => string | undefined;
}

export class HumanRenderer {
  private readonly spinner: Spinner | undefined;
  private started: number;
  private firstToken: number | undefined;
  private textItem: string | undefined;
  private stdoutAtLineStart = true;
  private wroteText = false;
  /** The reasoning summary part being shown (`item_id#index`), if one is. */
  private reasoningOpen: string | undefined;
  /** A call was refused because the tool-call budget is spent: later refusals are only counted. */
  private budgetSpent = false;
  /** Budget refusals not shown yet (one line says how many). */
  private refusedOverBudget = 0;
  /** The `→` line of a call that started after the budget was spent (shown if it is not refused). */
  private pendingStart: string | undefined;
  /** The answer and the reasoning stream in pieces: a sequence split between two is removed whole. */
  private answerFilter = new TerminalSanitizer();
  /** The first half of a surrogate pair that ended a delta (see `text`). */
  private heldSurrogate = "";
  private readonly reasoningFilter = new TerminalSanitizer({ oneLine: true });
  /** The status of the last HTTP answer (a 401 gets `authHint`). */
  private lastStatus: number | undefined;
  private readonly calls = new Map<string, FrameOf<"tool_call">>();
  /** Turns whose response reported usage, did not, or reported an estimate. */
  private readonly usageSeen = { reported: 0, unreported: 0, estimated: 0 };
  /** The text each message of the current response streamed, by `turn:output_index`. */
  private readonly streamed = new Map<string, string>();

  constructor(private readonly options: HumanRendererOptions) {
    this.spinner = options.stderr.isTTY === true ? new Spinner(options.stderr) : undefined;
    this.started = options.now();
  }

  /** Both streams go to one terminal: a diagnostic line must not land in the middle of the answer. */
  private get sharedTerminal(): boolean {
    return this.options.stdout.isTTY === true && this.options.stderr.isTTY === true;
  }

  onFrame(frame: Frame): void {
    // A renderer may show several runs in turn (eddy chat): each is timed from its own start.
    if (frame.type === "run_started" && frame.seq === 0) {
      this.started = this.options.now();
      this.firstToken = undefined;
    }
    switch (frame.type) {
      case "output_text_delta":
        this.text(frame.turn, frame.output_index, frame.item_id, frame.delta);
        break;
      case "reasoning_delta":
        this.reasoning(frame);
        break;
      case "item_done":
        this.closeReasoning();
        this.hostedItem(frame);
        this.messageDone(frame);
        break;
      case "tool_call":
        this.calls.set(frame.call_id, frame);
        break;
      case "tool_started":
        this.toolStarted(frame);
        break;
      case "tool_ended":
        this.toolEnded(frame);
        break;
      case "approval_requested":
        // A prompt (approval-prompt.ts) is about to be written to stderr: leave it a clean line.
        this.clearLine();
        break;
      case "retry":
      case "mode_changed":
      case "history_repaired":
      case "context_compiled":
      case "context_compacted":
        this.note(this.noteFor(frame));
        break;
      case "cancel_requested":
        this.note(this.options.styles.yellow(`■ cancelling (${frame.reason})…`));
        break;
      case "response_headers":
        this.lastStatus = frame.status;
        break;
      case "turn_ended":
        this.flushSurrogate();
        this.streamed.clear();
        // A control string an answer left open ends with it: it must not swallow the next answer.
        this.answerFilter = new TerminalSanitizer();
        this.flushRefused();
        if (frame.usage === null) this.usageSeen.unreported++;
        else if ((frame.usage as { estimated?: unknown }).estimated === true) this.usageSeen.estimated++;
        else this.usageSeen.reported++;
        break;
      case "run_ended":
        this.ended(frame);
        break;
      default:
        break;
    }
  }

  /** The one dim or yellow line a retry, a mode change, a repair or a context change gets. */
  private noteFor(
    frame: FrameOf<"retry" | "mode_changed" | "history_repaired" | "context_compiled" | "context_compacted">,
  ): string {
    switch (frame.type) {
      case "retry":
        return this.options.styles.yellow(
          `↻ retrying (attempt ${frame.attempt}) in ${formatDuration(frame.delay_ms)}: ${safe(frame.reason)}`,
        );
      case "mode_changed":
        return this.options.styles.yellow(`↻ switching to ${frame.to} mode (${safe(frame.reason)})`);
      case "history_repaired":
        return this.options.styles.yellow(
          `⚠ repaired the conversation before sending: ${safe(frame.repairs.map((r) => r.detail).join("; "))}`,
        );
      case "context_compiled": {
        const left = frame.runs_left_out ?? 0;
        const leftOut =
          left === 0 ? "" : `; ${left} older run${left === 1 ? "" : "s"} left out (over the context budget)`;
        const line =
          frame.runs === 0
            ? `↺ ${frame.thread === undefined ? "context" : `thread ${safe(frame.thread)}`}: no earlier runs${leftOut}`
            : `↺ context: ${frame.runs} earlier run${frame.runs === 1 ? "" : "s"}${frame.thread === undefined ? "" : ` of thread ${safe(frame.thread)}`} (${frame.item_count} items, ~${frame.token_estimate} tokens)${leftOut}`;
        return left === 0 ? this.options.styles.dim(line) : this.options.styles.yellow(line);
      }
      case "context_compacted":
        return this.options.styles.yellow(
          `⇣ compacted the conversation (${frame.trigger}, ${frame.method}): ${frame.tokens_before} → ${frame.tokens_after} tokens, ${frame.items_removed} items removed`,
        );
    }
  }

  /** A piece of the answer: message `itemId`, at `outputIndex` of turn `turn`'s response. */
  private text(turn: number, outputIndex: number, itemId: string, delta: string): void {
    this.closeReasoning();
    this.firstToken ??= this.options.now();
    if (this.textItem !== undefined && itemId !== this.textItem) {
      this.flushSurrogate();
      if (this.wroteText) this.writeOut("\n\n");
    }
    this.textItem = itemId;
    const key = `${turn}:${outputIndex}`;
    this.streamed.set(key, (this.streamed.get(key) ?? "") + delta);
    // A delta may end inside a surrogate pair: each write is encoded as UTF-8 on its own, so half a
    // pair became U+FFFD, twice, and the piped answer was no longer byte for byte. Its first half
    // waits for the next delta.
    let piece = this.heldSurrogate + delta;
    this.heldSurrogate = "";
    const last = piece.charCodeAt(piece.length - 1);
    if (last >= 0xd800 && last <= 0xdbff) {
      this.heldSurrogate = piece.slice(-1);
      piece = piece.slice(0, -1);
    }
    this.answer(piece);
    this.wroteText = true;
  }

  /** Answer text to stdout: on a terminal shown, never obeyed; piped, passed on byte for byte. */
  private answer(piece: string): void {
    this.writeOut(this.options.stdout.isTTY === true ? this.answerFilter.write(piece) : piece);
  }

  /** A held half of a surrogate pair whose other half never came is written as it is. */
  private flushSurrogate(): void {
    if (this.heldSurrogate === "") return;
    this.answer(this.heldSurrogate);
    this.heldSurrogate = "";
  }

  /**
   * A message's final text against what it streamed: a provider that streamed none (the text only
   * in `output_item.done` or `response.completed`) has it shown now; one whose final text differs
   * from its deltas gets a warning (the final text is the run's answer, `run_ended.output_text`).
   */
  private messageDone(frame: FrameOf<"item_done">): void {
    const item = frame.item;
    if (item.type !== "message") return;
    // The message's text as the run takes it for its answer.
    const final = outputTextOf([item]);
    const key = `${frame.turn}:${frame.output_index}`;
    const streamed = this.streamed.get(key) ?? "";
    this.streamed.delete(key);
    if (final === "" || final === streamed) return;
    const id = typeof item.id === "string" ? item.id : key;
    if (streamed === "") {
      this.text(frame.turn, frame.output_index, id, final);
      this.streamed.delete(key);
      return;
    }
    this.note(
      this.options.styles.yellow(
        `⚠ the provider's final answer differs from the text it streamed; the run's answer is the final one: ${shown(final, 200)}`,
      ),
    );
  }

  /** A reasoning summary as it streams (dimmed, on stderr); each summary part on a line of its own. */
  private reasoning(frame: FrameOf<"reasoning_delta">): void {
    if (frame.channel !== "summary") return;
    const part = `${frame.item_id}#${frame.index}`;
    const { stderr, styles } = this.options;
    if (this.reasoningOpen !== part) {
      this.closeReasoning();
      this.breakStdoutLine();
      stderr.write(styles.dim("thinking: "));
      this.reasoningOpen = part;
    }
    const text = this.reasoningFilter.write(frame.delta);
    if (text !== "") stderr.write(styles.dim(text));
  }

  /** A hosted tool the provider ran (a search, code, an image, a remote MCP call): one line. */
  private hostedItem(frame: FrameOf<"item_done">): void {
    const item = frame.item;
    const line = describeHostedItem(item, this.options.imagePath?.(item.id));
    if (line !== undefined) this.note(`${this.options.styles.cyan("◆")} ${safe(line)}`);
  }

  private closeReasoning(): void {
    if (this.reasoningOpen === undefined) return;
    this.reasoningOpen = undefined;
    this.options.stderr.write("\n");
  }

  private describeCall(callId: string, name: string): string {
    const call = this.calls.get(callId);
    const args =
      call === undefined ? "" : ` ${call.arguments.trim() === "" ? "{}" : shown(call.arguments, 72)}`;
    return `${this.options.styles.cyan(shown(name, NAME_SHOWN))}${args}`;
  }

  private toolStarted(frame: FrameOf<"tool_started">): void {
    this.closeReasoning();
    this.breakStdoutLine();
    const label = this.describeCall(frame.call_id, frame.name);
    // Past the budget, a call is almost surely refused at once: its line waits for the verdict.
    if (this.budgetSpent) this.pendingStart = label;
    else if (this.spinner !== undefined) this.spinner.start(label);
    else this.options.stderr.write(`→ ${label}\n`);
  }

  private toolEnded(frame: FrameOf<"tool_ended">): void {
    const { styles, stderr } = this.options;
    this.spinner?.stop();
    const error = frame.ok ? undefined : errorOf(frame.output);
    if (error?.code === "max_tool_calls") {
      if (this.budgetSpent) {
        this.pendingStart = undefined;
        this.refusedOverBudget++;
        return;
      }
      this.budgetSpent = true;
    }
    this.flushRefused();
    const status = frame.ok ? styles.green("✓") : styles.red("✗");
    const detail = error === undefined ? "" : ` — ${clip(safe(error.message), 100)}`;
    const label =
      this.spinner !== undefined
        ? `${this.describeCall(frame.call_id, frame.name)} `
        : `${shown(frame.name, NAME_SHOWN)} `;
    stderr.write(`${status} ${label}${styles.dim(`(${formatDuration(frame.duration_ms)})`)}${detail}\n`);
  }

  /** The count of budget refusals not shown yet, on one line; the `→` line of a call that was not one. */
  private flushRefused(): void {
    const { styles, stderr } = this.options;
    if (this.refusedOverBudget > 0) {
      const n = this.refusedOverBudget;
      this.refusedOverBudget = 0;
      stderr.write(
        `${styles.red("✗")} ${n.toLocaleString("en-US")} more call${n === 1 ? "" : "s"} not run: the run's tool-call budget is spent\n`,
      );
    }
    if (this.pendingStart !== undefined) {
      const label = this.pendingStart;
      this.pendingStart = undefined;
      if (this.spinner !== undefined) this.spinner.start(label);
      else stderr.write(`→ ${label}\n`);
    }
  }

  /** Stops the spinner: the view is given up (it threw; src/cli/run-view.ts) and writes nothing more. */
  abandon(): void {
    this.spinner?.stop();
  }

  /** Writes a line of its own on stderr (e.g. about an MCP server), clear of the spinner and the answer. */
  message(line: string): void {
    this.note(line);
  }

  private note(line: string): void {
    this.clearLine();
    this.flushRefused();
    this.options.stderr.write(`${line}\n`);
  }

  private clearLine(): void {
    this.spinner?.stop();
    this.closeReasoning();
    this.breakStdoutLine();
  }

  private ended(frame: RunEndedFrame): void {
    const { styles, stderr } = this.options;
    this.spinner?.stop();
    this.closeReasoning();
    this.flushRefused();
    this.flushSurrogate();
    if (this.wroteText && !this.stdoutAtLineStart) this.writeOut("\n");
    const total = this.options.now() - this.started;
    const ok = frame.reason === "completed" || frame.reason === "terminal_tool";
    if (frame.error !== undefined) stderr.write(`${failureLine(frame, styles)}${this.authHintFor()}\n`);
    const parts = [
      ok ? styles.green(`✓ ${frame.reason}`) : styles.red(`✗ ${frame.reason}`),
      plural(frame.turns, "turn"),
      plural(frame.tool_calls, "tool call"),
      usageText(frame.usage, this.usageSeen),
    ];
    if (this.firstToken !== undefined)
      parts.push(`first token ${formatDuration(this.firstToken - this.started)}`);
    parts.push(formatDuration(total));
    stderr.write(`${styles.dim(parts.join(" · "))}\n`);
  }

  private authHintFor(): string {
    return this.lastStatus === 401 && this.options.authHint !== undefined
      ? ` (${this.options.authHint})`
      : "";
  }

  private writeOut(text: string): void {
    if (text === "") return;
    this.options.stdout.write(text);
    this.stdoutAtLineStart = text.endsWith("\n");
  }

  private breakStdoutLine(): void {
    if (this.sharedTerminal && !this.stdoutAtLineStart) this.writeOut("\n");
  }
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

/** A string from outside eddy, made safe for one line of a terminal. */
function safe(text: string): string {
  return terminalSafe(text, { oneLine: true });
}

/** The most characters of a tool's name shown (a hostile server's 100 KB name was printed whole, twice). */
const NAME_SHOWN = 80;

/**
 * `text` made safe and cut to `max` characters: only its start is sanitised (a 50 MB argument list
 * was scanned whole to show 72 characters of it).
 */
function shown(text: string, max: number): string {
  return clip(safe(clip(text, max * 4)), max);
}

/** Why a call failed, from its output: eddy's `{error: {code, message}}`, else stderr, the exit code or the text. */
function errorOf(output: string): { code?: string; message: string } {
  try {
    const parsed = JSON.parse(output) as {
      error?: { code?: unknown; message?: unknown };
      stderr?: unknown;
      exit_code?: unknown;
    };
    if (typeof parsed.error?.message === "string") {
      const code = parsed.error.code;
      return typeof code === "string"
        ? { code, message: parsed.error.message }
        : { message: parsed.error.message };
    }
    if (typeof parsed.stderr === "string" && parsed.stderr !== "") return { message: parsed.stderr };
    if (typeof parsed.exit_code === "number") return { message: `exit code ${parsed.exit_code}` };
  } catch {}
  return { message: output };
}

/**
 * The one line saying why a run did not succeed (`eddy: provider_error: … (what to do)`), for a
 * `run_ended` frame with an `error`; the human view and `--json` (on stderr) both write it.
 */
export function failureLine(frame: RunEndedFrame, styles: Styles): string {
  return `${styles.red(`eddy: ${frame.reason}:`)} ${safe(frame.error?.message ?? frame.reason)}${hintFor(frame)}`;
}

/** What to do next, for the errors a user can act on. */
function hintFor(frame: RunEndedFrame): string {
  const code = frame.error?.code ?? "";
  switch (frame.reason) {
    case "max_tool_calls":
    case "max_turns":
    case "no_progress":
    case "cancelled":
    case "guardrail":
      return "";
    case "incomplete":
      return code === "max_output_tokens"
        ? " (raise the limit with --max-output-tokens, lower --reasoning-effort, or add --continue-incomplete to ask the model to go on)"
        : "";
    default:
      break;
  }
  if (code === "provider_connection" || code === "connect_timeout")
    return " (is the server running? check --base-url)";
  if (code === "first_byte_timeout") return " (the model took too long to start; raise --first-byte-timeout)";
  if (code === "idle_timeout" || code === "stream_truncated")
    return " (the provider stopped mid-response; try again, or raise --idle-timeout)";
  if (code === "rate_limit_exceeded" || code === "http_429" || code === "too_many_requests") {
    return " (still rate-limited after the retries; wait a moment, or raise --max-retries)";
  }
  if (code.startsWith("http_5") || code === "server_error") return " (the provider failed; try again later)";
  return "";
}

/**
 * The token counts of the summary line, as far as they are known: a server that reported no usage
 * gives "tokens unknown" rather than "0 in / 0 out"; an estimate (the Chat Completions path without
 * reported usage) is marked as one; a total missing some turns says so.
 */
export function usageText(
  usage: RunEndedFrame["usage"],
  seen: { reported: number; unreported: number; estimated: number },
): string {
  if (seen.reported + seen.estimated === 0) return "tokens unknown";
  const approx = seen.estimated > 0 ? "~" : "";
  const counts = `${approx}${formatCount(usage.input_tokens)} in / ${approx}${formatCount(usage.output_tokens)} out tokens`;
  const notes = [
    ...(seen.estimated > 0 ? ["estimated"] : []),
    ...(seen.unreported > 0 ? [`${seen.unreported} turn${seen.unreported === 1 ? "" : "s"} unreported`] : []),
  ];
  return notes.length === 0 ? counts : `${counts} (${notes.join(", ")})`;
}
