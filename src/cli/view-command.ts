/**
 * `eddy view TAPE…|DIR [--out FILE]`: one self-contained HTML page of the runs (or of a batch
 * folder). Without `--out` the page goes to a temporary file, opened in the browser when there is
 * a display; the path is printed on stdout either way.
 */
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";
import { EddyError } from "../errors.js";
import { realPathInside } from "../util/inside.js";
import { statOrUndefined, writeRegularFileSync } from "../util/regular-file.js";
import { collectViewInput } from "../view/load.js";
import { renderViewPage } from "../view/page.js";
import type { Env } from "./config.js";
import type { CliIo } from "./run-command.js";
import { stylesFor } from "./terminal.js";

/** Flags of `eddy view`. */
export interface ViewFlags {
  out?: string;
  /** `--live URL`: follow a run of eddy serve (view-live.ts). */
  live?: string;
  /** `--token`: eddy serve's bearer token for `--live`. @defaultValue EDDY_SERVE_TOKEN */
  token?: string;
  /** False with `--no-open`. @defaultValue true */
  open?: boolean;
}

/** Writes the page; returns the exit code. `platform` is injectable for tests. */
export async function viewCommand(
  paths: string[],
  flags: ViewFlags,
  io: CliIo,
  platform: NodeJS.Platform = process.platform,
): Promise<number> {
  if (flags.live !== undefined) return live(paths, flags, io, platform);
  if (flags.token !== undefined) throw usage("--token goes with --live URL (a run on eddy serve)");
  if (paths.length === 0) throw usage("give tapes, a batch folder, or --live URL");
  const inputs = paths.map((p) => resolve(io.cwd, p));
  if (flags.out !== undefined) refuseOutOverInput(resolve(io.cwd, flags.out), inputs);
  const input = collectViewInput(inputs);
  const html = renderViewPage(input);
  const target =
    flags.out !== undefined
      ? resolve(io.cwd, flags.out)
      : join(mkdtempSync(join(tmpdir(), "eddy-view-")), `${pageName(paths)}.html`);
  writeRegularFileSync(target, html, { what: "the page" });
  io.stdout.write(`${target}\n`);
  const styles = stylesFor(io.stderr, io.env);
  const command =
    flags.out === undefined && flags.open !== false ? browserCommand(io.env, platform) : undefined;
  if (command !== undefined) {
    const opened = await openInBrowser(command, target);
    if (!opened)
      io.stderr.write(`${styles.dim(`eddy: could not run ${command[0]}; open the page yourself`)}\n`);
  }
  return 0;
}

/** `--live URL`: the page follows a run of eddy serve (view-live.ts). */
async function live(paths: string[], flags: ViewFlags, io: CliIo, platform: NodeJS.Platform) {
  if (paths.length > 0) throw usage("--live follows one run: give no tapes with it");
  if (flags.out !== undefined) throw usage("--out does not go with --live (the page is served, not written)");
  const { viewLiveCommand } = await import("./view-live.js");
  const command = flags.open !== false ? browserCommand(io.env, platform) : undefined;
  const token = flags.token ?? io.env.EDDY_SERVE_TOKEN;
  return viewLiveCommand(
    flags.live as string,
    token === "" ? undefined : token,
    io,
    command === undefined ? undefined : (url) => openInBrowser(command, url),
  );
}

/**
 * `--out` naming a file the page is made from (`eddy view a.tape --out a.tape`, or a tape or the
 * results of a folder given, by any name or link): the page would replace the only record of the
 * run. Refused before anything is read or written.
 */
function refuseOutOverInput(out: string, inputs: readonly string[]): void {
  const target = statOrUndefined(out);
  if (target === undefined || !target.isFile()) return;
  for (const input of inputs) {
    const given = statOrUndefined(input);
    const same = given !== undefined && given.dev === target.dev && given.ino === target.ino;
    // In a folder given, every tape and results file is read; the page may go beside them.
    const inFolder =
      given?.isDirectory() === true &&
      /\.(tape|jsonl|json)$/.test(out) &&
      realPathInside(input, out) !== undefined;
    if (same || inFolder)
      throw usage(
        `--out ${out} is ${same ? "a file" : "in a folder"} the page is made from: writing the page there would replace the run's record; give another --out`,
      );
  }
}

function usage(message: string): EddyError {
  return new EddyError("invalid_argument", message, { fault: "user" });
}

/** The command that opens a file in the browser here, or undefined when there is no display. */
export function browserCommand(env: Env, platform: NodeJS.Platform): [string, ...string[]] | undefined {
  if (platform === "darwin") return ["open"];
  if (platform === "win32") return ["cmd", "/c", "start", '""'];
  if ((env.DISPLAY ?? "") !== "" || (env.WAYLAND_DISPLAY ?? "") !== "") return ["xdg-open"];
  return undefined;
}

/** Starts the opener detached (the browser outlives eddy); false when it cannot be started. */
export function openInBrowser(command: [string, ...string[]], path: string): Promise<boolean> {
  const [program, ...args] = command;
  return new Promise((done) => {
    const child = spawn(program, [...args, path], { detached: true, stdio: "ignore" });
    child.once("error", () => done(false));
    child.once("spawn", () => {
      child.unref();
      done(true);
    });
  });
}

function pageName(paths: string[]): string {
  const first = paths.length === 1 ? basename(paths[0] as string).replace(/\.(tape|jsonl)$/, "") : "runs";
  return first.replace(/[^A-Za-z0-9._-]/g, "_") || "run";
}
