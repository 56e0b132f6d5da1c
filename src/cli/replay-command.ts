/**
 * `eddy replay TAPE`: re-runs a recorded run offline and verifies it reproduces the tape's frames
 * (exit 0 on a match, whatever the recorded run's own outcome; 1 on the first divergence; 2 on a
 * bad tape). Tools are not re-executed (their recorded outputs are used) unless `--live-tools`.
 */
import { statSync } from "node:fs";
import { resolve } from "node:path";
import { EddyError } from "../errors.js";
import type { Frame } from "../frames/frame.js";
import { replayTape } from "../replay/replay.js";
import { readTape } from "../replay/tape.js";
import { safeJson } from "../util/control-chars.js";
import { liveReplayRegistry, replayTools } from "./replay-tools.js";
import type { CliIo } from "./run-command.js";
import { clip } from "./terminal.js";

export interface ReplayFlags {
  json?: boolean;
  liveTools?: boolean;
  workspace?: string;
  /** With `--live-tools`: what the tape's calls may do here (the tape grants nothing). */
  allowWrite?: boolean;
  allowShell?: boolean;
  sandbox?: boolean;
}

/**
 * `eddy replay TAPE`: the exit code of the verdict. The tape and `--workspace`, when relative, are
 * from `io.cwd` (the command's directory: in-process, `main(argv, io)`'s, not the process's).
 */
export async function replayCommand(path: string, flags: ReplayFlags, io: CliIo): Promise<number> {
  const tape = readTape(resolve(io.cwd, path), path);
  const { registry, refreshTools } = replayTools(tape.header, tape.frames, io.env, path);
  const workspace = resolve(io.cwd, flags.workspace ?? ".");
  if (!isDirectory(workspace)) {
    throw new EddyError(
      "invalid_config",
      `workspace ${JSON.stringify(workspace)} does not exist or is not a directory`,
      { fault: "user" },
    );
  }
  const live = flags.liveTools === true;
  const liveRegistry = live
    ? liveReplayRegistry(tape.header, tape.frames, io.env, path, {
        allowWrite: flags.allowWrite === true,
        allowShell: flags.allowShell === true,
        // A tape recorded in the sandbox keeps it: a value that only takes away may come from it.
        sandbox: flags.sandbox === true || tape.header.policy?.sandbox === true,
      })
    : undefined;
  const outcome = await replayTape(tape, {
    registry,
    workspace,
    liveTools: live,
    ...(liveRegistry === undefined ? {} : { liveRegistry }),
    ...(refreshTools === undefined ? {} : { refreshTools }),
  });
  if (flags.json === true) for (const frame of outcome.frames) io.stdout.write(`${safeJson(frame)}\n`);
  const report = flags.json === true ? io.stderr : io.stdout;
  const { verdict } = outcome;
  if (verdict.match) {
    report.write(`replay matches (${verdict.frames} frames)\n`);
    return 0;
  }
  report.write(
    `replay diverges at frame ${verdict.index}\n  expected: ${describe(verdict.expected)}\n  actual:   ${describe(verdict.actual)}\n`,
  );
  return 1;
}

function describe(frame: Frame | undefined): string {
  if (frame === undefined) return "(no frame)";
  const { ts: _ts, ...rest } = frame;
  return clip(safeJson(rest), 1200);
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
