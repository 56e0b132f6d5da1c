/**
 * The approval prompt (src/cli/approval-view.ts) and the run viewer's page
 * (src/view/client/diff-view.ts, bundled for the browser on its own) bound a diff by the same
 * number of line edits, defined once in src/util/diff-bounds.ts (docs/pitfalls.md #114): it was
 * written in both, free to drift apart. So are a diff's line endings, in src/util/line-endings.ts
 * (docs/pitfalls.md #113, #120): the page showed a CRLF file's one-line change as every line changed.
 */
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { describeApproval } from "../src/cli/approval-view.js";
import { stylesFor } from "../src/cli/terminal.js";
import { DIFF_MAX_EDITS } from "../src/util/diff-bounds.js";
import { parseViewTape } from "../src/view/read.js";
import { buildRunView } from "../src/view/run-model.js";
import type { FileDiffView } from "../src/view/view-data.js";
import { recordMockRun } from "./support/record.js";

const SRC = join(dirname(fileURLToPath(import.meta.url)), "..", "src");

/**
 * The page's `diffHunks`. The client is type-checked by its own tsconfig (the DOM's types, not
 * Node's), so it is loaded by a name this project's tsc does not follow.
 */
const CLIENT_DIFF = "../src/view/client/diff-view.js";
const { diffHunks, fileDiffLines } = (await import(CLIENT_DIFF)) as {
  diffHunks: (path: string, before: string, after: string) => unknown[] | undefined;
  fileDiffLines: (diff: FileDiffView) => { notes: string[]; lines: Array<{ text: string }> };
};

/** The approval view of a `write_file` turning `before` into `after`, one string. */
async function approvalView(before: string, after: string, maxLines = 5): Promise<string> {
  const ws = mkdtempSync(join(tmpdir(), "eddy-diff-bound-"));
  writeFileSync(join(ws, "f.txt"), before);
  const request = {
    turn: 0,
    callId: "c",
    name: "write_file",
    arguments: "",
    args: { path: "f.txt", content: after },
    description: "",
    signal: new AbortController().signal,
  };
  const plain = stylesFor({ write: () => {} }, {});
  return (await describeApproval(request, { workspace: ws, styles: plain, secrets: [], maxLines })).join(
    "\n",
  );
}

describe("the diff bound", () => {
  it("the prompt and the page diff the same changes: up to DIFF_MAX_EDITS edits, not one more", async () => {
    const lines = Array.from({ length: DIFF_MAX_EDITS * 2 }, (_, i) => `line ${i}`);
    const before = `${lines.join("\n")}\n`;
    // Each changed line is two edits (one removed, one added); the lines changed are apart.
    const changed = (n: number) =>
      `${lines.map((line, i) => (i % 2 === 0 && i / 2 < n ? `changed ${i}` : line)).join("\n")}\n`;
    const within = changed(DIFF_MAX_EDITS / 2);
    const past = changed(DIFF_MAX_EDITS / 2 + 1);
    expect(diffHunks("f.txt", before, within)).toBeDefined();
    expect(await approvalView(before, within)).toMatch(/^--- f\.txt/);
    expect(diffHunks("f.txt", before, past)).toBeUndefined();
    expect(await approvalView(before, past)).toMatch(/too different to show as a diff/);
  });

  it("is defined once: every jsdiff maxEditLength in src/ is the shared DIFF_MAX_EDITS", () => {
    const files = readdirSync(SRC, { recursive: true, encoding: "utf8" }).filter(
      (f) => f.endsWith(".ts") && !f.endsWith(".test.ts"),
    );
    const users: string[] = [];
    for (const file of files) {
      const text = readFileSync(join(SRC, file), "utf8");
      for (const [, value] of text.matchAll(/maxEditLength:\s*([^\s,}]+)/g)) {
        users.push(file);
        expect(value, file).toBe("DIFF_MAX_EDITS");
        expect(text, file).toMatch(/import \{ DIFF_MAX_EDITS \} from "(\.\.\/)+util\/diff-bounds\.js";/);
      }
      if (!file.endsWith("diff-bounds.ts"))
        expect(text, file).not.toMatch(/\b(const|let)\s+\w*(MAX_DIFF|DIFF_MAX)\w*EDITS\w*\s*=/);
    }
    expect(users.sort()).toEqual(["cli/approval-view.ts", "view/client/diff-view.ts"]);
  });
});

describe("a CRLF file's line endings", () => {
  it("a tape whose write_file replaces one line of a CRLF file: the page and the prompt show that line and one note", async () => {
    const ws = mkdtempSync(join(tmpdir(), "eddy-crlf-"));
    const before = "one\r\ntwo\r\nthree\r\n";
    const after = "one\ntwo!\nthree\n";
    writeFileSync(join(ws, "f.txt"), before);
    const tape = join(ws, "run.tape");
    const turn = (name: string, args: Record<string, unknown>) => ({
      items: [{ type: "function_call" as const, name, arguments: args, call_id: `call_${name}` }],
    });
    await recordMockRun({
      workspace: ws,
      tape,
      allowWrite: true,
      prompt: "fix line two",
      scenario: {
        name: "crlf",
        turns: [
          turn("read_file", { path: "f.txt" }),
          turn("write_file", { path: "f.txt", content: after }),
          { items: [{ type: "message", text: "done", phase: "final_answer" }] },
        ],
      },
    });
    const view = buildRunView(parseViewTape(readFileSync(tape, "utf8"), tape));
    const diff = view.turn_views
      .flatMap((t) => t.items)
      .flatMap((item) =>
        item.kind === "tool" && item.call.name === "write_file" ? [item.call.file_diff] : [],
      )[0];
    expect(diff).toEqual({ path: "f.txt", before, after, append: false });
    const page = fileDiffLines(diff as FileDiffView);
    const note = "its CRLF line endings become LF, on every line";
    expect(page.notes).toEqual([note]);
    // Before: -one\r, -two\r, -three\r, +one, +two!, +three.
    const changed = ["-two", "+two!"];
    expect(page.lines.map((l) => l.text.trimEnd()).filter((l) => /^[-+]/.test(l))).toEqual(changed);
    const prompt = (await approvalView(before, after, 80)).split("\n");
    expect(prompt[0]).toBe(`(f.txt: ${note})`);
    expect(prompt.filter((l) => /^[-+][^-+]/.test(l))).toEqual(changed);
  });

  it("is decided once: only src/util/line-endings.ts takes the CRs off a diff's text", () => {
    const files = readdirSync(SRC, { recursive: true, encoding: "utf8" }).filter(
      (f) => f.endsWith(".ts") && !f.endsWith(".test.ts"),
    );
    const users = files.filter((f) => readFileSync(join(SRC, f), "utf8").includes("util/line-endings.js"));
    expect(users.sort()).toEqual(["cli/approval-view.ts", "view/client/diff-view.ts"]);
    for (const file of files.filter((f) => f !== "util/line-endings.ts")) {
      expect(readFileSync(join(SRC, file), "utf8"), file).not.toMatch(/function endingsOf|mixed CRLF and LF/);
    }
  });
});
