/**
 * A batch folder: the summary, histograms of durations and tokens, and a sortable, filterable table
 * of tasks, each linking to its run in the same page. Also the run list of a page with several tapes.
 */

import { reasonLabel } from "../labels.js";
import type { BatchRowView, BatchView, RunIndexEntry } from "../view-data.js";
import { h } from "./dom.js";
import { count, isSuccess, ms } from "./format.js";

interface Column<T> {
  key: string;
  title: string;
  value: (row: T) => string | number | null;
  cell: (row: T) => HTMLElement | string;
  numeric?: boolean;
}

/** Renders a batch folder into `root`: its facts, histograms and the table of its tasks. */
export function renderBatch(root: HTMLElement, batch: BatchView, title: string): void {
  root.replaceChildren(
    batchFacts(batch, title),
    batchHistograms(batch.rows),
    h(
      "section",
      { class: "card" },
      h("h2", null, "Tasks"),
      sortableTable(batch.rows, BATCH_COLUMNS, "batch-table"),
    ),
  );
}

/** The columns of the batch table. */
const BATCH_COLUMNS: Column<BatchRowView>[] = [
  { key: "id", title: "task", value: (r) => r.id, cell: (r) => runLink(r.id, r.run, r.tape_problem) },
  { key: "reason", title: "reason", value: (r) => r.reason, cell: (r) => reasonBadge(r.reason) },
  { key: "turns", title: "turns", value: (r) => r.turns, cell: (r) => count(r.turns), numeric: true },
  {
    key: "tool_calls",
    title: "tool calls",
    value: (r) => r.tool_calls,
    cell: (r) => count(r.tool_calls),
    numeric: true,
  },
  {
    key: "tokens_in",
    title: "tokens in",
    value: (r) => r.tokens_in,
    cell: (r) => count(r.tokens_in),
    numeric: true,
  },
  {
    key: "tokens_out",
    title: "tokens out",
    value: (r) => r.tokens_out,
    cell: (r) => count(r.tokens_out),
    numeric: true,
  },
  {
    key: "duration_ms",
    title: "duration",
    value: (r) => r.duration_ms,
    cell: (r) => ms(r.duration_ms),
    numeric: true,
  },
  {
    key: "output",
    title: "output / error",
    value: (r) => r.error ?? r.output ?? "",
    cell: (r) => outputCell(r),
  },
];

/** The batch's title, folder, counts by reason, summary and problems. */
function batchFacts(batch: BatchView, title: string): HTMLElement {
  const rows = batch.rows;
  const byReason = new Map<string, number>();
  for (const r of rows) byReason.set(r.reason, (byReason.get(r.reason) ?? 0) + 1);
  return h(
    "section",
    { class: "card" },
    h("h1", null, title),
    h("div", { class: "muted small" }, batch.dir),
    h(
      "dl",
      { class: "facts" },
      h("div", { class: "fact" }, h("dt", null, "Tasks"), h("dd", null, count(rows.length))),
      ...[...byReason].map(([reason, n]) =>
        h("div", { class: "fact" }, h("dt", null, reasonLabel(reason)), h("dd", null, count(n))),
      ),
      ...batch.summary.map(([k, v]) => h("div", { class: "fact" }, h("dt", null, k), h("dd", null, v))),
    ),
    batch.problems.length > 0
      ? h("ul", { class: "notes problems" }, ...batch.problems.map((p) => h("li", { class: "note warn" }, p)))
      : null,
  );
}

/** Histograms of the tasks' durations and tokens. */
function batchHistograms(rows: readonly BatchRowView[]): HTMLElement {
  return h(
    "section",
    { class: "card hists" },
    histogram(
      "Durations",
      rows.map((r) => r.duration_ms),
      ms,
      "hist-duration",
    ),
    histogram(
      "Tokens (in + out)",
      rows.map((r) =>
        r.tokens_in === null && r.tokens_out === null ? null : (r.tokens_in ?? 0) + (r.tokens_out ?? 0),
      ),
      count,
      "hist-tokens",
    ),
  );
}

/** Renders the list of runs of a page with several tapes. */
export function renderRunList(root: HTMLElement, runs: RunIndexEntry[], title: string): void {
  const indexed = runs.map((r, i) => ({ ...r, n: i }));
  type Row = (typeof indexed)[number];
  const columns: Column<Row>[] = [
    {
      key: "label",
      title: "run",
      value: (r) => r.label,
      cell: (r) => runLink(r.label, r.problem ? undefined : r.n, r.problem),
    },
    {
      key: "reason",
      title: "reason",
      value: (r) => r.reason ?? "",
      cell: (r) => reasonBadge(r.reason ?? "unreadable"),
    },
    { key: "model", title: "model", value: (r) => r.model ?? "", cell: (r) => r.model ?? "—" },
    {
      key: "turns",
      title: "turns",
      value: (r) => r.turns ?? null,
      cell: (r) => count(r.turns),
      numeric: true,
    },
    {
      key: "tool_calls",
      title: "tool calls",
      value: (r) => r.tool_calls ?? null,
      cell: (r) => count(r.tool_calls),
      numeric: true,
    },
    {
      key: "tokens",
      title: "tokens in / out",
      value: (r) => (r.tokens ? r.tokens.input + r.tokens.output : null),
      cell: (r) => (r.tokens ? `${count(r.tokens.input)} / ${count(r.tokens.output)}` : "—"),
      numeric: true,
    },
    {
      key: "duration",
      title: "duration",
      value: (r) => r.duration_ms ?? null,
      cell: (r) => ms(r.duration_ms),
      numeric: true,
    },
  ];
  root.replaceChildren(
    h("section", { class: "card" }, h("h1", null, title), sortableTable(indexed, columns, "run-table")),
  );
}

function runLink(text: string, run: number | undefined, problem: string | undefined): HTMLElement {
  if (run === undefined)
    return h("span", { class: "muted", title: problem ?? "" }, text, problem ? ` (${problem})` : "");
  return h("a", { href: `#run=${run}`, class: "run-link" }, text);
}

function reasonBadge(reason: string): HTMLElement {
  return h("span", { class: `badge ${isSuccess(reason) ? "ok" : "error"}` }, reason);
}

function outputCell(r: BatchRowView): HTMLElement {
  return r.error !== undefined
    ? h("span", { class: "error-text" }, r.error)
    : h("span", { class: "muted" }, r.output ?? "");
}

function sortableTable<T>(rows: T[], columns: Column<T>[], id: string): HTMLElement {
  let sortKey = "";
  let ascending = true;
  const filter = h("input", {
    type: "search",
    placeholder: "filter rows",
    class: "table-filter",
    "aria-label": "filter rows",
  });
  const tbody = h("tbody");
  const heads = columns.map((c) =>
    h(
      "th",
      { "data-key": c.key, class: c.numeric ? "num" : "", on: { click: () => sortBy(c.key) } },
      c.title,
    ),
  );
  const draw = () => {
    const q = filter.value.trim().toLowerCase();
    const column = columns.find((c) => c.key === sortKey);
    let shown =
      q === ""
        ? rows
        : rows.filter((r) =>
            columns.some((c) =>
              String(c.value(r) ?? "")
                .toLowerCase()
                .includes(q),
            ),
          );
    if (column !== undefined) {
      shown = [...shown].sort((a, b) => compare(column.value(a), column.value(b)) * (ascending ? 1 : -1));
    }
    tbody.replaceChildren(
      ...shown.map((r) =>
        h("tr", null, ...columns.map((c) => h("td", { class: c.numeric ? "num" : "" }, c.cell(r)))),
      ),
    );
    for (const [i, th] of heads.entries()) {
      const key = columns[i]?.key;
      th.setAttribute("aria-sort", key === sortKey ? (ascending ? "ascending" : "descending") : "none");
    }
  };
  const sortBy = (key: string) => {
    ascending = key === sortKey ? !ascending : true;
    sortKey = key;
    draw();
  };
  filter.addEventListener("input", draw);
  draw();
  return h(
    "div",
    null,
    filter,
    h("table", { id, class: "data-table" }, h("thead", null, h("tr", null, ...heads)), tbody),
  );
}

/** Nulls last, numbers numerically, strings naturally. */
function compare(a: string | number | null, b: string | number | null): number {
  if (a === null || b === null) return a === b ? 0 : a === null ? 1 : -1;
  if (typeof a === "number" && typeof b === "number") return a - b;
  return String(a).localeCompare(String(b), undefined, { numeric: true });
}

/** A histogram of the non-null values in up to 20 equal-width bins. */
function histogram(
  title: string,
  values: Array<number | null>,
  format: (v: number) => string,
  id: string,
): HTMLElement {
  const data = values.filter((v): v is number => v !== null && Number.isFinite(v));
  if (data.length === 0)
    return h("div", { class: "hist", id }, h("h2", null, title), h("div", { class: "muted" }, "no data"));
  const min = data.reduce((a, b) => Math.min(a, b));
  const max = data.reduce((a, b) => Math.max(a, b));
  const bins = Math.min(20, Math.max(1, data.length));
  const width = (max - min) / bins || 1;
  const counts = new Array<number>(bins).fill(0);
  for (const v of data) {
    const bin = Math.min(bins - 1, Math.floor((v - min) / width));
    counts[bin] = (counts[bin] ?? 0) + 1;
  }
  const peak = Math.max(...counts);
  const bars = counts.map((n, i) => {
    const from = min + i * width;
    const bar = h("div", { class: "bar", title: `${format(from)} – ${format(from + width)}: ${n}` });
    bar.style.height = `${(n / peak) * 100}%`;
    return bar;
  });
  return h(
    "div",
    { class: "hist", id },
    h("h2", null, title),
    h("div", { class: "bars" }, ...bars),
    h("div", { class: "hist-axis" }, h("span", null, format(min)), h("span", null, format(max))),
  );
}
