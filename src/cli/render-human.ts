/**
 * The human view (issue 6): the answer streams to stdout as it arrives; everything else —
 * reasoning summaries (dimmed), tool calls with a spinner and their result, retries, mode changes,
 * the final one-line summary and errors — goes to stderr. When stdout is piped it carries nothing
 * but the answer; colours and the spinner exist only on a TTY.
 */
import type { Frame, FrameOf, RunEndedFrame } from "../frames/frame.js";
import type { JsonObject } from "../protocol/types.js";
import { describeHostedItem, doneItem } from "./hosted-items.js";
import { clip, formatDuration, type Output, Spinner, type Styles } from "./terminal.js";

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
  private readonly started: number;
  private firstToken: number | undefined;
  private textItem: string | undefined;
  private stdoutAtLineStart = true;
  private wroteText = false;
  private reasoningOpen = false;
  /** The status of the last HTTP answer (a 401 gets `authHint`). */
  private lastStatus: number | undefined;
  private readonly calls = new Map<string, FrameOf<"tool_call">>();
  /** Turns whose response reported usage, did not, or reported an estimate. */
  private readonly usageSeen = { reported: 0, unreported: 0, estimated: 0 };

  constructor(private readonly options: HumanRendererOptions) {
    this.spinner = options.stderr.isTTY === true ? new Spinner(options.stderr) : undefined;
    this.started = options.now();
  }

  /** Both streams go to one terminal: a diagnostic line must not land in the middle of the answer. */
  private get sharedTerminal(): boolean {
    return this.options.stdout.isTTY === true && this.options.stderr.isTTY === true;
  }

  onFrame(frame: Frame): void {
    switch (frame.type) {
      case "output_text_delta":
        this.text(frame);
        break;
      case "provider_event":
        this.reasoning(frame.data);
        this.hostedItem(frame);
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
        this.note(
          this.options.styles.yellow(
            `↻ retrying (attempt ${frame.attempt}) in ${formatDuration(frame.delay_ms)}: ${frame.reason}`,
          ),
        );
        break;
      case "mode_changed":
        this.note(this.options.styles.yellow(`↻ switching to ${frame.to} mode (${frame.reason})`));
        break;
      case "history_repaired":
        this.note(
          this.options.styles.yellow(
            `⚠ repaired the conversation before sending: ${frame.repairs.map((r) => r.detail).join("; ")}`,
          ),
        );
        break;
      case "context_compiled":
        this.note(
          this.options.styles.dim(
            frame.runs === 0
              ? `↺ ${frame.thread === undefined ? "context" : `thread ${frame.thread}`}: no earlier runs`
              : `↺ context: ${frame.runs} earlier run${frame.runs === 1 ? "" : "s"}${frame.thread === undefined ? "" : ` of thread ${frame.thread}`} (${frame.item_count} items, ~${frame.token_estimate} tokens)`,
          ),
        );
        break;
      case "context_compacted":
        this.note(
          this.options.styles.yellow(
            `⇣ compacted the conversation (${frame.trigger}, ${frame.method}): ${frame.tokens_before} → ${frame.tokens_after} tokens, ${frame.items_removed} items removed`,
          ),
        );
        break;
      case "cancel_requested":
        this.note(this.options.styles.yellow(`■ cancelling (${frame.reason})…`));
        break;
      case "response_headers":
        this.lastStatus = frame.status;
        break;
      case "turn_ended":
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

  private text(frame: FrameOf<"output_text_delta">): void {
    this.closeReasoning();
    this.firstToken ??= this.options.now();
    if (this.textItem !== undefined && frame.item_id !== this.textItem && this.wroteText)
      this.writeOut("\n\n");
    this.textItem = frame.item_id;
    this.writeOut(frame.delta);
    this.wroteText = true;
  }

  private reasoning(data: unknown): void {
    if (data === null || typeof data !== "object") return;
    const event = data as JsonObject;
    if (event.type === "response.reasoning_summary_text.delta" && typeof event.delta === "string") {
      const { stderr, styles } = this.options;
      if (!this.reasoningOpen) {
        this.breakStdoutLine();
        stderr.write(styles.dim("thinking: "));
        this.reasoningOpen = true;
      }
      stderr.write(styles.dim(event.delta));
    } else if (
      event.type === "response.reasoning_summary_part.done" ||
      event.type === "response.output_item.done"
    ) {
      this.closeReasoning();
    }
  }

  /** A hosted tool the provider ran (a search, code, an image, a remote MCP call): one line. */
  private hostedItem(frame: Frame): void {
    const item = doneItem(frame);
    if (item === undefined) return;
    const line = describeHostedItem(item, this.options.imagePath?.(item.id));
    if (line !== undefined) this.note(`${this.options.styles.cyan("◆")} ${line}`);
  }

  private closeReasoning(): void {
    if (!this.reasoningOpen) return;
    this.reasoningOpen = false;
    this.options.stderr.write("\n");
  }

  private describeCall(callId: string, name: string): string {
    const call = this.calls.get(callId);
    const args =
      call === undefined ? "" : ` ${clip(call.arguments.trim() === "" ? "{}" : call.arguments, 72)}`;
    return `${this.options.styles.cyan(name)}${args}`;
  }

  private toolStarted(frame: FrameOf<"tool_started">): void {
    this.closeReasoning();
    this.breakStdoutLine();
    const label = this.describeCall(frame.call_id, frame.name);
    if (this.spinner !== undefined) this.spinner.start(label);
    else this.options.stderr.write(`→ ${label}\n`);
  }

  private toolEnded(frame: FrameOf<"tool_ended">): void {
    const { styles, stderr } = this.options;
    this.spinner?.stop();
    const status = frame.ok ? styles.green("✓") : styles.red("✗");
    const detail = frame.ok ? "" : ` — ${clip(errorOf(frame.output), 100)}`;
    const label =
      this.spinner !== undefined ? `${this.describeCall(frame.call_id, frame.name)} ` : `${frame.name} `;
    stderr.write(`${status} ${label}${styles.dim(`(${formatDuration(frame.duration_ms)})`)}${detail}\n`);
  }

  /** Writes a line of its own on stderr (e.g. about an MCP server), clear of the spinner and the answer. */
  message(line: string): void {
    this.note(line);
  }

  private note(line: string): void {
    this.clearLine();
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
    if (this.wroteText && !this.stdoutAtLineStart) this.writeOut("\n");
    const total = this.options.now() - this.started;
    const ok = frame.reason === "completed" || frame.reason === "terminal_tool";
    if (frame.error !== undefined) {
      stderr.write(
        `${styles.red(`eddy: ${frame.reason}:`)} ${frame.error.message}${hintFor(frame)}${this.authHintFor()}\n`,
      );
    }
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

function errorOf(output: string): string {
  try {
    const parsed = JSON.parse(output) as {
      error?: { message?: unknown };
      stderr?: unknown;
      exit_code?: unknown;
    };
    if (typeof parsed.error?.message === "string") return parsed.error.message;
    if (typeof parsed.stderr === "string" && parsed.stderr !== "") return parsed.stderr;
    if (typeof parsed.exit_code === "number") return `exit code ${parsed.exit_code}`;
  } catch {}
  return output;
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
  const counts = `${approx}${usage.input_tokens.toLocaleString("en-US")} in / ${approx}${usage.output_tokens.toLocaleString("en-US")} out tokens`;
  const notes = [
    ...(seen.estimated > 0 ? ["estimated"] : []),
    ...(seen.unreported > 0 ? [`${seen.unreported} turn${seen.unreported === 1 ? "" : "s"} unreported`] : []),
  ];
  return notes.length === 0 ? counts : `${counts} (${notes.join(", ")})`;
}
