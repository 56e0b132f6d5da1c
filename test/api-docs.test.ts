/**
 * The public API documents itself: every symbol exported from a package entry (`eddy` and its
 * subpaths) has a doc comment; every optional field of an exported options interface says its
 * default (`@defaultValue`); each entry and each factory named in `ENTRY_POINTS` has an
 * `@example`. Read with the TypeScript compiler, the way an editor shows it.
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const SRC = join(dirname(fileURLToPath(import.meta.url)), "..", "src");
const ENTRIES = [
  "index.ts",
  "entry/mock.ts",
  "entry/replay.ts",
  "entry/protocol.ts",
  "entry/sse.ts",
  "entry/batch.ts",
  "entry/telemetry.ts",
  "entry/mcp.ts",
];
/** Functions a user starts from: each shows how it is called. */
const ENTRY_POINTS = [
  "runAgent",
  "createOpenResponsesProvider",
  "createFallbackProvider",
  "createProfileProvider",
  "createLLMProvider",
  "runProbes",
  "createToolRegistry",
  "createBuiltinTools",
  "defineTool",
  "createMockServer",
  "replayTape",
  "createSseDecoder",
  "runBatch",
  "resumeRun",
  "enqueueBatch",
  "startBatchWorker",
];

const program = ts.createProgram(
  ENTRIES.map((e) => join(SRC, e)),
  { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, strict: true },
);
const checker = program.getTypeChecker();

function exportsOf(entry: string): ts.Symbol[] {
  const file = program.getSourceFile(join(SRC, entry));
  if (file === undefined) throw new Error(`no ${entry}`);
  const module = checker.getSymbolAtLocation(file);
  return module === undefined ? [] : checker.getExportsOfModule(module);
}

function resolved(symbol: ts.Symbol): ts.Symbol {
  return symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
}

function docOf(symbol: ts.Symbol): string {
  return ts.displayPartsToString(symbol.getDocumentationComment(checker)).trim();
}

function tagsOf(symbol: ts.Symbol): string[] {
  return symbol.getJsDocTags(checker).map((t) => t.name);
}

describe("public API documentation", () => {
  const problems: string[] = [];
  for (const entry of ENTRIES) {
    const file = program.getSourceFile(join(SRC, entry));
    const header = file?.statements[0] === undefined ? [] : ts.getJSDocCommentsAndTags(file.statements[0]);
    const text = file?.getFullText() ?? "";
    if (!/^\/\*\*[\s\S]*?@example[\s\S]*?\*\//.test(text.trimStart()))
      problems.push(`${entry}: the entry's header comment has no @example`);
    void header;
    for (const exported of exportsOf(entry)) {
      const symbol = resolved(exported);
      const name = exported.getName();
      if (docOf(symbol) === "") problems.push(`${entry}: ${name} has no doc comment`);
      if (ENTRY_POINTS.includes(name) && !tagsOf(symbol).includes("example"))
        problems.push(`${entry}: ${name} has no @example`);
      if (symbol.flags & ts.SymbolFlags.Interface && /Options$/.test(name)) {
        for (const member of checker.getPropertiesOfType(checker.getDeclaredTypeOfSymbol(symbol))) {
          const optional = (member.flags & ts.SymbolFlags.Optional) !== 0;
          if (optional && !tagsOf(member).includes("defaultValue"))
            problems.push(`${entry}: ${name}.${member.getName()} has no @defaultValue`);
        }
      }
    }
  }

  it("every export has a doc comment, options say their defaults, entry points show an example", () => {
    expect([...new Set(problems)]).toEqual([]);
  });
});
