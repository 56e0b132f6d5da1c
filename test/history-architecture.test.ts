/**
 * Tool history has a single source of truth (docs/decisions.md #17): one manager, one place
 * the strategy is chosen, one module that turns tool history into prose. These checks read src/
 * and fail when a second path appears.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const SRC = join(dirname(fileURLToPath(import.meta.url)), "..", "src");

function sources(dir: string = SRC): { path: string; code: string }[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = join(dir, e.name);
    if (e.isDirectory()) return e.name === "generated" ? [] : sources(full);
    if (!e.name.endsWith(".ts") || e.name.endsWith(".test.ts")) return [];
    return [{ path: relative(SRC, full), code: stripComments(readFileSync(full, "utf8")) }];
  });
}

/** Code without comments (doc comments may talk about tool results freely). */
function stripComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`])\/\/.*$/gm, "$1");
}

function filesMatching(pattern: RegExp): string[] {
  return sources()
    .filter((f) => pattern.test(f.code))
    .map((f) => f.path)
    .sort();
}

describe("tool history: one path", () => {
  it("formats tool calls and results as text in exactly one module", () => {
    // How a text rendering of tool history shows itself, in the forms seen in the field: a result
    // announced as such, HTML-comment markers, "[Tool call: …]", a call written as name(args), a
    // call described with what it returned.
    const prose = [
      /tool result/i,
      /prior-tool/,
      /\[Tool call/i,
      /Earlier tool calls/i,
      /\$\{[\w.]*name\}\(/,
      /Tool call \$\{/,
    ];
    // The mock server is the model's side: what its demo model says is not eddy's history.
    const files = sources().filter((f) => !f.path.startsWith("mock/") && prose.some((re) => re.test(f.code)));
    expect(files.map((f) => f.path)).toEqual(["history/tool-text.ts"]);
  });

  it("chooses the rendering strategy in one place, from the capability, called once", () => {
    expect(filesMatching(/\bnativeToolHistory\s*(===|!==|\?|&&|\|\|)|\.nativeToolHistory\b/)).toEqual([
      "history/strategies.ts",
    ]);
    expect(filesMatching(/\bresolveStrategy\(/)).toEqual([
      "history/strategies.ts",
      "history/tool-history.ts",
    ]);
    const manager = sources().find((f) => f.path === "history/tool-history.ts")?.code ?? "";
    expect(manager.match(/\bresolveStrategy\(/g)).toHaveLength(1);
  });

  it("has one implementation of each strategy: the classes, their one instance each, chosen in one place", () => {
    // The strategies are the classes NativeStrategy and TextEmbedStrategy; the objects the manager
    // renders with are their instances, made once, beside the one switch that picks between them.
    expect(filesMatching(/\bimplements ToolHistoryStrategy\b/)).toEqual(["history/strategies.ts"]);
    expect(filesMatching(/\bnew (NativeStrategy|TextEmbedStrategy)\(/)).toEqual(["history/strategies.ts"]);
    const strategies = sources().find((f) => f.path === "history/strategies.ts")?.code ?? "";
    expect(strategies.match(/\bnew (NativeStrategy|TextEmbedStrategy)\(/g)).toHaveLength(2);
    // No second strategy shape: nothing else defines a renderEntry or a renderSummary.
    expect(filesMatching(/^\s*(renderEntry|renderSummary)\s*[(:]/m)).toEqual(["history/strategies.ts"]);
  });

  it("offers the RFC's addToolCall / getCompactedHistory / renderAsItems on the one manager only", () => {
    // The RFC's methods are members of the loop's ToolHistoryManager (a view over its fold and its
    // strategies), not a second manager: one class, and the methods defined in its file alone.
    expect(filesMatching(/\bclass \w*ToolHistory\w*/)).toEqual(["history/tool-history.ts"]);
    expect(
      filesMatching(/\b(getCompactedHistory|renderAsItems)\s*\(|\baddToolCall\s*\(\s*callId\s*:/),
    ).toEqual(["history/tool-history.ts"]);
    // The fold is selected by one function, for render() and getCompactedHistory() alike.
    const manager = sources().find((f) => f.path === "history/tool-history.ts")?.code ?? "";
    expect(manager.match(/\bselectFold\(/g)).toHaveLength(1);
    expect(filesMatching(/\bselectFold\(/)).toEqual(["history/compact.ts", "history/tool-history.ts"]);
  });

  it("builds tool-history input items only in history/", () => {
    const builders = filesMatching(/type:\s*"function_call(_output)?"/);
    const allowed: Record<string, string> = {
      // The mock server produces a model's *output* items, not a history.
      "mock/": "output items of the mock model",
      // The assembler rebuilds output items from stream events.
      "provider/assembler/": "output items assembled from events",
      // The Chat Completions translator turns chunks into the Open Responses *output* events.
      "provider/chat-completions/translator.ts": "output items translated from chat chunks",
      // The AI SDK translator turns an AI SDK model's stream parts into Open Responses *output* events.
      "provider/ai-sdk/translator.ts": "output items translated from AI SDK stream parts",
      // LLMProvider.generateResponsesTurn sends the caller's outputs for the previous response
      // (chained follow-up); it renders no history.
      "provider/llm-provider.ts": "chained outputs of a one-turn API",
      // eddy doctor's probes send one fixed call and output to see whether a server accepts such
      // items (and the tool round trip's output); their text form comes from history/ (strategies.ts).
      "provider/probe/": "fixed probe requests, no history",
      // eddy serve's Open Responses face shows a server tool's call and output as the *output*
      // items of its response (docs/decisions.md #33); the run's history stays in history/.
      "serve/responses-model.ts": "output items of the face's response",
    };
    const elsewhere = builders.filter(
      (path) =>
        !path.startsWith("history/") && !Object.keys(allowed).some((prefix) => path.startsWith(prefix)),
    );
    expect(elsewhere).toEqual([]);
  });

  it("renders the loop's requests through the run's one manager", () => {
    const conversation = sources().find((f) => f.path === "loop/conversation.ts")?.code ?? "";
    expect(conversation).toMatch(/history\.render\(/);
    expect(conversation).not.toMatch(/\brepairHistory\(/);
    // A manager is built in one place per run (and one per toResponsesInput call without one).
    expect(filesMatching(/new ToolHistoryManager\(/)).toEqual([
      "history/to-responses-input.ts",
      "loop/run-history.ts",
    ]);
  });

  it("renders bundles and foreign histories through the manager", () => {
    const bundle = sources().find((f) => f.path === "context/bundle.ts")?.code ?? "";
    expect(bundle).toMatch(/manager\.render\(/);
    const foreign = sources().find((f) => f.path === "history/to-responses-input.ts")?.code ?? "";
    expect(foreign).toMatch(/manager\.render\(/);
  });
});
