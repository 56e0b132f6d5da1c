/**
 * One run's page: the header (model, provider, mode, reason, turns, tool calls, tokens, duration,
 * the error), the timeline, the answer, each turn with its attempts, reasoning (collapsed),
 * messages, tool calls, findings and notes, and the raw frames one click away.
 */
import type { FindingView, NoteView, OutputItemView, RunPayload, RunView, TurnView } from "../view-data.js";
import { type Child, details, fill, h, pre } from "./dom.js";
import { count, isSuccess, ms } from "./format.js";
import { renderMarkdown } from "./markdown.js";
import { RawFrames } from "./raw-frames.js";
import { timeline } from "./timeline.js";
import { type FrameLink, toolCallCard } from "./tool-call.js";

/** A run on the page, as its page holds it: by reference, never looked up by id (the answer's HTML is in the same document). */
export interface ShownRun {
  /** Whether its raw frames are open (a live redraw would close them). */
  rawOpen(): boolean;
}

/** Renders a run into `root`. `focusSeq` opens the raw frames at that frame. */
export function renderRun(
  root: HTMLElement,
  payload: RunPayload,
  label: string,
  focusSeq?: number,
): ShownRun {
  const run = payload.view;
  const raw = new RawFrames(payload.raw, run.start, Math.max(run.frames, payload.raw.length));
  const rawSection = h(
    "section",
    { id: "raw", class: "raw", hidden: true },
    h("h2", null, "Raw frames"),
    raw.el,
  );
  const toggle = h("button", { id: "raw-toggle", type: "button" }, `Raw frames (${count(run.frames)})`);
  const showRaw = (open: boolean) => {
    rawSection.hidden = !open;
    toggle.textContent = open ? "Hide raw frames" : `Raw frames (${count(run.frames)})`;
    if (open) raw.draw();
  };
  toggle.addEventListener("click", () => showRaw(rawSection.hidden));
  const link: FrameLink = (seq, text) =>
    h(
      "a",
      {
        href: "#",
        class: "frame-link",
        title: `show frame #${seq} in the raw frames`,
        on: {
          click: (e) => {
            e.preventDefault();
            showRaw(true);
            raw.reveal(seq);
            rawSection.scrollIntoView({ block: "start" });
          },
        },
      },
      text ?? `#${seq}`,
    );
  const turnEls = new Map<number, HTMLElement>();
  const turns = run.turn_views.map((t) => {
    const el = turnSection(t, link, run.answer);
    turnEls.set(t.turn, el);
    return el;
  });
  fill(
    root,
    header(run, label, toggle),
    h(
      "section",
      { class: "card" },
      h("h2", null, "Timeline"),
      timeline(run, (n) => turnEls.get(n)?.scrollIntoView({ block: "start", behavior: "smooth" })),
    ),
    answerSection(run),
    h("section", { class: "turns" }, h("h2", null, `Turns (${run.turn_views.length})`), ...turns),
    run.notes.length > 0
      ? h("section", { class: "card" }, h("h2", null, "Run events"), notesList(run.notes, link))
      : null,
    rawSection,
  );
  if (focusSeq !== undefined) {
    showRaw(true);
    raw.reveal(focusSeq);
  }
  return { rawOpen: () => !rawSection.hidden };
}

function header(run: RunView, label: string, toggle: HTMLElement): HTMLElement {
  const fact = (name: string, value: Child | Child[]) =>
    h("div", { class: "fact" }, h("dt", null, name), h("dd", null, value));
  const tokens = [
    `${count(run.tokens.input)} in / ${count(run.tokens.output)} out`,
    run.tokens.cached ? ` · ${count(run.tokens.cached)} cached` : "",
    run.tokens.reasoning ? ` · ${count(run.tokens.reasoning)} reasoning` : "",
  ].join("");
  return h(
    "section",
    { class: "card run-header" },
    h("div", { class: "run-title" }, h("h1", null, label), toggle),
    h(
      "dl",
      { class: "facts" },
      fact(
        "reason",
        h("span", { id: "run-reason", class: `badge ${isSuccess(run.reason) ? "ok" : "error"}` }, run.reason),
      ),
      fact("model", run.model ?? "(server default)"),
      fact("provider", run.provider ?? "—"),
      fact("mode", [run.mode ?? "—", run.mode_changes.length > 0 ? ` (${run.mode_changes.join(", ")})` : ""]),
      fact("turns", count(run.turns)),
      fact("tool calls", count(run.tool_calls)),
      fact("tokens", tokens),
      fact("duration", ms(run.duration_ms)),
      fact("frames", [
        count(run.frames),
        run.findings > 0
          ? h("span", { class: "badge warn" }, `${run.findings} finding${run.findings === 1 ? "" : "s"}`)
          : null,
      ]),
      fact("run id", h("code", null, run.run_id)),
    ),
    run.error !== undefined
      ? h(
          "div",
          { class: "note error", id: "run-error" },
          h("strong", null, run.error.code),
          `: ${run.error.message}`,
        )
      : null,
    run.partial
      ? h(
          "div",
          { class: "note warn" },
          "This tape has no run_ended frame (or ends mid-line): the run was cut off, shown up to where the record stops.",
        )
      : null,
    run.omitted !== undefined
      ? h(
          "div",
          { class: "note warn", id: "run-omitted" },
          `This run is too large for one page: ${run.omitted.join("; ")}. Long fields are cut (their full size is shown); the tape has everything.`,
        )
      : null,
    details("prompt", pre(run.input, "prompt"), { class: "prompt", open: run.input.length < 600 }),
    run.instructions !== undefined ? details("instructions", pre(run.instructions, "prompt")) : null,
    h(
      "div",
      { class: "muted small" },
      `tools: ${run.tools.join(", ") || "none"}`,
      run.mcp_servers ? ` · MCP servers: ${run.mcp_servers.join(", ")}` : "",
      run.eddy_version ? ` · recorded by eddy ${run.eddy_version}` : "",
    ),
  );
}

/** The run's answer (and structured result). */
export function answerSection(run: RunView): HTMLElement {
  return h(
    "section",
    { class: "card" },
    h("h2", null, "Answer"),
    run.answer === ""
      ? h("div", { class: "muted", id: "answer" }, "(no answer text)")
      : renderMarkdown(h("div", { id: "answer" }), run.answer),
    run.result !== undefined ? details("result (structured)", pre(run.result, "json"), { open: true }) : null,
  );
}

/** One turn: its attempts, findings, notes and output items. */
export function turnSection(turn: TurnView, link: FrameLink, answer: string, nested = false): HTMLElement {
  const usage = turn.usage ? `${count(turn.usage.input)} in / ${count(turn.usage.output)} out` : "no usage";
  const first = turn.attempts[0];
  const duration = first !== undefined && turn.end !== undefined ? ms(turn.end - first.start) : "";
  return h(
    "section",
    nested ? { class: "card turn nested" } : { class: "card turn", id: `turn-${turn.turn}` },
    h(
      "h3",
      null,
      `Turn ${turn.turn}`,
      h(
        "span",
        { class: "muted" },
        ` · ${turn.model ?? ""} · ${turn.status ?? "no turn_ended"} · ${usage} · ${duration} · `,
      ),
      link(turn.seq, "frames"),
    ),
    attemptsView(turn),
    turn.findings.length > 0 ? findingsView(turn.findings, link) : null,
    turn.notes.length > 0 ? notesList(turn.notes, link) : null,
    ...turn.items.map((item) => itemView(item, link, answer)),
  );
}

function attemptsView(turn: TurnView): HTMLElement | null {
  const interesting = turn.attempts.length > 1 || turn.attempts.some((a) => a.failed !== undefined);
  const lines = turn.attempts.map((a) => {
    const parts = [
      `attempt ${a.attempt}`,
      a.model ? `model ${a.model}` : "",
      a.http_status !== undefined ? `HTTP ${a.http_status}` : "",
      a.request_id ? `request ${a.request_id}` : "",
      a.headers !== undefined ? `first byte ${ms(a.headers - a.start)}` : "",
      a.first_token !== undefined ? `first token ${ms(a.first_token - a.start)}` : "",
    ].filter((s) => s !== "");
    return h(
      "li",
      { class: a.failed ? "failed" : "" },
      parts.join(" · "),
      a.failed
        ? h("span", { class: "attempt-failure" }, ` — failed: ${a.failed.code}: ${a.failed.message}`)
        : null,
      a.retry
        ? h(
            "span",
            { class: `badge ${a.retry.fallback ? "fallback" : "retry"}` },
            a.retry.fallback ? `fallback → ${a.retry.fallback}` : `retry in ${ms(a.retry.delay_ms)}`,
          )
        : null,
    );
  });
  if (!interesting) return h("div", { class: "muted small attempts" }, lines[0]?.textContent ?? "");
  return h("ol", { class: "attempts" }, ...lines);
}

function findingsView(findings: FindingView[], link: FrameLink): HTMLElement {
  return details(
    h(
      "span",
      { class: "badge warn" },
      `${findings.length} validation finding${findings.length === 1 ? "" : "s"}`,
    ),
    h(
      "ul",
      { class: "findings" },
      ...findings.map((f) =>
        h("li", null, link(f.seq), " ", h("code", null, f.event), ": ", f.messages.join("; ")),
      ),
    ),
    { class: "findings-block" },
  );
}

function notesList(notes: NoteView[], link: FrameLink): HTMLElement {
  return h(
    "ul",
    { class: "notes" },
    ...notes.map((n) =>
      h(
        "li",
        { class: n.known ? "" : "unknown" },
        link(n.seq),
        " ",
        h("strong", null, n.title),
        n.known ? "" : h("span", { class: "muted" }, " (frame type this viewer does not know)"),
        " ",
        h("span", { class: "note-fields" }, n.fields.map(([k, v]) => `${k}: ${v}`).join(" · ")),
      ),
    ),
  );
}

function itemView(item: OutputItemView, link: FrameLink, answer: string): HTMLElement {
  switch (item.kind) {
    case "message":
      // The final answer is already shown in full above the turns.
      if (item.text !== "" && item.text === answer && !item.refusal) {
        return details(
          ["message", item.phase ? ` · ${item.phase}` : "", " · the answer shown above"],
          renderMarkdown(h("div"), item.text),
          { class: "message answer-copy" },
        );
      }
      return h(
        "div",
        { class: "message" },
        h("div", { class: "item-label" }, "message", item.phase ? ` · ${item.phase}` : ""),
        item.text !== "" ? renderMarkdown(h("div"), item.text) : null,
        item.refusal ? h("div", { class: "note error" }, `refusal: ${item.refusal}`) : null,
      );
    case "reasoning":
      return details(
        [
          "reasoning",
          item.summary.length > 0 ? ` · ${item.summary.length} summary part(s)` : " · no summary",
          item.encrypted ? " · encrypted" : "",
        ],
        [
          ...item.summary.map((s) => renderMarkdown(h("div", { class: "reasoning-summary" }), s)),
          ...item.content.map((c) => pre(c, "reasoning-text")),
        ],
        { class: "reasoning" },
      );
    case "tool":
      return toolCallCard(item.call, link);
    case "unrun_call":
      return h(
        "div",
        { class: "note warn" },
        `function call ${item.name} (${item.status}) was not run: `,
        h("code", null, item.arguments.slice(0, 200)),
      );
    case "other":
      return details(["item ", h("code", null, item.type)], pre(item.json, "json"), { class: "other-item" });
  }
}
