/** One tool call: a one-line summary (name, arguments, outcome, output preview) that opens to the full detail. */
import { isJsonObject } from "../../util/json.js";
import type { NoteView, SubRunView, ToolCallView } from "../view-data.js";
import { fileDiff, patchView } from "./diff-view.js";
import { details, h, pre } from "./dom.js";
import { count, firstLine, isSuccess, ms } from "./format.js";
import { renderMarkdown } from "./markdown.js";
import { turnSection } from "./run-page.js";

/** Renders a link to a raw frame (the run page supplies it). */
export type FrameLink = (seq: number, label?: string) => HTMLElement;

/** The card of one tool call. */
export function toolCallCard(call: ToolCallView, link: FrameLink): HTMLElement {
  const status =
    call.ok === undefined
      ? h("span", { class: "badge pending" }, "no output")
      : call.ok
        ? h("span", { class: "badge ok" }, "ok")
        : h("span", { class: "badge error" }, "error");
  const out = outputParts(call);
  const preview = out.error ?? out.stdout ?? call.output ?? "";
  const summary = [
    status,
    h("code", { class: "tool-name" }, call.name),
    call.subrun ? h("span", { class: "badge subrun" }, `sub-run: ${call.subrun.agent}`) : null,
    h("span", { class: "tool-args" }, firstLine(argsLine(call), 100)),
    call.duration_ms !== undefined ? h("span", { class: "muted" }, ms(call.duration_ms)) : null,
    call.truncated ? h("span", { class: "badge warn" }, "truncated") : null,
    preview !== "" ? h("span", { class: "tool-preview" }, `→ ${oneLine(preview, 140)}`) : null,
  ];
  const body = h(
    "div",
    { class: "tool-body" },
    h("h4", null, "Arguments"),
    argumentsView(call),
    h("h4", null, "Output ", status.cloneNode(true)),
    outputView(call, out),
    call.approval ? approvalView(call.approval) : null,
    call.subrun ? subrunView(call.subrun, link, call.ended_seq ?? call.seq) : null,
    h(
      "div",
      { class: "frame-links" },
      "frames: ",
      link(call.seq, `#${call.seq} tool_call`),
      call.ended_seq !== undefined ? [" ", link(call.ended_seq, `#${call.ended_seq} tool_ended`)] : null,
    ),
  );
  return details(summary, body, {
    class: `tool-call ${call.ok === false ? "failed" : ""}`,
    "data-call-id": call.call_id,
  });
}

/**
 * A sub-agent's run under the call that ran it: its agent, outcome, answer and turns (with their
 * own tool calls, and sub-runs of their own). Its frames live inside the call's `tool_ended`
 * frame, so its frame links open that frame.
 */
function subrunView(subrun: SubRunView, link: FrameLink, endedSeq: number): HTMLElement {
  const run = subrun.view;
  const toEnded: FrameLink = (_seq, label) => link(endedSeq, label ?? "in tool_ended");
  return h(
    "section",
    { class: "subrun", "data-agent": subrun.agent },
    h(
      "h4",
      null,
      "Sub-run of agent ",
      h("code", { class: "subrun-agent" }, subrun.agent),
      " ",
      h("span", { class: `badge subrun-reason ${isSuccess(run.reason) ? "ok" : "error"}` }, run.reason),
      h(
        "span",
        { class: "muted" },
        ` · ${run.model ?? ""} · ${count(run.turns)} turn(s) · ${count(run.tool_calls)} tool call(s) · ${ms(run.duration_ms)}`,
      ),
    ),
    run.error ? h("div", { class: "note error" }, `${run.error.code}: ${run.error.message}`) : null,
    run.answer === ""
      ? h("div", { class: "muted subrun-answer" }, "(no answer text)")
      : renderMarkdown(h("div", { class: "subrun-answer" }), run.answer),
    details(
      `${run.turn_views.length} turn(s) of ${subrun.agent}`,
      run.turn_views.map((t) => turnSection(t, toEnded, run.answer, true)),
      { class: "subrun-turns" },
    ),
  );
}

/** The start of a text on one line (whitespace runs collapsed). */
function oneLine(text: string, max: number): string {
  const line = text
    .slice(0, max * 2)
    .replace(/\s+/g, " ")
    .trim();
  return line.length > max ? `${line.slice(0, max)}…` : line;
}

function argsLine(call: ToolCallView): string {
  if (isJsonObject(call.args)) {
    return Object.entries(call.args as Record<string, unknown>)
      .map(([k, v]) => `${k}=${typeof v === "string" ? JSON.stringify(firstLine(v, 60)) : JSON.stringify(v)}`)
      .join(" ");
  }
  return call.arguments;
}

function argumentsView(call: ToolCallView): HTMLElement {
  const json = call.args !== undefined ? JSON.stringify(call.args, null, 2) : call.arguments;
  if (call.file_diff !== undefined) {
    return h("div", null, fileDiff(call.file_diff), details("arguments as sent", pre(json, "json")));
  }
  if (call.patch !== undefined) {
    return h("div", null, patchView(call.patch), details("arguments as sent", pre(json, "json")));
  }
  return pre(json === "" ? "(empty)" : json, "json");
}

interface OutputParts {
  stdout?: string;
  stderr?: string;
  error?: string;
  rest?: Record<string, unknown>;
}

/** eddy's built-in tools answer `{tool, ok, exit_code, stdout, stderr, artifacts?, error?}` (src/tools/output.ts). */
function outputParts(call: ToolCallView): OutputParts {
  const o = call.output_json;
  if (!isJsonObject(o)) return {};
  const { stdout, stderr, error, tool: _tool, ok: _ok, ...rest } = o as Record<string, unknown>;
  const parts: OutputParts = { rest };
  if (typeof stdout === "string") parts.stdout = stdout;
  if (typeof stderr === "string" && stderr !== "") parts.stderr = stderr;
  if (error !== null && typeof error === "object") {
    const e = error as { code?: unknown; message?: unknown };
    parts.error = `${String(e.code ?? "error")}: ${String(e.message ?? "")}`;
  }
  return parts;
}

function outputView(call: ToolCallView, out: OutputParts): HTMLElement {
  if (call.output === undefined)
    return h("div", { class: "muted" }, "The tape has no tool_ended for this call.");
  const el = h("div", { class: "tool-output" });
  if (call.truncated) {
    el.append(
      h(
        "div",
        { class: "note warn" },
        "The output was capped: the model saw its head and tail around a note.",
        call.full_output_chars !== undefined
          ? ` The uncapped output had ${call.full_output_chars.toLocaleString("en-US")} characters (in the raw tool_ended frame).`
          : "",
      ),
    );
  }
  if (call.output_cut !== undefined) {
    el.append(
      h(
        "div",
        { class: "note warn" },
        `The output is cut for this page: it has ${call.output_cut.toLocaleString("en-US")} characters (in the raw tool_ended frame).`,
      ),
    );
  }
  if (out.rest === undefined) {
    el.append(pre(call.output === "" ? "(empty)" : call.output, "output"));
    return el;
  }
  if (out.error !== undefined) el.append(h("div", { class: "note error" }, out.error));
  if (out.stdout !== undefined)
    el.append(h("div", { class: "stream-label" }, "stdout"), pre(out.stdout || "(empty)", "output"));
  if (out.stderr !== undefined)
    el.append(h("div", { class: "stream-label" }, "stderr"), pre(out.stderr, "output stderr"));
  if (Object.keys(out.rest).length > 0)
    el.append(details("other fields", pre(JSON.stringify(out.rest, null, 2), "json")));
  el.append(details("exact output string sent to the model", pre(call.output, "output")));
  return el;
}

function approvalView(notes: NoteView[]): HTMLElement {
  return h(
    "div",
    { class: "approval" },
    h("h4", null, "Approval"),
    ...notes.map((n) =>
      h(
        "div",
        { class: "note" },
        h("strong", null, n.title),
        " ",
        n.fields.map(([k, v]) => `${k}=${v}`).join(" · "),
      ),
    ),
  );
}
