/**
 * `eddy replay TAPE`: re-runs a recorded run offline and verifies it reproduces the tape's frames
 * (exit 0 on a match, whatever the recorded run's own outcome; 1 on the first divergence; 2 on a
 * bad tape). Tools are not re-executed (their recorded outputs are used) unless `--live-tools`.
 */
import { statSync } from "node:fs";
import { EddyError } from "../errors.js";
import type { Frame } from "../frames/frame.js";
import { replayTape } from "../replay/replay.js";
import { readTape, type Tape } from "../replay/tape.js";
import { createBuiltinTools } from "../tools/builtin/index.js";
import { createToolRegistry, type ToolRegistry } from "../tools/registry.js";
import type { CliIo } from "./run-command.js";
import { clip } from "./terminal.js";

export interface ReplayFlags {
  json?: boolean;
  liveTools?: boolean;
  workspace?: string;
}

export async function replayCommand(path: string, flags: ReplayFlags, io: CliIo): Promise<number> {
  const tape = readTape(path);
  const registry = toolsOfTape(tape, path, "replay");
  const workspace = flags.workspace ?? io.cwd;
  if (!isDirectory(workspace)) {
    throw new EddyError(
      "invalid_config",
      `workspace ${JSON.stringify(workspace)} does not exist or is not a directory`,
      { fault: "user" },
    );
  }
  const outcome = await replayTape(tape, { registry, workspace, liveTools: flags.liveTools === true });
  if (flags.json === true) for (const frame of outcome.frames) io.stdout.write(`${JSON.stringify(frame)}\n`);
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

/** The built-in tools a CLI tape was recorded with (its header's tool set); other tools are a usage error. */
export function toolsOfTape(tape: Tape, path: string, verb: "replay" | "resume"): ToolRegistry {
  const toolSet = tape.header.tool_set ?? { allow_write: false, allow_shell: false };
  const { tools, disabled } = createBuiltinTools({
    allowWrite: toolSet.allow_write,
    allowShell: toolSet.allow_shell,
  });
  const registry = createToolRegistry(tools, { disabled });
  const missing = tape.header.tools.filter((name) => registry.resolve(name) === undefined);
  if (missing.length > 0) {
    throw new EddyError(
      "tape_invalid",
      `${path}: the recorded run used tools that are not eddy's built-ins (${missing.join(", ")}); ${verb} it from the library with those tools`,
      { fault: "user" },
    );
  }
  return registry;
}

function describe(frame: Frame | undefined): string {
  if (frame === undefined) return "(no frame)";
  const { ts: _ts, ...rest } = frame;
  return clip(JSON.stringify(rest), 1200);
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
