/**
 * `eddy chat [--thread NAME]`: an interactive session in the terminal — a thin terminal over the
 * session API (src/session/session.ts), on the same flags, configuration and policy as `eddy run`
 * (run-settings.ts). Each message is a turn on the session's thread, rendered as `eddy run`
 * renders a run (the answer streams; tool calls, approvals with diffs and reasoning show).
 *
 * Line editing and history come from `node:readline` (docs/decisions.md, "eddy chat reads lines
 * with node:readline"): Node's own, no dependency, no native module, and it gives what a line chat
 * needs — editing, up/down history, Ctrl-C and Ctrl-D as events — on a TTY and on a pipe alike.
 *
 * Ctrl-C during a turn cancels it and returns to the prompt; messages queued meanwhile are still
 * sent, unless Ctrl-C is pressed again before the prompt comes back. Ctrl-C twice or Ctrl-D at the
 * prompt leaves. A line typed while a turn runs is queued; `/steer TEXT`
 * sends it at the turn's next safe point. While an approval prompt is open, the next line is its answer.
 */
import { relative } from "node:path";
import { createInterface, type Interface } from "node:readline";
import { type Readable, Transform } from "node:stream";
import { checkThreadName } from "../context/threads.js";
import { EddyError } from "../errors.js";
import type { Frame } from "../frames/frame.js";
import type { ApprovalHandler } from "../loop/approvals.js";
import { withInstructionFiles } from "../loop/instruction-files.js";
import { APPROVE_MODES, type ApproveMode } from "../loop/policy.js";
import type { PartialRunSpec } from "../loop/run-spec.js";
import { createSession, type Session, type SessionEvent } from "../session/session.js";
import { type PendingCall, waitingCalls } from "../session/waiting-run.js";
import { sizeText } from "../util/regular-file.js";
import type { TerminalInput } from "./approval-prompt.js";
import { createApprovalPrompter } from "./approval-prompt.js";
import { type EffectiveConfig, type RunFlags, resolveConfig } from "./config.js";
import { CANCELLED, exitCodeFor, RUN_FAILED, SUCCESS, USAGE_ERROR } from "./exit-codes.js";
import { ImageSaver } from "./hosted-items.js";
import { assertReadyToRun, checkWorkspace, usageError } from "./preflight.js";
import { type CliIo, humanRenderer, PROMPT_MAX_BYTES, runDepsOf, tapeHeaderOf } from "./run-command.js";
import { instructionReaderOf, specOf } from "./run-settings.js";
import { closeTools, prepareTools, type RunTools, startTools } from "./run-tools.js";
import { mcpEventLine, RunView } from "./run-view.js";
import { secretsOf, startTargetProvider, type TargetProvider } from "./target-provider.js";
import { type Styles, stylesFor, terminalSafe } from "./terminal.js";

/** `eddy chat`'s flags: `eddy run`'s that apply to a session. */
export type ChatFlags = RunFlags;

export const CHAT_HELP = [
  "/help               this list",
  "/exit               leave (also Ctrl-D, or Ctrl-C twice at the prompt)",
  "/new                start a new thread",
  "/model NAME         the model of the next turns",
  "/approve MODE       ask, auto, deny or defer for the next turns",
  "/decide ID=allow|deny  decide a call the last turn (or the thread's last run) deferred (all=… for every one)",
  "/steer TEXT         interrupt the running turn at its next safe point and send TEXT",
  "/tools              the tools the turns may use",
  "/undo               restore the files the last turn changed",
  "/usage              tokens so far, per turn",
  "/view               write the session's page (its tapes) and open it",
].join("\n");

/** Where the chat's lines go: to an open approval prompt first, else to the session. */
class LineRouter implements TerminalInput {
  private waiter: ((line: string | null) => void) | undefined;

  get asking(): boolean {
    return this.waiter !== undefined;
  }

  readLine(signal: AbortSignal): Promise<string | null> {
    if (signal.aborted) return Promise.resolve(null);
    return new Promise((resolve) => {
      const done = (line: string | null) => {
        this.waiter = undefined;
        signal.removeEventListener("abort", onAbort);
        resolve(line);
      };
      const onAbort = () => done(null);
      signal.addEventListener("abort", onAbort, { once: true });
      this.waiter = done;
    });
  }

  /** True when the line answered a prompt. */
  answer(line: string | null): boolean {
    if (this.waiter === undefined) return false;
    this.waiter(line);
    return true;
  }
}

/** `eddy chat`: returns 0 when the user leaves (130 when cancelled while starting). */
export async function chatCommand(flags: ChatFlags, io: CliIo): Promise<number> {
  const config = resolveConfig(flags, io.env, io.cwd);
  checkWorkspace(config.workspace.value);
  assertReadyToRun(config, io.env);
  if (flags.thread !== undefined) checkThreadName(flags.thread);
  if (io.stdin === undefined) throw usageError("eddy chat needs a terminal or a pipe to read messages from");
  const styles = stylesFor(io.stderr, io.env);
  const images = new ImageSaver(config.workspace.value);
  const view = RunView.human(humanRenderer(io, styles, config, images), io.stderr, styles);
  const router = new LineRouter();
  const chatIo: CliIo = { ...io, terminal: router };
  const prepared = await prepareTools(config, chatIo, (event) => view.say(mcpEventLine(event, styles)));
  const starting = new AbortController();
  const removeSignal = io.onSignal(() => starting.abort());
  let tools: RunTools | undefined;
  let target: TargetProvider | undefined;
  try {
    tools = await startTools(prepared, {
      config,
      io: chatIo,
      styles,
      signal: starting.signal,
      hold: view,
      secrets: secretsOf(config),
    });
    removeSignal();
    if (tools === undefined) return CANCELLED;
    target = await startTargetProvider(config);
    const {
      signal: _signal,
      onApproval: _asked,
      ...deps
    } = runDepsOf(config, tools, target.provider, starting.signal, io.env);
    const onApproval: ApprovalHandler | undefined = io.stdinIsTTY
      ? createApprovalPrompter({
          input: router,
          output: io.stderr,
          styles,
          workspace: config.workspace.value,
          secrets: deps.secrets ?? [],
          hold: view,
        })
      : undefined;
    const runTools = tools;
    const session = createSession({
      spec: chatSpec(config, (line) => io.stderr.write(line)),
      deps,
      ...(flags.thread === undefined ? {} : { thread: flags.thread }),
      // The policy the turn runs under: /approve changes it between turns, and the tape says so.
      tapeHeader: (spec, policy) => tapeHeaderOf(spec, { ...deps, policy }, config, runTools),
      ...(onApproval === undefined ? {} : { onApproval }),
      holder: "eddy chat",
    });
    // One conversation at a time on a thread: a second chat on it is refused before its prompt.
    await session.hold();
    if (target.notice !== undefined) io.stderr.write(`${styles.dim(target.notice)}\n`);
    const showCall = callViewer(config.workspace.value, styles, deps.secrets ?? []);
    const waiting = await inheritedNote(session, config.workspace.value, styles, showCall);
    if (waiting !== undefined) io.stderr.write(`${waiting}\n`);
    return await chatLoop(session, { io, styles, view, router, images, calls: [], showCall });
  } finally {
    removeSignal();
    await target?.close();
    await closeTools(prepared, tools?.registry);
  }
}

/** Every turn's spec: the settings, with the workspace's AGENTS.md files as `eddy run` reads them (read once, at the start). */
function chatSpec(config: EffectiveConfig, warn: (line: string) => void): PartialRunSpec {
  const spec = specOf(config);
  const read = instructionReaderOf(config, warn);
  if (read === undefined) return spec;
  return { ...spec, ...withInstructionFiles(spec.instructions, read(config.workspace.value)) };
}

interface ChatContext {
  io: CliIo;
  styles: Styles;
  view: RunView;
  router: LineRouter;
  images: ImageSaver;
  /** The running turn's frames about its calls (`WAITING_CALL_FRAMES`): what `/decide` would decide is shown from them. */
  calls: Frame[];
  /** What a call waiting for `/decide` would do, as the approval prompt shows it. */
  showCall: (call: PendingCall) => Promise<string[]>;
  /**
   * The exit code of the last turn that did not complete (`exitCodeFor` its end; 1 for a turn that
   * failed to start): a piped chat exits with it, so a script sees a failed turn as `eddy run` shows one.
   */
  failed?: number;
  /** SIGTERM or SIGHUP ended the chat: it exits 130, as every command does. */
  terminated?: boolean;
  /** The chat is leaving (`leaver`): readline closing from now on is its doing, not a Ctrl-D. */
  leaving?: boolean;
  /** Settles once every session event was shown (`renderEvents`): leaving waits for it. */
  rendered?: Promise<void>;
}

/** Reads lines until the user leaves; renders the session's events. */
async function chatLoop(session: Session, ctx: ChatContext): Promise<number> {
  const { io, styles } = ctx;
  let tooLong = false;
  const input = io.stdin as NodeJS.ReadableStream;
  const rl = createInterface({
    input: io.stdinIsTTY
      ? input
      : boundedLines(input, PROMPT_MAX_BYTES, () => {
          tooLong = true;
          say(
            ctx,
            `${styles.red("eddy:")} a line on stdin is longer than ${sizeText(PROMPT_MAX_BYTES)}, the most eddy reads as one message; the rest of stdin was not read`,
          );
        }),
    output: io.stderr as unknown as NodeJS.WritableStream,
    terminal: io.stdinIsTTY,
    historySize: 1000,
    prompt: `${styles.bold("›")} `,
  });
  io.stderr.write(
    `${styles.dim(`eddy chat — thread ${session.thread} (model ${shownModel(session)}, approve ${session.approve}). /help for commands; Ctrl-D leaves.`)}\n`,
  );
  let stopKeys = () => {};
  const left = new Promise<void>((resolve) => {
    const leave = leaver(session, rl, ctx, resolve);
    ctx.rendered = renderEvents(session, rl, ctx);
    stopKeys = wireKeys(session, rl, ctx, leave);
    rl.on("line", (line) => {
      if (ctx.router.answer(line)) return;
      onLine(line, session, rl, ctx, leave).catch((err: unknown) => say(ctx, errorLine(err, styles)));
    });
  });
  rl.prompt();
  await left;
  stopKeys();
  if (tooLong) return USAGE_ERROR;
  if (ctx.terminated === true) return CANCELLED;
  // At a terminal every turn's end was shown to the user, who chose to leave: that is a success.
  return io.stdinIsTTY ? SUCCESS : (ctx.failed ?? SUCCESS);
}

/**
 * A piped chat's input as whole lines, ended at the first line longer than `max` bytes
 * (`onTooLong` says so; nothing of that line is read as a message): readline keeps an unfinished
 * line in memory, and `cat /dev/zero | eddy chat` grew one until the process died with a stack
 * trace. A last line without a newline is handed over at the end, as readline would.
 */
function boundedLines(
  input: NodeJS.ReadableStream,
  max: number,
  onTooLong: () => void,
): NodeJS.ReadableStream {
  // The unfinished line, held back until its newline comes.
  let held: Buffer[] = [];
  let heldBytes = 0;
  const bounded = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      const last = chunk.lastIndexOf(10);
      if (last === -1) {
        heldBytes += chunk.length;
        held.push(chunk);
        if (heldBytes <= max) return done();
        held = [];
        input.unpipe(bounded);
        (input as Partial<Readable>).destroy?.();
        onTooLong();
        this.push(null);
        return done();
      }
      const lines = Buffer.concat([...held, chunk.subarray(0, last + 1)]);
      held = [chunk.subarray(last + 1)];
      heldBytes = chunk.length - last - 1;
      done(null, lines);
    },
    flush(done) {
      done(null, heldBytes > 0 ? Buffer.concat(held) : undefined);
    },
  });
  return input.pipe(bounded);
}

/** Leaving: once the turns sent so far ended (a pipe that ends), or now (/exit, Ctrl-D at the prompt). */
function leaver(
  session: Session,
  rl: Interface,
  ctx: ChatContext,
  resolve: () => void,
): (now: boolean) => void {
  return (now) => {
    if (ctx.leaving === true) return;
    ctx.leaving = true;
    (async () => {
      if (!now) await session.whenIdle();
      await session.close();
      // The last turn's end may still be on its way to the screen (its waiting calls are read
      // from the tape first): a pipe that ended must not cut it off.
      await ctx.rendered?.catch(() => {});
      rl.close();
      resolve();
    })();
  };
}

/** Ctrl-C: cancels the running turn, or clears the line; twice at an empty prompt (or Ctrl-D) leaves. */
function wireKeys(
  session: Session,
  rl: Interface,
  ctx: ChatContext,
  leave: (now: boolean) => void,
): () => void {
  let interrupts = 0;
  /** Ctrl-C presses during turns since the prompt was last idle: the second drops what is queued. */
  let cancels = 0;
  let closed = false;
  const interrupt = () => {
    if (ctx.router.answer(null) || session.busy) {
      const dropped = ++cancels > 1 ? session.clearQueue() : [];
      session.cancel();
      say(ctx, ctx.styles.dim(`cancelling the turn…${queueNote(dropped.length, session.queued.length)}`));
      interrupts = 0;
      return;
    }
    cancels = 0;
    if (closed) {
      leave(true);
      return;
    }
    if (rl.line !== "" || ++interrupts < 2) {
      // Clears the line typed so far. Only a terminal has one: on a pipe readline takes no keys, and
      // `write(null)` threw inside the signal handler (a stack trace at the second Ctrl-C).
      if (ctx.io.stdinIsTTY) rl.write(null, { ctrl: true, name: "u" });
      ctx.io.stderr.write(`\n${ctx.styles.dim("(Ctrl-C again or Ctrl-D to leave)")}\n`);
      rl.prompt();
      return;
    }
    // The prompt's line ends, or the shell's prompt lands after `›`.
    if (ctx.io.stdinIsTTY) ctx.io.stderr.write("\n");
    leave(true);
  };
  rl.on("SIGINT", interrupt);
  // On a pipe readline sees no keys: the signal comes to the process. So it does once readline
  // closed (Ctrl-D during a turn): the handler stays until the chat has left, so Ctrl-C still
  // cancels that turn instead of killing the process with the turn's tape unfinished.
  // Asked to stop (a service manager, kill, the terminal closed): the turn is cancelled and
  // recorded, and the chat leaves.
  const stop = () => {
    ctx.terminated = true;
    ctx.router.answer(null);
    leave(true);
  };
  const removeSignal = ctx.io.onSignal((signal) => {
    if (signal !== "SIGTERM" && signal !== "SIGHUP") return interrupt();
    stop();
  });
  // A terminal that closed fails readline's reset of it (`setRawMode` EIO): that is a hang-up, not a crash.
  rl.on("error", stop);
  // Ctrl-Z at the prompt, then `fg`: readline comes back paused (node:readline pauses it on
  // SIGCONT for its listeners to resume), and left so the chat read nothing and ignored Ctrl-C and
  // Ctrl-D while the terminal stayed raw: the keys typed went to the shell after it was killed.
  rl.on("SIGCONT", () => rl.resume());
  rl.on("close", () => {
    closed = true;
    // Ctrl-D at a terminal's prompt (readline closed, not the chat): the cursor is still after
    // `› `; end that line, or the shell's prompt lands after it. Piped, there is no prompt line.
    if (ctx.io.stdinIsTTY && ctx.leaving !== true && !session.busy) ctx.io.stderr.write("\n");
    // An approval prompt waiting for a line gets none: answered as the prompt answers no answer.
    ctx.router.answer(null);
    if (session.busy && ctx.io.stdinIsTTY)
      say(ctx, ctx.styles.dim("leaving once this turn ends (Ctrl-C cancels it)"));
    leave(false);
  });
  rl.on("line", () => {
    interrupts = 0;
    cancels = 0;
  });
  return removeSignal;
}

/** What a Ctrl-C during a turn did to the queued messages, for its line. */
function queueNote(dropped: number, left: number): string {
  if (dropped > 0) return ` (dropped ${dropped} queued)`;
  if (left === 0) return "";
  return ` (${left} queued message${left === 1 ? "" : "s"} still follow${left === 1 ? "s" : ""}: Ctrl-C again drops ${left === 1 ? "it" : "them"})`;
}

/**
 * Renders each turn's frames as `eddy run` does; the prompt comes back when the session is idle.
 * An event that cannot be shown is said in one line and the next is shown: thrown out of this
 * loop, it was an unhandled rejection that ended the process, the turn's tape unfinished
 * (docs/pitfalls.md #95). Settles when the session's events end (it was closed).
 */
function renderEvents(session: Session, rl: Interface, ctx: ChatContext): Promise<void> {
  return (async () => {
    for await (const event of session.events()) {
      try {
        if (event.type === "turn_ended" && event.result.run.reason === "awaiting_approval")
          await showPending(event.result.run.pendingCalls ?? [], ctx);
        renderEvent(event, session, rl, ctx);
      } catch (err) {
        say(ctx, errorLine(err, ctx.styles));
        if (!session.busy && session.queued.length === 0) rl.prompt();
      }
    }
  })();
}

function renderEvent(event: SessionEvent, session: Session, rl: Interface, ctx: ChatContext): void {
  const { styles } = ctx;
  switch (event.type) {
    case "frame":
      if (WAITING_CALL_FRAMES.has(event.frame.type)) ctx.calls.push(event.frame);
      ctx.images.observe(event.frame);
      ctx.view.render(event.frame);
      return;
    case "turn_started":
      ctx.calls.length = 0;
      // A turn is a run of its own: a view that failed on the last one renders this one.
      ctx.view.renderAgain();
      return;
    case "turn_failed":
      ctx.failed = RUN_FAILED;
      say(ctx, errorLine(event.error, styles));
      break;
    case "turn_ended": {
      const code = exitCodeFor(event.result.run.reason);
      if (code !== SUCCESS) ctx.failed = code;
      const pending = event.result.run.pendingCalls ?? [];
      if (event.result.run.reason === "awaiting_approval")
        say(
          ctx,
          styles.yellow(
            `waiting for a decision on ${inert(pending)}: /decide ID=allow|deny (all=… for every one)`,
          ),
        );
      if (event.result.fileChanges.length > 0)
        say(
          ctx,
          styles.dim(
            `changed ${inert([...new Set(event.result.fileChanges.map((c) => c.path))])} (/undo restores)`,
          ),
        );
      break;
    }
  }
  if (!session.busy && session.queued.length === 0) rl.prompt();
}

/** One typed line: a slash command, or a message (queued while a turn runs). */
async function onLine(
  line: string,
  session: Session,
  rl: Interface,
  ctx: ChatContext,
  leave: (now: boolean) => void,
): Promise<void> {
  const text = line.trim();
  if (text === "") {
    if (!session.busy) rl.prompt();
    return;
  }
  if (text.startsWith("/")) {
    const stay = await slashCommand(text, session, ctx, leave);
    if (stay && !session.busy) rl.prompt();
    return;
  }
  if (session.busy) say(ctx, ctx.styles.dim("queued: sent when this turn ends (/steer TEXT sends now)"));
  session.send(text).catch(() => {});
}

async function slashCommand(
  text: string,
  session: Session,
  ctx: ChatContext,
  leave: (now: boolean) => void,
): Promise<boolean> {
  if (/^\/(exit|quit)(\s|$)/.test(text)) {
    // Piped, the messages before /exit are sent first: a script's last line does not cancel them.
    leave(ctx.io.stdinIsTTY);
    return false;
  }
  await runSlashCommand(text, session, ctx);
  return true;
}

async function runSlashCommand(text: string, session: Session, ctx: ChatContext): Promise<void> {
  const [command = "", ...rest] = text.split(/\s+/);
  const arg = text.slice(command.length).trim();
  try {
    switch (command) {
      case "/help":
        return say(ctx, CHAT_HELP);
      case "/new":
        return say(ctx, `new thread ${session.newThread()}`);
      case "/model":
        if (arg !== "") session.setModel(arg);
        return say(ctx, `model ${shownModel(session)}`);
      case "/approve":
        if (arg !== "") session.setApprove(approveMode(arg));
        return say(ctx, `approve ${session.approve}`);
      case "/decide":
        // The session refuses a call it is not waiting for by rejecting: said, not dropped.
        session.decide(decisions(rest)).catch((err: unknown) => refused(session, ctx, err));
        return;
      case "/steer":
        if (arg === "") throw usageError("/steer needs the message to send");
        session.steer(arg).catch((err: unknown) => refused(session, ctx, err));
        return;
      case "/tools":
        return say(ctx, inert(session.tools) || "(no tools)");
      case "/undo": {
        const { turn, restored } = await session.undo();
        return say(ctx, `restored ${inert(restored)} (turn ${turn + 1})`);
      }
      case "/usage":
        return say(ctx, usageText(session));
      case "/view":
        return await viewSession(session, ctx);
      default:
        throw usageError(`unknown command ${terminalSafe(command, { oneLine: true })} (/help lists them)`);
    }
  } catch (err) {
    say(ctx, errorLine(err, ctx.styles));
  }
}

function approveMode(value: string): ApproveMode {
  if (!(APPROVE_MODES as readonly string[]).includes(value))
    throw usageError(`/approve takes ${APPROVE_MODES.join(", ")} (got ${JSON.stringify(value)})`);
  return value as ApproveMode;
}

function decisions(words: string[]): Record<string, "allow" | "deny"> {
  if (words.length === 0) throw usageError("/decide needs CALL_ID=allow|deny (or all=allow|deny)");
  const out: Record<string, "allow" | "deny"> = {};
  for (const word of words) {
    const eq = word.lastIndexOf("=");
    const decision = word.slice(eq + 1);
    if (eq <= 0 || (decision !== "allow" && decision !== "deny"))
      throw usageError(`/decide takes CALL_ID=allow or CALL_ID=deny, got ${JSON.stringify(word)}`);
    out[word.slice(0, eq)] = decision;
  }
  return out;
}

function usageText(session: Session): string {
  const { turns, total } = session.usage();
  const line = (label: string, u: { input_tokens: number; output_tokens: number; total_tokens: number }) =>
    `${label}: ${u.input_tokens} in, ${u.output_tokens} out, ${u.total_tokens} total`;
  return [...turns.map((t) => line(`turn ${t.turn + 1}`, t)), line("session", total)].join("\n");
}

async function viewSession(session: Session, ctx: ChatContext): Promise<void> {
  const tapes = [...new Set(session.turns.map((t) => t.tape))];
  if (tapes.length === 0) throw usageError("no turn yet: nothing to view");
  const { viewCommand } = await import("./view-command.js");
  await viewCommand(tapes, {}, { ...ctx.io, stdout: ctx.io.stderr });
}

/** A /decide or /steer the session refused, said; a turn that failed is said by its turn_failed event. */
function refused(session: Session, ctx: ChatContext, err: unknown): void {
  if (!session.wasTurnFailure(err)) say(ctx, errorLine(err, ctx.styles));
}

/**
 * Names the model or the workspace chose (call ids, the paths a turn changed, tool names), listed
 * on one line and made inert: a call id or a file name may hold an escape sequence
 * (docs/pitfalls.md #66).
 */
function inert(names: readonly string[]): string {
  return names.map((name) => terminalSafe(name, { oneLine: true })).join(", ");
}

function say(ctx: ChatContext, text: string): void {
  ctx.view.say(text);
}

/** An error as one line; what the user or a file put in its message reaches the terminal inert (docs/pitfalls.md #66). */
function errorLine(err: unknown, styles: Styles): string {
  const message = EddyError.isInstance(err) || err instanceof Error ? err.message : String(err);
  return `${styles.red("eddy:")} ${terminalSafe(message.split("\n")[0] ?? "", { oneLine: true })}`;
}

/**
 * A note when the thread's last run, from an earlier chat or run, waits for decisions on calls it
 * deferred (`Session.inherited`): the calls as its tape recorded them, each shown whole as the
 * approval prompt would show it, and how to decide them here; or why it cannot be continued.
 */
async function inheritedNote(
  session: Session,
  workspace: string,
  styles: Styles,
  showCall: (call: PendingCall) => Promise<string[]>,
): Promise<string | undefined> {
  const earlier = session.inherited;
  if (earlier === undefined) return undefined;
  const head = `⚠ the thread's last run (${earlier.runId}) waits for decisions`;
  if ("problem" in earlier)
    return styles.yellow(terminalSafe(`${head}, but cannot be continued: ${earlier.problem}`));
  const calls: string[] = [];
  for (const call of earlier.calls) calls.push(...(await showCall(call)));
  const first = earlier.calls[0]?.call_id ?? "CALL_ID";
  return [
    styles.yellow(
      terminalSafe(
        `${head} on ${earlier.calls.length === 1 ? "this call" : "these calls"} (tape ${relative(workspace, earlier.tape)}):`,
      ),
    ),
    ...calls,
    styles.yellow(
      `  /decide ${terminalSafe(first, { oneLine: true })}=allow|deny (all=… for every one) continues it; a message starts a new run instead`,
    ),
  ].join("\n");
}

/**
 * Shows a call waiting for `/decide` whole, as the approval prompt would (approval-view.ts: a
 * diff, the whole command, every control character as a marker): a decision is taken on what it
 * shows, and the one-line view cut at 160 characters hid the end of a long command.
 */
function callViewer(
  workspace: string,
  styles: Styles,
  secrets: readonly string[],
): (call: PendingCall) => Promise<string[]> {
  return async (call) => {
    let args: unknown;
    try {
      args = JSON.parse(call.arguments);
    } catch {}
    const request = {
      turn: 0,
      callId: call.call_id,
      name: call.name,
      arguments: call.arguments,
      args,
      description: "",
      signal: new AbortController().signal,
    };
    const { describeApproval } = await import("./approval-view.js");
    const view = await describeApproval(request, { workspace, styles, secrets });
    const head = `  ${terminalSafe(call.call_id, { oneLine: true })}: ${terminalSafe(call.name, { oneLine: true })}`;
    return [head, ...view.map((line) => `    ${line}`)];
  };
}

/** The frames a waiting call is shown from (`waitingCalls`): the call, its approval question, a sub-agent's deferral. */
const WAITING_CALL_FRAMES = new Set(["tool_call", "approval_requested", "tool_deferred"]);

/** Before a turn's "waiting for a decision" note: each of its waiting calls shown whole. */
async function showPending(ids: readonly string[], ctx: ChatContext): Promise<void> {
  for (const call of waitingCalls(ctx.calls, ids))
    for (const line of await ctx.showCall(call)) say(ctx, line);
}

/** The session's model as shown: a name from the command line or a slash command, made inert. */
function shownModel(session: Session): string {
  return session.model == null ? "default" : terminalSafe(session.model, { oneLine: true });
}
