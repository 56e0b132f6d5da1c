import { createHash } from "node:crypto";
import { gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { loadViewAssets } from "./assets.js";
import { renderViewPage } from "./page.js";
import { parseViewTape } from "./read.js";
import { buildRunView } from "./run-model.js";
import { PAGE_IDS, type PageIndex, type RunPayload } from "./view-data.js";

const HOSTILE = "</script><script>alert(1)</script><!--";
const assets = { script: "document.title = 'x';", style: "body { color: red }" };

function payload(answer: string): RunPayload {
  const frames = [
    { run_id: "r", seq: 0, ts: 1, type: "run_started", model: "m", mode: "chained", input: "go", tools: [] },
    {
      run_id: "r",
      seq: 1,
      ts: 2,
      type: "run_ended",
      reason: "completed",
      output_text: answer,
      response_id: null,
      usage: { input_tokens: 1, output_tokens: 1 },
      turns: 0,
      tool_calls: 0,
    },
  ].map((f) => JSON.stringify(f));
  const tape = parseViewTape(frames.join("\n"), "t");
  return { view: buildRunView(tape), raw: tape.lines };
}

const sha = (text: string) => `'sha256-${createHash("sha256").update(text).digest("base64")}'`;
const block = (html: string, id: string) => {
  const m = html.match(new RegExp(`<script type="[^"]+" id="${id}">([^<]*)</script>`));
  if (m === null) throw new Error(`no block ${id}`);
  return m[1] as string;
};

describe("renderViewPage", () => {
  it("inlines the script and style, allowed by hash, and forbids everything else", () => {
    const html = renderViewPage({ title: "t", runs: [] }, assets);
    expect(html).toContain(`<script>${assets.script}</script>`);
    expect(html).toContain(`<style>${assets.style}</style>`);
    const csp = html.match(/http-equiv="Content-Security-Policy" content="([^"]+)"/)?.[1] ?? "";
    expect(csp.split("; ")).toEqual([
      "default-src 'none'",
      `script-src ${sha(assets.script)}`,
      `style-src ${sha(assets.style)}`,
      "img-src data:",
      "base-uri 'none'",
      "form-action 'none'",
    ]);
  });

  it("keeps untrusted text out of the markup: escaped index JSON, compressed run payloads", () => {
    const run = payload(HOSTILE);
    const html = renderViewPage(
      { title: HOSTILE, runs: [{ entry: { label: HOSTILE, source: HOSTILE }, payload: run }] },
      assets,
    );
    expect(html).not.toContain("<script>alert");
    expect(html).not.toContain("<!--");
    expect(html).toContain(
      "<title>&#60;/script&#62;&#60;script&#62;alert(1)&#60;/script&#62;&#60;!--</title>",
    );
    const index = JSON.parse(block(html, PAGE_IDS.index)) as PageIndex;
    expect(index.runs[0]?.label).toBe(HOSTILE);
    const decoded = JSON.parse(
      gunzipSync(Buffer.from(block(html, `${PAGE_IDS.runPrefix}0`), "base64")).toString("utf8"),
    );
    expect(decoded).toEqual(run);
    expect(html.match(/<script/g)).toHaveLength(3);
  });

  it("gives a run without a readable tape an index entry and no payload", () => {
    const html = renderViewPage(
      { title: "t", runs: [{ entry: { label: "x", source: "x", problem: "bad" } }] },
      assets,
    );
    expect(JSON.parse(block(html, PAGE_IDS.index)).runs).toEqual([
      { label: "x", source: "x", problem: "bad" },
    ]);
    expect(html).not.toContain(PAGE_IDS.runPrefix);
  });

  it("refuses a script that would end its own element", () => {
    expect(() => renderViewPage({ title: "t", runs: [] }, { script: "a('</script>')", style: "" })).toThrow(
      "</script",
    );
  });

  it("the built page script is inlinable", () => {
    const built = loadViewAssets();
    expect(built.script.length).toBeGreaterThan(10_000);
    expect(built.script).not.toMatch(/<\/script|<!--/i);
    expect(() => renderViewPage({ title: "t", runs: [] }, built)).not.toThrow();
  });
});
