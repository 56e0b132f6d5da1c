/**
 * Words for the batch page's tiles: run end reasons and `summary.json` keys as a reader says them
 * ("Max turns", "Tokens in", "Wall time"), never raw JSON paths like `by_reason.completed`. Shared
 * by the page builder (`batch.ts`) and the browser half (`client/batch-page.ts`).
 */

/** `max_turns` → "Max turns", `completed` → "Completed". */
export function reasonLabel(reason: string): string {
  return sentenceCase(reason.replace(/[_-]+/g, " ").trim()) || "Unknown";
}

/** The keys eddy's own `summary.json` has (README "Batch"), in words. */
const SUMMARY_LABELS: Record<string, string> = {
  tasks: "Tasks in the file",
  finished: "Finished",
  pending: "Pending",
  failed: "Not completed",
  "usage.input_tokens": "Tokens in",
  "usage.output_tokens": "Tokens out",
  "usage.total_tokens": "Tokens in total",
  "duration_ms.p50": "Duration p50",
  "duration_ms.p95": "Duration p95",
  "duration_ms.max": "Longest task",
  wall_ms: "Wall time",
  runs: "Runs",
  bad_lines: "Bad lines skipped",
  finished_at: "Finished at",
};

/**
 * A `summary.json` key path in words: eddy's own keys by name, `by_reason.X` as the reason, any
 * other path with its separators as spaces (`counts.completed` → "Counts completed").
 */
export function summaryLabel(path: string): string {
  const known = SUMMARY_LABELS[path];
  if (known !== undefined) return known;
  if (path.startsWith("by_reason.")) return reasonLabel(path.slice("by_reason.".length));
  return sentenceCase(path.replace(/[._-]+/g, " ").trim()) || "Summary";
}

/** `345 ms`, `1.23 s`, `2 min 03 s` (the page's duration format). */
export function durationText(ms: number): string {
  if (!Number.isFinite(ms)) return "—";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  const minutes = Math.floor(ms / 60_000);
  const seconds = Math.round((ms % 60_000) / 1000);
  return `${minutes} min ${String(seconds).padStart(2, "0")} s`;
}

function sentenceCase(text: string): string {
  return text === "" ? "" : `${text[0]?.toUpperCase()}${text.slice(1)}`;
}
