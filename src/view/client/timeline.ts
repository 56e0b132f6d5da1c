/**
 * The run's timeline, to scale: one row per model request (each attempt: waiting for the first
 * byte, then for the first token, then streaming; a failed attempt in red and its backoff hatched),
 * one row per tool execution, and markers for retries, fallbacks, mode changes and other events.
 */
import type { AttemptView, RunView } from "../view-data.js";
import { h } from "./dom.js";
import { ms } from "./format.js";

/** Renders the timeline. `onTurn` is called when a turn's row is clicked. */
export function timeline(run: RunView, onTurn: (turn: number) => void): HTMLElement {
  const span = Math.max(run.end - run.start, 1);
  const x = (ts: number) => `${(((ts - run.start) / span) * 100).toFixed(3)}%`;
  const w = (a: number, b: number) => `${Math.max(((b - a) / span) * 100, 0).toFixed(3)}%`;
  const seg = (cls: string, a: number, b: number, title: string) => {
    const el = h("div", { class: `seg ${cls}`, title });
    el.style.left = x(a);
    el.style.width = w(a, b);
    return el;
  };
  const rows: HTMLElement[] = [];
  for (const turn of run.turn_views) {
    const track = h("div", { class: "track" });
    for (const a of turn.attempts) {
      for (const s of attemptSegments(a, turn.end ?? run.end))
        track.append(seg(s.cls, s.from, s.to, s.title));
      if (a.retry !== undefined) {
        const from = a.end ?? a.start;
        track.append(
          seg(
            "backoff",
            from,
            from + a.retry.delay_ms,
            `backoff ${ms(a.retry.delay_ms)} (${a.retry.reason})`,
          ),
        );
      }
    }
    rows.push(
      h(
        "div",
        { class: "tl-row turn-row", title: `turn ${turn.turn}`, on: { click: () => onTurn(turn.turn) } },
        h("span", { class: "tl-label" }, `turn ${turn.turn}`),
        track,
      ),
    );
  }
  for (const t of run.tool_spans) {
    const track = h("div", { class: "track" });
    const end = t.end ?? run.end;
    track.append(
      seg(
        t.ok === false ? "tool failed" : "tool",
        t.start,
        end,
        `${t.name}: ${ms(end - t.start)}${t.ok === false ? " (error)" : ""}`,
      ),
    );
    rows.push(h("div", { class: "tl-row tool-row" }, h("span", { class: "tl-label" }, t.name), track));
  }
  const markers = h("div", { class: "track markers" });
  for (const m of run.markers) {
    const el = h("div", { class: `marker ${m.kind}`, title: m.label });
    el.style.left = x(m.ts);
    markers.append(el);
  }
  if (run.markers.length > 0)
    rows.push(h("div", { class: "tl-row" }, h("span", { class: "tl-label" }, "events"), markers));
  return h(
    "div",
    { class: "timeline" },
    h("div", { class: "tl-row axis" }, h("span", { class: "tl-label" }), axis(span)),
    ...rows,
    legend(),
  );
}

interface Segment {
  cls: string;
  from: number;
  to: number;
  title: string;
}

/** request → first byte (headers) → first token → end; a failed attempt is one red segment. */
export function attemptSegments(a: AttemptView, turnEnd: number): Segment[] {
  const end = a.end ?? turnEnd;
  const label = `attempt ${a.attempt}`;
  if (a.failed !== undefined) {
    return [
      {
        cls: "failed",
        from: a.start,
        to: end,
        title: `${label} failed after ${ms(end - a.start)}: ${a.failed.code} — ${a.failed.message}`,
      },
    ];
  }
  const out: Segment[] = [];
  const byte = a.headers ?? a.first_event ?? end;
  const token = a.first_token ?? end;
  out.push({
    cls: "wait",
    from: a.start,
    to: byte,
    title: `${label}: request → first byte ${ms(byte - a.start)}`,
  });
  if (token > byte)
    out.push({
      cls: "ttft",
      from: byte,
      to: token,
      title: `${label}: first byte → first token ${ms(token - byte)}`,
    });
  if (end > token)
    out.push({ cls: "stream", from: token, to: end, title: `${label}: streaming ${ms(end - token)}` });
  return out;
}

function axis(span: number): HTMLElement {
  const track = h("div", { class: "track axis-track" });
  const ticks = 5;
  for (let i = 0; i <= ticks; i++) {
    const el = h("span", { class: "tick" }, ms((span * i) / ticks));
    el.style.left = `${(i / ticks) * 100}%`;
    track.append(el);
  }
  return track;
}

function legend(): HTMLElement {
  const item = (cls: string, text: string) =>
    h("span", { class: "legend-item" }, h("span", { class: `swatch ${cls}` }), text);
  return h(
    "div",
    { class: "legend" },
    item("wait", "request → first byte"),
    item("ttft", "→ first token"),
    item("stream", "streaming"),
    item("tool", "tool"),
    item("failed", "failed attempt / tool error"),
    item("backoff", "retry backoff"),
    item("marker-swatch", "retry · fallback · mode change · event"),
  );
}
