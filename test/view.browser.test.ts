/**
 * `eddy view` pages in a real headless Chromium (test/support/browser.ts): a recorded demo run, a
 * run exercising every section (and trying to inject script through the model's answer and a tool
 * name), a batch folder, and a 100k-frame tape. Pages are opened from file://, and nothing else may
 * be requested. `EDDY_UPDATE_SCREENSHOTS=1` also writes the README's screenshot to docs/images/.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentTool } from "../src/loop/agent-tool.js";
import { launchChromium, openPage } from "./support/browser.js";
import { ROOT, runCli } from "./support/cli.js";
import { composedRun } from "./support/compose.js";
import { recordMockRun } from "./support/record.js";
import {
  bigTape,
  HOSTILE_MARKDOWN,
  HOSTILE_TOOL,
  hostileToolFrames,
  insertFrames,
  NOTES_BEFORE,
  OVERLAY_MARKDOWN,
  richScenario,
} from "./support/view-fixtures.js";

let browser: Browser;
let dir: string;

beforeAll(async () => {
  browser = await launchChromium();
  dir = mkdtempSync(join(tmpdir(), "eddy-view-browser-"));
});

afterAll(async () => {
  await browser?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** `eddy view ARGS --out FILE`, checked, then the page opened and settled on `view`. */
async function viewPage(args: string[], name: string, view: "run" | "batch" | "list" = "run") {
  const html = join(dir, `${name}.html`);
  const cli = await runCli(["view", ...args, "--out", html], { timeoutMs: 60_000 });
  expect(cli.stderr).toBe("");
  expect(cli.code).toBe(0);
  expect(cli.stdout.trim()).toBe(html);
  const url = pathToFileURL(html).href;
  const opened = await openPage(browser, url);
  await opened.page.waitForSelector(`body[data-view="${view}"]`, { timeout: 30_000 });
  return { ...opened, url, html };
}

/** Only the page itself was loaded, and no script failed. */
function expectOffline(opened: { requests: string[]; errors: string[]; url: string }) {
  expect(opened.requests.filter((r) => r !== opened.url)).toEqual([]);
  expect(opened.errors).toEqual([]);
}

async function screenshot(page: Page, name: string, alsoTo?: string): Promise<void> {
  const path = join(dir, `${name}.png`);
  await page.evaluate("window.scrollTo(0, 0)"); // the sticky bar stays at the top of the picture
  await page.screenshot({
    path,
    fullPage: true,
    ...(alsoTo ? { clip: { x: 0, y: 0, width: 1280, height: 1500 } } : {}),
  });
  const png = readFileSync(path);
  expect(png.subarray(1, 4).toString("latin1")).toBe("PNG");
  expect(statSync(path).size).toBeGreaterThan(10_000);
  if (alsoTo !== undefined && process.env.EDDY_UPDATE_SCREENSHOTS === "1") {
    mkdirSync(join(ROOT, "docs", "images"), { recursive: true });
    writeFileSync(join(ROOT, "docs", "images", alsoTo), png);
  }
}

const text = (page: Page, selector: string) => page.locator(selector).first().innerText();
/** The text as written (innerText follows CSS text-transform). */
const source = async (page: Page, selector: string) =>
  (await page.locator(selector).first().textContent()) ?? "";

describe("eddy view in Chromium", () => {
  it("shows a recorded demo run: the answer, the tool call and its output, searchable raw frames", async () => {
    const tape = join(dir, "demo.tape");
    const run = await runCli(["run", "--record", tape, "What is in package.json?"]);
    expect(run.code).toBe(0);
    const opened = await viewPage([tape], "demo");
    const { page } = opened;

    expect(await text(page, "#run-reason")).toBe("completed");
    expect(await text(page, "#answer")).toContain("Here is the start of package.json");
    const call = page.locator(".tool-call").first();
    expect(await call.isVisible()).toBe(true);
    expect(await call.locator(".tool-name").innerText()).toBe("read_file");
    expect(await call.locator(":scope > summary").innerText()).toContain('path="package.json"');
    expect(await call.locator(":scope > summary .badge").innerText()).toBe("ok");
    expect(await call.locator(":scope > summary").innerText()).toContain('"name": "eddy"'); // the output's preview
    expect(await call.locator(".tool-output").isVisible()).toBe(false);

    await call.locator(":scope > summary").click();
    expect(await call.locator(".tool-output").isVisible()).toBe(true);
    expect(await call.locator(".tool-output pre.output").first().innerText()).toContain('"version": "0.1.0"');
    expect(await call.locator("pre.json").first().innerText()).toContain('"path": "package.json"');

    expect(await page.locator("#raw").isVisible()).toBe(false);
    await page.click("#raw-toggle");
    expect(await page.locator("#raw").isVisible()).toBe(true);
    await page.fill("#raw-search", "tool_ended");
    await page.locator("#raw-count", { hasText: /^1 of/ }).waitFor();
    expect(await page.locator(".raw-row").count()).toBe(1);
    await page.locator(".raw-row").click();
    expect(await text(page, ".raw-detail pre")).toContain('"type": "tool_ended"');

    // "frames" on a turn jumps to that turn's first frame in the raw list.
    await page.locator("#turn-1 .frame-link").first().click();
    expect(await text(page, ".raw-row.selected .raw-type")).toBe("request_started");
    await screenshot(page, "demo");
    expectOffline(opened);
  });

  it("shows every section of a run and never runs what the model or a tool wrote", async () => {
    const workspace = mkdtempSync(join(dir, "ws-"));
    writeFileSync(join(workspace, "notes.md"), NOTES_BEFORE);
    const tape = join(dir, "rich.tape");
    const { result } = await recordMockRun({
      scenario: richScenario(HOSTILE_MARKDOWN),
      prompt: "Add **buy stamps** to notes.md",
      workspace,
      tape,
      allowWrite: true,
    });
    expect(result.reason).toBe("completed");
    insertFrames(tape, "run_started", [
      { type: "context_compiled", turn: 0, bundle_id: "ctx_1", strategy: "summary", item_count: 4 },
      { type: "x_future_frame", detail: "from a newer eddy", level: 3 },
    ]);
    insertFrames(tape, "tool_ended", hostileToolFrames(1));
    const opened = await viewPage([tape], "rich");
    const { page } = opened;

    // Injection: nothing ran, nothing dangerous is in the DOM, remote images were not loaded.
    // (A string, not a function: this file is type-checked without the DOM library. waitForFunction
    // is not used at all: the page's CSP forbids the eval it relies on.)
    const dom = await page.evaluate(`({
      xss: window.__xss,
      handlers: [...document.querySelectorAll("*")].filter((e) => [...e.attributes].some((a) => a.name.startsWith("on"))).length,
      jsLinks: document.querySelectorAll('a[href^="javascript" i]').length,
      inAnswer: document.querySelectorAll("#answer script, #answer img, #answer iframe, #answer style, #answer svg, #answer [style]").length,
      blocked: document.querySelectorAll("#answer .img-blocked").length,
    })`);
    expect(dom).toEqual({ xss: undefined, handlers: 0, jsLinks: 0, inAnswer: 0, blocked: 2 });
    expect(await text(page, "#answer")).toContain("The notes are updated.");
    expect(await page.locator("#answer strong").first().innerText()).toBe("updated");
    expect(await page.locator("#answer table td").count()).toBe(2);
    const evil = page.locator('.tool-call[data-call-id="call_evil"]');
    expect(await evil.locator(".tool-name").innerText()).toBe(HOSTILE_TOOL);
    await evil.locator(":scope > summary").click();
    expect(await evil.locator(".tool-output").innerText()).toContain(
      "</script><script>window.__xss = 9</script>",
    );

    // The timeline marks the 429 and its backoff; the failing tools are red.
    expect(await page.locator(".timeline .seg.failed").count()).toBe(3);
    expect(await page.locator(".timeline .seg.backoff").count()).toBe(1);
    expect(await page.locator(".timeline .marker.retry").count()).toBe(1);
    expect(await text(page, "#turn-0 .attempts")).toContain("HTTP 429");

    // Reasoning is collapsed until opened.
    const reasoning = page.locator("details.reasoning").first();
    expect(await reasoning.getAttribute("open")).toBeNull();
    await reasoning.locator(":scope > summary").click();
    expect(await reasoning.innerText()).toContain("so I read it first");

    // write_file as a diff against the content the run read; apply_patch as its own diff.
    const write = page.locator('.tool-call[data-call-id="call_write"]');
    await write.locator(":scope > summary").click();
    expect(await write.locator(".diff-title").innerText()).toBe("write notes.md");
    expect(await write.locator(".diff-add").allInnerTexts()).toEqual(["+- buy stamps\n"]);
    const patch = page.locator('.tool-call[data-call-id="call_patch"]');
    await patch.locator(":scope > summary").click();
    expect(await patch.locator(".diff-del").allInnerTexts()).toEqual(["-- call Alice\n"]);
    expect(await patch.locator(".diff-add").allInnerTexts()).toEqual(["+- call Alice at 5\n"]);
    const missing = page.locator('.tool-call[data-call-id="call_missing"]');
    expect(await missing.locator(":scope > summary .badge").innerText()).toBe("error");
    await missing.locator(":scope > summary").click();
    expect(await missing.locator(".note.error").innerText()).toContain("tool_failed");

    // The undecodable event is a finding; this round's and unknown frame types are notes.
    expect(await text(page, ".findings-block summary")).toBe("1 validation finding");
    expect(await text(page, "#turn-0 .notes")).toContain("Context compiled");
    expect(await text(page, "#turn-0 .notes")).toContain("strategy: summary");
    expect(await text(page, ".notes li.unknown")).toContain("x_future_frame");
    await screenshot(page, "rich");
    expectOffline(opened);

    if (process.env.EDDY_UPDATE_SCREENSHOTS === "1") {
      const clean = join(dir, "readme.tape");
      const ws = mkdtempSync(join(dir, "ws-"));
      writeFileSync(join(ws, "notes.md"), NOTES_BEFORE);
      const answer =
        "Added **buy stamps** to `notes.md` and set a time for Alice:\n\n- remember the milk\n- call Alice at 5\n- buy stamps";
      await recordMockRun({
        scenario: richScenario(answer),
        prompt: "Add buy stamps to notes.md",
        workspace: ws,
        tape: clean,
        allowWrite: true,
      });
      const readme = await viewPage([clean], "readme");
      await readme.page.locator('.tool-call[data-call-id="call_write"] > summary').click();
      await screenshot(readme.page, "readme", "view-run.png");
    }
  });

  it("shows a batch folder: sortable task table, histograms, each task's run one click away", async () => {
    const batch = join(dir, "batch");
    mkdirSync(join(batch, "tapes"), { recursive: true });
    const workspace = mkdtempSync(join(dir, "ws-"));
    writeFileSync(join(workspace, "package.json"), '{"name": "x"}\n');
    await recordMockRun({
      prompt: "What is in package.json?",
      workspace,
      tape: join(batch, "tapes", "t1.tape"),
    });
    await recordMockRun({ prompt: "List the files", workspace, tape: join(batch, "tapes", "t2.tape") });
    await recordMockRun({
      scenario: { turns: [{ items: [{ type: "message", text: "partial" }], status: "failed" }] },
      prompt: "Fail please",
      workspace,
      tape: join(batch, "tapes", "t3.tape"),
    });
    const usage = (i: number, o: number) => ({ input_tokens: i, output_tokens: o });
    const line = (o: Record<string, unknown>) => JSON.stringify(o);
    writeFileSync(
      join(batch, "results.jsonl"),
      [
        line({ id: "t2", reason: "failed", turns: 1, duration_ms: 9, tape: "tapes/t2.tape" }), // superseded by the retry below
        line({
          id: "t1",
          reason: "completed",
          output_text: "It is x.",
          usage: usage(500, 300),
          turns: 2,
          tool_calls: 1,
          duration_ms: 1200,
          tape: "tapes/t1.tape",
          error: null,
        }),
        line({
          id: "t3",
          reason: "failed",
          output_text: "partial",
          usage: usage(100, 5),
          turns: 1,
          tool_calls: 0,
          duration_ms: 4500,
          tape: join(batch, "tapes", "t3.tape"),
          error: { code: "server_error", message: "boom" },
        }),
        "{not json",
        line({
          id: "t4",
          reason: "provider_error",
          turns: 0,
          tool_calls: 0,
          duration_ms: 50,
          error: { code: "provider_http", message: "HTTP 503" },
        }),
        line({
          id: "t2",
          reason: "completed",
          output_text: "3 entries",
          usage: usage(200, 40),
          turns: 2,
          tool_calls: 1,
          duration_ms: 300,
          tape: "tapes/t2.tape",
          error: null,
        }),
      ].join("\n"),
    );
    writeFileSync(
      join(batch, "summary.json"),
      JSON.stringify({
        tasks: 4,
        finished: 4,
        pending: 0,
        by_reason: { completed: 2, failed: 1, provider_error: 1 },
        failed: 2,
        usage: { input_tokens: 800, output_tokens: 345, total_tokens: 1145 },
        duration_ms: { p50: 750, p95: 4500, max: 4500 },
        wall_ms: 5100,
        runs: [
          { started_at: "2026-01-01T00:00:00.000Z", wall_ms: 4000, tasks_run: 3 },
          { started_at: "2026-01-02T00:00:00.000Z", wall_ms: 1100, tasks_run: 1 },
        ],
        bad_lines: 0,
        finished_at: "2026-01-02T00:00:01.100Z",
      }),
    );
    const opened = await viewPage([batch], "batch", "batch");
    const { page } = opened;

    const ids = () => page.locator("#batch-table tbody tr td:first-child").allInnerTexts();
    expect(await ids()).toEqual(["t2", "t1", "t3", "t4 (no tape)"]);
    expect(await text(page, ".problems")).toContain("results.jsonl line 4: not valid JSON");
    // The tiles say what they count in words, never as JSON keys.
    const labels = await page.locator(".facts dt").allTextContents();
    expect(labels).toEqual([
      "Tasks",
      "Completed",
      "Failed",
      "Provider error",
      "Tasks in the file",
      "Finished",
      "Pending",
      "Not completed",
      "Tokens in",
      "Tokens out",
      "Tokens in total",
      "Duration p50",
      "Duration p95",
      "Longest task",
      "Wall time",
      "Runs",
      "Bad lines skipped",
      "Finished at",
    ]);
    expect(labels.join(" ")).not.toMatch(/[._]/);
    expect(await source(page, ".facts")).toContain("Wall time5.10 s");
    expect(await source(page, ".facts")).toContain("Runs2 (4.00 s + 1.10 s)");
    expect(await page.locator("#hist-duration .bar").count()).toBe(4);
    expect(await page.locator("#hist-tokens .bar").count()).toBe(3);

    await page.click('#batch-table th[data-key="duration_ms"]');
    expect(await ids()).toEqual(["t4 (no tape)", "t2", "t1", "t3"]);
    await page.click('#batch-table th[data-key="duration_ms"]');
    expect(await ids()).toEqual(["t3", "t1", "t2", "t4 (no tape)"]);
    expect(await page.getAttribute('#batch-table th[data-key="duration_ms"]', "aria-sort")).toBe(
      "descending",
    );
    await page.click('#batch-table th[data-key="tokens_in"]');
    expect(await ids()).toEqual(["t3", "t2", "t1", "t4 (no tape)"]);
    await screenshot(page, "batch");

    await page.click('a.run-link:text-is("t3")');
    await page.waitForSelector('body[data-view="run"]');
    expect(await text(page, "#run-reason")).toBe("failed");
    expect(await text(page, "#run-error")).toContain("server_error");
    await page.click("#back");
    await page.waitForSelector('body[data-view="batch"]');
    expect(await page.locator("#batch-table tbody tr").count()).toBe(4);
    expectOffline(opened);
  });

  it("puts several tapes on one page with a run list", async () => {
    const workspace = mkdtempSync(join(dir, "ws-"));
    writeFileSync(join(workspace, "package.json"), '{"name": "x"}\n');
    const first = join(dir, "first.tape");
    const second = join(dir, "second.tape");
    await recordMockRun({ prompt: "What is in package.json?", workspace, tape: first });
    await recordMockRun({
      scenario: { turns: [{ items: [{ type: "message", text: "cut" }], status: "incomplete" }] },
      prompt: "Say a lot",
      workspace,
      tape: second,
    });
    const opened = await viewPage([first, second], "list", "list");
    const { page } = opened;
    expect(await page.locator("#run-table tbody tr td:first-child").allInnerTexts()).toEqual([
      "first.tape",
      "second.tape",
    ]);
    expect(await page.locator("#run-table tbody tr td:nth-child(2)").allInnerTexts()).toEqual([
      "completed",
      "incomplete",
    ]);
    await page.click('a.run-link:text-is("second.tape")');
    await page.waitForSelector('body[data-view="run"]');
    expect(await text(page, "#run-reason")).toBe("incomplete");
    expect(await text(page, "#answer")).toBe("cut");
    await page.goBack();
    await page.waitForSelector('body[data-view="list"]');
    expectOffline(opened);
  });

  it("keeps the model's answer in its box: its HTML cannot use the page's classes or ids to lay a fake run header over the real one", async () => {
    const workspace = mkdtempSync(join(dir, "ws-"));
    const tape = join(dir, "overlay.tape");
    await recordMockRun({
      scenario: { turns: [{ items: [{ type: "message", text: OVERLAY_MARKDOWN, phase: "final_answer" }] }] },
      prompt: "Say hello",
      workspace,
      tape,
    });
    const lines = readFileSync(tape, "utf8").trimEnd().split("\n");
    const ended = JSON.parse(lines.at(-1) as string);
    lines[lines.length - 1] = JSON.stringify({
      ...ended,
      reason: "failed",
      error: { code: "tool_failed", message: "x" },
    });
    writeFileSync(tape, `${lines.join("\n")}\n`);
    const opened = await viewPage([tape], "overlay");
    const { page } = opened;
    expect(await text(page, "#run-reason")).toBe("failed");
    expect(await text(page, "#answer")).toContain("Safe to merge.");
    // What is drawn at the real header's reason is the real header; the page's own ids are its own.
    const dom = await page.evaluate(`(() => {
      const reason = document.getElementById("run-reason").getBoundingClientRect();
      const hit = document.elementFromPoint(reason.x + reason.width / 2, reason.y + reason.height / 2);
      return {
        hitIsReal: hit !== null && hit.closest("#answer") === null && hit.closest("#run-reason") !== null,
        named: document.querySelectorAll("#answer [class]:not(.img-blocked), #answer [id], #answer [name], #answer dialog").length,
        raws: document.querySelectorAll("[id=raw]").length,
        fakeBadges: document.querySelectorAll("#answer .badge, #answer .run-header").length,
      };
    })()`);
    expect(dom).toEqual({ hitIsReal: true, named: 0, raws: 1, fakeBadges: 0 });
    await page.click("#raw-toggle");
    expect(await page.locator("#raw").isVisible()).toBe(true);
    expectOffline(opened);
  });

  it("shows a run whatever type any frame field has: every single-field type mutation of a recorded tape", {
    timeout: 240_000,
  }, async () => {
    const workspace = mkdtempSync(join(dir, "ws-"));
    writeFileSync(join(workspace, "notes.md"), NOTES_BEFORE);
    const recorded = join(dir, "mutate-base.tape");
    await recordMockRun({
      scenario: richScenario("Done: **notes.md** updated."),
      prompt: "Add **buy stamps** to notes.md",
      workspace,
      tape: recorded,
      allowWrite: true,
    });
    const tapes = typeMutations(recorded, join(dir, "mutations"));
    expect(tapes.length).toBeGreaterThan(100);
    const opened = await viewPage(
      tapes.map((t) => t.path),
      "mutations",
      "list",
    );
    const { page } = opened;
    const failed: string[] = [];
    for (const [n, { what }] of tapes.entries()) {
      // Each run is shown (not left on "Loading…", not an error card) with no script error.
      const view = await page.evaluate(`(async () => {
        document.body.dataset.view = "";
        location.hash = "#run=${n}";
        for (let i = 0; i < 2000; i++) {
          const v = document.body.dataset.view;
          if (v === "run" || v === "error") return v;
          await new Promise((r) => setTimeout(r, 5));
        }
        return document.body.dataset.view;
      })()`);
      if (view !== "run") failed.push(`${what}: ${String(view)}`);
    }
    expect(failed).toEqual([]);
    expectOffline(opened);
  });

  it("keeps a 100k-frame tape responsive: a virtualized raw list and a fast search", {
    timeout: 60_000,
  }, async () => {
    const tape = join(dir, "big.tape");
    bigTape(tape, 50_000); // 100,005 frames
    const opened = await viewPage([tape], "big");
    const { page } = opened;
    expect(await source(page, ".facts")).toContain("frames100,005");
    // The page keeps the first and the last frames (limits.ts: lines and characters each), and one
    // line standing for those between, which says how many it stands for.
    const omitted =
      /^This run is too large for one page: ([\d,]+) raw frames \(of the middle of the tape\) not shown/.exec(
        await text(page, "#run-omitted"),
      );
    const left = Number(omitted?.[1]?.replaceAll(",", ""));
    expect(left).toBeGreaterThan(10_000);
    expect(left).toBeLessThan(90_000);
    await page.click("#raw-toggle");
    const here = (100_005 - left + 1).toLocaleString("en-US");
    expect(await text(page, "#raw-count")).toBe(`100,005 frames, ${here} lines on this page`);
    const rows = await page.locator(".raw-row").count();
    expect(rows).toBeGreaterThan(10);
    expect(rows).toBeLessThan(100);
    await page.evaluate(
      `(() => { const v = document.querySelector(".raw-viewport"); v.scrollTop = v.scrollHeight; })()`,
    );
    await page.locator(".raw-row .raw-seq", { hasText: /^#100004$/ }).waitFor();
    expect(await page.locator(".raw-row").count()).toBeLessThan(100);
    await page.fill("#raw-search", "frames_omitted");
    await page.locator("#raw-count", { hasText: /^1 of/ }).waitFor();
    expect(await text(page, ".raw-row .raw-summary")).toContain(`count=${left}`);
    await page.fill("#raw-search", "");
    expect(await page.locator(".raw-row").count()).toBeLessThan(100);
    await page.fill("#raw-search", "needle");
    // The word is in its provider event and its text delta (and in run_ended's output_text, but
    // that line is long, so the page holds it with its long values cut: raw-lines.ts).
    await page.locator("#raw-count", { hasText: /^2 of/ }).waitFor();
    expect(await page.locator(".raw-row").count()).toBe(2);
    expectOffline(opened);
  });
  it("shows an agentTool sub-run nested under its call: the agent's name, its outcome, answer and turns; its untrusted name stays text", async () => {
    const reviewer = agentTool({
      name: "reviewer",
      description: "Reviews a change",
      spec: { instructions: "You are the reviewer.", model: "review-model", max_turns: 2 },
    });
    const run = await composedRun(
      [
        {
          items: [
            { type: "function_call", name: "reviewer", arguments: '{"input":"review x=1"}', call_id: "c1" },
          ],
        },
        { items: [{ type: "message", text: "LGTM from the reviewer" }] },
        { items: [{ type: "message", text: "the reviewer approved" }] },
      ],
      {},
      [reviewer],
    );
    const hostileName = '<img src=x onerror="document.title=1">';
    const lines = run.frames.map((f) =>
      JSON.stringify(
        f.type === "tool_ended" && f.subrun !== undefined
          ? { ...f, subrun: { ...f.subrun, agent: hostileName } }
          : f,
      ),
    );
    const tape = join(dir, "subrun.tape");
    writeFileSync(tape, `${[JSON.stringify(run.tape.header), ...lines].join("\n")}\n`);
    const opened = await viewPage([tape], "subrun");
    const { page } = opened;
    expect(await text(page, "#answer")).toContain("the reviewer approved");
    const call = page.locator(".tool-call").first();
    expect(await source(page, ".tool-call .badge.subrun")).toBe(`sub-run: ${hostileName}`);
    await call.locator(":scope > summary").click();
    const subrun = call.locator(".subrun");
    expect(await subrun.locator(".subrun-agent").textContent()).toBe(hostileName);
    expect(await subrun.locator(".subrun-reason").textContent()).toBe("completed");
    expect(await subrun.locator(".subrun-answer").innerText()).toContain("LGTM from the reviewer");
    await subrun.locator(".subrun-turns > summary").click();
    expect(await subrun.locator(".turn.nested").count()).toBe(1);
    expect(await page.locator("img").count()).toBe(0);
    expect(await page.title()).not.toBe("1");
    expectOffline(opened);
  });
});

/**
 * Copies of `tape`, each with one field of one frame given a value of another type: in the first
 * frame of each kind (frame type and event type), every top-level field but the envelope (`type`,
 * `seq`, `ts`, `run_id`) and every field one level down. Written under `out`; `what` says which.
 */
function typeMutations(tape: string, out: string): Array<{ path: string; what: string }> {
  mkdirSync(out, { recursive: true });
  const lines = readFileSync(tape, "utf8").trimEnd().split("\n");
  const others = (v: unknown): unknown[] =>
    typeof v === "string"
      ? [42, { text: v }, null]
      : typeof v === "number"
        ? ["7", [v]]
        : typeof v === "boolean"
          ? ["yes", 1]
          : v === null
            ? ["null", {}]
            : Array.isArray(v)
              ? ["list", { 0: v[0] }, 3]
              : ["object", [v], 5];
  const result: Array<{ path: string; what: string }> = [];
  const write = (i: number, frame: Record<string, unknown>, what: string) => {
    const copy = [...lines];
    copy[i] = JSON.stringify(frame);
    const path = join(out, `m${String(result.length).padStart(4, "0")}.tape`);
    writeFileSync(path, `${copy.join("\n")}\n`);
    result.push({ path, what });
  };
  const seen = new Set<string>();
  for (let i = 1; i < lines.length; i++) {
    const frame = JSON.parse(lines[i] as string) as Record<string, unknown>;
    const data = frame.data as Record<string, unknown> | undefined;
    const kind = `${frame.type}/${typeof data?.type === "string" ? data.type : ""}`;
    if (seen.has(kind)) continue;
    seen.add(kind);
    for (const [key, value] of Object.entries(frame)) {
      if (["type", "seq", "ts", "run_id"].includes(key)) continue;
      for (const v of others(value).slice(0, 2)) {
        write(i, { ...frame, [key]: v }, `${kind}.${key} = ${JSON.stringify(v)}`);
      }
      if (value === null || typeof value !== "object" || Array.isArray(value)) continue;
      for (const [inner, innerValue] of Object.entries(value)) {
        const v = others(innerValue)[0];
        write(
          i,
          { ...frame, [key]: { ...value, [inner]: v } },
          `${kind}.${key}.${inner} = ${JSON.stringify(v)}`,
        );
      }
    }
  }
  return result;
}
