/**
 * Dependencies flow one way (docs/architecture.md, "Layers", STYLE.md §4): a folder of src/ imports only the folders
 * its row allows, plus errors.ts, version.ts and util/. A wrong import fails `npm test`.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const SRC = join(dirname(fileURLToPath(import.meta.url)), "..", "src");

const ALLOWED: Record<string, string[]> = {
  protocol: [],
  sse: ["protocol"],
  frames: ["protocol", "sse"],
  provider: ["protocol", "sse", "frames"],
  tools: ["protocol"],
  // history/summarizer.ts asks a model for summaries through provider/llm-provider.ts (createLLMProvider).
  history: ["protocol", "frames", "provider"],
  context: ["protocol", "frames", "history"],
  // As docs/architecture.md, "Layers" explains: replayTape() drives the loop with the
  // recorded tool outputs, so replay/ sits above loop/ and tools/.
  loop: ["protocol", "frames", "provider", "tools", "history", "context"],
  // replay/ rebuilds the recorded run's history manager with its recorded summaries (history/summarizer.ts).
  replay: ["protocol", "frames", "provider", "loop", "tools", "history"],
  mock: ["protocol", "sse"],
  // Batches: a pool of runs, a rate limit, resuming from tapes, a BullMQ adapter (above loop/ and replay/).
  batch: ["protocol", "frames", "provider", "tools", "history", "context", "loop", "replay"],
  // Sessions: turns on one thread, each a run recorded as a tape; deferred calls resumed (batch/resume.ts).
  session: ["protocol", "frames", "provider", "tools", "history", "context", "loop", "replay", "batch"],
  // view/ renders tapes: it reads them through replay/ and knows frames; client/ is its browser half.
  view: ["frames", "replay"],
  // serve/ (eddy serve): runs over HTTP, above batch/ (tapes, resume) and replay/; mock/ lends its HTTP error shape.
  serve: [
    "protocol",
    "sse",
    "frames",
    "provider",
    "tools",
    "history",
    "context",
    "loop",
    "replay",
    "mock",
    "batch",
  ],
  // telemetry/ observes frames only.
  telemetry: ["frames"],
  cli: [
    "protocol",
    "sse",
    "frames",
    "provider",
    "tools",
    "history",
    "context",
    "loop",
    "replay",
    "mock",
    "batch",
    "session",
    "view",
    "telemetry",
    "serve",
  ],
  // The public subpath entries (package.json "exports"): re-exports only.
  entry: [
    "protocol",
    "sse",
    "frames",
    "provider",
    "tools",
    "history",
    "context",
    "loop",
    "replay",
    "mock",
    "batch",
    "session",
    "telemetry",
    "serve",
  ],
  util: [],
};
const ALWAYS = new Set(["errors.js", "version.js", "util"]);

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? files(join(dir, e.name))
      : e.name.endsWith(".ts") && !e.name.endsWith(".test.ts")
        ? [join(dir, e.name)]
        : [],
  );
}

describe("layering", () => {
  it("every import stays within its layer's allowed dependencies", () => {
    const violations: string[] = [];
    for (const file of files(SRC)) {
      const rel = relative(SRC, file);
      const layer = rel.includes("/") ? (rel.split("/")[0] as string) : undefined;
      if (layer === undefined || layer === "generated") continue;
      const allowed = ALLOWED[layer];
      if (allowed === undefined) {
        violations.push(`${rel}: folder "${layer}" has no row in the layering table`);
        continue;
      }
      const text = readFileSync(file, "utf8");
      for (const m of text.matchAll(/(?:from|import)\s*\(?\s*"(\.{1,2}\/[^"]+)"/g)) {
        const target = relative(SRC, resolve(dirname(file), m[1] as string));
        const top = target.split("/")[0] as string;
        if (top === layer || ALWAYS.has(top)) continue;
        if (!allowed.includes(top))
          violations.push(
            `${rel} imports ${target} (${layer}/ may import: ${allowed.join(", ") || "nothing"})`,
          );
      }
    }
    expect(violations).toEqual([]);
  });
});

/**
 * Every place in `text` that reads `process.env` or `process.argv` (code only: doc comments and
 * examples mention them freely), as `line:expression`.
 */
function processReads(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (
      ts.isPropertyAccessExpression(node) &&
      node.expression.getText(source) === "process" &&
      (node.name.text === "env" || node.name.text === "argv")
    ) {
      found.push(`${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}:${node.getText(source)}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe("the environment is an input", () => {
  it("nothing below cli/ reads process.env or process.argv (test-support/ scripts aside)", () => {
    const violations: string[] = [];
    for (const file of files(SRC)) {
      const rel = relative(SRC, file);
      if (rel.startsWith("cli/") || rel.split("/").includes("test-support")) continue;
      for (const read of processReads(file, readFileSync(file, "utf8"))) violations.push(`${rel}:${read}`);
    }
    expect(violations).toEqual([]);
  });

  it("finds a read in code and ignores one in a comment", () => {
    const text =
      "/** `process.env.X` in a doc */\nconst a = 1; // process.argv\nconst b = process.env.HOME;\n";
    expect(processReads("x.ts", text)).toEqual(["3:process.env"]);
  });
});
