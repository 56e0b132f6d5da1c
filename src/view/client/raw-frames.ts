/**
 * The raw frames, exactly as the tape holds them, in a virtualized list: only the rows in view
 * exist in the DOM (rows have a fixed height, so the visible range is arithmetic), so a 100k-frame
 * tape scrolls like a 100-frame one. Search is a case-insensitive substring match over the raw
 * lines; each line is parsed only when its row is drawn or selected.
 */
import { h, pre } from "./dom.js";

/** Row height in px (matches `.raw-row` in page.css). */
const ROW = 22;
/** Rows drawn beyond the viewport on each side. */
const OVERSCAN = 10;

/** The raw-frame panel of one run. */
export class RawFrames {
  readonly el: HTMLElement;
  private readonly viewport: HTMLElement;
  private readonly spacer: HTMLElement;
  private readonly rowsEl: HTMLElement;
  private readonly detail: HTMLElement;
  private readonly countEl: HTMLElement;
  private readonly search: HTMLInputElement;
  private lower: string[] | undefined;
  /** Indices of the lines shown (all, or the matches). */
  private shown: number[] | undefined;
  private selected = -1;
  private timer: number | undefined;

  /**
   * @param lines the frame lines the page holds (for a long tape, its first and last frames and
   *   one line standing for those in between: src/view/raw-lines.ts)
   * @param total the frames in the tape
   */
  constructor(
    private readonly lines: string[],
    private readonly start: number,
    private readonly total: number = lines.length,
  ) {
    this.search = h("input", {
      type: "search",
      id: "raw-search",
      placeholder: `search ${lines.length.toLocaleString("en-US")} frames (type, text, ids…)`,
      "aria-label": "search the raw frames",
      on: { input: () => this.debounce() },
    });
    this.countEl = h("span", { id: "raw-count", class: "muted" });
    this.spacer = h("div", { class: "raw-spacer" });
    this.rowsEl = h("div", { class: "raw-rows" });
    this.viewport = h(
      "div",
      { class: "raw-viewport", tabindex: 0, on: { scroll: () => this.draw() } },
      this.spacer,
      this.rowsEl,
    );
    this.detail = h(
      "div",
      { class: "raw-detail" },
      h("div", { class: "muted" }, "Select a frame to see it in full."),
    );
    this.el = h(
      "div",
      { class: "raw-panel" },
      h("div", { class: "raw-toolbar" }, this.search, this.countEl),
      h("div", { class: "raw-split" }, this.viewport, this.detail),
    );
    this.filter("");
  }

  /** Shows and selects the frame with this seq (clearing the search). */
  reveal(seq: number): void {
    if (this.search.value !== "") {
      this.search.value = "";
      this.filter("");
    }
    const index = this.indexOfSeq(seq);
    if (index < 0) return;
    this.select(index);
    this.viewport.scrollTop = Math.max(0, index * ROW - this.viewport.clientHeight / 3);
    this.draw();
  }

  /** Redraws the visible rows (call after the panel becomes visible). */
  draw(): void {
    const shown = this.shown ?? [];
    const top = this.viewport.scrollTop;
    const height = this.viewport.clientHeight || 600;
    const first = Math.max(0, Math.floor(top / ROW) - OVERSCAN);
    const last = Math.min(shown.length, Math.ceil((top + height) / ROW) + OVERSCAN);
    const rows: HTMLElement[] = [];
    for (let i = first; i < last; i++) {
      const index = shown[i] as number;
      const row = h(
        "div",
        {
          class: `raw-row${index === this.selected ? " selected" : ""}`,
          "data-index": index,
          on: { click: () => this.select(index) },
        },
        ...this.rowText(index),
      );
      row.style.top = `${i * ROW}px`;
      rows.push(row);
    }
    this.rowsEl.replaceChildren(...rows);
  }

  private debounce(): void {
    window.clearTimeout(this.timer);
    this.timer = window.setTimeout(() => this.filter(this.search.value), 120);
  }

  private filter(query: string): void {
    const q = query.trim().toLowerCase();
    if (q === "") this.shown = this.lines.map((_, i) => i);
    else {
      this.lower ??= this.lines.map((l) => l.toLowerCase());
      const matches: number[] = [];
      this.lower.forEach((l, i) => {
        if (l.includes(q)) matches.push(i);
      });
      this.shown = matches;
    }
    const here = this.lines.length.toLocaleString("en-US");
    const all = this.total.toLocaleString("en-US");
    const partial = this.total > this.lines.length;
    this.countEl.textContent =
      q === ""
        ? partial
          ? `${all} frames, ${here} lines on this page`
          : `${here} frames`
        : `${this.shown.length.toLocaleString("en-US")} of ${here} ${partial ? "lines on this page" : "frames"} match`;
    this.spacer.style.height = `${this.shown.length * ROW}px`;
    this.viewport.scrollTop = 0;
    this.draw();
  }

  private select(index: number): void {
    this.selected = index;
    const line = this.lines[index] ?? "";
    let text = line;
    try {
      text = JSON.stringify(JSON.parse(line), null, 2);
    } catch {}
    this.detail.replaceChildren(
      h("div", { class: "raw-detail-title" }, this.rowText(index)),
      pre(text, "json"),
    );
    this.draw();
  }

  private rowText(index: number): Array<HTMLElement> {
    const frame = parse(this.lines[index] ?? "");
    const seq = typeof frame.seq === "number" ? frame.seq : index;
    const ts = typeof frame.ts === "number" ? `+${frame.ts - this.start} ms` : "";
    const type = typeof frame.type === "string" ? frame.type : "?";
    return [
      h("span", { class: "raw-seq" }, `#${seq}`),
      h("span", { class: "raw-ts" }, ts),
      h("span", { class: `raw-type t-${type.replace(/[^a-z_]/g, "")}` }, type),
      h("span", { class: "raw-summary" }, frameSummary(frame)),
    ];
  }

  private indexOfSeq(seq: number): number {
    // Frames are written in seq order from 0, so the line at `seq` is the frame unless the tape is odd.
    if (parse(this.lines[seq] ?? "").seq === seq) return seq;
    return this.lines.findIndex((l) => parse(l).seq === seq);
  }
}

function parse(line: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(line);
    return v !== null && typeof v === "object" ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

const ENVELOPE = new Set(["run_id", "seq", "ts", "type"]);

/** One line about a frame: the event type for provider events, the delta for text, else its scalar fields. */
export function frameSummary(f: Record<string, unknown>): string {
  const data = f.data as Record<string, unknown> | undefined;
  if (f.type === "provider_event") {
    const type = data && typeof data.type === "string" ? data.type : String(f.event_name ?? f.status ?? "");
    const delta = data && typeof data.delta === "string" ? ` ${JSON.stringify(data.delta)}` : "";
    const errors = Array.isArray(f.errors) ? ` ⚠ ${f.errors.length} finding(s)` : "";
    return `${type}${delta}${errors}`.slice(0, 300);
  }
  if (f.type === "output_text_delta") return JSON.stringify(f.delta).slice(0, 300);
  const parts: string[] = [];
  for (const [k, v] of Object.entries(f)) {
    if (ENVELOPE.has(k)) continue;
    if (v === null || typeof v !== "object")
      parts.push(`${k}=${typeof v === "string" ? JSON.stringify(v.slice(0, 80)) : String(v)}`);
    if (parts.join(" ").length > 300) break;
  }
  return parts.join(" ").slice(0, 300);
}
