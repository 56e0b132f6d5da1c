/**
 * `eddy resume TAPE`: continues a run whose process died (or was cancelled) from its tape — the
 * recorded turns and tool outputs are reproduced, not redone, and the run goes on live (see
 * src/batch/resume.ts). The model, instructions, tools and limits come from the tape; the provider
 * from the flags, environment and config file as for `eddy run`. The tape is continued in place
 * (`--record FILE` writes the resumed tape elsewhere); until the reproduced part is written, the
 * old tape stays as it was.
 *
 * Exit codes as `eddy run`; a run that already ended by itself is reported with its own code.
 */
import { resolve } from "node:path";
import { planResume, resumeRun } from "../batch/resume.js";
import { createTapeFileWriter, type TapeWriter } from "../batch/tape-store.js";
import type { Frame } from "../frames/frame.js";
import { readTape, type Tape } from "../replay/tape.js";
import { type RunFlags, resolveConfig } from "./config.js";
import { exitCodeFor } from "./exit-codes.js";
import { ImageSaver } from "./hosted-items.js";
import { assertReadyToRun, checkWorkspace } from "./preflight.js";
import { replayTools } from "./replay-tools.js";
import { type CliIo, cancelOnSignal, humanRenderer } from "./run-command.js";
import { RunView } from "./run-view.js";
import { secretsOf, startTargetProvider } from "./target-provider.js";
import { stylesFor } from "./terminal.js";

/** Flags of `eddy resume`: where requests go (as `eddy run`), and output. */
export interface ResumeFlags extends RunFlags {
  json?: boolean;
  record?: string;
}

export async function resumeCommand(path: string, flags: ResumeFlags, io: CliIo): Promise<number> {
  const tape = readTape(path);
  const plan = planResume(tape);
  if (plan.status === "ended") {
    io.stderr.write(`eddy: ${path}: the run already ended (${plan.reason}); there is nothing to resume\n`);
    return exitCodeFor(plan.reason);
  }
  // The recorded run's tools, rebuilt as for a replay (MCP tools offline: their recorded outputs are reused).
  const { registry } = replayTools(tape.header, tape.frames, io.env, path);
  // The tape's model names the provider route too (`profile/model`), unless --model says otherwise.
  const config = resolveConfig(
    {
      ...flags,
      ...(flags.model === undefined && tape.header.model !== null ? { model: tape.header.model } : {}),
    },
    io.env,
    io.cwd,
  );
  checkWorkspace(config.workspace.value);
  assertReadyToRun(config, io.env);
  const styles = stylesFor(io.stderr, io.env);
  const controller = new AbortController();
  const target = await startTargetProvider(config);
  const out = resolve(io.cwd, flags.record ?? path);
  let writer: TapeWriter | undefined;
  const removeSignal = cancelOnSignal(io, controller);
  try {
    const images = new ImageSaver(config.workspace.value);
    const view =
      flags.json === true
        ? RunView.json(io.stdout, io.stderr, styles)
        : RunView.human(humanRenderer(io, styles, config, images));
    const handle = resumeRun(tape, {
      provider: target.provider,
      registry,
      workspace: config.workspace.value,
      signal: controller.signal,
      secrets: secretsOf(config),
      onFrame: (frame: Frame) => writer?.write(frame),
      onResumed: () => writer?.commit(),
    });
    // In place: the new tape is written beside the old one and replaces it once it holds its frames.
    writer = createTapeFileWriter(
      out === resolve(io.cwd, path) ? `${out}.resuming` : out,
      handle.header,
      secretsOf(config),
      out === resolve(io.cwd, path) ? out : undefined,
    );
    if (target.notice !== undefined) io.stderr.write(`${styles.dim(target.notice)}\n`);
    io.stderr.write(`${styles.dim(describeResume(path, tape, handle.point))}\n`);
    for await (const frame of handle) {
      images.observe(frame);
      view.render(frame);
    }
    return exitCodeFor((await handle.result).reason);
  } finally {
    removeSignal();
    await writer?.close();
    await target.close();
  }
}

function describeResume(
  path: string,
  tape: Tape,
  point: { at_seq: number; turn: number; reused_tool_outputs: number; dropped_frames: number },
): string {
  const kept = `${point.at_seq} of ${tape.frames.length} frames kept`;
  const reused = `${point.reused_tool_outputs} tool output${point.reused_tool_outputs === 1 ? "" : "s"} reused`;
  return `eddy: resuming ${path} at turn ${point.turn} (${kept}, ${reused}, ${point.dropped_frames} dropped)`;
}
