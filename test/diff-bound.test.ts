/**
 * The approval prompt (src/cli/approval-view.ts) and the run viewer's page
 * (src/view/client/diff-view.ts, bundled for the browser on its own) bound a diff by the same
 * number of line edits, defined once in src/util/diff-bounds.ts (docs/pitfalls.md #114): it was
 * written in both, free to drift apart.
 */
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { describeApproval } from "../src/cli/approval-view.js";
import { stylesFor } from "../src/cli/terminal.js";
import { DIFF_MAX_EDITS } from "../src/util/diff-bounds.js";

const SRC = join(dirname(fileURLToPath(import.meta.url)), "..", "src");

/**
 * The page's `diffHunks`. The client is type-checked by its own tsconfig (the DOM's types, not
 * Node's), so it is loaded by a name this project's tsc does not follow.
 */
const CLIENT_DIFF = "../src/view/client/diff-view.js";
const { diffHunks } = (await import(CLIENT_DIFF)) as {
  diffHunks: (path: string, before: string, after: string) => unknown[] | undefined;
};

/** The approval view of a `write_file` turning `before` into `after`, one string. */
async function approvalView(before: string, after: string): Promise<string> {
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
  return (await describeApproval(request, { workspace: ws, styles: plain, secrets: [], maxLines: 5 })).join(
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
