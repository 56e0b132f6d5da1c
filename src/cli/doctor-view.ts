/**
 * The human view of `eddy doctor`: a header naming what is probed, one row per probe as it comes
 * in (status coloured, its hint on the line below), and a footer with the verdict, what runs left
 * on auto will do differently, and where the report was saved. Nothing secret reaches it: the base
 * URL has no credentials and the results are masked by `runProbes`.
 */
import type { CapabilityKey, ProviderCapabilities } from "../provider/capabilities.js";
import {
  type DoctorReport,
  evidenceChanges,
  type ProbeName,
  type ProbeResult,
  type ProbeStatus,
  type ProbeTarget,
} from "../provider/probe/index.js";
import { formatDuration, type Output, type Styles, terminalSafe } from "./terminal.js";

const NAME_WIDTH = 22;
const STATUS_WIDTH = 13;
const TIME_WIDTH = 9;

/** What a capability the evidence sets means for a run. */
const MEANING: Partial<Record<CapabilityKey, Record<"true" | "false", string>>> = {
  nativeToolHistory: {
    true: "tool history as function_call items",
    false: "tool history as text (--history-strategy auto renders text-embed)",
  },
  previousResponseId: {
    true: "chained follow-ups (previous_response_id)",
    false: "stateless follow-ups (the whole history each turn)",
  },
  encryptedReasoning: { true: "encrypted reasoning asked for", false: "no encrypted reasoning asked for" },
  compaction: { true: "server-side compaction on overflow", false: "local compaction on overflow" },
};

/** Writes the table to `out`. */
export class DoctorTable {
  constructor(
    private readonly out: Output,
    private readonly styles: Styles,
  ) {}

  header(provider: string, baseURL: string, target: ProbeTarget): void {
    const model = inert(target.model ?? "the server's default model");
    const where = baseURL === "embedded" ? "the embedded mock server" : inert(`${provider} at ${baseURL}`);
    this.out.write(
      `${this.styles.bold("eddy doctor")}: ${where} — model ${model}, ${target.api ?? "responses"} API\n\n`,
    );
    this.out.write(
      this.styles.dim(
        `  ${"probe".padEnd(NAME_WIDTH)}${"status".padEnd(STATUS_WIDTH)}${"time".padStart(TIME_WIDTH)}  detail\n`,
      ),
    );
  }

  row(result: ProbeResult): void {
    const status = this.colour(result.status, result.status.padEnd(STATUS_WIDTH));
    const time = result.status === "skipped" ? "" : formatDuration(result.ms);
    this.out.write(
      `  ${result.name.padEnd(NAME_WIDTH)}${status}${time.padStart(TIME_WIDTH)}  ${inert(result.detail)}\n`,
    );
    if (result.hint !== undefined)
      this.out.write(
        `  ${" ".repeat(NAME_WIDTH + STATUS_WIDTH + TIME_WIDTH)}  ${this.styles.dim(`↳ ${inert(result.hint)}`)}\n`,
      );
  }

  footer(summary: {
    report: DoctorReport;
    /** The probes that had to pass. */
    essentials: readonly ProbeName[];
    passed: boolean;
    capabilities: ProviderCapabilities | undefined;
    saved: string | undefined;
  }): void {
    const { report, passed } = summary;
    const counts = (["ok", "unsupported", "failed", "skipped"] as const)
      .map((status) => [status, report.probes.filter((p) => p.status === status).length] as const)
      .filter(([, n]) => n > 0)
      .map(([status, n]) => `${n} ${status}`)
      .join(", ");
    const essentials = new Intl.ListFormat("en", { type: "conjunction" }).format(summary.essentials);
    const verdict = passed
      ? this.styles.green(`${essentials} pass: runs can work here.`)
      : this.styles.red(`${essentials} did not pass: runs will fail until that is fixed (see the hints).`);
    this.out.write(`\n${counts} — ${verdict}\n`);
    if (summary.capabilities !== undefined) {
      const changes = evidenceLines(summary.capabilities, report);
      if (changes.length > 0) this.out.write(`Runs left on auto here now use: ${changes.join("; ")}.\n`);
    }
    if (summary.saved !== undefined)
      this.out.write(this.styles.dim(`Saved in ${summary.saved}; eddy doctor refreshes it.\n`));
  }

  private colour(status: ProbeStatus, text: string): string {
    switch (status) {
      case "ok":
        return this.styles.green(text);
      case "failed":
        return this.styles.red(text);
      case "unsupported":
        return this.styles.yellow(text);
      case "skipped":
        return this.styles.dim(text);
    }
  }
}

/**
 * A server's words (a probe's detail quotes its errors) made inert, on one line: no escape
 * sequence, control or direction character reaches the terminal (terminal.ts).
 */
function inert(text: string): string {
  return terminalSafe(text, { oneLine: true });
}

/** What the report changes for runs, against the profile's capabilities, in words. */
export function evidenceLines(capabilities: ProviderCapabilities, report: DoctorReport): string[] {
  return evidenceChanges(capabilities, report).map(
    ({ capability, value }) => MEANING[capability]?.[`${value}`] ?? `${capability} ${value}`,
  );
}
