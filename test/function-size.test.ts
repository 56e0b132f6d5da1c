/**
 * Functions stay short enough to read in one screen: none in src/ is over 80 lines, except the
 * ones listed in `ALLOWED` with the reason they stay long.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const SRC = join(dirname(fileURLToPath(import.meta.url)), "..", "src");
const LIMIT = 80;

/** `file:function` → why it may be longer. */
const ALLOWED: Record<string, string> = {
  "sse/decoder.ts:createSseDecoder":
    "the SSE decoder's hot loop: one closure over its buffers, split only at a measured cost (bench/RESULTS.md, sse)",
};

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? e.name === "generated"
        ? []
        : files(join(dir, e.name))
      : e.name.endsWith(".ts") && !e.name.endsWith(".test.ts")
        ? [join(dir, e.name)]
        : [],
  );
}

function nameOf(node: ts.Node): string {
  if ((ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node)) && node.name)
    return node.name.getText();
  if (ts.isConstructorDeclaration(node)) return "constructor";
  const parent = node.parent;
  if (parent && ts.isVariableDeclaration(parent)) return parent.name.getText();
  if (parent && ts.isPropertyAssignment(parent)) return parent.name.getText();
  if (parent && ts.isPropertyDeclaration(parent)) return parent.name.getText();
  return "(anonymous)";
}

/** Every function over the limit, as `file:name (N lines)`. */
function longFunctions(): string[] {
  const out: string[] = [];
  for (const file of files(SRC)) {
    const text = readFileSync(file, "utf8");
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node) => {
      if (
        ts.isFunctionDeclaration(node) ||
        ts.isMethodDeclaration(node) ||
        ts.isConstructorDeclaration(node) ||
        ts.isFunctionExpression(node) ||
        ts.isArrowFunction(node)
      ) {
        const start = source.getLineAndCharacterOfPosition(node.getStart()).line;
        const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
        const lines = end - start + 1;
        const key = `${relative(SRC, file)}:${nameOf(node)}`;
        if (lines > LIMIT && ALLOWED[key] === undefined) out.push(`${key} (${lines} lines)`);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return out;
}

describe("function size", () => {
  it(`no function in src/ is over ${LIMIT} lines, but the listed exceptions`, () => {
    expect(longFunctions()).toEqual([]);
  });
});
