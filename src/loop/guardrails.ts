/**
 * Guardrails (docs/architecture.md, "Composing runs"): input checks run on the run's input before
 * the first request, output checks on the final answer before the run completes. Each check is a
 * `guardrail_checked` frame; a tripped one ends the run with reason `guardrail`. A replay gives
 * the recorded verdicts back instead of calling the checks.
 */
import { type Frame, frame, type GuardrailCheckedFrame } from "../frames/frame.js";
import type { FrameChannel } from "./frame-channel.js";

/** A guardrail's verdict. */
export interface GuardrailVerdict {
  tripped: boolean;
  /** Why it tripped (recorded in the frame and the run's error). */
  reason?: string;
}

/** One input or output check. */
export interface Guardrail {
  name: string;
  check: (text: string, context: { signal: AbortSignal }) => GuardrailVerdict | Promise<GuardrailVerdict>;
}

/** `RunDeps.guardrails`. */
export interface Guardrails {
  /** Checked on the run's input text before the first request. */
  input?: readonly Guardrail[];
  /** Checked on the final answer before the run completes. */
  output?: readonly Guardrail[];
}

/** Runs a stage's guardrails in order, one frame each; the first tripped one's frame, if any. */
export async function checkGuardrails(
  stage: "input" | "output",
  guardrails: readonly Guardrail[],
  text: string,
  channel: FrameChannel,
  signal: AbortSignal,
): Promise<GuardrailCheckedFrame | undefined> {
  for (const guardrail of guardrails) {
    let verdict: GuardrailVerdict;
    try {
      verdict = await guardrail.check(text, { signal });
    } catch (err) {
      // A check that fails trips (fail closed).
      verdict = {
        tripped: true,
        reason: `the check failed: ${err instanceof Error ? err.message : String(err)}`,
      };
    }
    const checked = frame("guardrail_checked", { stage, name: guardrail.name, tripped: verdict.tripped });
    if (verdict.reason !== undefined) checked.reason = verdict.reason;
    const sent = channel.emit(checked);
    if (verdict.tripped) return sent;
  }
  return undefined;
}

/** The guardrails a tape's `guardrail_checked` frames stand for (replay): the recorded verdicts, in order. */
export function recordedGuardrails(frames: readonly Frame[]): Guardrails | undefined {
  const checked = frames.filter((f): f is GuardrailCheckedFrame => f.type === "guardrail_checked");
  if (checked.length === 0) return undefined;
  const stage = (name: "input" | "output"): Guardrail[] => {
    const names: string[] = [];
    for (const f of checked) if (f.stage === name && !names.includes(f.name)) names.push(f.name);
    return names.map((n) => ({
      name: n,
      check: () => {
        const i = checked.findIndex((f) => f.stage === name && f.name === n);
        const [f] = i < 0 ? [] : checked.splice(i, 1);
        return f === undefined
          ? { tripped: false }
          : { tripped: f.tripped, ...(f.reason === undefined ? {} : { reason: f.reason }) };
      },
    }));
  };
  return { input: stage("input"), output: stage("output") };
}
