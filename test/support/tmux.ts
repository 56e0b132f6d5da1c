/**
 * The built CLI in a real terminal: tmux (Debian's; .ci/run installs it) on a private socket,
 * driven with `send-keys` and read with `capture-pane`. Waits are for screen content, with
 * generous timeouts that only guard against hangs.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BIN } from "./cli.js";

/** Whether tmux is here. */
export const HAS_TMUX = spawnSync("tmux", ["-V"], { stdio: "ignore" }).status === 0;

export interface TmuxRun {
  /** Types text and presses Enter. */
  line(text: string): void;
  /** Sends tmux key names (e.g. "C-c", "C-d"). */
  keys(...names: string[]): void;
  /** The screen and its scrollback now. */
  screen(): string;
  /** Resolves once the screen shows `text` (`count` times); rejects after `ms` with the screen. */
  waitFor(text: string, options?: { ms?: number; count?: number }): Promise<void>;
  /** Resolves with the CLI's exit code once it exited. */
  exited(ms?: number): Promise<number>;
  close(): void;
}

/**
 * Runs `eddy ARGS…` in a new tmux session in `cwd` with exactly `env`. With `jobControl` it is
 * typed into an interactive bash, as a user would (Ctrl-Z stops it and `fg` brings it back); a
 * command tmux starts itself is in an orphaned process group, where Ctrl-Z does nothing.
 */
export function runInTmux(
  args: string[],
  options: { cwd: string; env: Record<string, string>; jobControl?: boolean },
): TmuxRun {
  const dir = mkdtempSync(join(tmpdir(), "eddy-tmux-"));
  const socket = join(dir, "socket");
  const tmux = (...a: string[]) => execFileSync("tmux", ["-S", socket, ...a], { encoding: "utf8" });
  const envWords = Object.entries(options.env).map(([k, v]) => quote(`${k}=${v}`));
  const cli = `env -i ${envWords.join(" ")} ${quote(process.execPath)} ${quote(BIN)} ${args.map(quote).join(" ")}`;
  // With job control the test types `echo "EXITED=$?"` once the CLI left (a stop would print it too).
  const command =
    options.jobControl === true
      ? "env -i PS1='$ ' bash --norc --noprofile -i"
      : `${cli}; echo "EXITED=$?"; sleep 600`;
  tmux("-f", "/dev/null", "new-session", "-d", "-x", "200", "-y", "50", "-c", options.cwd, command);
  if (options.jobControl === true) {
    tmux("send-keys", "-t", "0", "-l", cli);
    tmux("send-keys", "-t", "0", "Enter");
  }
  tmux("set-option", "-g", "history-limit", "10000");
  const screen = () => tmux("capture-pane", "-p", "-J", "-S", "-10000");
  const waitFor = async (text: string, o: { ms?: number; count?: number } = {}) => {
    const deadline = Date.now() + (o.ms ?? 60_000);
    for (;;) {
      const shown = screen();
      if (shown.split(text).length - 1 >= (o.count ?? 1)) return;
      if (Date.now() > deadline)
        throw new Error(`the terminal never showed ${JSON.stringify(text)}; it showed:\n${shown}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  return {
    line: (text) => {
      tmux("send-keys", "-t", "0", "-l", text);
      tmux("send-keys", "-t", "0", "Enter");
    },
    keys: (...names) => {
      tmux("send-keys", "-t", "0", ...names);
    },
    screen,
    waitFor,
    async exited(ms) {
      await waitFor("EXITED=", ms === undefined ? {} : { ms });
      return Number(/EXITED=(\d+)/.exec(screen())?.[1]);
    },
    close: () => {
      spawnSync("tmux", ["-S", socket, "kill-server"], { stdio: "ignore" });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function quote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}
